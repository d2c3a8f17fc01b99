/**
 * test/support/external.ts end to end: a child jest runs test/support/fixtures/external.fixture.ts
 * with a chosen corpus directory and PATH, and what jest reports (skipped, failed, passed) and the
 * lines on stderr are checked for a missing, a broken and a present corpus and terraform.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CORPUS_DIR_VAR, REPO_ROOT, REQUIRE_EXTERNAL_VAR, shown } from './external';

const FIXTURE = 'test/support/fixtures/external.fixture.ts';

let dir: string;

// The temporary directory is in the repository's parent when the repository is cloned straight into
// the temporary directory (/tmp/tfguard): messages then show it relative, as they show ../shared.
test.each([
  [path.resolve(REPO_ROOT, '..', 'shared', 'corpus'), path.join('..', 'shared', 'corpus')],
  [path.join(REPO_ROOT, 'corpus'), 'corpus'],
  [
    path.resolve(REPO_ROOT, '..', '..', 'elsewhere', 'corpus'),
    path.resolve(REPO_ROOT, '..', '..', 'elsewhere', 'corpus'),
  ],
])('a corpus at %s is shown as %s', (dir, expected) => {
  expect(shown(dir)).toBe(expected);
});

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tfguard-external-'));
  await mkdir(path.join(dir, 'empty-corpus'));
  await mkdir(path.join(dir, 'corpus'));
  for (const name of ['a.tar.gz', 'b.tar.gz']) await writeFile(path.join(dir, 'corpus', name), '');
  await mkdir(path.join(dir, 'no-terraform'));
  for (const [sub, script] of [
    ['good', '#!/bin/sh\n[ "$1" = version ] && echo "Terraform v1.11.0" && exit 0\nexit 1\n'],
    ['broken', '#!/bin/sh\necho "terraform: cannot run here" >&2\nexit 3\n'],
  ] as const) {
    await mkdir(path.join(dir, sub));
    await writeFile(path.join(dir, sub, 'terraform'), script);
    await chmod(path.join(dir, sub, 'terraform'), 0o755);
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  /** The `tfguard tests:` lines. */
  notes: string[];
  /** jest's `Tests:` summary line. */
  tests: string;
  output: string;
}

function runFixture(env: Record<string, string>): Promise<Run> {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('TFGUARD_') && k !== 'PATH') childEnv[k] = v;
  }
  const jest = path.join(REPO_ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
  const args = [jest, '--ci', '--runInBand', '--roots', '<rootDir>/test/support/fixtures'];
  args.push('--testMatch', '**/external.fixture.ts');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: REPO_ROOT, env: { ...childEnv, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const output = stdout + stderr;
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1,
          notes: output.split('\n').filter((l) => l.startsWith('tfguard tests:')),
          tests: /^Tests:.*$/m.exec(output)?.[0] ?? `no summary in:\n${output}`,
          output,
        });
      },
    );
  });
}

test('missing: the blocks are skipped, each with one line saying why', async () => {
  const corpus = path.join(dir, 'absent');
  const run = await runFixture({ [CORPUS_DIR_VAR]: corpus, PATH: path.join(dir, 'no-terraform') });
  expect({ code: run.code, notes: run.notes, tests: run.tests }).toEqual({
    code: 0,
    notes: [
      `tfguard tests: skipped "needs the corpus" (${FIXTURE}): corpus not found at ${shown(corpus)} (${CORPUS_DIR_VAR} is set to it)`,
      `tfguard tests: skipped "needs terraform" (${FIXTURE}): terraform not found on PATH (the oracle tests need terraform 1.11)`,
    ],
    tests: expect.stringMatching(/^Tests: +2 skipped, 1 passed, 3 total$/),
  });
}, 90_000);

test(`broken or empty with ${REQUIRE_EXTERNAL_VAR}=1: the blocks fail with the reason`, async () => {
  const corpus = path.join(dir, 'empty-corpus');
  const run = await runFixture({
    [CORPUS_DIR_VAR]: corpus,
    PATH: path.join(dir, 'broken'),
    [REQUIRE_EXTERNAL_VAR]: '1',
  });
  expect({ code: run.code, notes: run.notes, tests: run.tests }).toEqual({
    code: 1,
    notes: [],
    tests: expect.stringMatching(/^Tests: +2 failed, 1 passed, 3 total$/),
  });
  expect(run.output).toContain(
    `corpus at ${shown(corpus)} has no .tar.gz archives (${CORPUS_DIR_VAR} is set to it); ${REQUIRE_EXTERNAL_VAR}=1 requires it`,
  );
  expect(run.output).toContain(
    `${path.join(dir, 'broken', 'terraform')} version failed (exit 3: terraform: cannot run here); ${REQUIRE_EXTERNAL_VAR}=1 requires it`,
  );
}, 90_000);

test('present: every block runs', async () => {
  const run = await runFixture({
    [CORPUS_DIR_VAR]: path.join(dir, 'corpus'),
    PATH: path.join(dir, 'good'),
    [REQUIRE_EXTERNAL_VAR]: '1',
  });
  expect({ code: run.code, notes: run.notes, tests: run.tests }).toEqual({
    code: 0,
    notes: [],
    tests: expect.stringMatching(/^Tests: +4 passed, 4 total$/),
  });
}, 90_000);
