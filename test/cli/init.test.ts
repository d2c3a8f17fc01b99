/**
 * `tfguard init [dir]` through the CLI: the file it writes is read back by the
 * real scan (no weak kind, no low-confidence finding), a re-run keeps the user's edits byte for byte
 * and adds only new directories, and an invalid existing file is an error, never overwritten.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { scanPath } from '../../src/scan';
import type { Report } from '../../src/report/types';
import { cli } from '../support/cli';
import { corpusFile, describeWithCorpus } from '../support/external';

const VERSIONS =
  'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 5.0" }\n  }\n}\n';
const RESOURCE = 'resource "aws_s3_bucket" "b" {}\n';
const PROVIDER = 'provider "aws" {\n  region = "eu-west-2"\n}\n';
const BACKEND = 'terraform {\n  backend "s3" {}\n}\n';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-init-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function write(files: Record<string, string>): Promise<void> {
  for (const [p, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await fs.writeFile(path.join(dir, p), text);
  }
}

const settingsFile = (): string => path.join(dir, '.tfguard.hcl');
const weakKinds = (r: Report): string[] =>
  r.modules.filter((m) => m.kindEvidence === 'weak').map((m) => m.path);
/** Low-confidence findings that rest on a guess of a module's kind (what `init` settles). A root
 * whose tree calls remote modules tfguard did not read keeps a low-confidence
 * `root-module-unbounded` notice ("unless remote module … which tfguard did not read, bounds it"):
 * that doubt is about code outside the repository, which no setting settles. */
const lowConfidence = (r: Report): string[] =>
  r.findings
    .filter((f) => f.confidence === 'low' && !/which tfguard did not read, bounds? it\)/.test(f.message))
    .map((f) => `${f.ruleId} ${f.file}`);

const TREE = {
  'envs/prod/main.tf': BACKEND + PROVIDER + 'module "net" {\n  source = "../../modules/net"\n}\n',
  'modules/net/main.tf': VERSIONS + RESOURCE,
  'components/dns/main.tf': VERSIONS + PROVIDER + RESOURCE,
  'examples/basic/main.tf': VERSIONS + PROVIDER + 'module "net" {\n  source = "../../modules/net"\n}\n',
  'lib/unused/main.tf': VERSIONS + RESOURCE,
};

