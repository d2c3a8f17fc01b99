/**
 * Differential test against `terraform init -backend=false -lockfile=readonly` (Terraform 1.11,
 * offline). Every scenario is a root module whose provider packages sit in its own
 * `terraform.d/plugins/` (Terraform's implied local mirror — the same files are in the scanned
 * archive), with a lock file that terraform itself wrote and that the scenario then mutates. The
 * full scan (`scanFiles`: archive reader, HCL parser, module loader, analyzeLocks, rules) must report
 * an error-level lock finding, `lock-missing` or `lock-provider-stale` exactly when terraform's
 * `init` fails; with `lock_mode = "readonly"`, an error-level lock finding exactly then. And the `h1:` terraform writes for each package equals `hashPackage` (`tfguard hash`).
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashEntries, hashPackage, hashZip } from '../../src/lockfile';
import type { Report } from '../../src/report/types';
import type { FileMap } from '../support/archive';
import { scanFiles } from '../support/scan';
import {
  currentPlatform,
  mapLimit,
  readLockFile,
  runTerraform,
  writeTree,
  writeZip,
} from '../support/terraform';
import type { LockEntry } from '../support/terraform';
import { describeWithTerraform } from '../support/external';
import { fakeH1, lockText, tf } from '../support/lock-fixtures';
import type { LockEntrySpec } from '../support/lock-fixtures';

const PLATFORM = currentPlatform();
const REG = 'registry.terraform.io';

interface Pkg {
  ns: string;
  type: string;
  version: string;
  layout: 'packed' | 'unpacked';
  /** Extra content so packages differ. */
  marker?: string;
  /** Packed: store directory entries in the zip too. */
  dirEntries?: boolean;
}

const exeName = (p: Pkg): string => `terraform-provider-${p.type}_v${p.version}`;
const exeData = (p: Pkg): string => `#!/bin/sh\n# ${p.ns}/${p.type} ${p.version} ${p.marker ?? ''}\nexit 1\n`;

function pkgFiles(p: Pkg): FileMap {
  const base = `terraform.d/plugins/${REG}/${p.ns}/${p.type}`;
  if (p.layout === 'packed') {
    return {
      [`${base}/terraform-provider-${p.type}_${p.version}_${PLATFORM}.zip`]: writeZip([
        ...(p.dirEntries === true ? [{ name: 'docs/' }] : []),
        { name: exeName(p), data: exeData(p), mode: 0o755 },
        { name: p.dirEntries === true ? 'docs/LICENSE.txt' : 'LICENSE.txt', data: `license of ${p.type}` },
      ]),
    };
  }
  return {
    [`${base}/${p.version}/${PLATFORM}/${exeName(p)}`]: exeData(p),
    [`${base}/${p.version}/${PLATFORM}/docs/README.md`]: `readme of ${p.type} ${p.version}`,
  };
}

interface Base {
  name: string;
  config: FileMap;
  packages: Pkg[];
  /** Only the layout-dependent mutations. */
  reduced?: boolean;
}

const AWS = (version: string, layout: Pkg['layout'] = 'packed', marker?: string): Pkg => ({
  ns: 'hashicorp',
  type: 'aws',
  version,
  layout,
  ...(marker === undefined ? {} : { marker }),
});
const RANDOM = (version: string, layout: Pkg['layout'] = 'unpacked'): Pkg => ({
  ns: 'hashicorp',
  type: 'random',
  version,
  layout,
});
const NULLP = (version: string, layout: Pkg['layout'] = 'packed'): Pkg => ({
  ns: 'hashicorp',
  type: 'null',
  version,
  layout,
});
const ACME = (version: string, layout: Pkg['layout'] = 'packed'): Pkg => ({
  ns: 'acme',
  type: 'widget',
  version,
  layout,
});

