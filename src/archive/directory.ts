import { createHash, hash as oneShotHash } from 'node:crypto';
import * as fsSync from 'node:fs';
import { constants, promises as fs, type Stats } from 'node:fs';
import * as nodePath from 'node:path';
import { InputError } from '../errors';
import type { LoadedArchive, ReadAhead } from './types';
import { ArchiveBuilder } from './builder';
import { DirectoryReads, type ReadResult } from './directory-reads';
import { compareUtf8, decodeUtf8Name, displayName, displaysAsIs, hexEscape, MAX_DISPLAY_NAME } from './paths';

const READ_CHUNK = 64 * 1024;

// The synchronous calls of the walk, looked up once (not through the module namespace per call).
const { closeSync, fstatSync, lstatSync, openSync, readSync, readdirSync, readlinkSync } = fsSync;

/** Directory names never descended into: VCS metadata and Terraform's working directory (provider
 * binaries of hundreds of MiB and downloaded remote modules, neither part of the configuration). */
const SKIPPED_DIRECTORIES = new Set(['.git', '.terraform']);

type TypeOf = Pick<Stats, 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'>;

function describeType(stats: TypeOf): string {
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  return 'special file';
}

/** Run a filesystem call of the walk; an unreadable path rejects the input, naming the entry. */
async function fsStep<T>(shown: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (cause) {
    if (cause instanceof InputError) throw cause;
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new InputError('not-found', `cannot read "${shown}" (${code}): ${(cause as Error).message}`, {
      entry: shown,
      cause,
    });
  }
}

/** The first read of a file asks for its whole size (plus one byte, to see the end): one read for
 * almost every file; larger files, or files that grew, continue in `READ_CHUNK` reads. */
const FIRST_READ_MAX = 16 * 1024 * 1024;

/** How every file of a tree is opened: not through a symlink, never blocking (a FIFO). */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens one regular file for reading: open, then fstat of what was opened (its size is declared
 * before a byte is read, its mode kept). O_NOFOLLOW + O_NONBLOCK: a file swapped for a symlink or
 * a FIFO after the directory was listed can neither redirect the read outside the tree nor block
 * it forever, and the fstat of the opened file, not of a name, says what it is.
 */
function openRegularFileSync(absolute: string, shown: string): { fd: number; stats: Stats } {
  let fd: number;
  try {
    fd = openSync(absolute, OPEN_FLAGS);
  } catch (cause) {
    throw new InputError('not-found', `cannot open "${shown}": ${(cause as Error).message}`, {
      entry: shown,
      cause,
    });
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      throw new InputError(
        'unsupported-entry-type',
        `"${shown}" changed into a ${describeType(stats)} while reading`,
        { entry: shown },
      );
    }
    return { fd, stats };
  } catch (cause) {
    closeSync(fd);
    throw cause;
  }
}

/**
 * Reads an opened regular file to its end and closes it: (usually) one read. Synchronous calls:
 * thousands of small files read through the thread pool cost a round trip per call and left the
 * process idle most of the time (a directory took twice the time of a tarball of it);
 * these calls take microseconds each on a local filesystem. Only the CLI reads directories.
 */
function readOpenFileSync(fd: number, size: number, onChunk: (chunk: Buffer) => void): void {
  try {
    let want = Math.min(size + 1, FIRST_READ_MAX);
    for (;;) {
      const buffer = Buffer.allocUnsafe(want);
      const bytesRead = readSync(fd, buffer, 0, want, null);
      if (bytesRead === 0) break;
      onChunk(buffer.subarray(0, bytesRead));
      // A short read of a regular file is its end.
      if (bytesRead < want) break;
      want = READ_CHUNK;
    }
  } finally {
    closeSync(fd);
  }
}

/** Reads one regular file: open, fstat, (usually) one read, close. */
function readRegularFileSync(absolute: string, onChunk: (chunk: Buffer) => void, shown: string): void {
  const { fd, stats } = openRegularFileSync(absolute, shown);
  readOpenFileSync(fd, stats.size, onChunk);
}