test('writes the classification as globs by kind, evidence above each entry, guesses marked', async () => {
  await write(TREE);
  const before = await scanPath(dir);
  expect(weakKinds(before)).toEqual(['components/dns', 'lib/unused']);
  expect(lowConfidence(before).length).toBeGreaterThan(0);

  const run = await cli(['init', dir]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(
    /wrote .*\.tfguard\.hcl: 5 directories added \(roots 3, shared 1, examples 1\); 2 marked GUESS/,
  );
  const text = await fs.readFile(settingsFile(), 'utf8');
  expect(text).toContain(
    'roots = [\n' +
      '  # GUESS, confirm or move: configures provider "aws" and nothing in the directory calls it\n' +
      '  "components/dns",\n' +
      '  # has a backend "s3" block\n' +
      '  "envs/prod",\n' +
      '  # GUESS, confirm or move: not called by any module in the directory\n' +
      '  "lib/unused",\n' +
      ']\n',
  );
  expect(text).toContain(
    'shared = [\n  # called by module "envs/prod" (module.net) and 1 more\n  "modules/net",\n]\n',
  );
  expect(text).toContain('examples = [\n  # its path has an "examples" directory\n  "examples/basic",\n]\n');

  // With the file, every kind is settled: no guess and no low-confidence finding remains.
  const after = await scanPath(dir);
  expect(weakKinds(after)).toEqual([]);
  expect(lowConfidence(after)).toEqual([]);
  expect(after.modules.map((m) => [m.path, m.kind])).toEqual(before.modules.map((m) => [m.path, m.kind]));

  // Nothing new: the file is not touched.
  const again = await cli(['init', dir]);
  expect(again.stdout).toMatch(/every directory is already named; nothing to add/);
  expect(await fs.readFile(settingsFile(), 'utf8')).toBe(text);
});

test('a re-run keeps the user edits byte for byte and adds only new directories', async () => {
  await write(TREE);
  await cli(['init', dir]);
  // The user settles a guess the other way, edits a list onto one line and adds a setting.
  const edited = (await fs.readFile(settingsFile(), 'utf8'))
    .replace(/ {2}# GUESS[^\n]*\n {2}"lib\/unused",\n/, '')
    .replace(/shared = \[[^\]]*\]/, 'shared = ["modules/**", "lib/unused"] # confirmed by the team')
    .concat('strict_examples = true\n');
  await fs.writeFile(settingsFile(), edited);
  await write({
    'envs/dev/main.tf': BACKEND + PROVIDER,
    'modules/dns/main.tf': VERSIONS + RESOURCE, // matched by the user's modules/** glob
    'gen/x/provider.tf': `# Generated by Terragrunt. Sig: nIlQXj57tbuaRZEa\n${PROVIDER}`,
    // A template: its parse error is a low-confidence notice until the settings declare it.
    'templates/x/main.tf': 'resource "a" "{{ name }}" {\n',
  });
  expect(lowConfidence(await scanPath(dir))).toEqual(['parse-error templates/x/main.tf']);
  const run = await cli(['init', dir]);
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/updated .*: 3 directories added \(roots 1, fragments 2\)$/m);
  const text = await fs.readFile(settingsFile(), 'utf8');
  // The roots list gets the new root before its closing bracket; fragments is a new list at the end.
  const addedRoot = '  # has a backend "s3" block\n  "envs/dev",\n';
  const addedFragments =
    '\n# Not modules on their own (generated copies, templates, linked files).\nfragments = [\n' +
    '  # its files say "Generated by Terragrunt" (a committed generated copy)\n  "gen/x",\n' +
    '  # its files are templates ({% … %} / {{ … }}), not Terraform\n  "templates/x",\n]\n';
  expect(text.replace(addedRoot, '').replace(addedFragments, '')).toBe(edited);
  expect(text.indexOf(addedRoot)).toBeLessThan(text.indexOf('shared = '));
  const after = await scanPath(dir);
  expect(weakKinds(after)).toEqual([]);
  expect(lowConfidence(after)).toEqual([]);
  expect(after.modules.find((m) => m.path === 'lib/unused')?.kind).toBe('shared');
  // The template, declared a fragment, is no longer reported at all.
  expect(after.findings.filter((f) => f.file === 'templates/x/main.tf')).toEqual([]);
});

test('adds to a one-line list, after a last element without a comma and a trailing comment', async () => {
  await write({ 'a/main.tf': BACKEND, 'b/main.tf': BACKEND });
  const edited = 'roots = ["a" /* first */] # mine\n';
  await fs.writeFile(settingsFile(), edited);
  const run = await cli(['init', dir]);
  expect(run.code).toBe(0);
  expect(await fs.readFile(settingsFile(), 'utf8')).toBe(
    'roots = ["a", /* first */\n  # has a backend "s3" block\n  "b",\n] # mine\n',
  );
});

test('an invalid settings file is an error and stays as it is', async () => {
  await write({ 'a/main.tf': BACKEND });
  await fs.writeFile(settingsFile(), 'roots = "a"\n');
  const run = await cli(['init', dir]);
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/\.tfguard\.hcl/);
  expect(await fs.readFile(settingsFile(), 'utf8')).toBe('roots = "a"\n');
  const notDir = await cli(['init', path.join(dir, 'a/main.tf')]);
  expect([notDir.code, notDir.stderr]).toEqual([2, expect.stringMatching(/init needs a directory/)]);
});

describeWithCorpus('tfguard init on a real repository', () => {
  test('cloudposse/terraform-aws-components: after init, no weak kind and no low-confidence finding', async () => {
    execFileSync('tar', ['-xzf', corpusFile('cloudposse_terraform-aws-components.tar.gz'), '-C', dir]);
    const before = await scanPath(dir);
    expect(weakKinds(before).length).toBeGreaterThan(0);
    expect(lowConfidence(before).length).toBeGreaterThan(0);
    const run = await cli(['init', dir]);
    expect(run.code).toBe(0);
    const after = await scanPath(dir);
    expect(weakKinds(after)).toEqual([]);
    expect(lowConfidence(after)).toEqual([]);
    // The same kinds, now settled: only the evidence changed.
    expect(after.modules.map((m) => [m.path, m.kind])).toEqual(before.modules.map((m) => [m.path, m.kind]));
    expect((await cli(['init', dir])).stdout).toMatch(/nothing to add/);
  }, 120_000);
});
