/**
 * The layer order of src/ is enforced by ESLint (eslint.config.mjs `LAYERS`): these tests plant
 * imports in files of each layer and lint them with the repository's own configuration, so a rule
 * that stopped matching (a typo in a pattern, a layer left out) fails here rather than letting an
 * upward import or a cycle in unnoticed.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../support/external';

// [file that imports, import specifier, allowed?]
const CASES: Array<[string, string, boolean]> = [
  // Upward: each fails.
  ['src/lockfile/planted.ts', '../rules/types', false], // the old lockfile → rules cycle
  ['src/lockfile/planted.ts', '../rules', false],
  ['src/hcl/planted.ts', '../modules', false],
  ['src/archive/planted.ts', '../scan/types', false],
  ['src/constraints/planted.ts', '../lockfile', false],
  ['src/addrs/planted.ts', '../modules/tree', false],
  ['src/modules/planted.ts', '../lockfile/parse', false],
  ['src/rules/planted.ts', '../report', false],
  ['src/report/planted.ts', '../scan', false],
  ['src/scan/planted.ts', '../service/scan-service', false],
  ['src/service/planted.ts', '../cli/main', false],
  ['src/model.ts', './hcl', false],
  ['src/storage/planted.ts', '../scan', false],
  // The AWS SDK only in storage adapters.
  ['src/scan/planted.ts', '@aws-sdk/client-s3', false],
  ['handlers/planted.ts', '@aws-sdk/client-s3', false],
  ['src/storage/planted.ts', '@aws-sdk/client-s3', true],
  // Downward and sideways within a layer: allowed.
  ['src/rules/planted.ts', '../lockfile', true],
  ['src/rules/planted.ts', '../addrs', true],
  ['src/lockfile/planted.ts', '../modules', true],
  ['src/modules/planted.ts', '../hcl', true],
  ['src/hcl/planted.ts', '../archive/paths', true],
  ['src/scan/planted.ts', '../storage/types', true],
  ['src/cli/planted.ts', '../service', true],
  ['src/modules/planted.ts', './tree', true],
];

let linted: { planted: string[][]; sources: string[] };

beforeAll(() => {
  // The real ESLint with the repository's configuration, in a child process (see lint-planted.mjs).
  const out = execFileSync(process.execPath, [path.join(__dirname, 'lint-planted.mjs')], {
    cwd: REPO_ROOT,
    input: JSON.stringify(CASES.map(([file, specifier]) => [file, specifier])),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  linted = JSON.parse(out) as typeof linted;
}, 120_000);

describe('layer order (eslint no-restricted-imports)', () => {
  it.each(CASES.map((c, i) => [...c, i] as const))(
    '%s importing %s: allowed = %s',
    (_file, _spec, allowed, i) => {
      const messages = linted.planted[i];
      if (allowed) expect(messages).toEqual([]);
      else expect(messages).toEqual([expect.stringMatching(/layer order|AWS SDK|leaves/)]);
    },
  );

  it('the real sources have no upward import', () => {
    expect(linted.sources).toEqual([]);
  });
});
