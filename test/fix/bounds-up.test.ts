/**
 * Moving bounds up, through the real CLI on small trees: when `tfguard fix`
 * removes a shared module's cap, every root that would be left without a bound for that provider
 * gets one in the same patch (`~> MAJOR.MINOR` of its locked version, else the removed cap), in its
 * `required_providers` (a new entry, or a new `versions.tf` when it has no such block); a root that
 * cannot take one blocks the shared edit and is named under "still needs a person"; a root that gets
 * a provider only through `>=` modules is reported and bounded the same way. Oracles we did not
 * write: `git apply --check` accepts the `--dry-run` patch and it gives the files of the in-place
 * fix; `terraform fmt -check` passes on the edited files; `terraform providers`, on a copy without
 * the (fake) lock, shows each root's new bound.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { scanPath } from '../../src/scan';
import { cli } from '../support/cli';
import { describeWithTerraform } from '../support/external';
import { readTextTree, runTerraform, writeTree } from '../support/terraform';

const run = promisify(execFile);
const tree = (dir: string): Promise<Record<string, string>> =>
  readTextTree(dir, (name) => name === '.git' || name === '.terraform');
const L = (...ls: string[]): string => `${ls.join('\n')}\n`;

/** A lock file as terraform init writes it (hashes are placeholders: no rule here reads them). */
const lock = (source: string, version: string, constraints: string): string =>
  L(
    '# This file is maintained automatically by "terraform init".',
    '# Manual edits may be lost in future updates.',
    '',
    `provider "registry.terraform.io/${source}" {`,
    `  version     = "${version}"`,
    `  constraints = "${constraints}"`,
    '  hashes = [',
    `    "h1:${'A'.repeat(43)}=",`,
    '  ]',
    '}',
  );

const NET = L(
  'terraform {',
  '  required_providers {',
  '    random = {',
  '      source  = "hashicorp/random"',
  '      version = "~> 3.4"',
  '    }',
  '  }',
  '}',
);
const NET_FIXED = NET.replace('"~> 3.4"', '">= 3.4"');

/** Roots on strong evidence (they call a local module) without a backend, so `terraform providers`
 * runs without init. `live/a` declares aws and locks random; `live/b` declares nothing. */
const FILES: Record<string, string> = {
  'live/a/main.tf': L(
    'terraform {',
    '  required_providers {',
    '    aws = {',
    '      source  = "hashicorp/aws"',
    '      version = "~> 5.0"',
    '    }',
    '  }',
    '}',
    '',
    'module "net" {',
    '  source = "../../modules/net"',
    '}',
  ),
  'live/a/.terraform.lock.hcl': lock('hashicorp/random', '3.6.2', '~> 3.4'),
  'live/b/main.tf': L('module "net" {', '  source = "../../modules/net"', '}'),
  'modules/net/versions.tf': NET,
};

const CHANGED: Record<string, string> = {
  'live/a/main.tf': L(
    'terraform {',
    '  required_providers {',
    '    aws = {',
    '      source  = "hashicorp/aws"',
    '      version = "~> 5.0"',
    '    }',
    '    random = {',
    '      source  = "hashicorp/random"',
    '      version = "~> 3.6"',
    '    }',
    '  }',
    '}',
    '',
    'module "net" {',
    '  source = "../../modules/net"',
    '}',
  ),
  'live/b/versions.tf': L(
    'terraform {',
    '  required_providers {',
    '    random = {',
    '      source  = "hashicorp/random"',
    '      version = "~> 3.4"',
    '    }',
    '  }',
    '}',
  ),
  'modules/net/versions.tf': NET_FIXED,
};

const RULES = ['--rule', 'shared-module-upper-bound', '--rule', 'root-module-unbounded'];

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-bounds-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const unboundedRoots = async (dir: string): Promise<string[]> =>
  (await scanPath(dir)).findings
    .filter((f) => f.ruleId === 'root-module-unbounded' || f.ruleId === 'shared-module-upper-bound')
    .map((f) => `${f.ruleId} ${f.module}`);