/** `fsStep` for a synchronous call. */
function fsStepSync<T>(shown: string, step: () => T): T {
  try {
    return step();
  } catch (cause) {
    if (cause instanceof InputError) throw cause;
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new InputError('not-found', `cannot read "${shown}" (${code}): ${(cause as Error).message}`, {
      entry: shown,
      cause,
    });
  }
}

async function readRegularFile(
  absolute: string,
  onChunk: (chunk: Buffer) => void,
  shown: string,
): Promise<void> {
  readRegularFileSync(absolute, onChunk, shown);
  return Promise.resolve();
}

/** A path that a listing line escapes. */
const ESCAPED_IN_LISTING = /[\\\n\r]/;

/** GNU coreutils `sha256sum` line escaping: a name containing `\`, LF or CR is escaped and the line
 * is prefixed with `\`, so every listing line is unambiguous. */
function listingLine(hash: string, path: string): string {
  if (!ESCAPED_IN_LISTING.test(path)) return `${hash}  ${path}\n`;
  const escaped = path.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
  return `\\${hash}  ${escaped}\n`;
}

/** Characters of listing hashed at a time: lines joined into a string of about this length cost
 * less than one string of the whole listing (flattened and encoded at once) or an update per line. */
const LISTING_PIECE = 16 * 1024;

/** The identity of a directory tree: SHA-256 of `<sha256>  <path>` lines for regular files (and
 * `symlink:<target>  <path>` for links), in entry order (byte-sorted paths). */
export function directoryListingSha256(archive: Pick<LoadedArchive, 'entries'>): string {
  const digest = createHash('sha256');
  let listing = '';
  for (const entry of archive.entries) {
    if (entry.type === 'file') listing += listingLine(entry.sha256 ?? '', entry.path);
    else if (entry.type === 'symlink' || entry.type === 'hardlink') {
      listing += listingLine(`${entry.type}:${entry.linkTarget ?? ''}`, entry.path);
    } else continue;
    if (listing.length >= LISTING_PIECE) {
      digest.update(listing);
      listing = '';
    }
  }
  return digest.update(listing).digest('hex');
}

/** An absolute path inside the tree (spelled via the real or the given root), as a `/`-separated
 * root-relative path; null when it is outside. */
function relativeInside(target: string, ...roots: string[]): string | null {
  for (const root of roots) {
    const inside = nodePath.relative(root, nodePath.normalize(target));
    if (inside === '') return '.';
    if (inside !== '..' && !inside.startsWith(`..${nodePath.sep}`) && !nodePath.isAbsolute(inside)) {
      return inside.split(nodePath.sep).join('/');
    }
  }
  return null;
}

/** One directory of the walk. */
interface DirectoryTask {
  /** `/`-separated, relative to the root ('' for the root itself): the entry path of the directory. */
  relative: string;
  /** Its absolute path (under the real root). */
  absolute: string;
  /** `absolute` ending in the separator: what its entries' names are appended to. */
  prefix: string;
  /** `displayName(relative)` ('.' for the root). */
  shown: string;
  /** Whether `shown` is `relative` itself (no character a message escapes, not shortened). */
  plain: boolean;
  /** Path segments of `relative` (0 for the root). */
  depth: number;
  /** UTF-8 bytes of `relative`. */
  bytes: number;
}

function childTask(parent: DirectoryTask, name: string, relative: string, shown: string): DirectoryTask {
  const absolute = `${parent.prefix}${name}`;
  return {
    relative,
    absolute,
    prefix: `${absolute}${nodePath.sep}`,
    shown,
    plain: shown === relative,
    depth: parent.depth + 1,
    bytes: parent.bytes + (parent.depth === 0 ? 0 : 1) + Buffer.byteLength(name, 'utf8'),
  };
}

/**
 * Of a `.terraform` directory, only `modules/`: `terraform init`'s record of the modules it installed
 * (`modules.json`) and the installed copies themselves, read exactly as an archive of the same
 * directory carries them (a directory after `terraform get` resolves its remote modules
 * like a tarball of it). The rest (`providers/`: provider binaries of hundreds of MiB, `terraform.tfstate`
 * of a backend, `environment`) is not configuration and is skipped. Returns the `modules` directory
 * to walk, or null.
 */