const BASES: Base[] = [
  {
    name: 'one packed provider',
    config: { 'main.tf': tf({ aws: { source: 'hashicorp/aws', version: '~> 5.0' } }) },
    packages: [AWS('5.8.0'), AWS('5.9.0')],
  },
  {
    name: 'one unpacked provider',
    config: { 'main.tf': tf({ random: { source: 'hashicorp/random', version: '>= 3.0' } }) },
    packages: [RANDOM('3.5.1'), RANDOM('3.6.0')],
    reduced: true,
  },
  {
    name: 'several providers, packed and unpacked',
    config: {
      'main.tf': tf({
        aws: { source: 'hashicorp/aws', version: '~> 5.0' },
        random: { source: 'hashicorp/random', version: '~> 3.5' },
        widget: { source: 'acme/widget', version: '>= 1.0' },
      }),
    },
    packages: [AWS('5.9.0', 'unpacked'), RANDOM('3.6.0', 'packed'), ACME('1.2.0'), ACME('1.3.0', 'unpacked')],
  },
  {
    name: 'child-module constraint',
    config: {
      'main.tf': `${tf({ aws: { source: 'hashicorp/aws', version: '~> 5.0' } })}module "net" {\n  source = "./modules/net"\n}\n`,
      'modules/net/main.tf': tf({
        aws: { source: 'hashicorp/aws', version: '>= 5.8' },
        null: { source: 'hashicorp/null', version: '>= 3.0' },
      }),
    },
    packages: [AWS('5.8.0'), AWS('5.9.0'), NULLP('3.2.2')],
  },
  {
    name: 'implied provider from a resource',
    config: { 'main.tf': 'resource "null_resource" "x" {}\n' },
    packages: [NULLP('3.2.1', 'unpacked'), NULLP('3.2.2', 'unpacked')],
    reduced: true,
  },
];

interface Scenario {
  name: string;
  files: FileMap;
  /** The rule(s) that explain the failure; [] when terraform is expected to succeed. */
  because: string[];
  /** Non-failing rules that must also be reported. */
  warns?: string[];
}

/** Lock entries terraform wrote, keyed by full source. */
type Written = Map<string, LockEntry>;

function toSpecs(written: Written): LockEntrySpec[] {
  return [...written].map(([source, e]) => ({
    source,
    version: e.version as string,
    ...(e.constraints === null ? {} : { constraints: e.constraints }),
    hashes: e.hashes,
  }));
}

function packageFiles(pkgs: Pkg[]): FileMap {
  return Object.assign({}, ...pkgs.map(pkgFiles)) as FileMap;
}

function mutations(base: Base, written: Written): Scenario[] {
  const specs = toSpecs(written);
  const files = (lock: string | null, pkgs = base.packages, config = base.config): FileMap => ({
    ...config,
    ...packageFiles(pkgs),
    ...(lock === null ? {} : { '.terraform.lock.hcl': lock }),
  });
  const first = specs[0] as LockEntrySpec;
  const firstPkg = base.packages.find(
    (p) => `${REG}/${p.ns}/${p.type}` === first.source && p.version === first.version,
  ) as Pkg;
  const other = base.packages.find(
    (p) => `${REG}/${p.ns}/${p.type}` === first.source && p.version !== first.version,
  );
  const out: Scenario[] = [
    { name: 'good lock', files: files(lockText(specs)), because: [] },
    {
      name: 'changed hash',
      files: files(
        lockText(specs.map((s, i) => (i === 0 ? { ...s, hashes: [fakeH1(`changed ${s.source}`)] } : s))),
      ),
      because: ['lock-hash-mismatch'],
    },
    {
      name: 'an extra unknown hash next to the right one',
      files: files(
        lockText(
          specs.map((s, i) => (i === 0 ? { ...s, hashes: [...(s.hashes ?? []), fakeH1('extra')] } : s)),
        ),
      ),
      because: [],
    },
    {
      name: 'changed version, not in the mirror',
      files: files(lockText(specs.map((s, i) => (i === 0 ? { ...s, version: bump(s.version) } : s)))),
      because: ['lock-version-mismatch'],
    },
    {
      name: 'missing entry',
      files: files(lockText(specs.slice(1))),
      because: ['lock-provider-missing'],
    },
    {
      name: 'stale entry',
      files: files(
        lockText([...specs, { source: `${REG}/hashicorp/time`, version: '0.9.1', hashes: [fakeH1('time')] }]),
      ),
      because: ['lock-provider-stale'],
    },
    { name: 'no lock file', files: files(null), because: ['lock-missing'] },
    {
      name: 'tampered package',
      files: files(
        lockText(specs),
        base.packages.map((p) => (p === firstPkg ? { ...p, marker: 'tampered' } : p)),
      ),
      because: ['lock-hash-mismatch'],
    },
    {
      name: 'recorded constraints drift only',
      files: files(lockText(specs.map((s, i) => (i === 0 ? { ...s, constraints: '>= 0.1.0' } : s)))),
      because: [],
      warns: ['lock-constraints-drift'],
    },
  ];
  if (base.reduced === true) {
    // the scenarios that do not depend on the package layout are covered by the other bases
    const covered = new Set([
      'an extra unknown hash next to the right one',
      'stale entry',
      'no lock file',
      'recorded constraints drift only',
    ]);
    out.splice(0, out.length, ...out.filter((sc) => !covered.has(sc.name)));
  }
  if (other !== undefined) {
    out.push({
      name: 'changed version to another mirrored version, hashes of the old one',
      files: files(lockText(specs.map((s, i) => (i === 0 ? { ...s, version: other.version } : s)))),
      because: ['lock-hash-mismatch'],
    });
  }
  return out;
}

