/**
 * Differential test of the in-memory tar fast path (src/archive/tar-fast.ts) against the streaming
 * reader (src/archive/tar.ts): for every input, reading with the fast path enabled must give exactly
 * what the streaming reader gives (the same entries and contents, or the same rejection), and the
 * fast path must actually be taken for the archives real tools write.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { readArchiveBytes } from '../../src/archive';
import { ArchiveBuilder } from '../../src/archive/builder';
import { resolveLimits } from '../../src/archive/limits';
import { defaultShouldLoad } from '../../src/archive/paths';
import { FAST_PATH_MAX_TAR_BYTES, readTarFast } from '../../src/archive/tar-fast';
import { isInputError } from '../../src/errors';
import type { ArchiveLimits } from '../../src/model';
import { corpusArchives, corpusFile, describeWithCorpus } from '../support/external';
import { buildTar, paxHeader, rawTar, rawTarHeader, tarData, TAR_END } from '../support/archive';

type Outcome =
  | { error: { code: string; message: string; entry: string | undefined } }
  | { archive: { entries: unknown; files: Record<string, string>; format: string; sha256: string } };

async function outcome(
  bytes: Buffer,
  streamingTar: boolean,
  limits?: Partial<ArchiveLimits>,
): Promise<Outcome> {
  try {
    const a = await readArchiveBytes('input', bytes, {
      streamingTar,
      shouldLoad: () => true,
      ...(limits ? { limits } : {}),
    });
    const files: Record<string, string> = {};
    for (const [p, c] of a.files) files[p] = createHash('sha256').update(c).digest('hex');
    return { archive: { entries: a.entries, files, format: a.format, sha256: a.sha256 } };
  } catch (err) {
    if (!isInputError(err)) throw err;
    return { error: { code: err.code, message: err.message, entry: err.entry } };
  }
}

/** Whether the fast path reads `bytes` itself (rather than handing it to the streaming reader). */
function fastPathTakes(bytes: Buffer, gzip: boolean, limits?: Partial<ArchiveLimits>): boolean {
  const builder = new ArchiveBuilder(resolveLimits(limits), defaultShouldLoad, { archive: true });
  return readTarFast(bytes, gzip, builder);
}

async function expectSameOutcome(bytes: Buffer, limits?: Partial<ArchiveLimits>): Promise<Outcome> {
  const fast = await outcome(bytes, false, limits);
  const streamed = await outcome(bytes, true, limits);
  expect(fast).toEqual(streamed);
  return fast;
}

describeWithCorpus('tar fast path: the corpus', () => {
  test.each(corpusArchives())('%s: taken, and identical to the streaming reader', async (file) => {
    const bytes = readFileSync(corpusFile(file));
    expect(fastPathTakes(bytes, true)).toBe(true);
    const result = await expectSameOutcome(bytes);
    expect('archive' in result).toBe(true);
    // The same again on the uncompressed tar.
    const tar = gunzipSync(bytes);
    expect(fastPathTakes(tar, false)).toBe(true);
    await expectSameOutcome(tar);
  });
});

