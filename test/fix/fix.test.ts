/**
 * `tfguard fix` over real files: the CLI scans a directory, applies the edits findings carry, and
 * must change exactly the constraint it fixes — comments, spacing, line endings and every other byte
 * stay. Oracles we did not write: `git apply` accepts the `--dry-run` patch and it produces the same
 * files as the in-place fix; `terraform fmt -check` still passes; `terraform providers` shows the
 * new constraints.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { cli } from '../support/cli';
import { applyEdits, planFixes, unifiedDiff } from '../../src/fix';
import type { Finding } from '../../src/rules';
import { describeWithTerraform } from '../support/external';
import { readTextTree, runTerraform, writeTree } from '../support/terraform';

/** The files of the checkout as text (git's and terraform's data aside). */
const tree = (dir: string): Promise<Record<string, string>> =>
  readTextTree(dir, (name) => name === '.git' || name === '.terraform');

const run = promisify(execFile);

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-fix-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A root with a backend (so it is a root on strong evidence) calling a shared module. */
const ROOT_TF = [
  '# Root module: prod',
  'terraform {',
  '  required_version = "~> 1.6"',
  '  backend "local" {}',
  '  required_providers {',
  '    aws = {',
  '      source = "hashicorp/aws"',
  '      # minimum only, for now',
  '      version     =   ">= 5.1"   # TODO bound it',
  '    }',
  '  }',
  '}',
  '',
  'module "net" {',
  '  source = "./modules/net"',
  '}',
  '',
].join('\n');

interface Case {
  name: string;
  files: Record<string, string>;
  /** The exact text expected after the fix, per changed file. */
  changed: Record<string, string>;
}

const CASES: Case[] = [
  {
    name: 'root (.tf): an unbounded constraint is bounded; comments and odd spacing stay',
    files: { 'main.tf': ROOT_TF, 'modules/net/main.tf': 'resource "aws_vpc" "x" {}\n' },
    changed: { 'main.tf': ROOT_TF.replace('">= 5.1"', '"~> 5.1"') },
  },
  {
    name: 'root (.tf, CRLF): the line endings stay',
    files: {
      'main.tf': ROOT_TF.replace(/\n/g, '\r\n'),
      'modules/net/main.tf': 'resource "aws_vpc" "x" {}\n',
    },
    changed: { 'main.tf': ROOT_TF.replace(/\n/g, '\r\n').replace('">= 5.1"', '"~> 5.1"') },
  },
  {
    name: 'shared module (.tofu): an upper bound becomes a minimum; the one-line entry keeps its layout',
    files: {
      'main.tf': ROOT_TF.replace('">= 5.1"', '"~> 5.1"'),
      'modules/net/versions.tofu':
        'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.1" /* cap */ }\n  }\n}\n',
    },
    changed: {
      'modules/net/versions.tofu':
        'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 5.1" /* cap */ }\n  }\n}\n',
    },
  },
  {
    name: 'shared module (.tf.json): the JSON string is replaced in place, layout kept',
    files: {
      'main.tf': ROOT_TF.replace('">= 5.1"', '"~> 5.1"'),
      'modules/net/versions.tf.json':
        '{\n  "terraform": {"required_providers": {\n      "aws": {"source": "hashicorp/aws",   "version": "~> 5.1"}\n  }}\n}\n',
    },
    changed: {
      'modules/net/versions.tf.json':
        '{\n  "terraform": {"required_providers": {\n      "aws": {"source": "hashicorp/aws",   "version": ">= 5.1"}\n  }}\n}\n',
    },
  },
];

