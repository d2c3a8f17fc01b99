/**
 * Differential test of remote module resolution against the real `terraform` (1.11, offline):
 * git repositories on disk are called through `git::file://` sources (a subdirectory, a ref, a
 * nested remote call, a local call inside the package, two versions of one repository); `terraform
 * init` installs them under `.terraform/modules`, and `terraform providers` prints what every
 * module instance requires. The same directory, packed into an archive with `.terraform/modules`,
 * is scanned by tfguard without network: the per-module requirement tree (module key → provider →
 * that module's normalized constraints) and the combined constraints (`init`'s "Finding ...") must
 * be the same.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Report } from '../../src/report/types';
import { combineConstraints } from '../../src/modules';
import { makeTarGz } from '../support/archive';
import { describeWithTerraform } from '../support/external';
import { gitRepo } from '../support/git';
import type { GitRepo } from '../support/git';
import type { Mirror } from '../support/terraform';
import { readTree, runTerraform, terraformInit, withMirror, writeTree } from '../support/terraform';
import { scanBytes } from '../../src/scan';
import { parseInitFinding, parseProvidersTree } from '../support/module-oracle';

const rp = (entries: Record<string, [string, string | null]>): string =>
  `terraform {\n  required_providers {\n${Object.entries(entries)
    .map(
      ([name, [source, version]]) =>
        `    ${name} = { source = "${source}"${version === null ? '' : `, version = "${version}"`} }`,
    )
    .join('\n')}\n  }\n}\n`;

const call = (name: string, source: string): string => `module "${name}" {\n  source = "${source}"\n}\n`;

let work: string;
let mirror: Mirror;
let net: GitRepo;
let base: GitRepo;

/** tfguard's requirement tree: module key → provider → that module's normalized constraints. */
function tfguardTree(report: Report): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  const root = report.roots[0];
  if (root === undefined) throw new Error('no root');
  // The archive's own modules, keyed by their call path from the root (local calls).
  const byPath = new Map(report.modules.map((m) => [m.path, m]));
  const keys = new Map<string, string>([[root.path, '']]);
  for (const path of root.modules) {
    const from = keys.get(path) as string;
    for (const c of byPath.get(path)?.moduleCalls ?? []) {
      if (c.sourceKind !== 'local' || c.target === null || keys.has(c.target)) continue;
      keys.set(c.target, from === '' ? c.name : `${from}.${c.name}`);
    }
  }
  for (const path of root.modules) {
    const reqs = new Map<string, string>();
    for (const p of byPath.get(path)?.providers ?? []) {
      if (p.source.startsWith('terraform.io/builtin/')) continue;
      reqs.set(p.source, combineConstraints(p.constraints === null ? [] : [p.constraints]) ?? '<invalid>');
    }
    out.set(keys.get(path) as string, reqs);
  }
  for (const r of root.remoteModuleTree ?? []) {
    if (r.origin === null) throw new Error(`remote module ${r.key} unresolved: ${r.unresolved ?? ''}`);
    out.set(
      r.key,
      new Map(r.providers.map((p) => [p.source, combineConstraints(p.constraints) ?? '<invalid>'])),
    );
  }
  return out;
}

const sorted = (m: Map<string, Map<string, string>>): [string, [string, string][]][] =>
  [...m]
    .map(([k, v]) => [k, [...v].sort(([a], [b]) => (a < b ? -1 : 1))] as [string, [string, string][]])
    .sort(([a], [b]) => (a < b ? -1 : 1));

describeWithTerraform('remote modules vs terraform init + terraform providers', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tfguard-remote-oracle-'));
    mirror = await withMirror([]);
    base = await gitRepo({
      'v1.0.0': {
        'main.tf': rp({ random: ['hashicorp/random', '>= 3.1'] }) + 'resource "null_resource" "x" {}\n',
      },
      'v2.0.0': {
        'main.tf': rp({ random: ['hashicorp/random', '>= 3.5, < 4.0'], time: ['hashicorp/time', null] }),
      },
    });
    net = await gitRepo({
      'v1.0.0': {
        'modules/x/main.tf':
          rp({ aws: ['hashicorp/aws', '>= 5.0'] }) +
          call('y', '../y') +
          call('base', `git::file://${base.dir}?ref=v1.0.0`),
        'modules/x/override.tf': rp({ aws: ['hashicorp/aws', '>= 5.10'] }),
        'modules/y/main.tf': 'resource "tls_private_key" "k" {\n  algorithm = "ED25519"\n}\n',
        'README.md': '# net\n',
      },
    });
  });

  afterAll(async () => {
    await mirror?.cleanup();
    for (const d of [work, net?.dir, base?.dir]) if (d) await rm(d, { recursive: true, force: true });
  });

  it.each(['.', 'envs/prod'])(
    "root %s: the per-module requirement tree and the combined constraints are terraform's",
    async (rootPath) => {
      const top = join(work, rootPath === '.' ? 'top' : 'nested');
      const dir = join(top, rootPath);
      await writeTree(dir, {
        'main.tf':
          rp({ aws: ['hashicorp/aws', '~> 5.0'] }) +
          call('net', `git::file://${net.dir}//modules/x?ref=v1.0.0`) +
          call('local', './local'),
        'local/main.tf': call('base', `git::file://${base.dir}?ref=v2.0.0`),
      });
      const init = await terraformInit(dir, mirror);
      expect(init.output).toContain('Initializing modules...');
      const finding = parseInitFinding(init.stdout);
      const providers = await runTerraform(['providers', '-no-color'], dir, mirror.env);
      expect(providers.code).toBe(0);
      const terraform = parseProvidersTree(providers.stdout);
      for (const reqs of terraform.values()) reqs.delete('terraform.io/builtin/terraform');

      // Every file except git's own and terraform's provider packages, as an archive holds them.
      const files = await readTree(
        top,
        (name, parent) => name === '.git' || (name === 'providers' && parent.endsWith('.terraform')),
      );
      expect(Object.keys(files)).toContain(join(rootPath, '.terraform/modules/modules.json'));
      const report = await scanBytes('installed.tar.gz', await makeTarGz(files));
      const tree = report.roots[0];
      expect(sorted(tfguardTree(report))).toEqual(sorted(terraform));
      expect(report.roots.map((r) => r.path)).toEqual([rootPath]);
      // The comparison is not vacuous: six instances, remote ones nested two deep.
      expect([...terraform.keys()].sort()).toEqual(['', 'local', 'local.base', 'net', 'net.base', 'net.y']);
      expect(report.roots[0]?.remoteModuleTree?.map((m) => m.origin)).toEqual([
        'archive',
        'archive',
        'archive',
        'archive',
      ]);

      const combined = new Map(
        (tree?.providers ?? []).map((p) => [
          p.source.replace(/^registry\.terraform\.io\//, ''),
          p.constraints ?? '',
        ]),
      );
      expect([...combined].sort()).toEqual([...finding].sort());
      expect(report.findings.filter((f) => f.ruleId === 'module-unresolved')).toEqual([]);
    },
    120_000,
  );
});
