/**
 * Patches of files whose names hold what a directory on Linux or a tar entry may hold (anything but
 * NUL and `/`): a newline, a tab, a CR, quotes, a backslash, ESC, non-ASCII, a leading `--`, `..`
 * inside a name, and a name that is itself a patch header (`x\n+++ b/.github/workflows/pwn.yml\n@@`).
 * `tfguard fix --dry-run` (a checkout) and the API's `fix=true` path (`fixBytes` + `fixPatch` over a
 * tarball) must write the names exactly as git does (oracle: `git diff` over the same files), and
 * the patch must give the fixed files through the real `git apply` and GNU `patch -p1`, creating no
 * other file. A file under a `.git`-like directory (which makes `git apply` refuse a whole patch) is
 * left out, with the reason in the patch and on stderr.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { gitQuotedName, unpatchablePath } from '../../src/fix';
import { fixBytes, fixPatch } from '../../src/scan/fix';
import { buildTarGz } from '../support/archive';
import { cli } from '../support/cli';
import { describeWithExternal } from '../support/external';
import { git } from '../support/git';
import { readTextTree, writeTree } from '../support/terraform';

const run = promisify(execFile);

/** A deployable root (a backend) whose constraint `tfguard fix` bounds: one changed line. */
const ROOT_TF = [
  'terraform {',
  '  backend "local" {}',
  '  required_providers {',
  '    aws = {',
  '      source  = "hashicorp/aws"',
  '      version = ">= 5.1"',
  '    }',
  '  }',
  '}',
  '',
].join('\n');
const FIXED_TF = ROOT_TF.replace('">= 5.1"', '"~> 5.1"');

/** Directory names (each a root of its own), every one a way to break an unquoted patch header. */
const ODD_DIRS = [
  'new\nline',
  'tab\there',
  'cr\rhere',
  'quote"d',
  "single'quote",
  'back\\slash',
  'esc\u001b[31mred',
  'bel\u0007del\u007f',
  'unicodé ✓ 日本',
  '--lead',
  '-- spaced',
  'a..b',
  '..dots',
  'space in name',
  'trailing space ',
  'x\n+++ b/.github/workflows/pwn.yml\n@@ -0,0 +1 @@\n+pwn',
];
/** A name git apply refuses (a `.git` component in any case): its fix must be left out. */
const GIT_DIR = 'vendor/.GIT';

/** Names that cannot be in a tarball as they are: tfguard reads `\` in an archive entry as a
 * separator (archives from Windows tools), so `back\slash` is tested through a checkout only. */
const TAR_DIRS = ODD_DIRS.filter((d) => !d.includes('\\'));

const files = (dirs: readonly string[]): Record<string, string> =>
  Object.fromEntries(dirs.map((d) => [`${d}/main.tf`, ROOT_TF]));

/** No control character other than line breaks, and tabs only where git puts one: at the end of a
 * `---`/`+++` line whose name has a space. */
function expectNoRawControl(patch: string): void {
  for (const line of patch.split('\n')) {
    const header = /^(---|\+\+\+) /.test(line);
    const body = header && line.endsWith('\t') ? line.slice(0, -1) : line;
    // eslint-disable-next-line no-control-regex
    expect(body).not.toMatch(/[\u0000-\u001f\u007f]/);
  }
}

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-patch-names-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const tree = (dir: string): Promise<Record<string, string>> =>
  readTextTree(dir, (name) => name === '.git' || name === '.terraform');

