/**
 * Runs the CLI bundle (dist-cli/main.cjs) with a V8 code cache, so that a fresh `tfguard` process
 * does not compile the bundle's functions again on every run (Node 22 has
 * `module.enableCompileCache()` for this; Node 20, which tfguard supports, has not).
 *
 * Node's own CommonJS loader compiles a file with `vm`'s machinery and no cache; here the bundle
 * is compiled the same way (`Module.wrap`, `vm.Script`) but with `cachedData`, the bytecode V8
 * produced for it in an earlier run (https://nodejs.org/api/vm.html#scriptcreatecacheddata). The
 * cache is produced at the end of a run (`process` `exit`), not right after compiling: V8 compiles
 * most functions lazily, on their first call, and `createCachedData()` only holds the functions
 * compiled so far, so a cache made after a scan holds the code a scan runs. The bundle runs before
 * the cache is written: it is `save` of the result, which the launcher calls on `exit`.
 *
 * The cache never decides a result and never fails a run:
 * - its file name is a SHA-256 of the bundle's text, the Node version, the architecture and the
 *   V8/Node flags of the process: another bundle or another Node never reads it (V8 checks its own
 *   version and flags too, and only the source's length: the hash is what keeps a cache of one
 *   bundle from being used for another of the same length);
 * - the file holds a SHA-256 of its payload, checked before V8 sees it (release builds of V8 do
 *   not checksum code caches, `--verify-snapshot-checksum`): a damaged file is ignored;
 * - a cache V8 rejects (`cachedDataRejected`), or that cannot be read, is ignored and rewritten;
 * - it is written to a temporary file and renamed, so a concurrent run reads the old file or the
 *   new one, never a part; a directory that cannot be created or written is skipped silently.
 *
 * A run writes the cache when there is none it could use, or when the one it used was written by
 * a run that did not scan (`--version`, `--help`: their cache lacks the scanner's functions) and
 * this one scans. Older caches of other bundles in the directory are removed after a week.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';
import { Script } from 'node:vm';

/** The cache file's first bytes: the format, then a byte saying whether a scan wrote it. */
const MAGIC = Buffer.from('tfguard-v8-code-cache-1\n', 'latin1');
const HASH_BYTES = 32;
const HEADER_BYTES = MAGIC.length + 1 + HASH_BYTES;
const SUFFIX = '.v8cache';
/** Caches of other bundles (or Node versions) older than this are removed when one is written. */
const STALE_MS = 7 * 24 * 3600 * 1000;

/** What happened to the cache in one run (for tests and the performance notes). */
export type CodeCacheState =
  | 'off' // no cache directory
  | 'missing' // no cache file yet
  | 'damaged' // unreadable file, header or checksum: ignored
  | 'rejected' // V8 refused it (another V8 or flags): ignored
  | 'accepted';

export interface CodeCacheOptions {
  /** The directory holding the cache files; undefined = no cache (the bundle is compiled as usual). */
  readonly dir: string | undefined;
  /** Whether this run scans (its cache then holds the scanner's functions). */
  readonly scans: boolean;
  /** Extra text the cache key depends on (tests); the process's flags are always part of it. */
  readonly keyExtra?: string;
}

export interface CodeCacheRun {
  readonly state: CodeCacheState;
  /** The cache file (undefined when off). */
  readonly file: string | undefined;
  /**
   * Writes the cache from what V8 has compiled so far, when this run should (see above); call it
   * at the end of the run (the launcher does on `exit`). False when nothing was written.
   */
  readonly save: (() => boolean) | undefined;
  /** What the bundle exported (`module.exports`). */
  readonly exports: unknown;
}

/** The cache file of a bundle's bytes, for this Node, architecture and process flags. */
export function codeCacheFile(dir: string, source: Buffer, keyExtra = ''): string {
  const key = createHash('sha256')
    .update(source)
    .update(['', process.version, process.arch, ...process.execArgv, keyExtra].join('\0'))
    .digest('hex')
    .slice(0, 40);
  return path.join(dir, key + SUFFIX);
}