function planInstalledModules(
  builder: ArchiveBuilder,
  terraform: DirectoryTask,
  mode: number,
  steps: Step[],
  count: (shown: string) => void,
): DirectoryTask | null {
  let modulesDir: Stats;
  try {
    modulesDir = lstatSync(nodePath.join(terraform.absolute, 'modules'));
  } catch {
    return null;
  }
  if (!modulesDir.isDirectory()) return null;
  const relative = `${terraform.relative}/modules`;
  const modules = childTask(terraform, 'modules', relative, displayName(relative));
  for (const dir of [terraform.relative, modules.relative]) {
    const shown = displayName(dir);
    count(shown);
    const path = builder.admit(dir, true);
    if (path === null) return null;
    steps.push({
      kind: 'directory',
      path,
      shown,
      mode: dir === terraform.relative ? mode : modulesDir.mode & 0o7777,
    });
  }
  return modules;
}

/**
 * Read a directory tree into the same shape as an archive. Symlinks are not followed while walking;
 * they are recorded and must resolve inside the directory. `.git` is skipped, and of `.terraform`
 * only `modules/` is read (the installed remote modules and their `modules.json`).
 *
 * The walk records entries in the byte order of their paths (see `Frame.pending`) and uses
 * synchronous filesystem calls: thousands of small files read
 * through Node's thread pool cost a round trip per call (lstat, open, fstat, read, read, close)
 * and left the process idle most of the time, so a directory took twice as long as a tarball of
 * it; each call takes microseconds on a local filesystem, and the first read asks for
 * the whole file. It runs in two passes: `plan` lists the tree and records what to tell the
 * builder while a worker thread reads the files ahead (directory-reads.ts), then `replay` tells
 * the builder, in path order, with every check. Only the CLI reads directories (the service
 * receives archives).
 */
export async function scanDirectory(
  root: string,
  builder: ArchiveBuilder,
  directories?: readonly string[],
  ahead?: ReadAhead,
): Promise<void> {
  // Paths in the walk are relative to the real root, so absolute link targets can be checked.
  const realRoot = await fsStep(root, () => fs.realpath(root));
  const givenRoot = nodePath.resolve(root);
  const { maxFileBytes, maxTotalBytes } = builder.limits;
  const space = new ReadSpace();
  const reads = new DirectoryReads(
    maxFileBytes,
    maxTotalBytes,
    FIRST_READ_MAX,
    (absolute, keeps) => readAhead(absolute, keeps, space, maxFileBytes),
    ahead === undefined ? undefined : () => ahead.idle(),
  );
  try {
    const steps = plan(realRoot, givenRoot, builder, selection(directories), reads);
    replay(steps, builder, reads, space, ahead);
  } finally {
    reads.close();
  }
}

/**
 * Which part of a directory to read (`ReadOptions.directories`): 'all' of a selected directory,
 * only the 'path' to one (its subdirectories on the way, no files), or 'none'. Without a
 * selection, everything. The root's `.tfguard.hcl` is always read.
 */
type Want = 'all' | 'path' | 'none';

function selection(directories: readonly string[] | undefined): (relative: string) => Want {
  if (directories === undefined) return () => 'all';
  const dirs = directories.map((d) => (d === '.' ? '' : d));
  return (relative) => {
    if (dirs.some((d) => d === '' || relative === d || relative.startsWith(`${d}/`))) return 'all';
    if (relative === '' || dirs.some((d) => d.startsWith(`${relative}/`))) return 'path';
    return 'none';
  };
}

type Typed = TypeOf & Pick<Stats, 'isFile' | 'isDirectory' | 'isSymbolicLink'>;

/** One entry of a listing: its name decoded (string) or, in a listing that needs the strict decoder,
 * its raw bytes (decoded when the walk reaches it, so errors come in walk order). */
type Listed = Typed & { name: string | Buffer };