describe('tfguard fix', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await writeTree(tmp, c.files);
    const first = await cli(['fix', tmp]);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/^tfguard fix: fixed 1 finding in 1 file/);
    const after = await tree(tmp);
    // Exactly the expected bytes in the changed file, every other file untouched.
    expect(after).toEqual({ ...c.files, ...c.changed });
    // Idempotent: a second run changes nothing.
    const second = await cli(['fix', tmp]);
    expect(second.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(await tree(tmp)).toEqual(after);
  });

  it('--dry-run prints a patch git apply accepts, which gives the same files as the fix', async () => {
    const c = CASES[0] as Case;
    const files = { ...c.files, ...(CASES[3] as Case).files, 'main.tf': ROOT_TF };
    await writeTree(tmp, files);
    const dry = await cli(['fix', tmp, '--dry-run']);
    expect(dry.stderr).toMatch(/would fix 2 findings in 2 files/);
    expect(await tree(tmp)).toEqual(files); // nothing written
    const patch = path.join(os.tmpdir(), `tfguard-fix-${process.pid}.patch`);
    await fs.writeFile(patch, dry.stdout);
    try {
      await run('git', ['apply', '--check', patch], { cwd: tmp });
      await run('git', ['apply', patch], { cwd: tmp });
      const patched = await tree(tmp);
      await writeTree(tmp, files);
      await cli(['fix', tmp]);
      expect(patched).toEqual(await tree(tmp));
    } finally {
      await fs.rm(patch, { force: true });
    }
    // The exit code counts what remains: the fixable errors are gone in a dry run too.
    expect(dry.code).toBe(0);
  });

  it('--rule limits the fixes; what remains is listed with the reason', async () => {
    await writeTree(tmp, { ...(CASES[3] as Case).files, 'main.tf': ROOT_TF });
    const res = await cli(['fix', tmp, '--rule', 'shared-module-upper-bound']);
    expect(res.stdout).toMatch(/fixed 1 finding/);
    expect(res.stdout).toContain('modules/net/versions.tf.json:3  shared-module-upper-bound');
    expect(res.stdout).not.toContain('root-module-unbounded');
    // Removing the shared cap would leave the root unbounded: the same fix bounds the root's own
    // `>= 5.1` (the edit root-module-unbounded makes), so even this --rule run leaves no root
    // unbounded.
    expect((await tree(tmp))['main.tf']).toBe(ROOT_TF.replace('">= 5.1"', '"~> 5.1"'));
    expect(res.code).toBe(0);
    const bad = await cli(['fix', tmp, '--rule', 'no-such-rule']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('unknown rule id "no-such-rule"')]);
  });

  it('refuses an archive and a missing directory with a clear error', async () => {
    const file = path.join(tmp, 'x.tar.gz');
    await fs.writeFile(file, '');
    expect(await cli(['fix', file])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('not on an archive'),
    });
    expect(await cli(['fix', path.join(tmp, 'nope')])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no such directory'),
    });
  });
});

describe('planning and applying edits', () => {
  const range = (file: string, a: number, b: number): NonNullable<Finding['range']> => ({
    file,
    start: { line: 1, column: a + 1, byte: a },
    end: { line: 1, column: b + 1, byte: b },
  });
  const finding = (ruleId: string, file: string, a: number, b: number, text: string): Finding => ({
    ruleId,
    severity: 'error',
    message: 'm',
    module: '.',
    file,
    line: 1,
    fix: { description: 'd', replacement: text, edits: [{ range: range(file, a, b), text }] },
  });

  it('applies non-overlapping edits by byte; an overlapping one waits for the next run', () => {
    const plan = planFixes([
      finding('r1', 'a.tf', 4, 7, 'XYZ'),
      finding('r2', 'a.tf', 5, 9, 'no'),
      finding('r3', 'a.tf', 0, 1, 'é'),
    ]);
    expect(plan.fixed.map((f) => f.ruleId)).toEqual(['r1', 'r3']);
    expect(plan.remaining.map((r) => [r.finding.ruleId, r.reason])).toEqual([
      ['r2', expect.stringMatching(/overlaps/)],
    ]);
    const out = applyEdits(Buffer.from('abcdefghij'), plan.files.get('a.tf') ?? []);
    expect(out.toString('utf8')).toBe('ébcdXYZhij');
  });

  it('unified diffs match what diff -u writes', async () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n';
    const after = 'a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk';
    await fs.writeFile(path.join(tmp, 'x'), before);
    await fs.writeFile(path.join(tmp, 'y'), after);
    const res = await run('diff', ['-u', '--label', 'a/f.tf', '--label', 'b/f.tf', 'x', 'y'], {
      cwd: tmp,
    }).catch((err: { stdout: string }) => err);
    expect(unifiedDiff('f.tf', before, after)).toBe(res.stdout);
  });
});

describeWithTerraform('tfguard fix: terraform as the oracle', () => {
  it('terraform fmt -check still passes and terraform providers shows the new constraints', async () => {
    // No backend block: terraform providers would ask for `init` first. The root is still a root
    // on strong evidence (it calls a local module and nothing calls it).
    const files = {
      'main.tf': ROOT_TF.replace(
        'version     =   ">= 5.1"   # TODO bound it',
        'version = ">= 5.1" # TODO bound it',
      ).replace('  backend "local" {}\n', ''),
      'modules/net/versions.tf':
        'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.1" }\n  }\n}\n',
    };
    await writeTree(tmp, files);
    expect((await runTerraform(['fmt', '-check', '-recursive'], tmp)).code).toBe(0);
    expect((await cli(['fix', tmp])).stdout).toMatch(/^tfguard fix: fixed 2 findings in 2 files/);
    expect((await runTerraform(['fmt', '-check', '-recursive'], tmp)).code).toBe(0);
    expect((await runTerraform(['get'], tmp)).code).toBe(0);
    const providers = await runTerraform(['providers'], tmp);
    expect([providers.code, providers.stderr]).toEqual([0, '']);
    expect(providers.stdout).toContain('provider[registry.terraform.io/hashicorp/aws] ~> 5.1');
    expect(providers.stdout).toMatch(
      /module\.net[\s\S]*provider\[registry\.terraform\.io\/hashicorp\/aws\] >= 5\.1/,
    );
  });
});
