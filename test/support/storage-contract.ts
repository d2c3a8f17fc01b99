/**
 * The one contract every `ObjectStore` adapter must pass (used by s3.test.ts against a real s3rver,
 * by local.test.ts against a temp directory, and by memory.test.ts against the tests' MemoryStore).
 */
import { StorageKeyError } from '../../src/storage/keys';
import type { ObjectStore } from '../../src/storage/types';

export interface ContractFixture {
  /** A fresh, empty store. */
  store(): Promise<ObjectStore>;
  /** A fresh, empty store that lists in pages of `pageSize` keys (where the adapter pages). */
  pagedStore(pageSize: number): Promise<ObjectStore>;
  /**
   * False for s3rver: it lists by walking its directory tree, so `p/ab/c` comes before `p/ab-d`
   * although `/` sorts after `-`; real S3 and the filesystem store list in UTF-8 byte order.
   */
  byteOrderAcrossDepths: boolean;
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of iterable) out.push(key);
  return out;
}

/** Keys S3 users actually produce; listing order is UTF-8 byte order. */
export const AWKWARD_KEYS = [
  'uploads/my repo/build 1.tar.gz',
  'uploads/a+b/c+d.tgz',
  'uploads/100%/50%25 done.zip',
  'uploads/équipe/dépôt/config.tar',
  'uploads/日本語/リポジトリ.tar.gz',
  'uploads/emoji/🚀 launch.tar.gz',
  'uploads/quote"s/it\'s (1).tar.gz',
  'uploads/tilde~/a=b&c;d,e.tar.gz',
];

