/**
 * Test support lives in test/support/ (CONTRIBUTING.md): every other TypeScript file under test/ is
 * a test file, so a helper written beside its tests fails here instead of becoming one more place
 * to look. Fixtures (test/fixtures/, test/support/fixtures/) are data, not helpers.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../support/external';

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : [path.relative(REPO_ROOT, p).split(path.sep).join('/')];
  });
}

test('every helper module under test/ is in test/support/', () => {
  const all = files(path.join(REPO_ROOT, 'test'));
  expect(all.filter((f) => f.startsWith('test/support/') && !f.endsWith('.test.ts')).length).toBeGreaterThan(
    20,
  );
  const stray = all.filter(
    (f) =>
      /\.(ts|mts|cts|js|mjs|cjs)$/.test(f) &&
      !f.endsWith('.test.ts') &&
      !f.startsWith('test/support/') &&
      !f.startsWith('test/fixtures/') &&
      // The child process that lints planted code (ESLint's config is ESM; Jest's sandbox is not).
      f !== 'test/architecture/lint-planted.mjs',
  );
  expect(stray).toEqual([]);
});
