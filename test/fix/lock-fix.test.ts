/**
 * `tfguard fix` on lock files, with terraform as the oracle. A fake registry (real zips, SHA256SUMS
 * signed with a real OpenPGP key, OpenTofu-style `packages` hashes for one release) runs twice from
 * the same releases: over HTTP for tfguard and over HTTPS for terraform (which trusts its
 * self-signed certificate through SSL_CERT_FILE and finds it through a `host` block).
 *
 * `terraform providers lock -platform=...` writes the lock file of the configuration from scratch
 * once (`expected`). Each scenario starts from that file spoilt in some ways (a stale entry, drifted
 * constraints, a missing entry, missing platforms, no file at all); after `tfguard fix` the file
 * must be byte for byte `expected`, `terraform init -lockfile=readonly` against a filesystem mirror
 * of the same packages must accept it, a rescan must show no lock finding, the `--dry-run` patch
 * must give the same file through `git apply`, and a second run must change nothing.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { cli } from '../support/cli';
import { scanPath } from '../../src/scan';
import { describeWithTerraform } from '../support/external';
import {
  cliHostBlock,
  generateTestKey,
  selfSignedCertificate,
  startRegistry,
} from '../support/registry-server';
import type { FakeRelease, RegistryServer } from '../support/registry-server';
import { currentPlatform, runTerraform, withMirror, writeTree } from '../support/terraform';
import type { Mirror } from '../support/terraform';

const run = promisify(execFile);

const HOST = 'registry.example.test';
const CLOUD = `${HOST}/acme/cloud`;
const DNS = `${HOST}/acme/dns`;
const PLATFORMS = [...new Set([currentPlatform(), 'darwin_arm64', 'windows_amd64'])];
const L = '.terraform.lock.hcl';

const MAIN_TF = [
  'terraform {',
  '  backend "local" {}',
  '  required_providers {',
  `    cloud = { source = "${CLOUD}", version = "~> 1.0" }`,
  `    dns   = { source = "${DNS}", version = "~> 2.0" }`,
  '  }',
  '}',
  '',
].join('\n');
/** The repository's settings: the platforms its team uses. */
const SETTINGS = `platforms = [${PLATFORMS.map((p) => `"${p}"`).join(', ')}]\n`;

function releases(): FakeRelease[] {
  const r = (type: string, version: string, extra: Partial<FakeRelease> = {}): FakeRelease => ({
    namespace: 'acme',
    type,
    version,
    platforms: PLATFORMS,
    ...extra,
  });
  return [
    r('cloud', '1.0.0'),
    // The OpenTofu registry's packages hashes: h1: without downloading.
    r('cloud', '1.4.0', { packages: true }),
    r('dns', '2.0.0'),
    // No packages hashes: h1: by downloading; a signed manifest line, recorded as a zh: too.
    r('dns', '2.1.0', { extraFiles: [['terraform-provider-dns_2.1.0_manifest.json', '{"version":1}\n']] }),
    r('old', '0.1.0'),
  ];
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(
    () => true,
    () => false,
  );
}

/** The block of `source` in a lock text written by terraform. */
function block(text: string, source: string): string {
  const m = new RegExp(`\\nprovider "${source.replace(/[.]/g, '\\.')}" \\{\\n[\\s\\S]*?\\n\\}\\n`).exec(text);
  if (m === null) throw new Error(`no block for ${source} in:\n${text}`);
  return m[0];
}

interface Scenario {
  name: string;
  /** The lock file to start from (from terraform's own), null for none. */
  spoil: ((expected: string) => string) | null;
  /** Lock rules the scan must report before the fix. */
  before: string[];
}

