/**
 * The directory reader's read-ahead (src/archive/directory-reads.ts): the files of a tree read by
 * the worker thread, by the walk ahead of recording them, or by the walk as it records them give
 * the same entries, contents and errors, in the same order. Each test runs with every reader
 * forced ('worker', 'walk') and as it runs in the CLI ('shared', timing decides), on trees large
 * enough to be read ahead (MIN_FILES).
 */
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { getPriority } from 'node:os';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readDirectory, readInput } from '../../src/archive';
import { MIN_FILES, setReadAheadMode, type ReadAheadMode } from '../../src/archive/directory-reads';
import type { ArchiveLimits } from '../../src/model';

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'tfguard-reads-'));
});
afterAll(() => {
  setReadAheadMode('shared');
  rmSync(scratch, { recursive: true, force: true });
});

function tree(root: string, spec: Record<string, string | Buffer>): string {
  for (const [rel, content] of Object.entries(spec)) {
    const full = path.join(root, rel);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  return root;
}

/** About 1,200 files in 40 directories: empty, small, above a read slab's share (8 KiB) and above a
 * slab (32 KiB), kept (`.tf`) and only hashed (`.bin`), so batches mix every way a file is read. */
function largeSpec(): Record<string, string | Buffer> {
  const spec: Record<string, string | Buffer> = {};
  for (let i = 0; i < 600; i++) {
    const dir = `d${String(i % 40).padStart(2, '0')}/sub${String(i % 3)}`;
    const n = String(i).padStart(3, '0');
    const size = i % 17 === 0 ? 0 : i % 23 === 0 ? 40_000 + i : i % 11 === 0 ? 9_000 + i : 30 + i * 3;
    spec[`${dir}/f${n}.tf`] = `# ${n}\n`.repeat(Math.ceil(size / 6)).slice(0, size);
    spec[`${dir}/f${n}.bin`] = Buffer.alloc(i % 29 === 0 ? 50_000 : 10 + i, i);
  }
  spec['main.tf'] = 'terraform {}\n';
  return spec;
}

const MODES: ReadAheadMode[] = ['worker', 'walk', 'shared'];

async function inEachMode<T>(read: () => Promise<T>): Promise<Map<ReadAheadMode, T>> {
  const out = new Map<ReadAheadMode, T>();
  for (const mode of MODES) {
    setReadAheadMode(mode);
    try {
      out.set(mode, await read());
    } finally {
      setReadAheadMode('shared');
    }
  }
  return out;
}

/** The error of a rejected read, as { code, entry, message }. */
async function failure(read: Promise<unknown>): Promise<{ code: string; entry?: string; message: string }> {
  try {
    await read;
  } catch (err) {
    const e = err as { code: string; entry?: string; message: string };
    return { code: e.code, ...(e.entry !== undefined ? { entry: e.entry } : {}), message: e.message };
  }
  throw new Error('expected the read to fail');
}

describe('reading a large tree ahead', () => {
  let root: string;
  let tarball: string;
  beforeAll(() => {
    root = tree(path.join(scratch, 'large'), largeSpec());
    tarball = path.join(scratch, 'large.tar.gz');
    execFileSync('tar', ['-C', root, '-czf', tarball, '.']);
  });

  test('the tree is large enough to be read ahead', () => {
    expect(Object.keys(largeSpec()).length).toBeGreaterThan(MIN_FILES);
  });

  test('every reader gives what GNU tar packs of the tree: entries, hashes, modes, contents', async () => {
    const fromTar = await readInput(tarball, { limits: { maxCompressionRatio: 1e9 } });
    const results = await inEachMode(() => readDirectory(root));
    for (const [mode, fromDirectory] of results) {
      expect({ mode, entries: fromDirectory.entries }).toEqual({ mode, entries: fromTar.entries });
      expect({ mode, sha256: fromDirectory.sha256 }).toEqual({
        mode,
        sha256: (results.get('walk') as typeof fromDirectory).sha256,
      });
      expect([...fromDirectory.files.keys()]).toEqual([...fromTar.files.keys()]);
      for (const [name, content] of fromTar.files) {
        expect({ mode, name, same: fromDirectory.files.get(name)?.equals(content) }).toEqual({
          mode,
          name,
          same: true,
        });
      }
    }
    // The worker is kept between reads: a second read gives the same again.
    setReadAheadMode('worker');
    try {
      expect((await readDirectory(root)).entries).toEqual(fromTar.entries);
    } finally {
      setReadAheadMode('shared');
    }
  });

  test('the reader thread lowers its own priority, never the process', async () => {
    const before = getPriority();
    setReadAheadMode('worker');
    try {
      await readDirectory(root);
    } finally {
      setReadAheadMode('shared');
    }
    // Linux keeps a nice value per thread: the main thread's is untouched.
    expect(getPriority()).toBe(before);
    if (process.platform === 'linux') {
      // The worker's thread shows up in /proc with the raised nice value (field 19 of stat).
      const tasks = readdirSync('/proc/self/task');
      const nice = tasks.map((t) => {
        const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      });
      expect(nice).toContain(Math.min(19, before + 10));
    }
  });

  test('a file too large for one read is left to the walk, which reads it in chunks', async () => {
    // 16 MiB and more is read in chunks (directory.ts FIRST_READ_MAX): never read ahead.
    const big = tree(path.join(scratch, 'big'), {
      ...largeSpec(),
      'd20/huge.bin': Buffer.alloc(16 * 1024 * 1024 + 10, 7),
    });
    const limits: Partial<ArchiveLimits> = { maxFileBytes: 32 * 1024 * 1024 };
    const results = await inEachMode(() => readDirectory(big, { limits }));
    const reference = results.get('walk');
    expect(reference?.entries.find((e) => e.path === 'd20/huge.bin')?.size).toBe(16 * 1024 * 1024 + 10);
    for (const archive of results.values()) expect(archive.entries).toEqual(reference?.entries);
  });
});

describe('errors of files read ahead come out as the walk meets them', () => {
  test('the first file over the per-file limit in path order is named, whoever read it', async () => {
    const root = tree(path.join(scratch, 'limit'), {
      ...largeSpec(),
      'd31/sub0/over.tf': 'x'.repeat(60_000),
      'd35/sub0/over.tf': 'x'.repeat(70_000),
    });
    const errors = await inEachMode(() => failure(readDirectory(root, { limits: { maxFileBytes: 55_000 } })));
    for (const error of errors.values()) {
      expect(error).toEqual({
        code: 'file-too-large',
        entry: 'd31/sub0/over.tf',
        message: expect.stringContaining('declares 60000 bytes') as string,
      });
      expect(error).toEqual(errors.get('walk'));
    }
  });

  test('the total limit is met at the same file as in a tarball of the tree', async () => {
    const root = tree(path.join(scratch, 'total'), largeSpec());
    // Packed in the byte order of the paths (no name here sorts between a directory and its
    // entries), without `./`: the order and the names the walk meets the files in.
    const tarball = path.join(scratch, 'total.tar.gz');
    execFileSync('tar', ['-C', root, '--sort=name', '-czf', tarball, ...readdirSync(root).sort()]);
    const limits = { maxTotalBytes: 2_000_000, maxCompressionRatio: 1e9 };
    const fromTar = await failure(readInput(tarball, { limits }));
    expect(fromTar.code).toBe('total-too-large');
    const errors = await inEachMode(() => failure(readDirectory(root, { limits })));
    for (const error of errors.values()) expect(error).toEqual(fromTar);
  });

  test('a file error before a link outside the tree wins, and the other way round', async () => {
    const root = tree(path.join(scratch, 'order'), {
      ...largeSpec(),
      'd10/sub1/over.tf': 'y'.repeat(60_000),
    });
    symlinkSync('/etc/passwd', path.join(root, 'd30', 'escape.tf'));
    const limits = { maxFileBytes: 55_000 };
    const first = await inEachMode(() => failure(readDirectory(root, { limits })));
    for (const error of first.values())
      expect([error.code, error.entry]).toEqual(['file-too-large', 'd10/sub1/over.tf']);
    symlinkSync('/etc/passwd', path.join(root, 'd05', 'escape.tf'));
    const second = await inEachMode(() => failure(readDirectory(root, { limits })));
    for (const error of second.values())
      expect([error.code, error.entry]).toEqual(['link-outside', 'd05/escape.tf']);
  });

  test('the entry limit is met at the same entry', async () => {
    const root = tree(path.join(scratch, 'entries'), largeSpec());
    const errors = await inEachMode(() => failure(readDirectory(root, { limits: { maxEntries: 1000 } })));
    for (const error of errors.values()) {
      expect(error.code).toBe('too-many-entries');
      expect(error).toEqual(errors.get('walk'));
    }
  });

  test('a FIFO among files read ahead is rejected without blocking', async () => {
    const root = tree(path.join(scratch, 'fifo'), largeSpec());
    execFileSync('mkfifo', [path.join(root, 'd25', 'pipe.tf')]);
    const errors = await inEachMode(() => failure(readDirectory(root)));
    for (const error of errors.values()) {
      expect([error.code, error.entry]).toEqual(['unsupported-entry-type', 'd25/pipe.tf']);
    }
  });
});

describe('readInput', () => {
  test('two reads at once each get their own tree', async () => {
    const a = tree(path.join(scratch, 'two-a'), largeSpec());
    const b = tree(path.join(scratch, 'two-b'), { ...largeSpec(), 'd01/extra.tf': 'extra' });
    const [x, y] = await Promise.all([readInput(a), readInput(b)]);
    expect(x.entries.some((e) => e.path === 'd01/extra.tf')).toBe(false);
    expect(y.files.get('d01/extra.tf')?.toString()).toBe('extra');
    expect(y.entries.length).toBe(x.entries.length + 1);
  });
});