/** A cache file's payload when its header and checksum hold, with whether a scanning run wrote it. */
export function readCodeCache(file: string): { data: Buffer; byScan: boolean } | 'missing' | 'damaged' {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'damaged';
  }
  if (bytes.length <= HEADER_BYTES || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return 'damaged';
  const flag = bytes[MAGIC.length];
  if (flag !== 0 && flag !== 1) return 'damaged';
  const data = bytes.subarray(HEADER_BYTES);
  const sum = createHash('sha256').update(data).digest();
  if (!sum.equals(bytes.subarray(MAGIC.length + 1, HEADER_BYTES))) return 'damaged';
  return { data, byScan: flag === 1 };
}

/**
 * Writes a cache file atomically (temporary file, then rename); false when it could not. `data`
 * is called once the temporary file is open: a directory that cannot be written costs no
 * serialisation (V8's `createCachedData` takes tens of milliseconds).
 */
export function writeCodeCache(file: string, data: () => Buffer, byScan: boolean): boolean {
  const dir = path.dirname(file);
  const temp = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    mkdirSync(dir, { recursive: true });
    fd = openSync(temp, 'w', 0o600);
    const payload = data();
    const sum = createHash('sha256').update(payload).digest();
    writeFileSync(fd, Buffer.concat([MAGIC, Buffer.of(byScan ? 1 : 0), sum, payload]));
    closeSync(fd);
    fd = undefined;
    renameSync(temp, file);
  } catch {
    for (const undo of [() => fd !== undefined && closeSync(fd), () => unlinkSync(temp)]) {
      try {
        undo();
      } catch {
        // not open, or nothing was written
      }
    }
    return false;
  }
  removeStale(dir, file);
  return true;
}

/** Removes cache files of other bundles not written for a week (an upgrade leaves the old one). */
function removeStale(dir: string, keep: string): void {
  try {
    const now = Date.now();
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (!name.endsWith(SUFFIX) || file === keep) continue;
      try {
        if (now - statSync(file).mtimeMs > STALE_MS) unlinkSync(file);
      } catch {
        // removed by another run, or not ours to remove
      }
    }
  } catch {
    // an unreadable directory: nothing to clean
  }
}

/**
 * Loads and runs the CommonJS file `bundle` as `require(bundle)` would (its own `module`,
 * `exports`, a `require` relative to it, `__filename`, `__dirname`), compiled with the code cache
 * of `options.dir`; without a directory, with `require` itself.
 */
export function runWithCodeCache(bundle: string, options: CodeCacheOptions): CodeCacheRun {
  // Without a cache directory: Node's own loader, exactly as `require` runs it.
  if (options.dir === undefined) {
    const exports: unknown = Module.createRequire(bundle)(bundle);
    return { state: 'off', file: undefined, save: undefined, exports };
  }
  // Hashed as bytes (hashing the decoded text would encode it again).
  const bytes = readFileSync(bundle);
  const file = codeCacheFile(options.dir, bytes, options.keyExtra);
  const source = bytes.toString('utf8');
  const stored = readCodeCache(file);
  const script = new Script(Module.wrap(source), {
    filename: bundle,
    cachedData: typeof stored === 'object' ? stored.data : undefined,
  });
  const state: CodeCacheState =
    typeof stored !== 'object' ? stored : script.cachedDataRejected === true ? 'rejected' : 'accepted';
  const writes = state !== 'accepted' || (options.scans && typeof stored === 'object' && !stored.byScan);
  const save = !writes
    ? undefined
    : (): boolean => {
        try {
          return writeCodeCache(file, () => script.createCachedData(), options.scans);
        } catch {
          return false; // a cache that cannot be made is no cache
        }
      };
  const mod = new Module(bundle);
  mod.filename = bundle;
  const require = Module.createRequire(bundle);
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: Module,
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(mod.exports, mod.exports, require, mod, bundle, path.dirname(bundle));
  mod.loaded = true;
  return { state, file, save, exports: mod.exports as unknown };
}
