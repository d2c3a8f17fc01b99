/**
 * The operator's scan settings on the command line (docs/security.md §4): `--timeout SECONDS` and
 * `TFGUARD_SCAN_TIMEOUT_MS` (exit 2, like any unusable input), and the archive limits from
 * `TFGUARD_MAX_*` — each one lowered until a small real archive crosses it. An archive's own
 * `.tfguard.hcl` cannot change any of them.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cli } from '../support/cli';
import { ARCHIVE_LIMIT_VARIABLES } from '../../src/config';
import type { AuditSummary } from '../../src/service/summary';
import { makeTarGz, type FileMap } from '../support/archive';
import { slowToParse } from '../support/scan';

const VARIABLES = [...Object.values(ARCHIVE_LIMIT_VARIABLES), 'TFGUARD_SCAN_TIMEOUT_MS'];

async function withEnv<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of VARIABLES) delete process.env[name];
  Object.assign(process.env, env);
  try {
    return await work();
  } finally {
    for (const name of VARIABLES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
}

const MAIN_TF = `terraform {
  required_version = ">= 1.5"
}
`;

/** 3 MB ending in a syntax error: the fast path gives up and hcl2json needs seconds for it. */
function slowFile(): string {
  return slowToParse(MAIN_TF, 3_000_000);
}

/** 2 MiB of configuration that deflates about 30:1 (fine by default, over a ratio limit of 10). */
function compressible(): string {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < 2 * 1024 * 1024; i++) {
    const line = `# padding line ${i % 97} of the generated settings, kept for the limits test\n`;
    lines.push(line);
    size += line.length;
  }
  return MAIN_TF + lines.join('');
}

let tmp: string;
const archives: Record<string, string> = {};

async function archive(name: string, files: FileMap): Promise<string> {
  const file = path.join(tmp, name);
  await fs.writeFile(file, await makeTarGz(files));
  archives[name] = file;
  return file;
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-cli-operator-'));
  await archive('plain.tar.gz', { 'main.tf': MAIN_TF });
  await archive('slow.tar.gz', { 'main.tf': MAIN_TF, 'slow/main.tf': slowFile() });
  await archive('three.tar.gz', { 'a/main.tf': MAIN_TF, 'b/main.tf': MAIN_TF, 'c/main.tf': MAIN_TF });
  await archive('sizes.tar.gz', {
    'main.tf': MAIN_TF + '#'.repeat(600) + '\n',
    'b/main.tf': MAIN_TF + '#'.repeat(600) + '\n',
  });
  await archive('compressible.tar.gz', { 'main.tf': compressible() });
  await archive('long.tar.gz', { 'a-rather-long-directory-name/main.tf': MAIN_TF });
  await archive('deep.tar.gz', { 'a/b/c/d/main.tf': MAIN_TF });
  await archive('own-config.tar.gz', {
    'main.tf': MAIN_TF,
    'b/main.tf': MAIN_TF,
    '.tfguard.hcl': 'max_entries = 100000\n',
  });
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('--timeout and TFGUARD_SCAN_TIMEOUT_MS', () => {
  // The wiring of the setting, not its timing (src/util/deadline.ts is tested on a manual clock):
  // the slow file takes seconds, so an 800 ms limit always falls inside it.
  test('--timeout: a scan over it exits 2 with scan-timeout on stderr and nothing on stdout', async () => {
    const r = await withEnv({}, () => cli(['scan', archives['slow.tar.gz']!, '--timeout', '0.8']));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^tfguard: scan timed out after \S+ m?s while parsing "slow\/main\.tf": the scan time limit is 800 ms\n$/,
    );
  }, 30_000);

  test('TFGUARD_SCAN_TIMEOUT_MS sets the limit; --timeout overrides it', async () => {
    const r = await withEnv({ TFGUARD_SCAN_TIMEOUT_MS: '700' }, () =>
      cli(['scan', archives['slow.tar.gz']!]),
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^tfguard: scan timed out after .* the scan time limit is 700 ms\n$/);
    const fast = await withEnv({ TFGUARD_SCAN_TIMEOUT_MS: '1' }, () =>
      cli(['scan', archives['plain.tar.gz']!, '--timeout', '60', '--format', 'json']),
    );
    expect(fast.stderr).toBe('');
    expect(JSON.parse(fast.stdout)).toMatchObject({ schemaVersion: 1 });
  }, 30_000);

  test.each([['0'], ['-1'], ['soon'], ['1e3'], ['']])('--timeout %j is a usage error', async (value) => {
    const r = await cli(['scan', archives['plain.tar.gz']!, `--timeout=${value}`]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `tfguard: --timeout must be a positive number of seconds, got ${JSON.stringify(value)}`,
    );
  });

  test('an unusable TFGUARD_SCAN_TIMEOUT_MS is a usage error naming the variable', async () => {
    const r = await withEnv({ TFGUARD_SCAN_TIMEOUT_MS: '30s' }, () =>
      cli(['scan', archives['plain.tar.gz']!]),
    );
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'tfguard: environment variable TFGUARD_SCAN_TIMEOUT_MS must be a positive integer, got "30s"\n',
    });
  });

  test('audit --timeout: the archive over it is listed failed (scan-timeout), the others are scanned', async () => {
    const dir = path.join(tmp, 'fleet');
    await fs.mkdir(dir);
    await fs.copyFile(archives['slow.tar.gz']!, path.join(dir, 'slow.tar.gz'));
    await fs.copyFile(archives['plain.tar.gz']!, path.join(dir, 'plain.tar.gz'));
    const r = await withEnv({}, () =>
      cli(['audit', dir, '--store', path.join(tmp, 'store'), '--format', 'json', '--timeout', '0.8']),
    );
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as AuditSummary;
    const rows = summary.repositories.map((x) => ({
      repository: x.repository,
      status: x.status,
      reason: x.reason,
    }));
    expect(rows).toEqual([
      { repository: 'plain', status: 'scanned', reason: null },
      {
        repository: 'slow',
        status: 'failed',
        reason: expect.stringMatching(
          /^scan-timeout: scan timed out after .* while parsing "slow\/main\.tf": the scan time limit is 800 ms$/,
        ) as string,
      },
    ]);
  }, 30_000);
});

