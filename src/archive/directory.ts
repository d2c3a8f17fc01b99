import { createHash } from 'node:crypto';
import * as fsSync from 'node:fs';
import { constants, promises as fs, type Stats } from 'node:fs';
import * as nodePath from 'node:path';
import { InputError } from '../errors';
import type { LoadedArchive } from './types';
import { ArchiveBuilder } from './builder';
import { decodeUtf8Name, displayName, hexEscape } from './paths';

const READ_CHUNK = 64 * 1024;

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

/**
 * Opens one regular file for reading: open, then fstat of what was opened (its size is declared
 * before a byte is read, its mode kept). O_NOFOLLOW + O_NONBLOCK: a file swapped for a symlink or
 * a FIFO after the directory was listed can neither redirect the read outside the tree nor block
 * it forever, and the fstat of the opened file, not of a name, says what it is.
 */
function openRegularFileSync(absolute: string, shown: string): { fd: number; stats: Stats } {
  let fd: number;
  try {
    fd = fsSync.openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (cause) {
    throw new InputError('not-found', `cannot open "${shown}": ${(cause as Error).message}`, {
      entry: shown,
      cause,
    });
  }
  try {
    const stats = fsSync.fstatSync(fd);
    if (!stats.isFile()) {
      throw new InputError(
        'unsupported-entry-type',
        `"${shown}" changed into a ${describeType(stats)} while reading`,
        { entry: shown },
      );
    }
    return { fd, stats };
  } catch (cause) {
    fsSync.closeSync(fd);
    throw cause;
  }
}

/**
 * Reads an opened regular file to its end and closes it: (usually) one read. Synchronous calls:
 * thousands of small files read through the thread pool cost a round trip per call and left the
 * process idle most of the time (issue 22: a directory took twice the time of a tarball of it);
 * these calls take microseconds each on a local filesystem. Only the CLI reads directories.
 */
function readOpenFileSync(fd: number, size: number, onChunk: (chunk: Buffer) => void): void {
  try {
    let want = Math.min(size + 1, FIRST_READ_MAX);
    for (;;) {
      const buffer = Buffer.allocUnsafe(want);
      const bytesRead = fsSync.readSync(fd, buffer, 0, want, null);
      if (bytesRead === 0) break;
      onChunk(buffer.subarray(0, bytesRead));
      // A short read of a regular file is its end.
      if (bytesRead < want) break;
      want = READ_CHUNK;
    }
  } finally {
    fsSync.closeSync(fd);
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

/** GNU coreutils `sha256sum` line escaping: a name containing `\`, LF or CR is escaped and the line
 * is prefixed with `\`, so every listing line is unambiguous. */
function listingLine(hash: string, path: string): string {
  if (!/[\\\n\r]/.test(path)) return `${hash}  ${path}\n`;
  const escaped = path.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
  return `\\${hash}  ${escaped}\n`;
}

/** The identity of a directory tree: SHA-256 of `<sha256>  <path>` lines for regular files (and
 * `symlink:<target>  <path>` for links), in entry order (byte-sorted paths). */
export function directoryListingSha256(archive: Pick<LoadedArchive, 'entries'>): string {
  const hash = createHash('sha256');
  for (const entry of archive.entries) {
    if (entry.type === 'file') hash.update(listingLine(entry.sha256 ?? '', entry.path));
    else if (entry.type === 'symlink' || entry.type === 'hardlink') {
      hash.update(listingLine(`${entry.type}:${entry.linkTarget ?? ''}`, entry.path));
    }
  }
  return hash.digest('hex');
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

/**
 * Of a `.terraform` directory, only `modules/`: `terraform init`'s record of the modules it installed
 * (`modules.json`) and the installed copies themselves, read exactly as an archive of the same
 * directory carries them (a directory after `terraform get` resolves its remote modules
 * like a tarball of it). The rest (`providers/`: provider binaries of hundreds of MiB, `terraform.tfstate`
 * of a backend, `environment`) is not configuration and is skipped. Returns the `modules` directory's
 * segments to walk, or null.
 */
function addInstalledModules(
  builder: ArchiveBuilder,
  absolute: string,
  relative: string,
  segments: string[],
  mode: number,
): string[] | null {
  let modulesDir: Stats;
  try {
    modulesDir = fsSync.lstatSync(nodePath.join(absolute, 'modules'));
  } catch {
    return null;
  }
  if (!modulesDir.isDirectory()) return null;
  for (const dir of [relative, `${relative}/modules`]) {
    const shown = displayName(dir);
    builder.countEntry(shown);
    const path = builder.admit(dir, true);
    if (path === null) return null;
    builder.addDirectory(path, shown, dir === relative ? mode : modulesDir.mode & 0o7777);
  }
  return [...segments, 'modules'];
}

/**
 * Read a directory tree into the same shape as an archive. Symlinks are not followed while walking;
 * they are recorded and must resolve inside the directory. `.git` is skipped, and of `.terraform`
 * only `modules/` is read (the installed remote modules and their `modules.json`).
 *
 * The walk is in name order and uses synchronous filesystem calls: thousands of small files read
 * through Node's thread pool cost a round trip per call (lstat, open, fstat, read, read, close)
 * and left the process idle most of the time, so a directory took twice as long as a tarball of
 * it; each call takes microseconds on a local filesystem, and the first read asks for
 * the whole file. Only the CLI reads directories (the service receives archives).
 */
export async function scanDirectory(
  root: string,
  builder: ArchiveBuilder,
  directories?: readonly string[],
): Promise<void> {
  // Paths in the walk are relative to the real root, so absolute link targets can be checked.
  const realRoot = await fsStep(root, () => fs.realpath(root));
  const givenRoot = nodePath.resolve(root);
  walk(realRoot, givenRoot, builder, selection(directories));
  return Promise.resolve();
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

function walk(
  realRoot: string,
  givenRoot: string,
  builder: ArchiveBuilder,
  want: (relative: string) => Want,
): void {
  const stack: string[][] = [[]];
  while (stack.length > 0) {
    const segments = stack.pop() as string[];
    const here = want(segments.join('/'));
    const absoluteDir = nodePath.join(realRoot, ...segments);
    const dirShown = segments.length === 0 ? '.' : displayName(segments.join('/'));
    // The entries' types come with the listing (d_type): no lstat per file. A regular file's size
    // and mode come from the fstat of the opened file; directories and links (few) are lstat'ed
    // for their modes, and so is any entry whose type the filesystem does not report.
    const dirents = fsStepSync(dirShown, () =>
      fsSync.readdirSync(absoluteDir, { encoding: 'buffer', withFileTypes: true }),
    );
    dirents.sort((a, b) => Buffer.compare(a.name, b.name));
    const subdirectories: string[][] = [];
    for (const dirent of dirents) {
      const raw = dirent.name;
      const relativeRaw = segments.length === 0 ? hexEscape(raw) : `${segments.join('/')}/${hexEscape(raw)}`;
      const name = decodeUtf8Name(raw, 'file name', relativeRaw);
      const childSegments = [...segments, name];
      const relative = childSegments.join('/');
      const shown = displayName(relative);
      const absolute = nodePath.join(absoluteDir, name);
      const known = dirent.isFile() || dirent.isDirectory() || dirent.isSymbolicLink();
      const typed: TypeOf & Pick<Stats, 'isFile' | 'isDirectory' | 'isSymbolicLink'> = known
        ? dirent
        : fsStepSync(shown, () => fsSync.lstatSync(absolute));
      const selected = typed.isDirectory()
        ? want(relative) !== 'none'
        : here === 'all' || (segments.length === 0 && name === '.tfguard.hcl');
      if (!selected) continue;
      if (SKIPPED_DIRECTORIES.has(name) && (typed.isDirectory() || name === '.git')) {
        if (name === '.terraform' && typed.isDirectory()) {
          const mode = fsStepSync(shown, () => fsSync.lstatSync(absolute)).mode & 0o7777;
          const modules = addInstalledModules(builder, absolute, relative, childSegments, mode);
          if (modules !== null) subdirectories.push(modules);
        }
        continue;
      }
      builder.countEntry(shown);
      const path = builder.admit(relative, typed.isDirectory());
      if (path === null) continue;
      if (typed.isFile()) {
        const { fd, stats } = fsStepSync(shown, () => openRegularFileSync(absolute, shown));
        let sink;
        try {
          sink = builder.beginFile(path, shown, stats.size, stats.mode & 0o7777);
        } catch (cause) {
          fsSync.closeSync(fd);
          throw cause;
        }
        const into = sink;
        fsStepSync(shown, () => readOpenFileSync(fd, stats.size, (chunk) => into.write(chunk)));
        sink.finish();
        continue;
      }
      const stats = fsStepSync(shown, () => fsSync.lstatSync(absolute));
      const mode = stats.mode & 0o7777;
      if (stats.isDirectory()) {
        builder.addDirectory(path, shown, mode);
        subdirectories.push(childSegments);
      } else if (stats.isFile()) {
        // The listing said otherwise (it changed in between): read it as the file it now is.
        const sink = builder.beginFile(path, shown, stats.size, mode);
        fsStepSync(shown, () => readRegularFileSync(absolute, (chunk) => sink.write(chunk), shown));
        sink.finish();
      } else if (stats.isSymbolicLink()) {
        const rawTarget = fsStepSync(shown, () => fsSync.readlinkSync(absolute, { encoding: 'buffer' }));
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
        builder.addLink(path, shown, 'symlink', target, { mode, fromRoot });
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
    // Depth-first, in name order (the stack pops the last pushed first).
    for (let i = subdirectories.length - 1; i >= 0; i--) stack.push(subdirectories[i] as string[]);
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