/** A version that satisfies the same constraints but is in no mirror. */
function bump(v: string): string {
  const [a, b, c] = v.split('.').map(Number) as [number, number, number];
  return `${a}.${b}.${c + 7}`;
}

/** Scenarios that need their own configuration. */
function specials(bases: Map<string, Written>): Scenario[] {
  const out: Scenario[] = [];
  const child = BASES[3] as Base;
  const childLock = bases.get(child.name) as Written;
  out.push({
    name: 'child-module constraint raised above the locked version',
    files: {
      ...child.config,
      'modules/net/main.tf': tf({
        aws: { source: 'hashicorp/aws', version: '>= 5.9.1' },
        null: { source: 'hashicorp/null', version: '>= 3.0' },
      }),
      ...packageFiles(child.packages),
      '.terraform.lock.hcl': lockText(toSpecs(childLock)),
    },
    because: ['lock-version-mismatch'],
  });
  out.push({
    name: 'root constraint excludes the locked version',
    files: {
      ...child.config,
      'main.tf': `${tf({ aws: { source: 'hashicorp/aws', version: '~> 5.8.0, != 5.9.0' } })}module "net" {\n  source = "./modules/net"\n}\n`,
      ...packageFiles(child.packages),
      '.terraform.lock.hcl': lockText(toSpecs(childLock)),
    },
    because: ['lock-version-mismatch'],
  });
  const one = BASES[0] as Base;
  const oneLock = toSpecs(bases.get(one.name) as Written);
  out.push({
    name: 'zh: of the packed zip instead of h1:',
    files: {
      ...one.config,
      ...packageFiles(one.packages),
      '.terraform.lock.hcl': lockText(oneLock.map((s) => ({ ...s, hashes: [ZH_AWS_590] }))),
    },
    because: [],
  });
  const unpacked = BASES[1] as Base;
  out.push({
    name: 'zh: only, for an unpacked package',
    files: {
      ...unpacked.config,
      ...packageFiles(unpacked.packages),
      '.terraform.lock.hcl': lockText(
        toSpecs(bases.get(unpacked.name) as Written).map((s) => ({ ...s, hashes: [ZH_AWS_590] })),
      ),
    },
    // Terraform treats zh:-only hashes as no hashes for a local directory (and installs it);
    // tfguard warns (lock-platform-coverage), which is not a failure.
    because: [],
    warns: ['lock-platform-coverage'],
  });
  const withDirs = AWS('5.9.0', 'packed');
  withDirs.dirEntries = true;
  out.push({
    name: 'packed zip with directory entries, h1: as terraform records it',
    files: {
      ...one.config,
      ...packageFiles([withDirs]),
      '.terraform.lock.hcl': lockText(oneLock.map((s) => ({ ...s, hashes: [H1_DIRS_ZIP] }))),
    },
    because: ['lock-hash-mismatch'],
  });
  out.push({
    name: 'duplicate provider block',
    files: {
      ...one.config,
      ...packageFiles(one.packages),
      '.terraform.lock.hcl': lockText([...oneLock, ...oneLock]),
    },
    because: ['lock-parse-error'],
  });
  out.push({
    name: 'version not in normalized form',
    files: {
      ...one.config,
      ...packageFiles(one.packages),
      '.terraform.lock.hcl': lockText(oneLock.map((s) => ({ ...s, version: '5.9' }))),
    },
    because: ['lock-parse-error'],
  });
  out.push({
    name: 'constraints not in normalized form',
    files: {
      ...one.config,
      ...packageFiles(one.packages),
      '.terraform.lock.hcl': lockText(oneLock.map((s) => ({ ...s, constraints: '~>5.0' }))),
    },
    because: ['lock-parse-error'],
  });
  return out;
}