describe('archive limits from the environment', () => {
  test('every limit of src/archive/limits.ts has a variable', () => {
    expect(Object.keys(ARCHIVE_LIMIT_VARIABLES).sort()).toEqual(
      [
        'maxCompressionRatio',
        'maxEntries',
        'maxFileBytes',
        'maxPathDepth',
        'maxPathLength',
        'maxTotalBytes',
      ].sort(),
    );
  });

  test.each([
    ['TFGUARD_MAX_ENTRIES', '2', 'three.tar.gz', /^tfguard: more than 2 entries/],
    [
      'TFGUARD_MAX_TOTAL_BYTES',
      '1000',
      'sizes.tar.gz',
      /^tfguard: total uncompressed size exceeds the limit of /,
    ],
    ['TFGUARD_MAX_FILE_BYTES', '500', 'sizes.tar.gz', /more than the per-file limit of /],
    [
      'TFGUARD_MAX_COMPRESSION_RATIO',
      '10',
      'compressible.tar.gz',
      /^tfguard: compression ratio exceeds 10:1/,
    ],
    [
      'TFGUARD_MAX_PATH_LENGTH',
      '20',
      'long.tar.gz',
      /^tfguard: path is \d+ bytes long, more than the limit of 20/,
    ],
    [
      'TFGUARD_MAX_PATH_DEPTH',
      '3',
      'deep.tar.gz',
      /^tfguard: path is 5 levels deep, more than the limit of 3/,
    ],
  ])('%s=%s rejects %s (exit 2); without it the archive is scanned', async (name, value, file, message) => {
    const target = archives[file]!;
    const limited = await withEnv({ [name]: value }, () => cli(['scan', target, '--fail-on', 'never']));
    expect(limited.code).toBe(2);
    expect(limited.stdout).toBe('');
    expect(limited.stderr).toMatch(message);
    const unlimited = await withEnv({}, () => cli(['scan', target, '--fail-on', 'never']));
    expect(unlimited.stderr).toBe('');
    expect(unlimited.code).toBe(0);
  });

  test.each([
    ['TFGUARD_MAX_ENTRIES', '0', 'positive integer'],
    ['TFGUARD_MAX_TOTAL_BYTES', '200MiB', 'positive integer'],
    ['TFGUARD_MAX_FILE_BYTES', '-5', 'positive integer'],
    ['TFGUARD_MAX_COMPRESSION_RATIO', 'many', 'positive number'],
    ['TFGUARD_MAX_PATH_LENGTH', '4096.5', 'positive integer'],
    ['TFGUARD_MAX_PATH_DEPTH', 'NaN', 'positive integer'],
  ])('%s=%j: exit 2 naming the variable', async (name, value, what) => {
    const r = await withEnv({ [name]: value }, () => cli(['scan', archives['plain.tar.gz']!]));
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: `tfguard: environment variable ${name} must be a ${what}, got ${JSON.stringify(value)}\n`,
    });
  });

  test('a fractional compression ratio is accepted', async () => {
    const r = await withEnv({ TFGUARD_MAX_COMPRESSION_RATIO: '12.5' }, () =>
      cli(['scan', archives['compressible.tar.gz']!, '--fail-on', 'never']),
    );
    expect(r.stderr).toMatch(/^tfguard: compression ratio exceeds 12\.5:1/);
  });

  test('the limits apply to audits too', async () => {
    const dir = path.join(tmp, 'fleet-limits');
    await fs.mkdir(dir);
    await fs.copyFile(archives['three.tar.gz']!, path.join(dir, 'three.tar.gz'));
    const r = await withEnv({ TFGUARD_MAX_ENTRIES: '2' }, () =>
      cli(['audit', dir, '--store', path.join(tmp, 'store-limits'), '--format', 'json']),
    );
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as AuditSummary;
    expect(summary.repositories.map((x) => [x.repository, x.status, x.reason])).toEqual([
      ['three', 'rejected', expect.stringMatching(/^more than 2 entries/) as string],
    ]);
  });

  test("an archive's own .tfguard.hcl cannot set a limit (invalid-config), nor raise the operator's", async () => {
    const own = await withEnv({}, () => cli(['scan', archives['own-config.tar.gz']!]));
    expect(own.code).toBe(2);
    expect(own.stdout).toBe('');
    expect(own.stderr).toMatch(/^tfguard: .*\.tfguard\.hcl.*max_entries/);
    const limited = await withEnv({ TFGUARD_MAX_ENTRIES: '2' }, () =>
      cli(['scan', archives['own-config.tar.gz']!]),
    );
    expect(limited.stderr).toMatch(/^tfguard: more than 2 entries/);
  });
});
