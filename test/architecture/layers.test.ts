/**
 * The architecture of src/ is enforced by ESLint (eslint.config.mjs `LAYERS`, the rules in
 * scripts/eslint-architecture.mjs): these tests plant each kind of violation in files of each layer
 * and lint them with the repository's own configuration, so a rule that stopped matching (a typo, a
 * layer left out, a kind of import it does not see) fails here rather than letting an upward
 * import, a dynamic import, an SDK import or a cycle in unnoticed.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../support/external';

const imports = (specifier: string) =>
  `import * as planted from '${specifier}';\nexport const x = planted;\n`;

const UPWARD = /layer order/;
const SDK = /Only storage adapters/;
const DYNAMIC = /Dynamic import\(\)\/require\(\) is allowed only in src\/util\/lazy\.ts/;
const CYCLE = /Import cycle/;

// [file, code, the message expected (null: the code is allowed)]
const SINGLE: Array<[string, string, RegExp | null]> = [
  // Upward: each fails.
  ['src/lockfile/planted.ts', imports('../rules/types'), UPWARD], // the old lockfile → rules cycle
  ['src/lockfile/planted.ts', imports('../rules'), UPWARD],
  ['src/hcl/planted.ts', imports('../modules'), UPWARD],
  ['src/archive/planted.ts', imports('../scan/types'), UPWARD],
  ['src/constraints/planted.ts', imports('../lockfile'), UPWARD],
  ['src/addrs/planted.ts', imports('../modules/tree'), UPWARD],
  ['src/modules/planted.ts', imports('../lockfile/parse'), UPWARD],
  ['src/rules/planted.ts', imports('../report'), UPWARD],
  ['src/rules/planted.ts', imports('../fix'), UPWARD],
  ['src/fix/planted.ts', imports('../report/types'), UPWARD],
  ['src/report/planted.ts', imports('../scan'), UPWARD],
  ['src/scan/planted.ts', imports('../service/scan-service'), UPWARD],
  ['src/service/planted.ts', imports('../cli/main'), UPWARD],
  ['src/model.ts', imports('./hcl'), UPWARD],
  ['src/errors.ts', imports('./modules/tree'), UPWARD],
  ['src/util/planted.ts', imports('../rules'), UPWARD],
  ['src/storage/planted.ts', imports('../scan'), UPWARD],
  // scan → config: only the command line and handlers read the operator's settings.
  ['src/scan/planted.ts', imports('../config'), UPWARD],
  ['src/scan/planted.ts', imports('../scan/../config.ts'), UPWARD],
  ['src/service/planted.ts', imports('../config'), UPWARD],
  // Upward however it is written: a re-export, a type-only import, a type-position import().
  ['src/report/planted.ts', `export * from '../scan';\n`, UPWARD],
  ['src/report/planted.ts', `export { scanPath } from '../scan';\n`, UPWARD],
  [
    'src/rules/planted.ts',
    `import type { Report } from '../report/types';\nexport type R = Report;\n`,
    UPWARD,
  ],
  ['src/rules/planted.ts', `export type O = import('../scan/types').ScanOptions;\n`, UPWARD],
  // Outside src/: rules → handlers, src → tests.
  ['src/rules/planted.ts', imports('../../handlers/runtime'), /src\/ imports only src\/ and packages/],
  ['src/scan/planted.ts', imports('../../test/support/clock'), /src\/ imports only src\/ and packages/],
  // A directory in no layer.
  ['src/newlayer/planted.ts', imports('../model'), /src\/newlayer is in no layer/],
  ['src/scan/planted.ts', imports('../newlayer/x'), /src\/newlayer is in no layer/],
  // The AWS SDK only in storage adapters: not in the leaves, the core or handlers.
  ['src/scan/planted.ts', imports('@aws-sdk/client-s3'), SDK],
  ['src/errors.ts', imports('@aws-sdk/client-s3'), SDK],
  ['src/model.ts', imports('@smithy/signature-v4'), SDK],
  ['src/util/planted.ts', imports('@aws-sdk/s3-request-presigner'), SDK],
  ['src/config.ts', imports('@aws-sdk/client-sqs'), SDK],
  ['src/cli/planted.ts', `export { S3Client } from '@aws-sdk/client-s3';\n`, SDK],
  ['handlers/planted.ts', imports('@aws-sdk/client-s3'), SDK],
  ['src/storage/planted.ts', imports('@aws-sdk/client-s3'), null],
  // Dynamic import() and require(): only in src/util/lazy.ts.
  ['src/scan/planted.ts', `export const load = () => import('../modules');\n`, DYNAMIC],
  ['src/lockfile/planted.ts', `export const load = () => import('openpgp');\n`, DYNAMIC],
  ['src/hcl/planted.ts', `export const fs = require('node:fs');\n`, DYNAMIC],
  ['src/cli/planted.ts', `export const load = (m: string) => import(m);\n`, DYNAMIC],
  ['handlers/planted.ts', `export const load = () => import('../src/scan');\n`, DYNAMIC],
  ['src/util/lazy.ts', `export const load = () => import('openpgp');\n`, null],
  // npm's semver is not Terraform's version order: src/constraints is.
  ['src/service/planted.ts', imports('semver'), /Terraform orders them/],
  ['src/rules/planted.ts', imports('semver/functions/compare'), /Terraform orders them/],
  // Cycles, planted in an existing file against the others on disk.
  [
    'src/rules/types.ts',
    `import type { Annotation } from './suppress';\nexport type A = Annotation;\n`,
    CYCLE,
  ],
  ['src/scan/pipeline.ts', `export { fixPath } from './fix';\n`, CYCLE],
  // Downward and sideways within a layer: allowed.
  ['src/rules/planted.ts', imports('../lockfile'), null],
  ['src/rules/planted.ts', imports('../addrs'), null],
  ['src/lockfile/planted.ts', imports('../modules'), null],
  ['src/modules/planted.ts', imports('../hcl'), null],
  ['src/hcl/planted.ts', imports('../archive/paths'), null],
  ['src/scan/planted.ts', imports('../storage/types'), null],
  ['src/report/planted.ts', imports('../fix'), null],
  ['src/cli/planted.ts', imports('../service'), null],
  ['src/cli/planted.ts', imports('../config'), null],
  ['src/modules/planted.ts', imports('./tree'), null],
  ['src/util/planted.ts', imports('../errors'), null],
  ['handlers/planted.ts', imports('../src/config'), null],
  ['handlers/planted.ts', imports('../src/storage/s3'), null],
];

// Sets of files planted together in a copy of the repository: [files, the messages expected].
const SETS: Array<[Array<[string, string]>, RegExp[]]> = [
  // Two files of one layer that import each other.
  [
    [
      ['src/constraints/planted-a.ts', imports('../hcl/planted-b')],
      ['src/hcl/planted-b.ts', imports('../constraints/planted-a')],
    ],
    [
      /^src\/constraints\/planted-a\.ts: Import cycle: src\/constraints\/planted-a\.ts → src\/hcl\/planted-b\.ts → src\/constraints\/planted-a\.ts/,
      /^src\/hcl\/planted-b\.ts: Import cycle: src\/hcl\/planted-b\.ts → src\/constraints\/planted-a\.ts → src\/hcl\/planted-b\.ts/,
    ],
  ],
  // Two directories of one layer that import each other, through different files (no file cycle).
  [
    [
      ['src/archive/planted-c.ts', imports('../hcl/planted-d')],
      ['src/hcl/planted-d.ts', 'export const d = 1;\n'],
      ['src/hcl/planted-e.ts', imports('../archive/planted-f')],
      ['src/archive/planted-f.ts', 'export const f = 1;\n'],
    ],
    [
      /^src\/archive\/planted-c\.ts: Import cycle between directories: src\/archive → src\/hcl → src\/archive/,
      /^src\/hcl\/planted-e\.ts: Import cycle between directories: src\/hcl → src\/archive → src\/hcl/,
    ],
  ],
  // Within one directory, through a type-only import.
  [
    [
      ['src/rules/planted-g.ts', `import type { H } from './planted-h';\nexport interface G { h?: H }\n`],
      ['src/rules/planted-h.ts', `import type { G } from './planted-g';\nexport interface H { g?: G }\n`],
    ],
    [/^src\/rules\/planted-g\.ts: Import cycle/, /^src\/rules\/planted-h\.ts: Import cycle/],
  ],
  // The same pair without the cycle: clean.
  [
    [
      ['src/rules/planted-g.ts', `import type { H } from './planted-h';\nexport interface G { h?: H }\n`],
      ['src/rules/planted-h.ts', `export interface H { n: number }\n`],
    ],
    [],
  ],
];

let linted: { single: string[][]; sets: string[][]; sources: string[] };

beforeAll(() => {
  // The real ESLint with the repository's configuration, in a child process (see lint-planted.mjs).
  const out = execFileSync(process.execPath, [path.join(__dirname, 'lint-planted.mjs')], {
    cwd: REPO_ROOT,
    input: JSON.stringify({
      single: SINGLE.map(([file, code]) => [file, code]),
      sets: SETS.map(([files]) => files),
    }),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  linted = JSON.parse(out) as typeof linted;
}, 300_000);

describe('architecture lint (tfguard/layers, tfguard/no-cycle)', () => {
  it.each(
    SINGLE.map(([file, code, expected], i) => [file, code.split('\n')[0], String(expected), i] as const),
  )('%s with %s: %s', (_file, _code, _expected, i) => {
    const expected = SINGLE[i]![2];
    const messages = linted.single[i];
    if (expected === null) expect(messages).toEqual([]);
    else expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(expected)]));
  });

  it.each(SETS.map(([files], i) => [files.map(([f]) => path.basename(f)).join(', '), i] as const))(
    'planted together: %s',
    (_names, i) => {
      const expected = SETS[i]![1];
      expect(linted.sets[i]).toHaveLength(expected.length);
      expect(linted.sets[i]).toEqual(expected.map((e) => expect.stringMatching(e)));
    },
  );

  it('the real sources break none of the rules (no upward import, no cycle)', () => {
    expect(linted.sources).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  it('names every directory of src/', () => {
    const doc = readFileSync(path.join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
    const dirs = readdirSync(path.join(REPO_ROOT, 'src'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(dirs.length).toBeGreaterThan(10);
    const unnamed = dirs.filter((d) => !new RegExp('`src/' + d + '/?`').test(doc));
    expect(unnamed).toEqual([]);
  });
});