let ZH_AWS_590 = '';
let H1_DIRS_ZIP = '';

const FAILING_RULES = new Set(['lock-missing', 'lock-provider-stale']);

function lockFailure(report: Report): string[] {
  return report.findings
    .filter((f) => f.ruleId.startsWith('lock-') && (f.severity === 'error' || FAILING_RULES.has(f.ruleId)))
    .map((f) => f.ruleId);
}

/** Under `lock_mode = "readonly"` the severity alone must say whether the CI fails. */
const READONLY_SETTINGS = 'lock_mode = "readonly"\n';

function lockErrors(report: Report): string[] {
  return report.findings
    .filter((f) => f.ruleId.startsWith('lock-') && f.severity === 'error')
    .map((f) => f.ruleId);
}

let work: string;
let env: Record<string, string>;

async function materialize(dir: string, files: FileMap): Promise<void> {
  await writeTree(dir, files);
  for (const rel of Object.keys(files)) {
    if (/\/terraform-provider-[^/]+$/.test(rel)) await chmod(join(dir, ...rel.split('/')), 0o755);
  }
}

async function terraformInit(dir: string, readonly: boolean) {
  return runTerraform(
    ['init', '-backend=false', '-input=false', '-no-color', ...(readonly ? ['-lockfile=readonly'] : [])],
    dir,
    env,
    { timeoutMs: 90_000 },
  );
}

interface Outcome {
  scenario: string;
  because: string[];
  terraformFailed: boolean;
  terraformOutput: string;
  scanFailures: string[];
  /** Error-level lock findings of the default scan and of the scan with lock_mode = "readonly". */
  defaultErrors: string[];
  readonlyErrors: string[];
  warns: string[];
  reported: string[];
}

let outcomes: Outcome[] = [];
const hashChecks: Array<{ what: string; terraform: string; tfguard: string }> = [];

