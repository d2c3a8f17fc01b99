import { gzipSync } from 'node:zlib';
import { DEFAULT_LIMITS, readArchiveBytes } from '../../src/archive';
import { ArchiveBuilder } from '../../src/archive/builder';
import { resolveLimits } from '../../src/archive/limits';
import { expectInputError } from '../support/expect-input-error';
import { buildTar, buildTarGz } from '../support/archive';
import { writeZip } from '../support/zip-writer';

const MiB = 1024 * 1024;

/** The number of bytes the reader says it had inflated when it stopped. */
function inflatedWhenStopped(message: string): number {
  const match = /inflate to more than (\d+)/.exec(message);
  if (!match) throw new Error(`no byte count in "${message}"`);
  return Number(match[1]);
}

describe('defaults', () => {
  test('DEFAULT_LIMITS', () => {
    expect(DEFAULT_LIMITS).toEqual({
      maxEntries: 20000,
      maxTotalBytes: 200 * MiB,
      maxFileBytes: 10 * MiB,
      maxCompressionRatio: 200,
      maxPathLength: 4096,
      maxPathDepth: 64,
    });
    expect(Object.isFrozen(DEFAULT_LIMITS)).toBe(true);
  });

  test('partial overrides keep the other defaults; invalid values are refused', () => {
    expect(resolveLimits({ maxEntries: 5 })).toEqual({ ...DEFAULT_LIMITS, maxEntries: 5 });
    expect(() => resolveLimits({ maxFileBytes: -1 })).toThrow(RangeError);
    expect(() => resolveLimits({ maxFileBytes: Number.NaN })).toThrow(RangeError);
  });
});

