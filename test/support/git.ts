/**
 * Git repositories on disk for tests: a repository standing in for a git host (its tags and commits
 * served as the host's archive downloads by `git archive`), and `git::file://` sources for
 * `terraform get`. Git runs without the user's or the system's configuration.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTree } from './terraform';

const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'tfguard test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'tfguard test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid',
};

/** Runs git in `cwd`; its stdout (as bytes), or an error with its stderr. */
export function git(args: string[], cwd: string): Buffer {
  const r = spawnSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, maxBuffer: 64 * 1024 * 1024 });
  if (r.error !== undefined)
    throw new Error(`git could not be run (these tests need git): ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(`git ${args.join(' ')} failed (${r.status}): ${r.stderr?.toString('utf8') ?? ''}`);
  }
  return r.stdout;
}

export interface GitRepo {
  dir: string;
  /** Full commit SHA of each tag. */
  tags: Record<string, string>;
}

/** A repository with one commit per entry of `commits`, each tagged with its key, in order. */
export async function gitRepo(commits: Record<string, Record<string, string>>): Promise<GitRepo> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tfguard-git-'));
  git(['init', '-q', '-b', 'main'], dir);
  const tags: Record<string, string> = {};
  for (const [tag, files] of Object.entries(commits)) {
    await writeTree(dir, files);
    git(['add', '-A'], dir);
    git(['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', tag], dir);
    git(['tag', tag], dir);
    tags[tag] = git(['rev-parse', 'HEAD'], dir).toString('utf8').trim();
  }
  return { dir, tags };
}

/** `git archive` of `ref` as a gzipped tar with one top directory, as GitHub and GitLab serve
 * archive downloads (`<repo>-<ref>/...`). */
export function gitArchive(repo: GitRepo, ref: string, prefix: string): Buffer {
  return git(['archive', '--format=tar.gz', `--prefix=${prefix}/`, ref], repo.dir);
}

/**
 * A git repository holding this checkout as it is on disk (tracked files and untracked ones not
 * ignored, in one commit; node_modules and build output left out, as .gitignore says): what a user
 * gets by cloning the repository, including changes not yet committed. Returns its directory.
 */
export function repositorySnapshot(repoRoot: string, dest: string): string {
  const listed = git(['ls-files', '-z', '--cached', '--others', '--exclude-standard'], repoRoot)
    .toString('utf8')
    .split('\0')
    .filter((f) => f !== '' && f !== 'node_modules');
  const copied = spawnSync(
    'sh',
    ['-c', `tar -C "$0" --null -T - -cf - | tar -C "$1" -xf -`, repoRoot, dest],
    {
      input: listed.filter((f) => existsSync(path.join(repoRoot, f))).join('\0'),
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (copied.status !== 0) throw new Error(`copying the checkout failed: ${copied.stderr.toString('utf8')}`);
  git(['init', '-q', '-b', 'main'], dest);
  git(['add', '-A'], dest);
  git(['commit', '-q', '-m', 'snapshot'], dest);
  return dest;
}