export function objectStoreContract(name: string, fixture: ContractFixture): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let store: ObjectStore;
    beforeEach(async () => {
      store = await fixture.store();
    });

    test('put then get returns the exact bytes, content type, metadata and an etag', async () => {
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await store.put('reports/a/report.bin', bytes, {
        contentType: 'application/octet-stream',
        metadata: { repository: 'org/repo', 'scan-id': 'abc123' },
      });
      const got = await store.get('reports/a/report.bin');
      expect(got).not.toBeNull();
      expect(got!.body.equals(bytes)).toBe(true);
      expect(got!.contentType).toBe('application/octet-stream');
      expect(got!.metadata).toEqual({ repository: 'org/repo', 'scan-id': 'abc123' });
      expect(typeof got!.etag).toBe('string');
      expect(got!.etag!.length).toBeGreaterThan(0);
    });

    test('strings are stored as UTF-8; an empty body is an object too', async () => {
      await store.put('t/text.md', '# Überschrift ✓\n', { contentType: 'text/markdown; charset=utf-8' });
      await store.put('t/empty', Buffer.alloc(0));
      expect((await store.get('t/text.md'))!.body.toString('utf8')).toBe('# Überschrift ✓\n');
      expect((await store.get('t/text.md'))!.contentType).toBe('text/markdown; charset=utf-8');
      const empty = await store.get('t/empty');
      expect(empty).not.toBeNull();
      expect(empty!.body.length).toBe(0);
      expect(await collect(store.list('t/'))).toEqual(['t/empty', 't/text.md']);
    });

    test('non-ASCII metadata values round-trip', async () => {
      const metadata = { repository: 'équipe/dépôt 日本 🚀', note: 'plain' };
      await store.put('m/x', 'x', { metadata });
      expect((await store.get('m/x'))!.metadata).toEqual(metadata);
    });

    test('overwrite replaces body, content type and metadata; the etag changes with the content', async () => {
      await store.put('o/k.json', '{"v":1}', { contentType: 'application/json', metadata: { a: '1' } });
      const first = await store.get('o/k.json');
      await store.put('o/k.json', 'second version', { contentType: 'text/plain' });
      const second = await store.get('o/k.json');
      expect(second!.body.toString()).toBe('second version');
      expect(second!.contentType).toBe('text/plain');
      expect(second!.metadata).toEqual({});
      expect(second!.etag).not.toBe(first!.etag);
      await store.put('o/k.json', 'second version', { contentType: 'text/plain' });
      expect((await store.get('o/k.json'))!.etag).toBe(second!.etag);
      expect(await collect(store.list('o/'))).toEqual(['o/k.json']);
    });

    test('a missing key reads as null, also under a missing prefix', async () => {
      expect(await store.get('nothing/here.json')).toBeNull();
      await store.put('exists/a', 'a');
      expect(await store.get('exists/b')).toBeNull();
      expect(await store.get('exists')).toBeNull();
    });

    test('delete removes an object; deleting a missing key is not an error', async () => {
      await store.put('d/one', '1');
      await store.put('d/two', '2');
      await store.delete('d/one');
      expect(await store.get('d/one')).toBeNull();
      expect(await collect(store.list('d/'))).toEqual(['d/two']);
      await expect(store.delete('d/one')).resolves.toBeUndefined();
      await expect(store.delete('never/was')).resolves.toBeUndefined();
      await store.delete('d/two');
      expect(await collect(store.list('d/'))).toEqual([]);
      await store.put('d/one', 'again');
      expect((await store.get('d/one'))!.body.toString()).toBe('again');
    });

    test('keys with spaces, +, %, quotes and non-ASCII round-trip and list in UTF-8 byte order', async () => {
      for (const [i, key] of AWKWARD_KEYS.entries())
        await store.put(key, `body ${i}`, { metadata: { i: String(i) } });
      for (const [i, key] of AWKWARD_KEYS.entries()) {
        const got = await store.get(key);
        expect(got?.body.toString()).toBe(`body ${i}`);
        expect(got?.metadata).toEqual({ i: String(i) });
      }
      expect(await collect(store.list('uploads/'))).toEqual([...AWKWARD_KEYS].sort(byteOrder));
      // Near-miss keys are distinct objects.
      expect(await store.get('uploads/my+repo/build+1.tar.gz')).toBeNull();
      expect(await store.get('uploads/my%20repo/build%201.tar.gz')).toBeNull();
      expect(await store.get('uploads/a b/c d.tgz')).toBeNull();
    });

    test('list is by string prefix (partial segments included), sorted, and empty when nothing matches', async () => {
      const keys = ['p/a', 'p/ab/c', 'p/ab-d', 'p/b', 'p/a/x', 'q/a', 'p-x'];
      // "p/a" and "p/a/x" would clash on a filesystem; keep the layout S3 and files agree on.
      for (const key of keys.filter((k) => k !== 'p/a')) await store.put(key, key);
      const ordered = async (prefix: string) => {
        const listed = await collect(store.list(prefix));
        return fixture.byteOrderAcrossDepths ? listed : [...listed].sort(byteOrder);
      };
      expect(await ordered('p/a')).toEqual(['p/a/x', 'p/ab-d', 'p/ab/c']);
      expect(await ordered('p/')).toEqual(['p/a/x', 'p/ab-d', 'p/ab/c', 'p/b']);
      expect(await ordered('p')).toEqual(['p-x', 'p/a/x', 'p/ab-d', 'p/ab/c', 'p/b']);
      expect(await ordered('')).toEqual(['p-x', 'p/a/x', 'p/ab-d', 'p/ab/c', 'p/b', 'q/a']);
      expect(await collect(store.list('zzz/'))).toEqual([]);
      expect(await collect(store.list('p/ab/c/'))).toEqual([]);
    });

    test('listing pages through more keys than one page holds, in order', async () => {
      const paged = await fixture.pagedStore(7);
      const keys = Array.from(
        { length: 53 },
        (_, i) => `many/${String(i).padStart(3, '0')}-${i % 2 ? 'odd' : 'even'}`,
      );
      await Promise.all(keys.map((key) => paged.put(key, key)));
      await paged.put('other/x', 'x');
      expect(await collect(paged.list('many/'))).toEqual(keys);
      expect(await collect(paged.list('many/02'))).toEqual(keys.filter((k) => k.startsWith('many/02')));
    });

    test('concurrent writes of different keys all land', async () => {
      const keys = Array.from({ length: 40 }, (_, i) => `c/${i % 4}/${i}.json`);
      await Promise.all(keys.map((key) => store.put(key, JSON.stringify({ key }))));
      const listed = await collect(store.list('c/'));
      expect(listed.sort()).toEqual([...keys].sort());
      for (const key of keys) expect(JSON.parse((await store.get(key))!.body.toString())).toEqual({ key });
    });

    test.each([
      ['empty', ''],
      ['leading slash', '/abs'],
      ['trailing slash', 'dir/'],
      ['empty segment', 'a//b'],
      ['dot-dot segment', 'reports/../uploads/x'],
      ['dot segment', 'a/./b'],
      ['backslash', 'a\\..\\b'],
      ['NUL', 'a\u0000b'],
      ['newline', 'a\nb'],
      ['too long', 'k/'.repeat(600)],
      ['lone surrogate', 'a\ud800b'],
    ])('rejects an invalid key (%s) on every operation', async (_label, key) => {
      await expect(store.put(key, 'x')).rejects.toBeInstanceOf(StorageKeyError);
      await expect(store.get(key)).rejects.toBeInstanceOf(StorageKeyError);
      await expect(store.delete(key)).rejects.toBeInstanceOf(StorageKeyError);
    });

    test('rejects a listing prefix that climbs out', async () => {
      await expect(collect(store.list('../'))).rejects.toBeInstanceOf(StorageKeyError);
      await expect(collect(store.list('/abs'))).rejects.toBeInstanceOf(StorageKeyError);
      await expect(collect(store.list('a//'))).rejects.toBeInstanceOf(StorageKeyError);
    });
  });
}
