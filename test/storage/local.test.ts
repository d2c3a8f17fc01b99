import { promises as fs } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageKeyError } from '../../src/storage/keys';
import { LocalObjectStore, StorageConflictError } from '../../src/storage/local';
import { objectStoreContract } from '../support/storage-contract';

const dirs: string[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tfguard-local-store-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

objectStoreContract('LocalObjectStore', {
  store: async () => new LocalObjectStore(await freshDir()),
  // The filesystem store has no pages; listing many keys is the same code path.
  pagedStore: async () => new LocalObjectStore(await freshDir()),
  byteOrderAcrossDepths: true,
});

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of iterable) out.push(key);
  return out;
}

describe('LocalObjectStore specifics', () => {
  test('objects are plain files under the root, readable by a new instance', async () => {
    const dir = await freshDir();
    await new LocalObjectStore(dir).put('reports/org/repo/latest.json', '{"a":1}', {
      contentType: 'application/json',
      metadata: { repository: 'org/repo' },
    });
    expect(await fs.readFile(join(dir, 'reports/org/repo/latest.json'), 'utf8')).toBe('{"a":1}');
    const again = await new LocalObjectStore(dir).get('reports/org/repo/latest.json');
    expect(again!.contentType).toBe('application/json');
    expect(again!.metadata).toEqual({ repository: 'org/repo' });
  });

  test('a symbolic link planted in the store is refused, so keys cannot reach outside the root', async () => {
    const dir = await freshDir();
    const outside = await freshDir();
    await fs.writeFile(join(outside, 'secret'), 'top secret');
    await fs.symlink(outside, join(dir, 'reports'));
    const store = new LocalObjectStore(dir);
    await expect(store.put('reports/evil.json', 'x')).rejects.toBeInstanceOf(StorageKeyError);
    await expect(store.get('reports/secret')).rejects.toBeInstanceOf(StorageKeyError);
    await expect(store.delete('reports/secret')).rejects.toBeInstanceOf(StorageKeyError);
    expect(await fs.readdir(outside)).toEqual(['secret']);
    // A symlink as the object itself is not read through either.
    await fs.symlink(join(outside, 'secret'), join(dir, 'direct'));
    expect(await store.get('direct')).toBeNull();
    expect(await collect(store.list(''))).toEqual([]);
  });

  test('the reserved directory is not a key space and never listed', async () => {
    const store = new LocalObjectStore(await freshDir());
    await store.put('a', 'a', { metadata: { x: 'y' } });
    await expect(store.put('.tfguard/meta/a.json', 'x')).rejects.toBeInstanceOf(StorageKeyError);
    expect(await collect(store.list(''))).toEqual(['a']);
    expect(await collect(store.list('.tfguard/'))).toEqual([]);
  });

  test('an object and a prefix of the same name conflict with a clear error', async () => {
    const store = new LocalObjectStore(await freshDir());
    await store.put('a/b', '1');
    await expect(store.put('a', '2')).rejects.toThrow(StorageConflictError);
    await expect(store.put('a/b/c', '3')).rejects.toThrow(/"a\/b" is an object, not a prefix/);
    expect(await store.get('a/b/c')).toBeNull();
    expect(await collect(store.list('a/b/'))).toEqual([]);
    // Deleting prunes empty directories, so the name is free again.
    await store.delete('a/b');
    await store.put('a', '2');
    expect((await store.get('a'))!.body.toString()).toBe('2');
  });

  test('a reader never sees a partially written object and no temp file shows up in listings', async () => {
    const dir = await freshDir();
    const store = new LocalObjectStore(dir);
    const big = (fill: string) => Buffer.alloc(4 * 1024 * 1024, fill);
    await store.put('big/blob', big('a'), { metadata: { fill: 'a' } });
    let writes = 0;
    let reads = 0;
    const writer = (async () => {
      for (const fill of ['b', 'c', 'd', 'e', 'f', 'g']) {
        await store.put('big/blob', big(fill), { metadata: { fill } });
        writes++;
      }
    })();
    const seen = new Set<string>();
    while (writes < 6) {
      const got = await store.get('big/blob');
      const first = String.fromCharCode(got!.body[0]!);
      expect(got!.body.length).toBe(4 * 1024 * 1024);
      expect(got!.body.every((b) => b === got!.body[0])).toBe(true);
      if (got!.metadata.fill !== undefined) expect(got!.metadata.fill).toBe(first);
      seen.add(first);
      expect(await collect(store.list(''))).toEqual(['big/blob']);
      reads++;
    }
    await writer;
    expect(reads).toBeGreaterThan(0);
    expect(await fs.readdir(join(dir, '.tfguard', 'tmp'))).toEqual([]);
  });

  test('a file replaced by hand keeps its bytes but loses the stale metadata', async () => {
    const dir = await freshDir();
    const store = new LocalObjectStore(dir);
    await store.put('x/y.json', 'one', { contentType: 'application/json', metadata: { a: 'b' } });
    await fs.writeFile(join(dir, 'x/y.json'), 'edited by hand');
    const got = await store.get('x/y.json');
    expect(got!.body.toString()).toBe('edited by hand');
    expect(got!.metadata).toEqual({});
    expect(got!.contentType).toBeUndefined();
  });
});
