/**
 * Module versions with Terraform's module semantics (hashicorp/go-version, where `~> 5` is `>= 5`),
 * differential against terraform 1.11: the same registry module (5.x and 6.x releases) served over
 * HTTPS to `terraform get` and over HTTP to tfguard; for each `version` constraint, the release
 * terraform installs (`.terraform/modules/modules.json`) is the one tfguard resolves.
 *
 * Then the case this semantics decides: a root pinning `aws ~> 5.0` calls `version = "~> 5"`;
 * terraform installs the 6.x release, which needs aws >= 6.0, and `init` cannot succeed. tfguard
 * must resolve the same release and report the conflict, and must not call an installed 6.x copy
 * stale.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Report } from '../../src/report/types';
import { lines } from '../support/rule-table';
import { describeWithTerraform } from '../support/external';
import { cliHostBlock, selfSignedCertificate, startRegistry } from '../support/registry-server';
import type { FakeModule, FakeModuleVersion, RegistryServer } from '../support/registry-server';
import { findingsOf, scanFiles } from '../support/scan';
import { runTerraform, writeTree } from '../support/terraform';

const HOST = 'modules.example.com';

function release(version: string, aws: string): FakeModuleVersion {
  return {
    version,
    root: { providers: [{ name: 'aws', namespace: 'hashicorp', source: 'hashicorp/aws', version: aws }] },
    files: {
      'main.tf': lines(
        'terraform {',
        '  required_providers {',
        `    aws = { source = "hashicorp/aws", version = "${aws}" }`,
        '  }',
        '}',
      ),
    },
  };
}

const VPC: FakeModule = {
  namespace: 'acme',
  name: 'vpc',
  system: 'aws',
  versions: [
    release('4.9.0', '>= 4.0'),
    release('5.0.0', '>= 5.0'),
    release('5.21.0', '>= 5.46'),
    release('6.0.0-beta1', '>= 6.0'),
    release('6.0.0', '>= 6.0'),
    release('6.4.0', '>= 6.2'),
  ],
};

/** [constraint, the release terraform 1.11 installs (null: none, init fails), checked below against
 * terraform itself] */
const CASES: Array<[string, string | null]> = [
  ['~> 5', '6.4.0'],
  ['~>5', '6.4.0'],
  ['~> 5.0', '5.21.0'],
  ['~> 5.0.0', '5.0.0'],
  ['~> 4', '6.4.0'],
  ['>= 5, < 6', '5.21.0'],
  ['~> 5, < 6', '5.21.0'],
  ['~> 5, != 6.4.0', '6.0.0'],
  ['v5.21.0', '5.21.0'],
  ['< 6.0.0', '5.21.0'],
  ['~> 7', null],
  // pre-releases: only when requested exactly, in go-versions' syntax too (no space after "=")
  ['6.0.0-beta1', '6.0.0-beta1'],
  ['=6.0.0-beta1', '6.0.0-beta1'],
  ['= 6.0.0-beta1', null],
  ['v6.0.0-beta1', null],
  ['>= 6.0.0-beta1', '6.4.0'],
  ['~> 6.0.0-beta1', null],
  ['>=6.0.0-beta1, <=6.0.0-beta1', null],
  ['6.0.0-beta1, >= 5', null],
];

function root(constraint: string, aws = '~> 5.0'): string {
  return lines(
    'terraform {',
    '  required_providers {',
    `    aws = { source = "hashicorp/aws", version = "${aws}" }`,
    '  }',
    '}',
    'module "vpc" {',
    `  source  = "${HOST}/acme/vpc/aws"`,
    `  version = "${constraint}"`,
    '}',
  );
}

describeWithTerraform('module version selection (terraform as the oracle)', () => {
  let https: RegistryServer;
  let plain: RegistryServer;
  let cert: Awaited<ReturnType<typeof selfSignedCertificate>>;
  let tmp: string;
  let cliConfig: string;

  beforeAll(async () => {
    cert = await selfSignedCertificate();
    https = await startRegistry({ https: cert, modules: [VPC] });
    plain = await startRegistry({ modules: [VPC] });
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-modver-oracle-'));
    cliConfig = path.join(tmp, 'cli.tfrc');
    await fs.writeFile(cliConfig, cliHostBlock(HOST, https.url, 'modules'));
  }, 60_000);

  afterAll(async () => {
    await https?.close();
    await plain?.close();
    await cert?.cleanup();
    if (tmp !== undefined) await fs.rm(tmp, { recursive: true, force: true });
  });

  function scan(files: Record<string, string>, remoteModules = true): Promise<Report> {
    return scanFiles(files, {
      remoteModules,
      configText: { name: 'ops.hcl', text: `registry_hosts = { "${HOST}" = "${plain.url}" }\n` },
      remoteModuleSettings: { retries: 0, timeoutMs: 5000 },
    });
  }

  async function terraformGet(constraint: string): Promise<{ version: string | null; dir: string }> {
    const dir = await fs.mkdtemp(path.join(tmp, 'tf-'));
    await writeTree(dir, { 'main.tf': root(constraint) });
    const r = await runTerraform(['get', '-no-color'], dir, {
      TF_CLI_CONFIG_FILE: cliConfig,
      SSL_CERT_FILE: cert.certFile,
    });
    if (r.code !== 0) return { version: null, dir };
    const manifest = JSON.parse(
      await fs.readFile(path.join(dir, '.terraform/modules/modules.json'), 'utf8'),
    ) as { Modules: { Key: string; Version?: string }[] };
    return { version: manifest.Modules.find((m) => m.Key === 'vpc')?.Version ?? null, dir };
  }

  it.each(CASES)(
    'version = "%s": terraform and tfguard install %s',
    async (constraint, expected) => {
      const tf = await terraformGet(constraint);
      expect(tf.version).toBe(expected);
      const report = await scan({ 'main.tf': root(constraint) });
      const vpc = report.roots[0]?.remoteModuleTree?.find((m) => m.key === 'vpc');
      expect(vpc?.resolvedVersion ?? null).toBe(tf.version);
      if (tf.version === null) {
        expect(findingsOf(report, 'module-unresolved')[0]?.message).toContain('no published version matches');
      }
    },
    60_000,
  );

  it('aws ~> 5.0 with version = "~> 5": the 6.x release terraform installs conflicts, and is not stale', async () => {
    const tf = await terraformGet('~> 5');
    expect(tf.version).toBe('6.4.0');
    // What tfguard says with network resolution: the release terraform installs, and the conflict.
    const report = await scan({ 'main.tf': root('~> 5') });
    expect(findingsOf(report, 'incompatible-constraints')[0]?.message).toContain(
      'remote module "vpc" (modules.example.com/acme/vpc/aws 6.4.0) requires ">= 6.2"',
    );
    // The directory terraform installed, scanned as it is (no network): the copy is current.
    const installed: Record<string, string> = { 'main.tf': root('~> 5') };
    for (const rel of ['.terraform/modules/modules.json', '.terraform/modules/vpc/main.tf']) {
      installed[rel] = await fs.readFile(path.join(tf.dir, rel), 'utf8');
    }
    const offline = await scan(installed, false);
    expect(findingsOf(offline, 'module-unresolved')).toEqual([]);
    expect(offline.roots[0]?.remoteModuleTree?.[0]).toMatchObject({
      resolvedVersion: '6.4.0',
      origin: 'archive',
    });
    expect(findingsOf(offline, 'incompatible-constraints')).toHaveLength(1);
  }, 60_000);
});