const SCENARIOS: Scenario[] = [
  {
    name: 'stale entry removed',
    spoil: (t) =>
      `${t}\nprovider "${HOST}/acme/old" {\n  version = "0.1.0"\n  hashes = [\n    "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",\n  ]\n}\n`,
    // The stale entry also lacks platforms: removing it fixes both.
    before: ['lock-platform-coverage', 'lock-provider-stale'],
  },
  {
    name: 'drifted constraints rewritten',
    spoil: (t) => t.replace('constraints = "~> 1.0"', 'constraints = ">= 1.0.0"'),
    before: ['lock-constraints-drift'],
  },
  {
    name: 'missing entry added (h1: downloaded, manifest zh: recorded)',
    spoil: (t) => t.replace(block(t, DNS), ''),
    before: ['lock-provider-missing'],
  },
  {
    name: 'missing platforms added (h1: from the packages hashes)',
    spoil: (t) => {
      // What terraform init on one platform leaves: one h1:, no zh:.
      const b = block(t, CLOUD);
      const lines = b.split('\n');
      const oneH1 = lines.find((line) => /^ {4}"h1:/.test(line));
      return t.replace(b, lines.filter((line) => !/^ {4}"(h1|zh):/.test(line) || line === oneH1).join('\n'));
    },
    before: ['lock-platform-coverage'],
  },
  {
    name: 'missing lock file written',
    spoil: null,
    before: ['lock-missing'],
  },
  {
    name: 'stale + drift + missing entry + missing platforms at once',
    spoil: (t) => {
      const cloud = block(t, CLOUD);
      // Every zh: and one platform's h1: go: the registry's `packages` tie each h1: to its platform,
      // so the other platforms stay covered by their h1: and that one is certainly not.
      let h1Dropped = false;
      const fewer = cloud
        .split('\n')
        .filter((line) => {
          if (/^ {4}"zh:/.test(line)) return false;
          if (!h1Dropped && /^ {4}"h1:/.test(line)) return !(h1Dropped = true);
          return true;
        })
        .join('\n')
        .replace('constraints = "~> 1.0"', 'constraints = "~> 1.4"');
      const spoilt = t.replace(block(t, DNS), '').replace(cloud, fewer);
      return `${spoilt}\nprovider "${HOST}/acme/old" {\n  version = "0.1.0"\n  hashes = [\n    "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",\n  ]\n}\n`;
    },
    before: [
      'lock-constraints-drift',
      'lock-platform-coverage',
      'lock-provider-missing',
      'lock-provider-stale',
    ],
  },
];

describeWithTerraform('tfguard fix on lock files (terraform as the oracle)', () => {
  let http: RegistryServer;
  let https: RegistryServer;
  let cert: Awaited<ReturnType<typeof selfSignedCertificate>>;
  let mirror: Mirror;
  let tmp: string;
  /** `--config` of whoever runs the fix: registry access, the fake registry's address. */
  let operatorConfig: string;
  /** What `terraform providers lock -platform=...` writes for MAIN_TF from scratch. */
  let expected: string;

  beforeAll(async () => {
    cert = await selfSignedCertificate();
    const key = await generateTestKey('Test Registry');
    http = await startRegistry({ signingKey: key, releases: releases() });
    https = await startRegistry({ signingKey: key, releases: releases(), https: cert });
    // Both serve the same packages.
    for (const [type, version] of [
      ['cloud', '1.4.0'],
      ['dns', '2.1.0'],
    ] as const) {
      expect(https.zh('acme', type, version)).toEqual(http.zh('acme', type, version));
    }
    mirror = await withMirror([]);
    tmp = path.join(mirror.dir, 'scenarios');
    // The filesystem mirror holds the packages the registry serves for this platform.
    for (const [type, version] of [
      ['cloud', '1.4.0'],
      ['dns', '2.1.0'],
    ] as const) {
      const name = `terraform-provider-${type}_${version}_${currentPlatform()}.zip`;
      const res = await fetch(`${http.url}/files/acme/${type}/${version}/${name}`);
      const target = path.join(mirror.mirrorDir, HOST, 'acme', type, name);
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(target, Buffer.from(await res.arrayBuffer()));
    }
    operatorConfig = path.join(mirror.dir, 'operator.hcl');
    await fs.writeFile(operatorConfig, `registry = true\nregistry_hosts = { "${HOST}" = "${http.url}" }\n`);

    const cliConfig = path.join(mirror.dir, 'registry.tfrc');
    await fs.writeFile(cliConfig, cliHostBlock(HOST, https.url, 'providers'));
    const scratch = path.join(mirror.dir, 'scratch');
    await writeTree(scratch, { 'main.tf': MAIN_TF });
    const r = await runTerraform(
      ['providers', 'lock', ...PLATFORMS.map((p) => `-platform=${p}`), '-no-color'],
      scratch,
      { TF_CLI_CONFIG_FILE: cliConfig, SSL_CERT_FILE: cert.certFile },
    );
    if (r.code !== 0) throw new Error(`terraform providers lock failed:\n${r.output}`);
    expected = await fs.readFile(path.join(scratch, L), 'utf8');
  }, 120_000);

  afterAll(async () => {
    await http?.close();
    await https?.close();
    await cert?.cleanup();
    await mirror?.cleanup();
  });

  it('terraform locked what the scenarios expect: every sums line as zh:, an h1: per platform', () => {
    expect(block(expected, CLOUD)).toContain('version     = "1.4.0"');
    expect(block(expected, DNS)).toContain('version     = "2.1.0"');
    // dns: 3 zips + the manifest; cloud: 3 zips; and one h1: per platform each.
    expect(block(expected, DNS).match(/"zh:/g)).toHaveLength(PLATFORMS.length + 1);
    expect(block(expected, CLOUD).match(/"zh:/g)).toHaveLength(PLATFORMS.length);
    expect(block(expected, CLOUD).match(/"h1:/g)).toHaveLength(PLATFORMS.length);
  });

  it.each(SCENARIOS.map((s, i) => [s.name, i] as const))('%s', async (_name, i) => {
    const s = SCENARIOS[i] as Scenario;
    const dir = path.join(tmp, `s${i}`);
    const files: Record<string, string> = { 'main.tf': MAIN_TF, '.tfguard.hcl': SETTINGS };
    if (s.spoil !== null) files[L] = s.spoil(expected);
    await writeTree(dir, files);
    const scanOptions = {
      configText: { name: operatorConfig, text: await fs.readFile(operatorConfig, 'utf8') },
    };
    const lockRules = async (): Promise<string[]> =>
      [...new Set((await scanPath(dir, scanOptions)).findings.map((f) => f.ruleId))]
        .filter((id) => id.startsWith('lock-'))
        .sort();
    expect(await lockRules()).toEqual(s.before);

    // --dry-run: a patch, nothing written.
    const dry = await cli(['fix', dir, '--config', operatorConfig, '--dry-run']);
    expect(dry.stderr).toMatch(/would fix \d+ findings? in 1 file/);
    expect(await exists(path.join(dir, L))).toBe(s.spoil !== null);

    const first = await cli(['fix', dir, '--config', operatorConfig]);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/^tfguard fix: fixed \d+ findings? in 1 file/);
    const fixed = await fs.readFile(path.join(dir, L), 'utf8');
    expect(fixed).toBe(expected);
    expect(await lockRules()).toEqual([]);

    // The patch gives the same file.
    const copy = path.join(tmp, `s${i}-patched`);
    await writeTree(copy, files);
    const patch = path.join(tmp, `s${i}.patch`);
    await fs.writeFile(patch, dry.stdout);
    await run('git', ['apply', '--check', patch], { cwd: copy });
    await run('git', ['apply', patch], { cwd: copy });
    expect(await fs.readFile(path.join(copy, L), 'utf8')).toBe(fixed);

    // Idempotent.
    const second = await cli(['fix', dir, '--config', operatorConfig]);
    expect(second.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(await fs.readFile(path.join(dir, L), 'utf8')).toBe(fixed);

    // Terraform accepts it as it is.
    const init = await runTerraform(
      ['init', '-backend=false', '-input=false', '-no-color', '-lockfile=readonly'],
      dir,
      mirror.env,
    );
    expect(init.output).toContain('Terraform has been successfully initialized');
    expect(init.code).toBe(0);
    expect(await fs.readFile(path.join(dir, L), 'utf8')).toBe(fixed);
  });

  it('without registry access, adds nothing and says why', async () => {
    const dir = path.join(tmp, 'offline');
    const start = expected.replace(block(expected, DNS), '');
    await writeTree(dir, { 'main.tf': MAIN_TF, '.tfguard.hcl': SETTINGS, [L]: start });
    const res = await cli(['fix', dir]);
    expect(res.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(res.stdout).toMatch(
      /lock-provider-missing \(error\): adding lock entries and hashes needs the registry/,
    );
    expect(res.code).toBe(1);
    expect(await fs.readFile(path.join(dir, L), 'utf8')).toBe(start);
  });

  it('with TFGUARD_CACHE_DIR, a package is downloaded once across runs (cached by content)', async () => {
    const cacheDir = path.join(tmp, 'cache');
    const saved = process.env.TFGUARD_CACHE_DIR;
    process.env.TFGUARD_CACHE_DIR = cacheDir;
    try {
      const start = expected.replace(block(expected, DNS), '');
      const zips = (): string[] =>
        http.requests.filter((p) => p.startsWith('/files/acme/dns/') && p.endsWith('.zip'));
      const before = zips().length;
      for (const name of ['cache-a', 'cache-b']) {
        const dir = path.join(tmp, name);
        await writeTree(dir, { 'main.tf': MAIN_TF, '.tfguard.hcl': SETTINGS, [L]: start });
        const res = await cli(['fix', dir, '--config', operatorConfig]);
        expect(res.stdout).toMatch(/^tfguard fix: fixed 1 finding in 1 file/);
        expect(await fs.readFile(path.join(dir, L), 'utf8')).toBe(expected);
      }
      // One download per platform, in the first run only.
      expect(zips().length - before).toBe(PLATFORMS.length);
      const kept = await fs.readdir(path.join(cacheDir, 'package-h1', 'v1'));
      const zh = Object.values(http.zh('acme', 'dns', '2.1.0')).map((h) => `${h.slice(3)}.json`);
      expect(kept.sort()).toEqual(zh.sort());
    } finally {
      if (saved === undefined) delete process.env.TFGUARD_CACHE_DIR;
      else process.env.TFGUARD_CACHE_DIR = saved;
    }
  });
});
