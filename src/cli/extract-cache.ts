/**
 * The CLI's extraction cache (src/scan/cache.ts) on disk: `<cache dir>/extract/`, a
 * `LocalObjectStore` of its own (its data, sidecars and temporary files all under that directory,
 * created 0700: manifests hold what the scanned configuration files say).
 *
 * Nothing here can fail a scan: a cache directory that cannot be created gives no cache; a store
 * that cannot be read or written is a miss or a counted failure (ExtractionCache); what is read is
 * validated there. Disk use is bounded by `evictExtractionCache`, run at most once a day.
 */
import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { LocalObjectStore, LOCAL_STORE_RESERVED } from '../storage/local';
import type { ObjectStore, PutOptions, StoredObject } from '../storage/types';

/** The subdirectory of the CLI's cache directory. */
export const EXTRACT_CACHE_SUBDIR = 'extract';
/** A manifest not read or written for this long is removed. */
export const EXTRACT_CACHE_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
/** Above this total, the least recently used manifests are removed. */
export const EXTRACT_CACHE_MAX_BYTES = 256 * 1024 * 1024;
/** Eviction runs at most this often (the mtime of a marker file). */
export const EXTRACT_EVICTION_INTERVAL_MS = 24 * 3600 * 1000;
const MARKER = 'last-eviction';

function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;
}

/**
 * A `LocalObjectStore` that marks an object as used when it is read (its mtime set to now), so
 * that eviction removes what has not been used rather than what was written long ago: a manifest
 * read on every scan of an unchanged archive is never rewritten.
 */
class UsageTrackingStore implements ObjectStore {
  constructor(private readonly inner: LocalObjectStore) {}

  put(key: string, body: Buffer | string, options?: PutOptions): Promise<void> {
    return this.inner.put(key, body, options);
  }

  async get(key: string): Promise<StoredObject | null> {
    const object = await this.inner.get(key);
    if (object !== null) {
      const now = new Date();
      // lutimes: never follows a link placed where the object was (the store refuses links).
      await fs.lutimes(nodePath.join(this.inner.root, ...key.split('/')), now, now).catch(() => undefined);
    }
    return object;
  }

  list(prefix: string): AsyncIterable<string> {
    return this.inner.list(prefix);
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }
}

/**
 * The extraction cache store under `cacheDir`, or undefined when its directory cannot be created
 * (read-only home, a file in the way ...): the scan then parses everything, as without a cache.
 */
export async function openExtractionCache(cacheDir: string): Promise<ObjectStore | undefined> {
  const root = nodePath.resolve(cacheDir, EXTRACT_CACHE_SUBDIR);
  try {
    await fs.mkdir(nodePath.resolve(cacheDir), { recursive: true, mode: 0o700 });
    await fs.mkdir(root, { recursive: true, mode: 0o700 });
    const stat = await fs.stat(root);
    if (!stat.isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  return new UsageTrackingStore(new LocalObjectStore(root));
}

export interface EvictionOptions {
  now?: Date;
  maxAgeMs?: number;
  maxBytes?: number;
  /** Skip when the last eviction is more recent than this; 0 = always run. */
  intervalMs?: number;
}

export interface EvictionResult {
  ran: boolean;
  removed: number;
  kept: number;
  keptBytes: number;
}

/**
 * Bounds the extraction cache under `cacheDir`: removes manifests not used for `maxAgeMs`, then the
 * least recently used until the rest fit in `maxBytes`, and temporary files a crashed write left.
 * Runs only when the marker file is older than `intervalMs` (one stat otherwise), and never
 * throws: a cache that cannot be cleaned is left as it is.
 */
export async function evictExtractionCache(
  cacheDir: string,
  options: EvictionOptions = {},
): Promise<EvictionResult> {
  const now = (options.now ?? new Date()).getTime();
  const maxAge = options.maxAgeMs ?? EXTRACT_CACHE_MAX_AGE_MS;
  const maxBytes = options.maxBytes ?? EXTRACT_CACHE_MAX_BYTES;
  const interval = options.intervalMs ?? EXTRACT_EVICTION_INTERVAL_MS;
  const root = nodePath.resolve(cacheDir, EXTRACT_CACHE_SUBDIR);
  const reserved = nodePath.join(root, LOCAL_STORE_RESERVED);
  const marker = nodePath.join(reserved, MARKER);
  const result: EvictionResult = { ran: false, removed: 0, kept: 0, keptBytes: 0 };
  try {
    const last = await fs.stat(marker).catch((err: unknown) => {
      if (errnoCode(err) === 'ENOENT') return null;
      throw err;
    });
    if (last !== null && interval > 0 && now - last.mtimeMs < interval) return result;
    await fs.mkdir(reserved, { recursive: true, mode: 0o700 });
    await fs.writeFile(marker, '', { mode: 0o600 });
    const at = new Date(now);
    await fs.utimes(marker, at, at);
    result.ran = true;

    const store = new LocalObjectStore(root);
    const entries: { key: string; mtime: number; size: number }[] = [];
    for await (const key of store.list(`${EXTRACT_CACHE_SUBDIR}/`)) {
      const stat = await fs.lstat(nodePath.join(root, ...key.split('/'))).catch(() => null);
      if (stat?.isFile()) entries.push({ key, mtime: stat.mtimeMs, size: stat.size });
    }
    // Oldest use first; remove the stale ones, then the oldest until the rest fit.
    entries.sort((a, b) => a.mtime - b.mtime || (a.key < b.key ? -1 : 1));
    let total = entries.reduce((sum, e) => sum + e.size, 0);
    for (const e of entries) {
      if (now - e.mtime > maxAge || total > maxBytes) {
        await store.delete(e.key).catch(() => undefined);
        total -= e.size;
        result.removed++;
      } else {
        result.kept++;
        result.keptBytes += e.size;
      }
    }
    // Temporary files older than the interval: a write that crashed between write and rename.
    const tmp = nodePath.join(reserved, 'tmp');
    for (const name of await fs.readdir(tmp).catch(() => [] as string[])) {
      const file = nodePath.join(tmp, name);
      const stat = await fs.lstat(file).catch(() => null);
      if (stat?.isFile() && now - stat.mtimeMs > EXTRACT_EVICTION_INTERVAL_MS)
        await fs.rm(file, { force: true }).catch(() => undefined);
    }
  } catch {
    // Unreadable or read-only: leave it; the scan has its report already.
  }
  return result;
}
