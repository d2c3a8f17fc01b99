/**
 * Filesystem `ObjectStore`: the CLI's embedded store (reports, audit summaries and the registry
 * cache under a local directory).
 *
 * Layout: the object `a/b.json` is the file `<root>/a/b.json`, so a store can be browsed with
 * ordinary tools. Its content type and metadata live in a sidecar `<root>/.tfguard/meta/a/b.json.json`
 * that also records the content's SHA-256; writes go to `<root>/.tfguard/tmp/` first and are renamed
 * into place, so a reader never sees a partially written object. Keys are checked with the shared
 * key rules, every path is built from validated segments, and symbolic links inside the store are
 * refused, so no key can reach outside the root.
 *
 * Unlike S3, a key cannot be both an object and a prefix of other objects (`a` and `a/b`): such a
 * write fails with `StorageConflictError`. The service's key layout never does that.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { assertValidKey, assertValidPrefix, compareKeys, StorageKeyError } from './keys';
import type { ObjectStore, PutOptions, StoredObject } from './types';

/** The reserved top-level directory of a local store (sidecars and temporary files). */
export const LOCAL_STORE_RESERVED = '.tfguard';

export class StorageConflictError extends Error {
  override readonly name = 'StorageConflictError';
  readonly key: string;

  constructor(key: string, reason: string, options?: { cause?: unknown }) {
    super(`cannot store ${JSON.stringify(key)}: ${reason}`, options);
    this.key = key;
  }
}

interface Sidecar {
  sha256: string;
  contentType?: string;
  metadata: Record<string, string>;
}

