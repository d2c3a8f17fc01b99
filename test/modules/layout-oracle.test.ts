/**
 * Differential tests of the repository layouts of docs/classification.md against the real `terraform` CLI (1.11,
 * offline, fake provider packages in a filesystem mirror: test/support/terraform.ts). Each layout is
 * a small tree built here from the pattern, scanned by tfguard through the real path (a tar.gz read
 * by `scanBytes`, or a directory read by `scanPath`), and run through terraform the way the layout
 * is really used:
 *
 * 1. **Terragrunt units.** Terragrunt is not installed, so the test does what Terragrunt does for a
 *    unit `env/staging/app/terragrunt.hcl` with `terraform { source = "../../../modules//app" }` and
 *    `include { path = find_in_parent_folders("root.hcl") }`:
 *    - it copies the source *package* (the part before `//`, here `modules/`) into a working
 *      directory and runs terraform in its subdirectory (`app`), so `../db` calls inside the package
 *      keep working;
 *    - it writes each `generate` block of the unit and of the files it includes into that directory;
 *      `file()` in `env/root.hcl` is relative to `env/` (Terragrunt evaluates an included file's
 *      functions in that file's directory), and the written file starts with Terragrunt's signature
 *      comment;
 *    - it copies the unit's `.terraform.lock.hcl` into the working directory before running
 *      terraform (and back afterwards);
 *    - CI runs `terraform init -backend=false -lockfile=readonly` there.
 *    Terraform's verdict on the unit's lock must be tfguard's: a failing lock finding on the unit
 *    exactly when init fails, with the rule that explains it.
 * 2. **`terraform test` helpers.** `terraform init` in the tested root installs the modules of
 *    `run { module { source = "./tests/setup" } }` blocks and locks their providers with the
 *    root's; tfguard must count them as required by the root, not stale.
 * 3. **Installed remote modules.** A local git repository stands in for the remote host
 *    (`git::file://…`), so `terraform get` installs it offline; a second call into
 *    `./.terraform/modules/remote/modules/sub` is then valid, and the lock entries terraform writes
 *    for what the remote code requires must not be called stale.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { git } from '../support/git';
import { readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import type { Finding } from '../../src/rules';
import type { Report } from '../../src/report/types';
import { scanPath } from '../../src/scan';
import type { FileMap } from '../support/archive';
import { scanFiles } from '../support/scan';
import type { LockEntry, Mirror, TerraformResult } from '../support/terraform';
import {
  mapLimit,
  readLockFile,
  runTerraform,
  terraformInit,
  withMirror,
  writeTree,
} from '../support/terraform';
import { lineOf, lockText } from '../support/lock-fixtures';
import { describeWithTerraform } from '../support/external';
import type { LockEntrySpec } from '../support/lock-fixtures';

const REG = 'registry.terraform.io';
const LOCK = '.terraform.lock.hcl';

/** Lock findings that make a CI running `terraform init -lockfile=readonly` fail (as in
 * test/lockfile/differential.test.ts): errors, plus the two warnings that readonly init fails on. */
const READONLY_FAILURES = new Set(['lock-missing', 'lock-provider-stale']);
function failingLockFindings(report: Report, module: string): Finding[] {
  return report.findings.filter(
    (f) =>
      f.module === module &&
      f.ruleId.startsWith('lock-') &&
      (f.severity === 'error' || READONLY_FAILURES.has(f.ruleId)),
  );
}

function kinds(report: Report): Record<string, string> {
  return Object.fromEntries(report.modules.map((m) => [m.path, m.kind]));
}

function specs(lock: Map<string, LockEntry>): LockEntrySpec[] {
  return [...lock].map(([source, e]) => ({
    source,
    version: e.version as string,
    ...(e.constraints === null ? {} : { constraints: e.constraints }),
    hashes: e.hashes,
  }));
}

function describeRun(r: TerraformResult): string {
  return `exit ${String(r.code)}${r.timedOut ? ' (timed out)' : ''}\n${r.output}`;
}