/**
 * The entries of a directory, in byte order of their names, with their types (d_type). Names come
 * as strings (decoding them in the listing costs a fraction of a Buffer per name); a name that is
 * not valid UTF-8 decodes to U+FFFD there, so a listing with U+FFFD in any name is taken again as
 * raw bytes, for the strict decoder to accept (a real U+FFFD) or reject it.
 */
function listDirectory(task: DirectoryTask): Listed[] {
  const path = task.absolute;
  const dirents: Listed[] = fsStepSync(task.shown, () => readdirSync(path, { withFileTypes: true }));
  if (dirents.some((d) => (d.name as string).includes('\uFFFD'))) {
    const raw = fsStepSync(task.shown, () => readdirSync(path, { encoding: 'buffer', withFileTypes: true }));
    raw.sort((a, b) => Buffer.compare(a.name, b.name));
    return raw;
  }
  // Already in order from most file systems (libuv sorts its listing): one pass to confirm.
  return dirents.sort((a, b) => compareUtf8(a.name as string, b.name as string));
}

/** The decoded name of a listed entry (`invalid-path` for a name that is not UTF-8). */
function entryName(entry: Listed, task: DirectoryTask): string {
  if (typeof entry.name === 'string') return entry.name;
  const escaped = hexEscape(entry.name);
  return decodeUtf8Name(entry.name, 'file name', task.depth === 0 ? escaped : `${task.relative}/${escaped}`);
}

/** Slabs that the loaded files' contents are read into (views of them are kept, as the tar reader
 * keeps views of the decompressed stream): one allocation for many small files instead of one
 * each. Smaller than glibc's default mmap threshold (128 KiB), so a slab reuses memory that
 * earlier scans freed: 1 MiB slabs were mapped afresh every time (about 800 page faults a warm
 * read of cloudposse/terraform-aws-components against 300). */
const SLAB_BYTES = 32 * 1024;
/** Files larger than this get a buffer of their own (a slab is never more than a quarter unused). */
const OWN_BUFFER_BYTES = SLAB_BYTES / 4;

class ReadSpace {
  private slab: Buffer = Buffer.alloc(0);
  private used = 0;
  /** Where files that are not loaded are read (to be hashed): one buffer, grown as needed. */
  private scratch: Buffer = Buffer.alloc(0);
  /** Where in its buffer the last `room` starts. */
  at = 0;

  /**
   * A buffer with room for `length` bytes from `at`: the free part of the current slab (or a new
   * one), or for more than a slab's share a buffer of the file's own when it is kept (`keeps`),
   * else one buffer reused for every such file (its bytes are hashed and dropped before the next
   * read).
   */
  room(length: number, keeps: boolean): Buffer {
    if (length > OWN_BUFFER_BYTES) {
      this.at = 0;
      if (keeps) return Buffer.allocUnsafeSlow(length);
      if (this.scratch.length < length) this.scratch = Buffer.allocUnsafeSlow(length);
      return this.scratch;
    }
    if (this.slab.length - this.used < length) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.used = 0;
    }
    this.at = this.used;
    return this.slab;
  }

  /** The first `length` bytes of the last `room` stay in use (a loaded file's content); the next
   * `room` starts after them, 8-byte aligned as Node's own buffer pool is. */
  keep(room: Buffer, length: number): void {
    if (room !== this.slab) return;
    this.used = (this.used + length + 7) & ~7;
  }
}

/**
 * Reads one regular file into the builder: open (O_NOFOLLOW | O_NONBLOCK: a file swapped for a
 * symlink or a FIFO after the directory was listed can neither redirect the read outside the tree
 * nor block it forever), fstat of what was opened (its type checked, its size declared before a
 * byte is read, its mode kept), (usually) one read of the whole file plus one byte (to see its
 * end), close. The content limits are enforced as the bytes arrive (FileSink).
 */