/** Applies `patch` in `dir` with `git apply` or `patch -p1`; throws with the tool's output. */
async function apply(tool: 'git' | 'patch', patchFile: string, dir: string): Promise<void> {
  if (tool === 'git') {
    await run('git', ['apply', '--check', patchFile], { cwd: dir });
    await run('git', ['apply', patchFile], { cwd: dir });
  } else {
    const r = spawnSync('patch', ['-p1', '--batch', '--forward', '-i', patchFile], {
      cwd: dir,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`patch -p1 failed (${String(r.status)}): ${r.stdout}${r.stderr}`);
  }
}

describe('git quoting of names in patch headers', () => {
  it('writes each odd name as git diff does (git is the oracle)', async () => {
    const repo = path.join(tmp, 'repo');
    await writeTree(repo, files(ODD_DIRS));
    git(['init', '-q'], repo);
    git(['add', '-A'], repo);
    git(['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'before'], repo);
    await writeTree(repo, Object.fromEntries(ODD_DIRS.map((d) => [`${d}/main.tf`, FIXED_TF])));
    // git's own headers, without the `diff --git`/`index` lines our patches do not have.
    const theirs = git(['-c', 'core.quotePath=true', 'diff'], repo)
      .toString('utf8')
      .split('\n')
      .filter((l) => /^(---|\+\+\+) /.test(l));
    const ours = ODD_DIRS.flatMap((d) => [
      `--- ${gitQuotedName('a/', `${d}/main.tf`)}${d.includes(' ') ? '\t' : ''}`,
      `+++ ${gitQuotedName('b/', `${d}/main.tf`)}${d.includes(' ') ? '\t' : ''}`,
    ]);
    expect(theirs).toHaveLength(2 * ODD_DIRS.length);
    expect([...ours].sort()).toEqual([...theirs].sort());
    // A few spelled out, so the rule is readable here too.
    expect(gitQuotedName('a/', 'new\nline/main.tf')).toBe('"a/new\\nline/main.tf"');
    expect(gitQuotedName('a/', 'esc\u001b[31mred/main.tf')).toBe('"a/esc\\033[31mred/main.tf"');
    expect(gitQuotedName('a/', 'unicodé/main.tf')).toBe('"a/unicod\\303\\251/main.tf"');
    expect(gitQuotedName('a/', 'quote"d\\x/main.tf')).toBe('"a/quote\\"d\\\\x/main.tf"');
    expect(gitQuotedName('a/', '--lead/main.tf')).toBe('a/--lead/main.tf');
  });
});

describeWithExternal(['patch'], 'patches of odd names through git apply and patch -p1', () => {
  it('tfguard fix --dry-run (a checkout): both tools give the files the in-place fix writes', async () => {
    const given = { ...files(ODD_DIRS), [`${GIT_DIR}/main.tf`]: ROOT_TF };
    const checkout = path.join(tmp, 'checkout');
    await writeTree(checkout, given);
    const dry = await cli(['fix', checkout, '--dry-run']);
    const patch = dry.stdout;
    expectNoRawControl(patch);
    // The .git-like directory is left out, and said so in the patch and on stderr.
    const leftOut = `left out of this patch: ${gitQuotedName('', `${GIT_DIR}/main.tf`)}: git apply refuses`;
    expect(patch.split('\n')[0]).toContain(`# tfguard: ${leftOut}`);
    expect(dry.stderr).toContain(`tfguard fix: left out of the patch: ${GIT_DIR}/main.tf: git apply refuses`);
    expect(patch.match(/^\+\+\+ /gm)).toHaveLength(ODD_DIRS.length);

    // What the in-place fix writes, minus the left-out file (a patch does not carry it).
    const inPlace = path.join(tmp, 'in-place');
    await writeTree(inPlace, given);
    await cli(['fix', inPlace]);
    const expected: Record<string, string> = { ...(await tree(inPlace)), [`${GIT_DIR}/main.tf`]: ROOT_TF };
    for (const d of ODD_DIRS) expect(expected[`${d}/main.tf`]).toBe(FIXED_TF);

    const patchFile = path.join(tmp, 'fix.patch');
    await fs.writeFile(patchFile, patch);
    for (const tool of ['git', 'patch'] as const) {
      const dir = path.join(tmp, `with-${tool}`);
      await writeTree(dir, given);
      await apply(tool, patchFile, dir);
      // Exactly the fixed files: nothing created elsewhere (no .github/workflows/pwn.yml).
      expect(await tree(dir)).toEqual(expected);
    }
  });

  it('the API path (fixBytes + fixPatch over a tarball): both tools give the fixed files', async () => {
    const tarball = await buildTarGz(
      Object.entries({ ...files(TAR_DIRS), [`${GIT_DIR}/main.tf`]: ROOT_TF }).map(([name, data]) => ({
        name,
        data,
      })),
    );
    const outcome = await fixBytes('odd.tar.gz', tarball);
    const changed = new Map(outcome.changes.map((c) => [c.path, c.after.toString('utf8')]));
    expect([...changed.keys()].sort()).toEqual(
      [...TAR_DIRS.map((d) => `${d}/main.tf`), `${GIT_DIR}/main.tf`].sort(),
    );
    const patch = fixPatch(outcome.changes);
    expectNoRawControl(patch);
    expect(patch).toMatch(/^# tfguard: left out of this patch: vendor\/\.GIT\/main\.tf: /);
    const patchFile = path.join(tmp, 'api.patch');
    await fs.writeFile(patchFile, patch);
    const archive = path.join(tmp, 'odd.tar.gz');
    await fs.writeFile(archive, tarball);
    for (const tool of ['git', 'patch'] as const) {
      // The real tar is the oracle of what the archive holds on disk.
      const dir = path.join(tmp, `tar-${tool}`);
      await fs.mkdir(dir);
      await run('tar', ['-xzf', archive, '-C', dir]);
      const before = await tree(dir);
      await apply(tool, patchFile, dir);
      const after = await tree(dir);
      const expected = { ...before };
      for (const [file, text] of changed) if (file !== `${GIT_DIR}/main.tf`) expected[file] = text;
      expect(after).toEqual(expected);
    }
  });
});

describe('names git apply refuses', () => {
  const NAMES = [
    '.git',
    '.GIT',
    '.git.',
    '.git. . ',
    'git~1',
    'GIT~1 ',
    '.git:x',
    '.git::$INDEX_ALLOCATION',
    '.git\u200c',
    '\ufeff.git',
    'git~2',
    '.gitx',
    'x.git',
    '.git~1',
    '.github',
    'git',
  ];
  it.each(NAMES.map((n) => [JSON.stringify(n), n]))(
    '%s: left out exactly when git apply (protectNTFS, protectHFS) refuses it',
    async (_shown, name) => {
      const file = `a/${name}/main.tf`;
      const patchFile = path.join(tmp, 'one.patch');
      await fs.writeFile(patchFile, `--- /dev/null\n+++ ${gitQuotedName('b/', file)}\n@@ -0,0 +1 @@\n+x\n`);
      const r = spawnSync(
        'git',
        ['-c', 'core.protectNTFS=true', '-c', 'core.protectHFS=true', 'apply', '--check', patchFile],
        { cwd: tmp, encoding: 'utf8' },
      );
      expect({ refused: r.status !== 0, leftOut: unpatchablePath(file) !== null }).toEqual({
        refused: r.status !== 0,
        leftOut: r.status !== 0,
      });
    },
  );
});
