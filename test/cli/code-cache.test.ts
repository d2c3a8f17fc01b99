/**
 * The CLI's V8 code cache (src/cli/code-cache.ts): a bundle runs the same with a cache, without
 * one, with one V8 rejects, with a damaged file, and when the cache directory cannot be written;
 * V8 really accepts the cache a run wrote. The bundles here are small CommonJS files run in this
 * process, each with its own text (V8 keeps compiled scripts in memory by their source, which
 * would hide what the cache does). The built CLI with its launcher: test/cli/bundle.test.ts.
 */
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeCacheFile, readCodeCache, runWithCodeCache, writeCodeCache } from '../../src/cli/code-cache';

let work: string;
let serial = 0;
beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'tfguard-code-cache-'));
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A bundle with functions compiled lazily (called after loading) and its own text; it records
 * what it ran, with the `require`, `module`, `__filename` and `__dirname` it was given, in its
 * exports. */
async function bundle(name = `b${++serial}`): Promise<{ file: string }> {
  const file = join(work, `${name}.cjs`);
  await writeFile(
    file,
    `'use strict';
const path = require('node:path');
function later(n) { let s = 0; for (let i = 0; i < n; i++) s += i * ${serial}; return s; }
module.exports = {
  sum: later(100),
  file: __filename,
  dir: __dirname,
  sep: path.sep,
  sameModule: module.exports === exports,
  text: ${JSON.stringify('x'.repeat(serial))},
  later,
};
`,
  );
  return { file };
}

test('a first run compiles without a cache and writes one; the next run uses it, unchanged', async () => {
  const dir = join(work, 'cache');
  const b = await bundle('first');
  const first = runWithCodeCache(b.file, { dir, scans: true });
  expect(first.state).toBe('missing');
  expect(first.exports).toMatchObject({ sum: 4950 * serial, file: b.file, dir: work, sameModule: true });
  expect(first.save?.()).toBe(true);
  const stored = readCodeCache(first.file!);
  expect(typeof stored === 'object' && stored.byScan).toBe(true);

  // The same text again, as a new process would read it: V8 accepts the cache, nothing is written.
  const again = runWithCodeCache(b.file, { dir, scans: true });
  expect([again.state, again.save]).toEqual(['accepted', undefined]);
  expect(again.exports).toMatchObject({ sum: 4950 * serial, file: b.file });
  expect(again.file).toBe(first.file);
});

test('the cache file is named by the bundle text, the Node version and flags, and a key', async () => {
  const b = await bundle();
  const text = await readFile(b.file);
  const a = codeCacheFile(work, text);
  expect(codeCacheFile(work, text)).toBe(a);
  expect(codeCacheFile(work, Buffer.concat([text, Buffer.from(' ')]))).not.toBe(a);
  expect(codeCacheFile(work, text, 'another node')).not.toBe(a);
  expect(a.startsWith(work)).toBe(true);
});

test('a cache V8 rejects (another bundle of the same name) is ignored and rewritten', async () => {
  const dir = join(work, 'cache');
  const one = await bundle();
  const r1 = runWithCodeCache(one.file, { dir, scans: true });
  expect(r1.save?.()).toBe(true);
  // Another bundle given the first one's cache under its own name: the checksum holds (it is a
  // well-formed file), V8 refuses it (not its source).
  const two = await bundle();
  await writeFile(codeCacheFile(dir, await readFile(two.file)), await readFile(r1.file!));
  const r2 = runWithCodeCache(two.file, { dir, scans: true });
  expect(r2.state).toBe('rejected');
  expect(r2.exports).toMatchObject({ sum: 4950 * serial, file: two.file });
  expect(r2.save?.()).toBe(true);
  expect(readCodeCache(r2.file!)).not.toEqual(readCodeCache(r1.file!));
});