function readFile(
  builder: ArchiveBuilder,
  space: ReadSpace,
  path: string,
  absolute: string,
  shown: string,
): string {
  // An error of the open or the fstat is reported as every other error of the walk.
  let fd = -1;
  try {
    const opened = openRegularFileSync(absolute, shown);
    fd = opened.fd;
    const { size, mode } = opened.stats;
    const sink = builder.beginFile(path, shown, size, mode & 0o7777);
    const keeps = sink.keeps;
    let want = Math.min(size + 1, FIRST_READ_MAX);
    let room = space.room(want, keeps);
    let at = space.at;
    let first = true;
    for (;;) {
      const bytesRead = readSync(fd, room, at, want, null);
      if (bytesRead === 0) break;
      // One view of what was read (none when it fills a buffer of its own).
      sink.write(at === 0 && bytesRead === room.length ? room : room.subarray(at, at + bytesRead));
      if (first && keeps) space.keep(room, bytesRead);
      // A short read of a regular file is its end.
      if (bytesRead < want) break;
      first = false;
      want = READ_CHUNK;
      room = Buffer.allocUnsafe(want);
      at = 0;
    }
    const open = fd;
    fd = -1;
    closeSync(open);
    return sink.finish();
  } catch (cause) {
    if (fd !== -1) {
      try {
        closeSync(fd);
      } catch {
        // The first error is the one to report.
      }
    }
    if (cause instanceof InputError) throw cause;
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new InputError('not-found', `cannot read "${shown}" (${code}): ${(cause as Error).message}`, {
      entry: shown,
      cause,
    });
  }
}

/**
 * Reads one regular file ahead on the walk's thread, as the reader thread does
 * (directory-reads.ts): open (O_NOFOLLOW | O_NONBLOCK), fstat, one read of its size plus one byte,
 * close, SHA-256. Null, for `readFile` to read it with its full checks and messages when the walk
 * records it, for anything else: a failing call, not a regular file, over the per-file limit,
 * grown since the fstat.
 */
function readAhead(
  absolute: string,
  keeps: boolean,
  space: ReadSpace,
  maxFileBytes: number,
): ReadResult | null {
  let fd = -1;
  try {
    fd = openSync(absolute, OPEN_FLAGS);
    const stats = fstatSync(fd);
    const size = stats.size;
    if (!stats.isFile() || size > maxFileBytes || size >= FIRST_READ_MAX) return null;
    const want = size + 1;
    const room = space.room(want, keeps);
    const at = space.at;
    const got = readSync(fd, room, at, want, null);
    const opened = fd;
    fd = -1;
    closeSync(opened);
    if (got === want) return null;
    const view = room.subarray(at, at + got);
    if (keeps) space.keep(room, got);
    return {
      size,
      length: got,
      mode: stats.mode,
      sha256: oneShotHash('sha256', view, 'hex'),
      content: keeps ? view : undefined,
    };
  } catch {
    return null;
  } finally {
    if (fd !== -1) {
      try {
        closeSync(fd);
      } catch {
        // Read again by `readFile`, which reports what fails.
      }
    }
  }
}

/** One directory being walked: its listing and how far the walk has got in it. */
interface Frame {
  task: DirectoryTask;
  here: Want;
  listed: Listed[];
  next: number;
  /**
   * Subdirectories of this listing that are recorded but not yet walked, innermost last, each with
   * its name and a `/`: a subdirectory's entries sort after the siblings that extend its name with
   * a byte below `/` (`a-b`, `a.tf` come between `a` and `a/x`), so it is walked when the listing
   * reaches the first name above `<name>/`. The entries are then recorded in the byte order of
   * their paths, the order `ArchiveBuilder.build` sorts them into (a sort that finds them in
   * order compares each entry once; in the order of the listings alone it compared each about
   * three times).
   */
  pending: { key: string; task: DirectoryTask }[];
}

function openFrame(task: DirectoryTask, want: (relative: string) => Want): Frame {
  return { task, here: want(task.relative), listed: listDirectory(task), next: 0, pending: [] };
}

/** What the walk records, in order, for `replay` to apply to the builder. */
type Step =
  | { kind: 'count'; shown: string }
  | { kind: 'directory'; path: string; shown: string; mode: number }
  | { kind: 'link'; path: string; shown: string; target: string; mode: number; fromRoot: boolean }
  | { kind: 'file'; path: string; shown: string; absolute: string; read: number }
  | { kind: 'error'; error: unknown };