describe('tar fast path: archives real tools write', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tfguard-tarfast-'));
    const tree = path.join(dir, 'tree');
    const deep = path.join(tree, 'modules', 'a'.repeat(60), 'b'.repeat(60));
    mkdirSync(deep, { recursive: true });
    writeFileSync(path.join(tree, 'main.tf'), 'terraform {}\n');
    writeFileSync(path.join(deep, `${'c'.repeat(80)}.tf`), 'variable "x" {}\n');
    writeFileSync(path.join(tree, 'modules', 'café.tf'), '# non-ASCII name\n');
    writeFileSync(path.join(tree, 'empty.tf'), '');
    writeFileSync(path.join(tree, 'big.tf'), `# ${'x'.repeat(100_000)}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test.each(['gnu', 'posix', 'ustar', 'oldgnu'])(
    'GNU tar --format=%s (long names, directories, a non-ASCII name, empty and large files)',
    async (format) => {
      const out = path.join(dir, `${format}.tar`);
      const args = [`--format=${format}`, '-cf', out, '-C', path.join(dir, 'tree'), '.'];
      execFileSync('tar', args, { stdio: 'pipe' });
      const tar = readFileSync(out);
      expect(fastPathTakes(tar, false)).toBe(true);
      const result = await expectSameOutcome(tar);
      expect('archive' in result && Object.keys(result.archive.files).length).toBe(5);
      expect(fastPathTakes(gzipSync(tar), true)).toBe(true);
      await expectSameOutcome(gzipSync(tar));
    },
  );

  test('git archive (a PAX global header with the commit id)', async () => {
    const repo = path.join(dir, 'repo');
    mkdirSync(repo);
    const git = (...args: string[]): Buffer =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        cwd: repo,
        stdio: 'pipe',
      });
    git('init', '-q');
    writeFileSync(path.join(repo, 'main.tf'), 'terraform {}\n');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    const tar = git('archive', '--format=tar', 'HEAD');
    expect(tar.subarray(156, 157).toString()).toBe('g');
    expect(fastPathTakes(tar, false)).toBe(true);
    await expectSameOutcome(tar);
  });

  test('tar-stream pack: ustar prefix and PAX path records', async () => {
    const long = `dir/${'d'.repeat(120)}/main.tf`;
    const tar = await buildTar([
      { name: 'dir/', type: 'directory' },
      { name: long, data: 'a' },
      { name: 'ünïcode/main.tf', data: 'b' },
    ]);
    expect(fastPathTakes(tar, false)).toBe(true);
    const result = await expectSameOutcome(tar);
    expect('archive' in result && Object.keys(result.archive.files)).toEqual(
      expect.arrayContaining([long, 'ünïcode/main.tf']),
    );
  });
});

describe('tar fast path: everything else goes to the streaming reader, with the same result', () => {
  const file = (name: string, data: string): Buffer =>
    Buffer.concat([rawTarHeader({ name, size: Buffer.byteLength(data) }), tarData(data)]);
  const ok = rawTar(file('a.tf', 'x'));
  const cases: Array<[string, Buffer, boolean]> = [
    [
      'a symlink',
      rawTar(rawTarHeader({ name: 'l.tf', typeflag: '2', linkname: 'a.tf' }), file('a.tf', 'x')),
      false,
    ],
    [
      'a hardlink',
      rawTar(file('a.tf', 'x'), rawTarHeader({ name: 'h.tf', typeflag: '1', linkname: 'a.tf' })),
      false,
    ],
    ['a FIFO', rawTar(rawTarHeader({ name: 'p', typeflag: '6' })), false],
    ['a v7 header (no magic)', rawTar(rawTarHeader({ name: 'a.tf', ustar: false })), false],
    [
      'a bad checksum',
      (() => {
        const b = Buffer.from(ok);
        b[0] = 0x62; // 'b': the name changes, the checksum does not
        return b;
      })(),
      false,
    ],
    ['no end-of-archive marker', file('a.tf', 'x'), false],
    ['truncated inside an entry', ok.subarray(0, 600), false],
    ['data after the end-of-archive marker', Buffer.concat([ok, file('b.tf', 'y'), TAR_END]), false],
    ['a trailing partial block', Buffer.concat([ok, Buffer.alloc(100)]), false],
    ['an empty archive', TAR_END, false],
    [
      'a PAX header with a malformed record',
      rawTar(paxHeader({ path: 'p.tf' }).fill(0x41, 512, 514), file('a.tf', 'x')),
      false,
    ],
    ['a PAX header and no entry', rawTar(paxHeader({ path: 'p.tf' })), false],
    ['a duplicate entry', rawTar(file('a.tf', 'x'), file('a.tf', 'y')), false],
    ['a traversal', rawTar(file('../a.tf', 'x')), false],
    ['a PAX path record', rawTar(paxHeader({ path: 'from-pax.tf' }), file('a.tf', 'x')), true],
    ['trailing zero padding', Buffer.concat([ok, Buffer.alloc(8192)]), true],
    ['macOS debris', rawTar(file('._a.tf', 'x'), file('a.tf', 'x')), true],
  ];

  test.each(cases)('%s', async (_name, tar, taken) => {
    expect(fastPathTakes(tar, false)).toBe(taken);
    await expectSameOutcome(tar);
    expect(fastPathTakes(gzipSync(tar), true)).toBe(taken);
    await expectSameOutcome(gzipSync(tar));
  });

  test('gzip: truncated, corrupt, and with trailing garbage', async () => {
    const gz = gzipSync(ok);
    for (const bytes of [
      gz.subarray(0, gz.length - 10),
      Buffer.concat([gz.subarray(0, 20), Buffer.alloc(20, 0xff), gz.subarray(40)]),
      Buffer.concat([gz, Buffer.from('garbage after the gzip member')]),
    ]) {
      await expectSameOutcome(bytes);
    }
  });

  test('the caps: a gzip bomb, an archive over the memory bound and a file over the per-file limit', async () => {
    const bomb = gzipSync(rawTar(file('zeros.tf', '\0'.repeat(3 * 1024 * 1024))));
    expect(fastPathTakes(bomb, true)).toBe(false);
    const rejected = await expectSameOutcome(bomb);
    expect('error' in rejected && rejected.error.code).toBe('compression-ratio');
    // Over the fast path's memory bound (here: its cap on the inflated size) but within the limits:
    // the streaming reader reads it.
    const large = gzipSync(rawTar(file('large.tf', 'x'.repeat(FAST_PATH_MAX_TAR_BYTES + 1))));
    const limits = { maxFileBytes: 2 * FAST_PATH_MAX_TAR_BYTES, maxCompressionRatio: 100_000 };
    expect(fastPathTakes(large, true, limits)).toBe(false);
    const read = await expectSameOutcome(large, limits);
    expect('archive' in read && Object.keys(read.archive.files)).toEqual(['large.tf']);
    const big = rawTar(file('big.tf', 'x'.repeat(5000)));
    const tooBig = await expectSameOutcome(big, { maxFileBytes: 4096 });
    expect('error' in tooBig && tooBig.error.code).toBe('file-too-large');
  });
});