test('a damaged or truncated cache file is ignored (never given to V8) and rewritten', async () => {
  const dir = join(work, 'cache');
  for (const damage of [
    (b: Buffer) => Buffer.concat([b.subarray(0, b.length - 1), Buffer.of(b[b.length - 1]! ^ 0xff)]),
    (b: Buffer) => b.subarray(0, Math.floor(b.length / 2)),
    (b: Buffer) => b.subarray(0, 10),
    () => Buffer.from('not a cache'),
  ]) {
    const b = await bundle();
    const first = runWithCodeCache(b.file, { dir, scans: true });
    expect(first.save?.()).toBe(true);
    const good = await readFile(first.file!);
    await writeFile(first.file!, damage(good));
    expect(readCodeCache(first.file!)).toBe('damaged');
    const run = runWithCodeCache(b.file, { dir, scans: true });
    expect(run.state).toBe('damaged');
    expect(run.exports).toMatchObject({ sum: 4950 * serial });
    expect(run.save?.()).toBe(true);
    expect(readCodeCache(first.file!)).toMatchObject({ byScan: true });
  }
});

test('a cache directory that cannot be made: the bundle runs, nothing is written, no error', async () => {
  const blocker = join(work, 'a-file');
  await writeFile(blocker, 'not a directory');
  const b = await bundle();
  const run = runWithCodeCache(b.file, { dir: join(blocker, 'v8'), scans: true });
  expect(run.state).toBe('missing');
  expect(run.exports).toMatchObject({ sum: 4950 * serial });
  expect(run.save?.()).toBe(false);
  expect(await readdir(work)).toEqual(expect.not.arrayContaining([expect.stringMatching(/tmp$/)]));
  // Nothing is serialised for a directory that cannot be written.
  const data = jest.fn(() => Buffer.from('code'));
  expect(writeCodeCache(join(blocker, 'v8', 'x.v8cache'), data, true)).toBe(false);
  expect(data).not.toHaveBeenCalled();
  // A failure while serialising leaves no temporary file behind.
  const dir = join(work, 'ok');
  expect(
    writeCodeCache(
      join(dir, 'x.v8cache'),
      () => {
        throw new Error('no');
      },
      true,
    ),
  ).toBe(false);
  expect(await readdir(dir)).toEqual([]);
});

test('no cache directory: the bundle runs as require() would run it, and nothing is kept', async () => {
  const b = await bundle();
  const run = runWithCodeCache(b.file, { dir: undefined, scans: true });
  expect([run.state, run.file, run.save]).toEqual(['off', undefined, undefined]);
  expect(run.exports).toMatchObject({ sum: 4950 * serial, file: b.file, dir: work, sameModule: true });
});

test('a cache written by a run that did not scan is replaced by the next scanning run, once', async () => {
  const dir = join(work, 'cache');
  const b = await bundle();
  const version = runWithCodeCache(b.file, { dir, scans: false });
  expect(version.save?.()).toBe(true);
  expect(readCodeCache(version.file!)).toMatchObject({ byScan: false });
  // Another non-scanning run keeps it; a scanning run uses it, then replaces it.
  expect(runWithCodeCache(b.file, { dir, scans: false }).save).toBeUndefined();
  const scan = runWithCodeCache(b.file, { dir, scans: true });
  expect(scan.state).toBe('accepted');
  expect(scan.save?.()).toBe(true);
  expect(readCodeCache(scan.file!)).toMatchObject({ byScan: true });
  expect(runWithCodeCache(b.file, { dir, scans: true }).save).toBeUndefined();
});

test('writing a cache removes caches of other bundles not written for a week, and keeps recent ones', async () => {
  const dir = join(work, 'cache');
  const old = await bundle();
  const recent = await bundle();
  const current = await bundle();
  const oldRun = runWithCodeCache(old.file, { dir, scans: true });
  expect(oldRun.save?.()).toBe(true);
  const recentRun = runWithCodeCache(recent.file, { dir, scans: true });
  expect(recentRun.save?.()).toBe(true);
  const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000);
  await utimes(oldRun.file!, eightDaysAgo, eightDaysAgo);
  await writeFile(join(dir, 'unrelated.txt'), 'kept');
  await utimes(join(dir, 'unrelated.txt'), eightDaysAgo, eightDaysAgo);
  const run = runWithCodeCache(current.file, { dir, scans: true });
  expect(run.save?.()).toBe(true);
  const left = (await readdir(dir)).sort();
  expect(left).toEqual(
    [recentRun.file!, run.file!]
      .map((f) => f.slice(dir.length + 1))
      .concat('unrelated.txt')
      .sort(),
  );
  expect((await stat(run.file!)).mode & 0o777).toBe(0o600);
});