function sha256(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class LocalObjectStore implements ObjectStore {
  readonly root: string;
  private readonly metaRoot: string;
  private readonly tmpRoot: string;

  constructor(root: string) {
    this.root = nodePath.resolve(root);
    this.metaRoot = nodePath.join(this.root, LOCAL_STORE_RESERVED, 'meta');
    this.tmpRoot = nodePath.join(this.root, LOCAL_STORE_RESERVED, 'tmp');
  }

  private checkKey(key: string): string[] {
    assertValidKey(key);
    const segments = key.split('/');
    if (segments[0] === LOCAL_STORE_RESERVED)
      throw new StorageKeyError(key, `"${LOCAL_STORE_RESERVED}/" is reserved`);
    return segments;
  }

  /**
   * Checks the existing ancestor directories of `segments` under `base`: a symbolic link is refused
   * (it could lead outside the root); `missing` when one does not exist (so nothing is stored
   * there); `object` with the offending key prefix when one is a regular file.
   */
  private async ancestors(
    base: string,
    key: string,
    segments: string[],
  ): Promise<'ok' | 'missing' | { object: string }> {
    let current = base;
    for (const [i, segment] of segments.slice(0, -1).entries()) {
      current = nodePath.join(current, segment);
      let stat;
      try {
        stat = await fs.lstat(current);
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') return 'missing';
        throw err;
      }
      const path = segments.slice(0, i + 1).join('/');
      if (stat.isSymbolicLink()) throw new StorageKeyError(key, `"${path}" is a symbolic link in the store`);
      if (!stat.isDirectory()) return { object: path };
    }
    return 'ok';
  }

  private async writeTemp(body: Buffer): Promise<string> {
    await fs.mkdir(this.tmpRoot, { recursive: true });
    const tmp = nodePath.join(this.tmpRoot, `${process.pid}-${randomBytes(8).toString('hex')}`);
    const handle = await fs.open(tmp, 'wx', 0o644);
    try {
      await handle.writeFile(body);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return tmp;
  }

  /** Renames `tmp` to `target` (creating directories), retrying if a concurrent delete prunes them. */
  private async place(
    key: string,
    segments: string[],
    base: string,
    tmp: string,
    suffix: string,
  ): Promise<void> {
    const target = nodePath.join(base, ...segments) + suffix;
    for (let attempt = 0; ; attempt++) {
      const state = await this.ancestors(base, key, segments);
      if (typeof state === 'object') {
        await fs.rm(tmp, { force: true });
        throw new StorageConflictError(key, `"${state.object}" is an object, not a prefix`);
      }
      try {
        await fs.mkdir(nodePath.dirname(target), { recursive: true });
        const existing = await fs.lstat(target).catch((err: unknown) => {
          if (errnoCode(err) === 'ENOENT') return null;
          throw err;
        });
        if (existing?.isDirectory())
          throw new StorageConflictError(key, 'it is a prefix of other stored objects');
        await fs.rename(tmp, target);
        return;
      } catch (err) {
        const code = errnoCode(err);
        if (code === 'ENOENT' && attempt < 3) continue;
        await fs.rm(tmp, { force: true });
        if (err instanceof StorageConflictError) throw err;
        if (code === 'EEXIST' || code === 'ENOTDIR') {
          throw new StorageConflictError(key, 'a prefix of it is an object', { cause: err });
        }
        if (code === 'EISDIR')
          throw new StorageConflictError(key, 'it is a prefix of other stored objects', { cause: err });
        throw err;
      }
    }
  }

  async put(key: string, body: Buffer | string, options: PutOptions = {}): Promise<void> {
    const segments = this.checkKey(key);
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const sidecar: Sidecar = {
      sha256: sha256(bytes),
      ...(options.contentType !== undefined ? { contentType: options.contentType } : {}),
      metadata: { ...(options.metadata ?? {}) },
    };
    await fs.mkdir(this.root, { recursive: true });
    const dataTmp = await this.writeTemp(bytes);
    await this.place(key, segments, this.root, dataTmp, '');
    const metaTmp = await this.writeTemp(Buffer.from(JSON.stringify(sidecar), 'utf8'));
    await this.place(key, segments, this.metaRoot, metaTmp, '.json');
  }

  private async readFileOrNull(path: string): Promise<Buffer | null> {
    try {
      const stat = await fs.lstat(path);
      if (!stat.isFile()) return null;
      return await fs.readFile(path);
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw err;
    }
  }

  private async readSidecar(segments: string[]): Promise<Sidecar | null> {
    const raw = await this.readFileOrNull(nodePath.join(this.metaRoot, ...segments) + '.json');
    if (raw === null) return null;
    try {
      const parsed = JSON.parse(raw.toString('utf8')) as Partial<Sidecar>;
      if (
        typeof parsed.sha256 !== 'string' ||
        typeof parsed.metadata !== 'object' ||
        parsed.metadata === null
      )
        return null;
      return parsed as Sidecar;
    } catch {
      return null;
    }
  }

  async get(key: string): Promise<StoredObject | null> {
    const segments = this.checkKey(key);
    if ((await this.ancestors(this.root, key, segments)) !== 'ok') return null;
    // A concurrent put renames the data before its sidecar: when the sidecar's hash does not match
    // yet, read again; a sidecar that never matches (a crash between the renames, or a file put in
    // place by hand) means the metadata is unknown.
    for (let attempt = 0; ; attempt++) {
      const body = await this.readFileOrNull(nodePath.join(this.root, ...segments));
      if (body === null) return null;
      const etag = sha256(body);
      const sidecar = await this.readSidecar(segments);
      if (sidecar !== null && sidecar.sha256 === etag) {
        return {
          body,
          ...(sidecar.contentType !== undefined ? { contentType: sidecar.contentType } : {}),
          metadata: { ...sidecar.metadata },
          etag,
        };
      }
      if (attempt >= 3) return { body, metadata: {}, etag };
      await delay(5 * (attempt + 1));
    }
  }

  async *list(prefix: string): AsyncIterable<string> {
    assertValidPrefix(prefix);
    const slash = prefix.lastIndexOf('/');
    const dirKey = slash < 0 ? '' : prefix.slice(0, slash);
    const dirSegments = dirKey === '' ? [] : dirKey.split('/');
    if (dirSegments[0] === LOCAL_STORE_RESERVED) return;
    if ((await this.ancestors(this.root, prefix, [...dirSegments, ''])) !== 'ok') return;
    const keys: string[] = [];
    const walk = async (dir: string, keyPrefix: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch (err) {
        const code = errnoCode(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') return;
        throw err;
      }
      for (const entry of entries) {
        const key = keyPrefix + entry.name;
        if (keyPrefix === '' && entry.name === LOCAL_STORE_RESERVED) continue;
        if (entry.isDirectory()) {
          // Only descend where keys can still match the prefix.
          const asPrefix = key + '/';
          if (asPrefix.startsWith(prefix) || prefix.startsWith(asPrefix))
            await walk(nodePath.join(dir, entry.name), asPrefix);
        } else if (entry.isFile() && key.startsWith(prefix)) {
          try {
            assertValidKey(key);
            keys.push(key);
          } catch {
            // A file placed by hand under a name that is not a valid key is not an object.
          }
        }
      }
    };
    await walk(nodePath.join(this.root, ...dirSegments), dirKey === '' ? '' : dirKey + '/');
    keys.sort(compareKeys);
    yield* keys;
  }

  async delete(key: string): Promise<void> {
    const segments = this.checkKey(key);
    if ((await this.ancestors(this.root, key, segments)) !== 'ok') return;
    const dataPath = nodePath.join(this.root, ...segments);
    const stat = await fs.lstat(dataPath).catch(() => null);
    if (stat?.isDirectory()) return; // a prefix, not an object: nothing to delete
    await fs.rm(dataPath, { force: true });
    await fs.rm(nodePath.join(this.metaRoot, ...segments) + '.json', { force: true });
    await this.prune(this.root, segments);
    await this.prune(this.metaRoot, segments);
  }

  /** Removes directories left empty by a delete, up to (not including) `base`. */
  private async prune(base: string, segments: string[]): Promise<void> {
    for (let depth = segments.length - 1; depth > 0; depth--) {
      try {
        await fs.rmdir(nodePath.join(base, ...segments.slice(0, depth)));
      } catch {
        return; // not empty, already gone, or not ours to remove
      }
    }
  }
}