describe('decompression bombs', () => {
  test('a gzip bomb (50 MB of zeros) is stopped by the ratio while inflating', async () => {
    // Ten 5 MiB files of zeros: each under the per-file cap, 50 MiB in total, ~50 KB compressed.
    const zeros = Buffer.alloc(5 * MiB);
    const bytes = await buildTarGz(
      Array.from({ length: 10 }, (_, i) => ({ name: `zeros/${i}.bin`, data: zeros })),
    );
    expect(bytes.length).toBeLessThan(200_000);
    const started = Date.now();
    const error = await expectInputError(
      readArchiveBytes('bomb.tar.gz', bytes),
      'compression-ratio',
      /^zeros\/\d\.bin$/,
    );
    // Wall-clock only guards against a hang (the machine may be loaded); the byte count below is
    // the real evidence that inflation stopped early.
    expect(Date.now() - started).toBeLessThan(15_000);
    // It stopped at about ratio × compressed size, far short of the 50 MiB the archive holds.
    const stoppedAt = inflatedWhenStopped(error.message);
    expect(stoppedAt).toBeGreaterThan(200 * bytes.length);
    expect(stoppedAt).toBeLessThan(200 * bytes.length + 2 * MiB);
  });

  test('a single-file bomb is stopped by the ratio even when the per-file cap is raised', async () => {
    const bytes = await buildTarGz([{ name: 'zeros.tf', data: Buffer.alloc(50 * MiB) }]);
    const error = await expectInputError(
      readArchiveBytes('bomb.tgz', bytes, { limits: { maxFileBytes: 100 * MiB } }),
      'compression-ratio',
      'zeros.tf',
    );
    expect(inflatedWhenStopped(error.message)).toBeLessThan(50 * MiB);
  });

  test('a stream of empty tar blocks (no entries at all) is stopped by the ratio', async () => {
    const bytes = gzipSync(Buffer.alloc(30 * MiB));
    await expectInputError(readArchiveBytes('zeros.tar.gz', bytes), 'compression-ratio');
  });

  test('a zip bomb is refused from its declared sizes before anything is inflated', async () => {
    const zeros = Buffer.alloc(5 * MiB);
    const bytes = writeZip(
      Array.from({ length: 10 }, (_, i) => ({ name: `z${i}.bin`, data: zeros, method: 'deflate' as const })),
    );
    const started = Date.now();
    const error = await expectInputError(
      readArchiveBytes('bomb.zip', bytes),
      'compression-ratio',
      /^z\d\.bin$/,
    );
    expect(error.message).toMatch(/declare more than/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  test('tiny, highly compressible files are under the ratio grace and accepted', async () => {
    const spaces = Buffer.alloc(900 * 1024, ' ');
    const bytes = await buildTarGz([{ name: 'generated.tf', data: spaces }]);
    expect((900 * 1024) / bytes.length).toBeGreaterThan(200);
    const archive = await readArchiveBytes('ok.tgz', bytes);
    expect(archive.files.get('generated.tf')?.length).toBe(900 * 1024);
  });

  test('the ratio limit can be raised', async () => {
    const bytes = await buildTarGz([{ name: 'zeros.bin', data: Buffer.alloc(4 * MiB) }]);
    await expectInputError(readArchiveBytes('z.tgz', bytes), 'compression-ratio', 'zeros.bin');
    const archive = await readArchiveBytes('z.tgz', bytes, { limits: { maxCompressionRatio: 100_000 } });
    expect(archive.entries[0]?.size).toBe(4 * MiB);
  });
});

describe('size and count limits', () => {
  test('more than maxEntries entries (tar)', async () => {
    const bytes = await buildTar(Array.from({ length: 6 }, (_, i) => ({ name: `f${i}.tf`, data: 'x' })));
    await expectInputError(
      readArchiveBytes('x.tar', bytes, { limits: { maxEntries: 5 } }),
      'too-many-entries',
      'f5.tf',
    );
    await expect(readArchiveBytes('x.tar', bytes, { limits: { maxEntries: 6 } })).resolves.toBeDefined();
  });

  test('more than maxEntries entries (zip, from the central directory)', async () => {
    const bytes = writeZip(Array.from({ length: 6 }, (_, i) => ({ name: `f${i}.tf`, data: 'x' })));
    await expectInputError(
      readArchiveBytes('x.zip', bytes, { limits: { maxEntries: 5 } }),
      'too-many-entries',
    );
  });

  test('a file larger than maxFileBytes (declared size, tar)', async () => {
    const bytes = await buildTarGz([
      { name: 'ok.tf', data: 'x'.repeat(100) },
      { name: 'big.tf', data: 'x'.repeat(101) },
    ]);
    await expectInputError(
      readArchiveBytes('x.tgz', bytes, { limits: { maxFileBytes: 100 } }),
      'file-too-large',
      'big.tf',
    );
  });

  test('a file larger than maxFileBytes (declared size, zip)', async () => {
    const bytes = writeZip([{ name: 'big.tf', data: 'x'.repeat(101), method: 'deflate' }]);
    await expectInputError(
      readArchiveBytes('x.zip', bytes, { limits: { maxFileBytes: 100 } }),
      'file-too-large',
      'big.tf',
    );
  });

  test('a file larger than the default 10 MiB cap is refused before it is read', async () => {
    const bytes = await buildTarGz([{ name: 'huge.tf', data: Buffer.alloc(10 * MiB + 1, 'a') }]);
    await expectInputError(
      readArchiveBytes('x.tgz', bytes, { limits: { maxCompressionRatio: 1e9 } }),
      'file-too-large',
      'huge.tf',
    );
  });

  test('total uncompressed size above maxTotalBytes', async () => {
    const bytes = await buildTarGz([
      { name: 'a.tf', data: 'a'.repeat(600) },
      { name: 'b.tf', data: 'b'.repeat(600) },
    ]);
    await expectInputError(
      readArchiveBytes('x.tgz', bytes, { limits: { maxTotalBytes: 1000 } }),
      'total-too-large',
      'b.tf',
    );
  });

  test('total size in a zip', async () => {
    const bytes = writeZip([
      { name: 'a.tf', data: 'a'.repeat(600) },
      { name: 'b.tf', data: 'b'.repeat(600) },
    ]);
    await expectInputError(
      readArchiveBytes('x.zip', bytes, { limits: { maxTotalBytes: 1000 } }),
      'total-too-large',
      'b.tf',
    );
  });

  test('an archive file larger than any archive within the limits is refused unread', async () => {
    await expectInputError(
      readArchiveBytes('x.tar', Buffer.alloc(3 * MiB), { limits: { maxTotalBytes: 1000, maxEntries: 10 } }),
      'total-too-large',
    );
  });

  test('the sink enforces maxFileBytes on the bytes actually streamed, whatever was declared', () => {
    const builder = new ArchiveBuilder(resolveLimits({ maxFileBytes: 100 }), () => true, { archive: true });
    const sink = builder.beginFile('liar.tf', 'liar.tf', 10);
    sink.write(Buffer.alloc(60));
    expect(() => sink.write(Buffer.alloc(60))).toThrow(
      expect.objectContaining({ code: 'file-too-large', entry: 'liar.tf' }),
    );
  });

  test('the sink enforces maxTotalBytes on the bytes actually streamed', () => {
    const builder = new ArchiveBuilder(resolveLimits({ maxTotalBytes: 100 }), () => true, { archive: true });
    builder.beginFile('a.tf', 'a.tf', 1).write(Buffer.alloc(60));
    const second = builder.beginFile('b.tf', 'b.tf', 1);
    expect(() => second.write(Buffer.alloc(60))).toThrow(
      expect.objectContaining({ code: 'total-too-large', entry: 'b.tf' }),
    );
  });
});

describe('path limits', () => {
  test('a path longer than maxPathLength', async () => {
    const name = `${'a/'.repeat(30)}${'n'.repeat(4100)}.tf`;
    const bytes = await buildTar([{ name, data: 'x' }]);
    await expectInputError(readArchiveBytes('x.tar', bytes), 'path-too-long', name);
    const short = await buildTar([{ name: 'abcdefghijklmnopqrstu.tf', data: 'x' }]);
    await expectInputError(
      readArchiveBytes('x.tar', short, { limits: { maxPathLength: 20 } }),
      'path-too-long',
      'abcdefghijklmnopqrstu.tf',
    );
  });

  test('a path deeper than maxPathDepth', async () => {
    const name = `${'d/'.repeat(64)}main.tf`;
    await expectInputError(
      readArchiveBytes('x.tar', await buildTar([{ name, data: 'x' }])),
      'path-too-deep',
      name,
    );
    const ok = `${'d/'.repeat(63)}main.tf`;
    const archive = await readArchiveBytes('x.tar', await buildTar([{ name: ok, data: 'x' }]));
    expect([...archive.files.keys()]).toEqual([ok]);
  });
});