/** Thrown by `plan` past the entry limit: its last step is the entry the builder rejects. */
const ENTRY_LIMIT = Symbol('entry limit');

/**
 * Lists the tree and records, in path order, what the builder is to be told (`Step`); the files
 * are queued in `reads` (read ahead by the reader thread, directory-reads.ts). Stops at its first
 * error (recorded as the last step) and after one entry more than the entry limit allows (the
 * builder rejects it in `replay`), so errors come out of `replay` in the order of a walk that
 * tells the builder everything as it goes.
 */
function plan(
  realRoot: string,
  givenRoot: string,
  builder: ArchiveBuilder,
  want: (relative: string) => Want,
  reads: DirectoryReads,
): Step[] {
  const steps: Step[] = [];
  const maxEntries = builder.limits.maxEntries;
  let counted = 0;
  const count = (shown: string): void => {
    steps.push({ kind: 'count', shown });
    if (++counted > maxEntries) throw ENTRY_LIMIT;
  };
  try {
    planTree(realRoot, givenRoot, builder, want, reads, steps, count);
  } catch (error) {
    if (error !== ENTRY_LIMIT) steps.push({ kind: 'error', error });
  }
  reads.flush();
  return steps;
}

function planTree(
  realRoot: string,
  givenRoot: string,
  builder: ArchiveBuilder,
  want: (relative: string) => Want,
  reads: DirectoryReads,
  steps: Step[],
  count: (shown: string) => void,
): void {
  const file = (path: string, absolute: string, shown: string): void => {
    steps.push({ kind: 'file', path, shown, absolute, read: reads.add(absolute, builder.keep(path)) });
  };
  const rootTask: DirectoryTask = {
    relative: '',
    absolute: realRoot,
    prefix: realRoot.endsWith(nodePath.sep) ? realRoot : `${realRoot}${nodePath.sep}`,
    shown: '.',
    // Its entries' paths are their names: displayed as they are unless a name needs escaping.
    plain: true,
    depth: 0,
    bytes: 0,
  };
  const frames: Frame[] = [openFrame(rootTask, want)];
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as Frame;
    const { task, pending } = frame;
    if (frame.next === frame.listed.length) {
      // The listing is done: its remaining subdirectories, innermost first, then its parent's.
      const sub = pending.pop();
      if (sub === undefined) frames.pop();
      else frames.push(openFrame(sub.task, want));
      continue;
    }
    const entry = frame.listed[frame.next] as Listed;
    const name = entryName(entry, task);
    const last = pending[pending.length - 1];
    if (last !== undefined && compareUtf8(last.key, name) < 0) {
      // This name sorts after a pending subdirectory's entries: walk that subdirectory first.
      pending.pop();
      frames.push(openFrame(last.task, want));
      continue;
    }
    frame.next += 1;
    // The entries' types come with the listing (d_type): no lstat per file. A regular file's size
    // and mode come from the fstat of the opened file; directories and links (few) are lstat'ed
    // for their modes, and so is any entry whose type the filesystem does not report.
    const relative = task.depth === 0 ? name : `${task.relative}/${name}`;
    // displayName of the path, computed from its parts: the path itself in the common case.
    const shown =
      task.plain && relative.length <= MAX_DISPLAY_NAME && displaysAsIs(name)
        ? relative
        : displayName(relative);
    const absolute = task.prefix + name;
    const known = entry.isFile() || entry.isDirectory() || entry.isSymbolicLink();
    const typed: Typed = known ? entry : fsStepSync(shown, () => lstatSync(absolute));
    const selected = typed.isDirectory()
      ? want(relative) !== 'none'
      : frame.here === 'all' || (task.depth === 0 && name === '.tfguard.hcl');
    if (!selected) continue;
    if (SKIPPED_DIRECTORIES.has(name) && (typed.isDirectory() || name === '.git')) {
      if (name === '.terraform' && typed.isDirectory()) {
        const mode = fsStepSync(shown, () => lstatSync(absolute)).mode & 0o7777;
        const modules = planInstalledModules(
          builder,
          childTask(task, name, relative, shown),
          mode,
          steps,
          count,
        );
        if (modules !== null) pending.push({ key: `${name}/`, task: modules });
      }
      continue;
    }
    count(shown);
    const path = builder.admitChild(
      relative,
      name,
      task.bytes + (task.depth === 0 ? 0 : 1) + Buffer.byteLength(name, 'utf8'),
      task.depth + 1,
      typed.isDirectory(),
    );
    if (path === null) continue;
    if (typed.isFile()) {
      file(path, absolute, shown);
      continue;
    }
    const stats = fsStepSync(shown, () => lstatSync(absolute));
    const mode = stats.mode & 0o7777;
    if (stats.isDirectory()) {
      steps.push({ kind: 'directory', path, shown, mode });
      pending.push({ key: `${name}/`, task: childTask(task, name, relative, shown) });
    } else if (stats.isFile()) {
      // The listing said otherwise (it changed in between): read it as the file it now is.
      file(path, absolute, shown);
    } else if (stats.isSymbolicLink()) {
      const rawTarget = fsStepSync(shown, () => readlinkSync(absolute, { encoding: 'buffer' }));
      let target = decodeUtf8Name(rawTarget, 'symlink target', shown);
      let fromRoot = false;
      if (nodePath.isAbsolute(target)) {
        // An absolute link into the tree itself is fine; anything else is outside.
        const inside = relativeInside(target, realRoot, givenRoot);
        if (inside === null) {
          throw new InputError(
            'link-outside',
            `symlink "${shown}" points to "${displayName(target)}", outside the input directory`,
            {
              entry: shown,
            },
          );
        }
        target = inside;
        fromRoot = true;
      }
      steps.push({ kind: 'link', path, shown, target, mode, fromRoot });
    } else {
      throw new InputError(
        'unsupported-entry-type',
        `"${shown}" is a ${describeType(stats)}, which is not allowed`,
        {
          entry: shown,
        },
      );
    }
  }
}

