/**
 * What some suites need from outside the repository, found in one place:
 *
 * - the corpus of real public configurations: `TFGUARD_CORPUS_DIR` (absolute, or relative to the
 *   repository), by default `../shared/corpus` beside the repository;
 * - the `terraform` CLI (the offline oracle): on PATH, and `terraform version` succeeds;
 * - GNU `patch` (the second oracle of `tfguard fix --dry-run` patches, beside `git apply`) and
 *   `cmark-gfm` (GitHub's Markdown parser, the oracle of the Markdown report's escaping): on PATH,
 *   and `--version` answers (`.ci/run` installs them when a machine lacks them).
 * - the `pre-commit` CLI (the real client of the hook, Debian's `pre-commit` package): on PATH, and
 *   `pre-commit --version` succeeds.
 * - `chromium-headless-shell` (Debian's package of that name: the real browser that renders the
 *   fleet page, test/support/chromium.ts): on PATH, and `--version` answers.
 *
 * A fresh clone with only Node.js has neither, so the suites that need them wrap their tests in
 * `describeWithCorpus` / `describeWithTerraform` / `describeWithExternal`. When something is missing
 * the block is reported by jest as skipped (its tests keep their names) and one line on stderr says
 * what was not run and why:
 *
 *   tfguard tests: skipped "real-world corpus" (test/archive/corpus.test.ts): corpus not found at ../shared/corpus (set TFGUARD_CORPUS_DIR)
 *
 * With `TFGUARD_REQUIRE_EXTERNAL=1` (set by `.ci/run`) a missing corpus, terraform, patch, cmark-gfm, pre-commit or chromium-headless-shell fails the
 * block instead, so CI never passes by skipping.
 *
 * The body of a wrapped block also runs (to collect the skipped tests' names) when the resource is
 * missing, so it must only touch the resource inside hooks and tests; `corpusArchives()` gives an
 * empty list then, which `test.each` reports as one more skipped test.
 *
 * Scripts (scripts/, bench/) use `corpusStatus()` / `corpusDir()` without the jest wrappers.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The variable that turns a missing corpus or terraform into a failure (CI sets it). */
export const REQUIRE_EXTERNAL_VAR = 'TFGUARD_REQUIRE_EXTERNAL';
/** The variable that says where the corpus is. */
export const CORPUS_DIR_VAR = 'TFGUARD_CORPUS_DIR';

export type External =
  'corpus' | 'terraform' | 'patch' | 'cmark-gfm' | 'pre-commit' | 'chromium-headless-shell';

export type Availability<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Whether a missing resource must fail the tests (`TFGUARD_REQUIRE_EXTERNAL=1`). */
export function externalRequired(): boolean {
  return process.env[REQUIRE_EXTERNAL_VAR] === '1';
}

// ---------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------

/** Where the corpus is expected (whether or not it is there). */
export function corpusDir(): string {
  const configured = process.env[CORPUS_DIR_VAR];
  return configured !== undefined && configured !== ''
    ? path.resolve(REPO_ROOT, configured)
    : path.resolve(REPO_ROOT, '..', 'shared', 'corpus');
}

/** `dir` as the messages show it: relative to the repository when it is nearby (in the repository's
 * parent directory, as `../shared/corpus` is). */
export function shown(dir: string): string {
  const rel = path.relative(REPO_ROOT, dir);
  return rel.startsWith('../../') || path.isAbsolute(rel) ? dir : rel;
}

let corpusCache: { dir: string; result: Availability<string> } | undefined;

/** The corpus directory if it exists and holds `.tar.gz` archives, or why not. */
export function corpusStatus(): Availability<string> {
  const dir = corpusDir();
  if (corpusCache?.dir === dir) return corpusCache.result;
  const fromEnv = (process.env[CORPUS_DIR_VAR] ?? '') !== '';
  const hint = fromEnv ? `${CORPUS_DIR_VAR} is set to it` : `set ${CORPUS_DIR_VAR}`;
  let result: Availability<string>;
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    result = readdirSync(dir).some((f) => f.endsWith('.tar.gz'))
      ? { ok: true, value: dir }
      : { ok: false, reason: `corpus at ${shown(dir)} has no .tar.gz archives (${hint})` };
  } catch {
    result = { ok: false, reason: `corpus not found at ${shown(dir)} (${hint})` };
  }
  corpusCache = { dir, result };
  return result;
}

/** Path of a file of the corpus (for use inside hooks and tests of a corpus block). */
export function corpusFile(name: string): string {
  return path.join(corpusDir(), name);
}

/** The `.tar.gz` archives of the corpus, sorted; empty when it is missing. */
export function corpusArchives(): string[] {
  const status = corpusStatus();
  if (!status.ok) return [];
  return readdirSync(status.value)
    .filter((f) => f.endsWith('.tar.gz'))
    .sort();
}

