/**
 * `tfguard fix live/prod` inside a repository: the repository
 * root is found (git), modules are resolved from it, only files inside the requested directory are
 * edited, what was not edited is said, and the patch's paths are from the repository root, so that
 * the real `git apply` run at the root accepts it.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { cli } from '../support/cli';

const run = promisify(execFile);

const ROOT_TF = [
  'terraform {',
  '  required_version = "~> 1.6"',
  '  backend "local" {}',
  '  required_providers {',
  '    aws = {',
  '      source  = "hashicorp/aws"',
  '      version = ">= 5.1"',
  '    }',
  '  }',
  '}',
  '',
  'module "net" {',
  '  source = "../../modules/net"',
  '}',
  '',
].join('\n');

/** A shared module pinned exactly: a fixable finding outside `live/prod`. */
const NET_TF = [
  'terraform {',
  '  required_providers {',
  '    aws = {',
  '      source  = "hashicorp/aws"',
  '      version = "5.1.0"',
  '    }',
  '  }',
  '}',
  '',
].join('\n');

const FILES: Record<string, string> = {
  'live/prod/main.tf': ROOT_TF,
  'live/staging/main.tf': ROOT_TF,
  'modules/net/main.tf': NET_TF,
};

let repo: string;
beforeEach(async () => {
  repo = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-fix-subtree-'));
  for (const [file, text] of Object.entries(FILES)) {
    await fs.mkdir(path.dirname(path.join(repo, file)), { recursive: true });
    await fs.writeFile(path.join(repo, file), text);
  }
  await run('git', ['init', '-q', repo]);
});
afterEach(async () => {
  await fs.rm(repo, { recursive: true, force: true });
});

const read = (file: string): Promise<string> => fs.readFile(path.join(repo, file), 'utf8');

test('--dry-run: a patch from the repository root that git apply accepts there, only inside live/prod', async () => {
  const r = await cli(['fix', '--dry-run', path.join(repo, 'live', 'prod')]);
  expect(r.stdout).toContain('--- a/live/prod/main.tf\n+++ b/live/prod/main.tf\n');
  expect(r.stdout).not.toMatch(/^\+\+\+ b\/(?!live\/prod\/)/m);
  expect(r.stderr).toContain('is live/prod of the repository at');
  expect(r.stderr).toContain('not edited: 1 fixable finding outside live/prod');
  expect(r.stderr).toContain('would fix 1 finding in 1 file\n');
  // The real git, at the repository root, applies it.
  await fs.writeFile(path.join(repo, 'fix.patch'), r.stdout);
  await run('git', ['apply', 'fix.patch'], { cwd: repo });
  await fs.rm(path.join(repo, 'fix.patch'));
  expect(await read('live/prod/main.tf')).toBe(ROOT_TF.replace('">= 5.1"', '"~> 5.1"'));
  expect(await read('live/staging/main.tf')).toBe(ROOT_TF);
  expect(await read('modules/net/main.tf')).toBe(NET_TF);
});

test('in place: edits only live/prod, the module it calls is read but not edited; a second run has nothing to do', async () => {
  const first = await cli(['fix', path.join(repo, 'live', 'prod')]);
  expect(first.stdout).toMatch(
    /tfguard fix: fixed 1 finding in 1 file\n {2}live\/prod\/main\.tf:7 {2}root-module-unbounded/,
  );
  // The module call resolved from the repository root: no module-source-missing for it.
  expect(first.stdout).not.toContain('module-source-missing');
  expect(await read('live/prod/main.tf')).toBe(ROOT_TF.replace('">= 5.1"', '"~> 5.1"'));
  expect(await read('live/staging/main.tf')).toBe(ROOT_TF);
  expect(await read('modules/net/main.tf')).toBe(NET_TF);
  const second = await cli(['fix', path.join(repo, 'live', 'prod')]);
  expect(second.stdout).toContain('tfguard fix: fixed 0 findings in 0 files\n');
  // The findings still open are those of live/prod only.
  const open = second.stdout.split('still needs a person')[1] ?? '';
  expect(open.match(/^ {2}\S+:\d+/gm)?.every((l) => l.startsWith('  live/prod/'))).toBe(true);
});