/**
 * Tells the builder what `plan` recorded, in its order: the files with what the reader thread
 * read (its size, mode and hash; the bytes of kept files), or read here, synchronously, when it
 * did not (`readFile`). Waits only where the reader thread is still reading a batch.
 */
function replay(
  steps: readonly Step[],
  builder: ArchiveBuilder,
  reads: DirectoryReads,
  space: ReadSpace,
  ahead: ReadAhead | undefined,
): void {
  for (const step of steps) {
    switch (step.kind) {
      case 'count':
        builder.countEntry(step.shown);
        break;
      case 'directory':
        builder.addDirectory(step.path, step.shown, step.mode);
        break;
      case 'link':
        builder.addLink(step.path, step.shown, 'symlink', step.target, {
          mode: step.mode,
          fromRoot: step.fromRoot,
        });
        break;
      case 'file': {
        const read = reads.take(step.read);
        let sha256: string;
        if (read === null) {
          sha256 = readFile(builder, space, step.path, step.absolute, step.shown);
        } else {
          const sink = builder.beginFile(step.path, step.shown, read.size, read.mode & 0o7777);
          sha256 = sink.finishRead(read.length, read.sha256, sink.keeps ? read.content : undefined);
        }
        if (ahead !== undefined) {
          const content = builder.getContent(step.path);
          if (content !== undefined) ahead.loaded(step.path, content, sha256);
        }
        break;
      }
      case 'error':
        throw step.error;
    }
  }
}

/** Read one file of the tree again (the target of a loaded symlink that was not loaded itself). */
export async function readTreeFile(root: string, path: string, maxBytes: number): Promise<Buffer> {
  const realRoot = await fsStep(path, () => fs.realpath(root));
  const chunks: Buffer[] = [];
  let length = 0;
  await fsStep(path, () =>
    readRegularFile(
      nodePath.join(realRoot, ...path.split('/')),
      (chunk) => {
        length += chunk.length;
        if (length > maxBytes) {
          throw new InputError('file-too-large', `"${path}" grew beyond the per-file limit while reading`, {
            entry: path,
          });
        }
        chunks.push(Buffer.from(chunk));
      },
      path,
    ),
  );
  return Buffer.concat(chunks, length);
}