describeWithTerraform('lock files against terraform init', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tfguard-lockdiff-'));
    const cli = join(work, 'empty.tfrc');
    await writeFile(cli, '# implied provider installation: terraform.d/plugins of the working directory\n');
    // no user plugin directories, no credentials, no cache: only the root's terraform.d/plugins
    env = { TF_CLI_CONFIG_FILE: cli, HOME: join(work, 'home'), XDG_DATA_HOME: join(work, 'xdg') };

    const zhZip = packageFiles([AWS('5.9.0')]);
    ZH_AWS_590 = (await hashZip(Object.values(zhZip)[0] as Buffer)).zh;
    const dirsZip = packageFiles([{ ...AWS('5.9.0'), dirEntries: true }]);
    H1_DIRS_ZIP = (await hashZip(Object.values(dirsZip)[0] as Buffer)).h1;

    // 1. terraform writes each base's lock file (and its h1: for every package it installed)
    const written = new Map<string, Written>();
    await mapLimit(BASES, 5, async (base, i) => {
      const dir = join(work, `base-${i}`);
      await materialize(dir, { ...base.config, ...packageFiles(base.packages) });
      const r = await terraformInit(dir, false);
      if (r.code !== 0) throw new Error(`terraform init failed for base "${base.name}":\n${r.output}`);
      const lock = readLockFile(dir);
      written.set(base.name, lock);
      for (const [source, entry] of lock) {
        const [, ns, type] = source.split('/') as [string, string, string];
        const pkg = base.packages.find(
          (p) => p.ns === ns && p.type === type && p.version === entry.version,
        ) as Pkg;
        const path = Object.keys(pkgFiles(pkg))[0] as string;
        const onDisk =
          pkg.layout === 'packed'
            ? join(dir, ...path.split('/'))
            : join(dir, ...path.split('/').slice(0, -1));
        hashChecks.push({
          what: `${base.name}: ${source} ${entry.version} (${pkg.layout})`,
          terraform: entry.hashes.join(' '),
          tfguard: (await hashPackage(onDisk)).h1,
        });
      }
    });

    // 2. every scenario: terraform init -lockfile=readonly vs the full scan of the same files
    const scenarios = [
      ...BASES.flatMap((b) =>
        mutations(b, written.get(b.name) as Written).map((s) => ({ ...s, name: `${b.name}: ${s.name}` })),
      ),
      ...specials(written),
    ];
    outcomes = await mapLimit(scenarios, 6, async (s, i) => {
      const dir = join(work, `s-${i}`);
      await materialize(dir, s.files);
      const [tfResult, report, readonlyReport] = await Promise.all([
        terraformInit(dir, true),
        scanFiles(s.files),
        scanFiles(s.files, { config: READONLY_SETTINGS }),
      ]);
      return {
        scenario: s.name,
        because: s.because,
        terraformFailed: tfResult.code !== 0,
        terraformOutput: tfResult.output,
        scanFailures: lockFailure(report),
        defaultErrors: lockErrors(report),
        readonlyErrors: lockErrors(readonlyReport),
        warns: s.warns ?? [],
        reported: report.findings.map((f) => f.ruleId),
      };
    });
  }, 240_000);

  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  describe('lock verification vs terraform init -lockfile=readonly', () => {
    it('covers at least 30 scenarios, failing and passing', () => {
      expect(outcomes.length).toBeGreaterThanOrEqual(30);
      expect(outcomes.filter((o) => o.terraformFailed).length).toBeGreaterThanOrEqual(10);
      expect(outcomes.filter((o) => !o.terraformFailed).length).toBeGreaterThanOrEqual(8);
    });

    it('the scan reports a failing lock finding exactly when terraform init fails', () => {
      const disagreements = outcomes
        .filter((o) => o.terraformFailed !== o.scanFailures.length > 0)
        .map(
          (o) =>
            `${o.scenario}: terraform ${o.terraformFailed ? 'failed' : 'succeeded'}, scan reported [${o.scanFailures.join(', ')}]\n${o.terraformOutput}`,
        );
      expect(disagreements).toEqual([]);
    });

    it('with lock_mode = "readonly", the scan reports a lock error exactly when terraform init fails', () => {
      const disagreements = outcomes
        .filter((o) => o.terraformFailed !== o.readonlyErrors.length > 0)
        .map(
          (o) =>
            `${o.scenario}: terraform ${o.terraformFailed ? 'failed' : 'succeeded'}, readonly scan errors [${o.readonlyErrors.join(', ')}]\n${o.terraformOutput}`,
        );
      expect(disagreements).toEqual([]);
      // By default the same findings are there, but lock-missing and lock-provider-stale are not errors.
      const raised = outcomes.filter((o) => o.readonlyErrors.some((r) => FAILING_RULES.has(r)));
      expect(raised.length).toBeGreaterThanOrEqual(2);
      for (const o of raised) {
        expect({ scenario: o.scenario, errors: o.defaultErrors }).toEqual({
          scenario: o.scenario,
          errors: o.readonlyErrors.filter((r) => !FAILING_RULES.has(r)),
        });
      }
    });

    it('each failure is explained by the expected rule', () => {
      const unexplained = outcomes
        .filter(
          (o) =>
            o.because.some((r) => !o.scanFailures.includes(r)) ||
            o.warns.some((r) => !o.reported.includes(r)) ||
            (o.because.length === 0) !== !o.terraformFailed,
        )
        .map(
          (o) =>
            `${o.scenario}: expected [${o.because.join(', ')}], got [${o.scanFailures.join(', ')}], terraform ${o.terraformFailed ? 'failed' : 'succeeded'}`,
        );
      expect(unexplained).toEqual([]);
    });

    it('hashPackage (tfguard hash) equals the h1: terraform writes, for every package', () => {
      expect(hashChecks.length).toBeGreaterThanOrEqual(8);
      for (const c of hashChecks)
        expect({ what: c.what, h1: c.tfguard }).toEqual({ what: c.what, h1: c.terraform });
    });

    it('h1 of unpacked files in the archive equals the h1 of the zip they came from', async () => {
      const p = AWS('5.9.0');
      const zip = Object.values(packageFiles([p]))[0] as Buffer;
      const z = await hashZip(zip);
      const { createHash } = await import('node:crypto');
      const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
      expect(
        hashEntries([
          { path: exeName(p), sha256: sha(exeData(p)) },
          { path: 'LICENSE.txt', sha256: sha('license of aws') },
        ]),
      ).toBe(z.h1);
    });
  });
});