// ---------------------------------------------------------------------------------------------
// terraform
// ---------------------------------------------------------------------------------------------

/** Absolute path of the first executable `name` on PATH, or null. */
function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

let terraformCache: { pathVar: string; result: Availability<string> } | undefined;

/** The absolute path of a working `terraform` on PATH, or why there is none. */
export function terraformStatus(): Availability<string> {
  const pathVar = process.env.PATH ?? '';
  if (terraformCache?.pathVar === pathVar) return terraformCache.result;
  const bin = onPath(process.platform === 'win32' ? 'terraform.exe' : 'terraform');
  let result: Availability<string>;
  if (bin === null) {
    result = { ok: false, reason: 'terraform not found on PATH (the oracle tests need terraform 1.11)' };
  } else {
    const r = spawnSync(bin, ['version'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, CHECKPOINT_DISABLE: '1' },
    });
    result =
      r.status === 0
        ? { ok: true, value: bin }
        : {
            ok: false,
            reason: `${bin} version failed (${r.error?.message ?? `exit ${String(r.status)}`}: ${(r.stderr ?? '').trim().split('\n')[0] ?? ''})`,
          };
  }
  terraformCache = { pathVar, result };
  return result;
}

// ---------------------------------------------------------------------------------------------
// Other oracles: GNU patch, cmark-gfm, pre-commit
// ---------------------------------------------------------------------------------------------

const TOOLS = {
  patch: { args: ['--version'], answer: /GNU patch/, install: 'apt-get install patch' },
  'cmark-gfm': { args: ['--version'], answer: /cmark-gfm/, install: 'apt-get install cmark-gfm' },
  'pre-commit': { args: ['--version'], answer: /pre-commit/, install: 'apt-get install pre-commit' },
  'chromium-headless-shell': {
    args: ['--version'],
    answer: /Chromium/,
    install: 'apt-get install chromium-headless-shell',
  },
} as const;

type Tool = keyof typeof TOOLS;

const toolCache = new Map<Tool, { pathVar: string; result: Availability<string> }>();

/** The absolute path of a working `tool` on PATH, or why there is none. */
export function toolStatus(tool: Tool): Availability<string> {
  const pathVar = process.env.PATH ?? '';
  const cached = toolCache.get(tool);
  if (cached?.pathVar === pathVar) return cached.result;
  const { args, answer, install } = TOOLS[tool];
  const bin = onPath(tool);
  let result: Availability<string>;
  if (bin === null) {
    result = { ok: false, reason: `${tool} not found on PATH (${install})` };
  } else {
    const r = spawnSync(bin, [...args], { encoding: 'utf8', timeout: 30_000 });
    result =
      r.status === 0 && answer.test(r.stdout ?? '')
        ? { ok: true, value: bin }
        : { ok: false, reason: `${bin} ${args.join(' ')} did not answer as ${tool}` };
  }
  toolCache.set(tool, { pathVar, result });
  return result;
}

// ---------------------------------------------------------------------------------------------
// Jest wrappers
// ---------------------------------------------------------------------------------------------

function status(need: External): Availability<string> {
  if (need === 'corpus') return corpusStatus();
  return need === 'terraform' ? terraformStatus() : toolStatus(need);
}

/** Reasons why `needs` are not all available (empty when they are). */
export function missing(needs: readonly External[]): string[] {
  return needs.flatMap((n) => {
    const s = status(n);
    return s.ok ? [] : [s.reason];
  });
}

function currentTestFile(): string {
  const testPath = expect.getState().testPath;
  return testPath === undefined || testPath === null ? '?' : path.relative(REPO_ROOT, testPath);
}

/**
 * `describe(name, fn)` when everything in `needs` is available. Otherwise: a skipped block and
 * one line on stderr naming it and the reason, or, with TFGUARD_REQUIRE_EXTERNAL=1, a block with
 * one failing test that gives the reason.
 */
export function describeWithExternal(needs: readonly External[], name: string, fn: () => void): void {
  const reasons = missing(needs);
  if (reasons.length === 0) {
    describe(name, fn);
    return;
  }
  const why = reasons.join('; ');
  if (externalRequired()) {
    describe(name, () => {
      test(`needs ${needs.join(' and ')}`, () => {
        throw new Error(`${why}; ${REQUIRE_EXTERNAL_VAR}=1 requires it`);
      });
    });
    return;
  }
  process.stderr.write(`tfguard tests: skipped "${name}" (${currentTestFile()}): ${why}\n`);
  describe.skip(name, fn);
}

/** A block that needs the corpus (see `describeWithExternal`). */
export function describeWithCorpus(name: string, fn: () => void): void {
  describeWithExternal(['corpus'], name, fn);
}

/** A block that needs the terraform CLI (see `describeWithExternal`). */
export function describeWithTerraform(name: string, fn: () => void): void {
  describeWithExternal(['terraform'], name, fn);
}