let work: string;
let mirror: Mirror;
let runs = 0;
/** A fresh directory under the test's temp directory. */
async function freshDir(label: string): Promise<string> {
  const dir = join(work, `${label}-${runs++}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

describeWithTerraform('layouts judged by terraform 1.11', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tfguard-layout-oracle-'));
    mirror = await withMirror([
      { source: 'hashicorp/aws', version: '5.9.0' },
      { source: 'hashicorp/aws', version: '4.67.0' },
      { source: 'hashicorp/null', version: '3.2.2' },
      { source: 'hashicorp/random', version: '3.6.0' },
      { source: 'hashicorp/time', version: '0.9.1' },
      { source: 'cloudflare/cloudflare', version: '4.40.0' },
    ]);
  }, 30_000);

  afterAll(async () => {
    await mirror?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  // =============================================================================================
  // 1. Terragrunt units
  // =============================================================================================

  const UNIT = 'env/staging/app';
  const UNIT_LOCK = `${UNIT}/${LOCK}`;

  /** The repository without the unit's lock file. */
  const TERRAGRUNT_TREE: FileMap = {
    'env/root.hcl': [
      'generate "provider" {',
      '  path      = "provider.tf"',
      '  if_exists = "overwrite_terragrunt"',
      '  contents  = file("./common/provider.tf")',
      '}',
      'remote_state {',
      '  backend = "s3"',
      '  config = {',
      '    bucket = "acme-state"',
      '    key    = "${path_relative_to_include()}/terraform.tfstate"',
      '    region = "eu-west-1"',
      '  }',
      '}',
      '',
    ].join('\n'),
    'env/common/provider.tf': [
      'terraform {',
      '  required_providers {',
      '    aws = {',
      '      source  = "hashicorp/aws"',
      '      version = "~> 5.0"',
      '    }',
      '    cloudflare = {',
      '      source  = "cloudflare/cloudflare"',
      '      version = "~> 4.0"',
      '    }',
      '  }',
      '}',
      '',
      'provider "aws" {',
      '  region = "eu-west-1"',
      '}',
      '',
    ].join('\n'),
    [`${UNIT}/terragrunt.hcl`]: [
      'include {',
      '  path = find_in_parent_folders("root.hcl")',
      '}',
      '',
      'terraform {',
      '  source = "../../../modules//app"',
      '}',
      '',
      'inputs = {',
      '  name = "staging"',
      '}',
      '',
    ].join('\n'),
    // No required_providers here: Terraform allows one per module, and the generated provider.tf
    // lands in this module's directory (a second block fails init with "Duplicate required providers
    // configuration"). null is implied by the resource type (hashicorp/null); cloudflare_record
    // takes cloudflare/cloudflare from the generated file, in the same module.
    'modules/app/main.tf': [
      'variable "name" {',
      '  type    = string',
      '  default = "app"',
      '}',
      '',
      'resource "null_resource" "app" {',
      '  triggers = {',
      '    name = var.name',
      '  }',
      '}',
      '',
      'resource "cloudflare_record" "app" {',
      '  zone_id = "0123456789abcdef"',
      '  name    = var.name',
      '  type    = "CNAME"',
      '  content = "app.example.com"',
      '}',
      '',
      'module "db" {',
      '  source = "../db"',
      '  name   = var.name',
      '}',
      '',
    ].join('\n'),
    'modules/db/main.tf': [
      'terraform {',
      '  required_providers {',
      '    random = {',
      '      source  = "hashicorp/random"',
      '      version = ">= 3.1"',
      '    }',
      '  }',
      '}',
      '',
      'variable "name" {',
      '  type = string',
      '}',
      '',
      'resource "random_id" "suffix" {',
      '  byte_length = 4',
      '  keepers = {',
      '    name = var.name',
      '  }',
      '}',
      '',
    ].join('\n'),
  };

  /**
   * What Terragrunt would do before running terraform for the unit (see the file comment), written
   * out from the tree's own texts: the unit's source and the generate block are read from the files
   * above, so changing them changes the emulation too.
   */
  async function terragruntWorkingDir(tree: FileMap, lock: string | null): Promise<string> {
    const unitHcl = tree[`${UNIT}/terragrunt.hcl`] as string;
    const source = /source\s*=\s*"([^"]+)"/.exec(unitHcl)?.[1];
    if (source === undefined) throw new Error('the unit names no terraform source');
    const [pkg, sub = '.'] = source.split('//') as [string, string?];
    const pkgDir = posix.normalize(posix.join(UNIT, pkg));
    const rootHcl = tree['env/root.hcl'] as string;
    const gen =
      /generate\s+"[^"]+"\s*\{[^}]*?path\s*=\s*"([^"]+)"[^}]*?contents\s*=\s*file\("([^"]+)"\)/s.exec(
        rootHcl,
      );
    if (gen === null) throw new Error('root.hcl has no generate block reading a file');
    const generatedName = gen[1] as string;
    const generatedFrom = posix.normalize(posix.join('env', gen[2] as string));

    const dir = await freshDir('terragrunt-cache');
    const files: FileMap = {};
    for (const [path, data] of Object.entries(tree)) {
      if (path.startsWith(`${pkgDir}/`)) files[path.slice(pkgDir.length + 1)] = data;
    }
    const run = sub === '.' ? '' : `${sub}/`;
    files[`${run}${generatedName}`] =
      `# Generated by Terragrunt. Sig: nIlQXj57tbuaRZEa\n${tree[generatedFrom] as string}`;
    if (lock !== null) files[`${run}${LOCK}`] = lock;
    await writeTree(dir, files);
    return join(dir, sub);
  }

  interface UnitScenario {
    name: string;
    lock: string;
    /** The rule that explains terraform's failure; null when terraform must succeed. */
    because: string | null;
    /** A text the explaining finding's message must contain. */
    mentions?: string;
    /** The lock-file line the finding must point to. */
    line?: number;
  }

  interface UnitOutcome {
    scenario: UnitScenario;
    terraform: TerraformResult;
    report: Report;
  }

  describe('Terragrunt unit: the unit lock + the source module, as terraform init -lockfile=readonly', () => {
    let written: Map<string, LockEntry>;
    let outcomes: UnitOutcome[] = [];

    beforeAll(async () => {
      // terraform writes the unit's lock file in Terragrunt's working directory.
      const first = await terragruntWorkingDir(TERRAGRUNT_TREE, null);
      const init = await terraformInit(first, mirror);
      if (init.code !== 0) throw new Error(`terraform init failed for the unit:\n${describeRun(init)}`);
      written = readLockFile(first);

      const good = specs(written);
      const stale = lockText([...good, { source: `${REG}/hashicorp/time`, version: '0.9.1' }]);
      const scenarios: UnitScenario[] = [
        { name: 'the lock terraform wrote', lock: lockText(good), because: null },
        {
          name: 'no entry for the provider only the generated provider.tf requires',
          lock: lockText(good.filter((s) => s.source !== `${REG}/hashicorp/aws`)),
          because: 'lock-provider-missing',
          mentions: 'hashicorp/aws',
        },
        {
          name: 'a stale entry',
          lock: stale,
          because: 'lock-provider-stale',
          mentions: 'hashicorp/time',
          line: lineOf(stale, 'hashicorp/time'),
        },
        {
          name: 'a locked version outside the generated constraint',
          lock: lockText(
            good.map((s) => (s.source === `${REG}/hashicorp/aws` ? { ...s, version: '4.67.0' } : s)),
          ),
          because: 'lock-version-mismatch',
          mentions: '4.67.0',
        },
      ];
      outcomes = await mapLimit(scenarios, 2, async (scenario) => {
        const dir = await terragruntWorkingDir(TERRAGRUNT_TREE, scenario.lock);
        const [terraform, report] = await Promise.all([
          terraformInit(dir, mirror, ['-lockfile=readonly']),
          scanFiles({ ...TERRAGRUNT_TREE, [UNIT_LOCK]: scenario.lock }),
        ]);
        return { scenario, terraform, report };
      });
    }, 180_000);

    test('terraform locks the providers of the generated file and of the whole source package', () => {
      expect([...written.keys()].sort()).toEqual([
        `${REG}/cloudflare/cloudflare`,
        `${REG}/hashicorp/aws`,
        `${REG}/hashicorp/null`,
        `${REG}/hashicorp/random`,
      ]);
    });

    test('kinds: the unit is a root, the source modules are shared, env/common is a fragment', () => {
      const report = (outcomes[0] as UnitOutcome).report;
      expect(kinds(report)).toEqual({
        'env/common': 'fragment',
        [UNIT]: 'root',
        'modules/app': 'shared',
        'modules/db': 'shared',
      });
      const unit = report.modules.find((m) => m.path === UNIT);
      expect(unit?.kindEvidence).toBe('strong');
      expect(unit?.lockFile).toBe(UNIT_LOCK);
    });

    test("the unit's tree has the providers and constraints terraform recorded in the lock", () => {
      const report = (outcomes[0] as UnitOutcome).report;
      const root = report.roots.find((r) => r.path === UNIT);
      expect(root?.modules).toEqual([UNIT, 'modules/app', 'modules/db']);
      // cloudflare_record in modules/app is cloudflare/cloudflare, declared by the generated file:
      // terraform locks no hashicorp/cloudflare.
      const ours = (root?.providers ?? []).map((p) => [p.source, p.constraints]).sort();
      // terraform writes no constraints line for a provider nothing constrains
      const theirs = [...written].map(([source, e]) => [source, e.constraints ?? '']).sort();
      expect(ours).toEqual(theirs);
    });

    test('with the lock terraform wrote, init passes and no lock finding or lock-missing appears', () => {
      const o = outcomes[0] as UnitOutcome;
      expect({ terraform: describeRun(o.terraform) }).toEqual({
        terraform: expect.stringMatching(/^exit 0\n/) as unknown as string,
      });
      const lockFindings = o.report.findings.filter(
        (f) => f.ruleId.startsWith('lock-') && f.severity !== 'notice',
      );
      expect(lockFindings).toEqual([]);
      expect(o.report.findings.filter((f) => f.ruleId === 'lock-missing')).toEqual([]);
    });

    test('tfguard reports a failing lock finding on the unit exactly when terraform init fails', () => {
      const verdicts = outcomes.map((o) => ({
        scenario: o.scenario.name,
        terraformFails: o.terraform.code !== 0,
        tfguardFails: failingLockFindings(o.report, UNIT).length > 0,
      }));
      expect(verdicts).toEqual(
        outcomes.map((o) => ({
          scenario: o.scenario.name,
          terraformFails: o.scenario.because !== null,
          tfguardFails: o.scenario.because !== null,
        })),
      );
    });

    test('each failure is explained by the expected rule, on the unit lock file', () => {
      for (const o of outcomes.filter((x) => x.scenario.because !== null)) {
        const found = o.report.findings.filter((f) => f.ruleId === o.scenario.because);
        expect({ scenario: o.scenario.name, count: found.length }).toEqual({
          scenario: o.scenario.name,
          count: 1,
        });
        const f = found[0] as Finding;
        expect({ scenario: o.scenario.name, module: f.module, file: f.file }).toEqual({
          scenario: o.scenario.name,
          module: UNIT,
          file: UNIT_LOCK,
        });
        expect(f.message).toContain(o.scenario.mentions as string);
        if (o.scenario.line !== undefined) expect(f.line).toBe(o.scenario.line);
      }
      // and terraform says why it failed in the same terms
      const byRule = new Map(outcomes.map((o) => [o.scenario.because, o.terraform.output]));
      expect(byRule.get('lock-provider-missing')).toMatch(/Provider dependency changes detected/);
      expect(byRule.get('lock-provider-stale')).toMatch(/Provider dependency changes detected/);
      expect(byRule.get('lock-version-mismatch')).toMatch(/does not match\s+configured version constraint/);
    });
  });

  // =============================================================================================
  // 2. terraform test helpers
  // =============================================================================================

  const TESTED_ROOT: FileMap = {
    'main.tf': [
      'terraform {',
      '  required_version = ">= 1.7"',
      '  required_providers {',
      '    aws = {',
      '      source  = "hashicorp/aws"',
      '      version = "~> 5.0"',
      '    }',
      '  }',
      '  backend "s3" {',
      '    bucket = "acme-state"',
      '    key    = "buckets/terraform.tfstate"',
      '    region = "eu-west-1"',
      '  }',
      '}',
      '',
      'provider "aws" {',
      '  region = "eu-west-1"',
      '}',
      '',
      'variable "suffix" {',
      '  type = string',
      '}',
      '',
      'resource "aws_s3_bucket" "logs" {',
      '  bucket = "acme-logs-${var.suffix}"',
      '}',
      '',
    ].join('\n'),
    'tests/bucket.tftest.hcl': [
      'run "setup" {',
      '  module {',
      '    source = "./tests/setup"',
      '  }',
      '}',
      '',
      'run "bucket_name" {',
      '  command = plan',
      '  variables {',
      '    suffix = run.setup.suffix',
      '  }',
      '  assert {',
      '    condition     = startswith(aws_s3_bucket.logs.bucket, "acme-logs-")',
      '    error_message = "unexpected bucket name"',
      '  }',
      '}',
      '',
    ].join('\n'),
    'tests/setup/main.tf': [
      'terraform {',
      '  required_providers {',
      '    random = {',
      '      source  = "hashicorp/random"',
      '      version = ">= 3.0"',
      '    }',
      '  }',
      '}',
      '',
      'resource "random_pet" "suffix" {}',
      '',
      'output "suffix" {',
      '  value = random_pet.suffix.id',
      '}',
      '',
    ].join('\n'),
  };

  describe('terraform test helpers: terraform init locks their providers in the root', () => {
    let init: TerraformResult;
    let written: Map<string, LockEntry>;
    let withHelper: { terraform: TerraformResult; report: Report };
    let withoutHelper: { terraform: TerraformResult; report: Report; lock: string };

    /** terraform init -lockfile=readonly and a tfguard scan of the same directory (`scanPath`). */
    async function both(lock: string): Promise<{ terraform: TerraformResult; report: Report }> {
      const scanned = await freshDir('tested-root');
      await writeTree(scanned, { ...TESTED_ROOT, [LOCK]: lock });
      const report = await scanPath(scanned);
      // terraform gets its own copy: what it writes (.terraform/) is not part of the scan
      const ran = await freshDir('tested-root-tf');
      await cp(scanned, ran, { recursive: true });
      const terraform = await terraformInit(ran, mirror, ['-lockfile=readonly']);
      return { terraform, report };
    }

    beforeAll(async () => {
      const dir = await freshDir('tested-root-init');
      await writeTree(dir, TESTED_ROOT);
      init = await terraformInit(dir, mirror);
      if (init.code !== 0)
        throw new Error(`terraform init failed for the tested root:\n${describeRun(init)}`);
      written = readLockFile(dir);
      const good = specs(written);
      const without = lockText(good.filter((s) => s.source !== `${REG}/hashicorp/random`));
      [withHelper, withoutHelper] = await Promise.all([
        both(lockText(good)),
        both(without).then((r) => ({ ...r, lock: without })),
      ]);
    }, 120_000);

    test("terraform 1.11 init installs the run block's module and locks its provider", () => {
      expect(init.output).toContain('- test.tests.bucket.setup in tests/setup');
      expect([...written.keys()].sort()).toEqual([`${REG}/hashicorp/aws`, `${REG}/hashicorp/random`]);
    });

    test('kinds: the root is a root, the run-block helper is a test configuration', () => {
      expect(kinds(withHelper.report)).toEqual({ '.': 'root', 'tests/setup': 'test' });
      const helper = withHelper.report.modules.find((m) => m.path === 'tests/setup');
      expect(helper?.kindReason).toContain('tests/bucket.tftest.hcl');
    });

    test("the helper's provider counts for the root: its lock entry is not stale", () => {
      expect(withHelper.terraform.code).toBe(0);
      expect(withHelper.report.findings.filter((f) => f.ruleId === 'lock-provider-stale')).toEqual([]);
      expect(failingLockFindings(withHelper.report, '.')).toEqual([]);
      const root = withHelper.report.roots.find((r) => r.path === '.');
      expect(root?.modules).toEqual(['.', 'tests/setup']);
      expect((root?.providers ?? []).map((p) => [p.source, p.constraints])).toEqual(
        [...written].map(([source, e]) => [source, e.constraints ?? '']),
      );
      // the helper is checked as part of the root; on its own it is only a test configuration
      expect(withHelper.report.roots.map((r) => [r.path, r.kind, r.lock?.file ?? null])).toEqual([
        ['.', 'root', LOCK],
        ['tests/setup', 'test', null],
      ]);
    });

    test("without the helper's entry, init -lockfile=readonly fails and tfguard says why", () => {
      expect(withoutHelper.terraform.code).not.toBe(0);
      expect(withoutHelper.terraform.output).toMatch(/Provider dependency changes detected/);
      const missing = withoutHelper.report.findings.filter((f) => f.ruleId === 'lock-provider-missing');
      expect(missing.map((f) => ({ module: f.module, file: f.file, severity: f.severity }))).toEqual([
        { module: '.', file: LOCK, severity: 'error' },
      ]);
      expect(missing[0]?.message).toContain('hashicorp/random');
      expect(missing[0]?.message).toContain('"tests/setup"');
      expect(failingLockFindings(withoutHelper.report, '.').map((f) => f.ruleId)).toEqual([
        'lock-provider-missing',
      ]);
    });
  });

  // =============================================================================================
  // 3. Installed remote modules
  // =============================================================================================

  /** The remote module's repository: its own code needs null, its submodule time. */
  const REMOTE_REPO: FileMap = {
    'main.tf': [
      'terraform {',
      '  required_providers {',
      '    null = {',
      '      source  = "hashicorp/null"',
      '      version = ">= 3.0"',
      '    }',
      '  }',
      '}',
      '',
      'resource "null_resource" "this" {}',
      '',
    ].join('\n'),
    'modules/sub/main.tf': [
      'terraform {',
      '  required_providers {',
      '    time = {',
      '      source  = "hashicorp/time"',
      '      version = ">= 0.9"',
      '    }',
      '  }',
      '}',
      '',
      'resource "time_sleep" "wait" {',
      '  create_duration = "1s"',
      '}',
      '',
    ].join('\n'),
  };

  function installedRoot(repoUrl: string): FileMap {
    return {
      'main.tf': [
        'terraform {',
        '  required_version = ">= 1.5"',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version = "~> 5.0"',
        '    }',
        '  }',
        '  backend "s3" {',
        '    bucket = "acme-state"',
        '    key    = "platform/terraform.tfstate"',
        '    region = "eu-west-1"',
        '  }',
        '}',
        '',
        'provider "aws" {',
        '  region = "eu-west-1"',
        '}',
        '',
        'module "remote" {',
        `  source = "git::${repoUrl}"`,
        '}',
        '',
        'module "sub" {',
        '  source = "./.terraform/modules/remote/modules/sub"',
        '}',
        '',
      ].join('\n'),
    };
  }

  describe('installed remote modules: ./.terraform/modules/<name>/… after a remote call', () => {
    let root: FileMap;
    let get: TerraformResult;
    let written: Map<string, LockEntry>;
    let readonly: TerraformResult;
    let report: Report;

    beforeAll(async () => {
      const repo = await freshDir('remote-repo');
      await writeTree(repo, REMOTE_REPO);
      git(['init', '-q'], repo);
      git(['add', '-A'], repo);
      git(['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'remote module with a submodule'], repo);
      root = installedRoot(`file://${repo}`);

      const dir = await freshDir('installed-root');
      await writeTree(dir, root);
      get = await runTerraform(['get', '-no-color'], dir, mirror.env);
      if (get.code !== 0) throw new Error(`terraform get failed:\n${describeRun(get)}`);
      const init = await terraformInit(dir, mirror);
      if (init.code !== 0) throw new Error(`terraform init failed:\n${describeRun(init)}`);
      written = readLockFile(dir);
      const lock = readFileSync(join(dir, LOCK), 'utf8');

      // the checkout as committed: configuration and lock file, no .terraform
      const clean = await freshDir('installed-root-clean');
      await writeTree(clean, { ...root, [LOCK]: lock });
      [readonly, report] = await Promise.all([
        terraformInit(clean, mirror, ['-lockfile=readonly']),
        scanFiles({ ...root, [LOCK]: lock }),
      ]);
    }, 120_000);

    test('terraform get installs the remote module and resolves the path into it', () => {
      expect(get.output).toContain('- sub in .terraform/modules/remote/modules/sub');
    });

    test('terraform locks what the remote code requires, and init -lockfile=readonly accepts it', () => {
      expect([...written.keys()].sort()).toEqual([
        `${REG}/hashicorp/aws`,
        `${REG}/hashicorp/null`,
        `${REG}/hashicorp/time`,
      ]);
      expect({ readonly: describeRun(readonly) }).toEqual({
        readonly: expect.stringMatching(/^exit 0\n/) as unknown as string,
      });
    });

    test('tfguard without .terraform: no module-source-missing, a module-unresolved notice for each', () => {
      expect(report.findings.filter((f) => f.ruleId === 'module-source-missing')).toEqual([]);
      const unresolved = report.findings.filter((f) => f.ruleId === 'module-unresolved');
      expect(
        unresolved.map((f) => ({ module: f.module, file: f.file, line: f.line, severity: f.severity })),
      ).toEqual([
        {
          module: '.',
          file: 'main.tf',
          line: lineOf(root['main.tf'] as string, 'module "remote"'),
          severity: 'notice',
        },
        {
          module: '.',
          file: 'main.tf',
          line: lineOf(root['main.tf'] as string, 'module "sub"'),
          severity: 'notice',
        },
      ]);
      // git::file:// names a path on the machine that runs init: never fetched.
      expect(unresolved[0]?.message).toContain('remote module "remote"');
      expect(unresolved[1]?.message).toContain('part of the remote module "remote"');
      expect(report.summary.error).toBe(0);
    });

    test('the lock entry only the remote submodule needs is not called stale', () => {
      expect(report.findings.filter((f) => f.ruleId === 'lock-provider-stale')).toEqual([]);
      expect(failingLockFindings(report, '.')).toEqual([]);
      const tree = report.roots.find((r) => r.path === '.');
      expect(tree?.remoteModules.map((r) => [r.name, r.installed === true])).toEqual([
        ['remote', false],
        ['sub', true],
      ]);
    });
  });
});