describe('moving a shared cap up to the roots', () => {
  it('bounds every root in the same patch: from its lock, else the removed cap', async () => {
    await writeTree(tmp, FILES);
    const first = await cli(['fix', tmp, ...RULES]);
    expect(first.stdout).toMatch(/^tfguard fix: fixed 1 finding in 3 files/);
    expect(first.stdout).toContain('bound it in "live/a" (~> 3.6), "live/b" (~> 3.4)');
    expect(await tree(tmp)).toEqual({ ...FILES, ...CHANGED });
    // No root is left unbounded, and a second run changes nothing.
    expect(await unboundedRoots(tmp)).toEqual([]);
    const second = await cli(['fix', tmp, ...RULES]);
    expect(second.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(await tree(tmp)).toEqual({ ...FILES, ...CHANGED });
  });

  it('--dry-run prints a patch git apply accepts, which gives the same files', async () => {
    await writeTree(tmp, FILES);
    const dry = await cli(['fix', tmp, '--dry-run', ...RULES]);
    expect(await tree(tmp)).toEqual(FILES);
    expect(dry.stdout).toContain('--- /dev/null\n+++ b/live/b/versions.tf\n');
    const patch = path.join(os.tmpdir(), `tfguard-bounds-${process.pid}.patch`);
    await fs.writeFile(patch, dry.stdout);
    try {
      await run('git', ['init', '-q', '.'], { cwd: tmp });
      await run('git', ['apply', '--check', patch], { cwd: tmp });
      await run('git', ['apply', patch], { cwd: tmp });
      expect(await tree(tmp)).toEqual({ ...FILES, ...CHANGED });
    } finally {
      await fs.rm(patch, { force: true });
    }
  });

  it('with every rule, the lock records the root’s new constraint in the same run', async () => {
    await writeTree(tmp, FILES);
    await cli(['fix', tmp]);
    const files = await tree(tmp);
    expect(files['live/a/.terraform.lock.hcl']).toMatch(/^ {2}constraints = ">= 3\.4\.0, ~> 3\.6"$/m);
    expect((await scanPath(tmp)).findings.filter((f) => f.ruleId === 'lock-constraints-drift')).toEqual([]);
  });

  it('a root that cannot take a bound blocks the shared edit and is named', async () => {
    // live/c declares its providers in JSON, which tfguard does not extend.
    const files = {
      ...FILES,
      'live/c/main.tf': L('module "net" {', '  source = "../../modules/net"', '}'),
      'live/c/versions.tf.json':
        '{"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "~> 5.0"}}}}\n',
    };
    await writeTree(tmp, files);
    const first = await cli(['fix', tmp, ...RULES]);
    expect(first.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(first.stdout).toContain(
      'root "live/c" would lose its bound (its required_providers block is JSON, which tfguard does not extend)',
    );
    expect(await tree(tmp)).toEqual(files);
  });

  it('a root whose kind is a guess blocks the shared edit; its own finding is a notice', async () => {
    // A landing-zone stage nothing calls, with no backend or lock anywhere: a root, but a guess.
    const files = {
      '0-bootstrap/main.tf': L('module "net" {', '  source = "../modules/net"', '}'),
      'modules/net/versions.tf': NET,
    };
    await writeTree(tmp, files);
    const report = await scanPath(tmp);
    expect(report.modules.find((m) => m.path === '0-bootstrap')).toMatchObject({
      kind: 'root',
      kindEvidence: 'weak',
    });
    const first = await cli(['fix', tmp, ...RULES]);
    expect(first.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(first.stdout).toContain('root "0-bootstrap" would lose its bound (its kind is a guess');
    expect(await tree(tmp)).toEqual(files);
    // With the cap gone by hand, the root is reported, as a notice without a fix.
    await writeTree(tmp, { 'modules/net/versions.tf': NET_FIXED });
    const left = (await scanPath(tmp)).findings.filter((f) => f.ruleId === 'root-module-unbounded');
    expect(left).toEqual([
      expect.objectContaining({ module: '0-bootstrap', severity: 'notice', confidence: 'low', line: 1 }),
    ]);
    expect(left[0]?.fix).toBeUndefined();
  });

  it('Terragrunt units: the bound goes into the module the units run, agreeing with their locks', async () => {
    const unit = L('terraform {', '  source = "../../../units//app"', '}');
    const files = {
      'live/dev/app/terragrunt.hcl': unit,
      'live/dev/app/.terraform.lock.hcl': lock('hashicorp/random', '3.6.2', '~> 3.4'),
      'live/prod/app/terragrunt.hcl': unit,
      'units/app/main.tf': L('module "net" {', '  source = "../../modules/net"', '}'),
      'modules/net/versions.tf': NET,
    };
    await writeTree(tmp, files);
    const first = await cli(['fix', tmp, ...RULES]);
    expect(first.stdout).toContain('bound it in "units/app" (~> 3.6)');
    expect(await tree(tmp)).toEqual({
      ...files,
      'modules/net/versions.tf': NET_FIXED,
      'units/app/versions.tf': CHANGED['live/b/versions.tf']?.replace('~> 3.4', '~> 3.6'),
    });
    expect(await unboundedRoots(tmp)).toEqual([]);
    const second = await cli(['fix', tmp, ...RULES]);
    expect(second.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
  });

  it('an example the cap bounded is bounded after the fix too; one that cannot take it blocks', async () => {
    // The repair study (docs/fix.md): examples are run as their README shows; removing the module's
    // cap must not leave them unbounded, though strict_examples is off (no root rule judges them).
    const call = L('module "net" {', '  source = "../../modules/net"', '}');
    const files = { 'examples/basic/main.tf': call, 'modules/net/versions.tf': NET };
    await writeTree(tmp, files);
    expect((await scanPath(tmp)).modules.find((m) => m.path === 'examples/basic')).toMatchObject({
      kind: 'example',
      kindEvidence: 'strong',
    });
    const first = await cli(['fix', tmp, ...RULES]);
    expect(first.stdout).toContain('bound it in "examples/basic" (~> 3.4)');
    expect(await tree(tmp)).toEqual({
      ...files,
      'examples/basic/versions.tf': CHANGED['live/b/versions.tf'],
      'modules/net/versions.tf': NET_FIXED,
    });
    expect((await cli(['fix', tmp, ...RULES])).stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);

    const blocked = {
      ...files,
      'examples/json/main.tf': call,
      'examples/json/versions.tf.json': '{"terraform": {"required_providers": {}}}\n',
    };
    await fs.rm(tmp, { recursive: true, force: true });
    await writeTree(tmp, blocked);
    const held = await cli(['fix', tmp, ...RULES]);
    expect(held.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(held.stdout).toContain(
      'example "examples/json" would lose its bound (its required_providers block is JSON',
    );
    expect(await tree(tmp)).toEqual(blocked);
  });

  it.each([
    ['a namespace in capitals', 'DataDog/datadog', 'DataDog/datadog'],
    ['the normalized form', 'datadog/datadog', 'datadog/datadog'],
    ['an explicit registry host, written short', 'registry.terraform.io/DataDog/datadog', 'datadog/datadog'],
  ])('a root’s new entry spells the source as the module does: %s', async (_what, written, expected) => {
    const net = NET.replace('random = {', 'datadog = {').replace('"hashicorp/random"', `"${written}"`);
    const files = { 'live/b/main.tf': FILES['live/b/main.tf'] as string, 'modules/net/versions.tf': net };
    await writeTree(tmp, files);
    await cli(['fix', tmp, ...RULES]);
    expect((await tree(tmp))['live/b/versions.tf']).toBe(
      L(
        'terraform {',
        '  required_providers {',
        '    datadog = {',
        `      source  = "${expected}"`,
        '      version = "~> 3.4"',
        '    }',
        '  }',
        '}',
      ),
    );
  });

  it('a module no root of the archive uses loses its cap alone: its roots are elsewhere', async () => {
    const files = { 'modules/net/versions.tf': NET };
    await writeTree(tmp, files);
    await fs.writeFile(path.join(tmp, '.tfguard.hcl'), 'shared = ["modules/**"]\n');
    await cli(['fix', tmp, ...RULES]);
    expect(await tree(tmp)).toEqual({
      'modules/net/versions.tf': NET_FIXED,
      '.tfguard.hcl': 'shared = ["modules/**"]\n',
    });
    const second = await cli(['fix', tmp, ...RULES]);
    expect(second.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
  });

  it('a root that gets a provider only through >= modules is bounded in its required_providers', async () => {
    const files = { ...FILES, 'modules/net/versions.tf': NET_FIXED };
    await writeTree(tmp, files);
    const before = (await scanPath(tmp)).findings.filter((f) => f.ruleId === 'root-module-unbounded');
    expect(before.map((f) => [f.module, f.file, f.line])).toEqual([
      ['live/a', 'live/a/main.tf', 2],
      ['live/b', 'live/b/main.tf', 1],
    ]);
    await cli(['fix', tmp, ...RULES]);
    expect(await tree(tmp)).toEqual({ ...FILES, ...CHANGED });
    expect(await unboundedRoots(tmp)).toEqual([]);
  });
});

describeWithTerraform('moving bounds up: terraform as the oracle', () => {
  it('fmt -check passes and terraform providers shows each root’s bound', async () => {
    await writeTree(tmp, FILES);
    await cli(['fix', tmp, ...RULES]);
    const fmt = await runTerraform(['fmt', '-check', '-recursive', '-diff'], tmp);
    expect([fmt.code, fmt.stdout]).toEqual([0, '']);
    // The lock's packages are fake: terraform providers reads the configuration without it.
    await fs.rm(path.join(tmp, 'live/a/.terraform.lock.hcl'));
    for (const [root, bound] of [
      ['live/a', '~> 3.6'],
      ['live/b', '~> 3.4'],
    ] as const) {
      const dir = path.join(tmp, root);
      expect((await runTerraform(['get'], dir)).code).toBe(0);
      const providers = await runTerraform(['providers'], dir);
      expect([providers.code, providers.stderr]).toEqual([0, '']);
      expect(providers.stdout).toContain(`provider[registry.terraform.io/hashicorp/random] ${bound}`);
      expect(providers.stdout).toMatch(
        /module\.net[\s\S]*provider\[registry\.terraform\.io\/hashicorp\/random\] >= 3\.4\.0/,
      );
    }
  });
});
