/**
 * Safe, in-memory reader for uploaded configurations: a directory, a `.tar.gz`/`.tgz`, a `.tar` or
 * a `.zip`. Nothing is ever extracted to disk. The container format is detected from the content;
 * every entry is validated (paths, types, links, sizes, ratio) and any violation rejects the whole
 * input with an `InputError` naming the entry.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { InputError } from '../errors';
import type { ArchiveLimits, InputKind } from '../model';
import type { LoadedArchive, ReadAhead } from './types';
import { ArchiveBuilder } from './builder';
import { detectFormat, type ArchiveFormat } from './detect';
import { directoryListingSha256, readTreeFile, scanDirectory } from './directory';
import { maxContainerBytes, resolveLimits } from './limits';
import { defaultShouldLoad } from './paths';
import { scanTar } from './tar';
import { readTarFast } from './tar-fast';
import { scanZip } from './zip';

export { DEFAULT_LIMITS, RATIO_GRACE_BYTES } from './limits';
export { basename, compareUtf8, defaultShouldLoad, dirname, displayName } from './paths';
export { detectFormat, type ArchiveFormat } from './detect';

export interface ReadOptions {
  /** Overrides for individual limits; the rest come from `DEFAULT_LIMITS`. */
  limits?: Partial<ArchiveLimits>;
  /** Which regular files to keep in memory (`LoadedArchive.files`); default `defaultShouldLoad`. */
  shouldLoad?: (path: string) => boolean;
  /** Read tar archives with the streaming reader only, never the in-memory fast path
   * (tar-fast.ts). For the differential tests and the benchmark; the results are the same. */
  streamingTar?: boolean;
  /** Directory input only: read just these directories (`/`-separated, relative to the input;
   * `.` is all of it) and the input's own `.tfguard.hcl`; default everything. For scanning one
   * directory of a repository with what its module calls need (src/scan/subtree.ts). */
  directories?: readonly string[];
  /** Directory input only: work for the moments the read waits for its reader thread (see
   * `ReadAhead`). */
  ahead?: ReadAhead;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function scanArchive(
  bytes: Buffer,
  format: ArchiveFormat,
  limits: ArchiveLimits,
  keep: (path: string) => boolean,
  streamingTar: boolean,
): Promise<ArchiveBuilder> {
  const builder = new ArchiveBuilder(limits, keep, { archive: true });
  if (format === 'zip') {
    await scanZip(bytes, builder);
    return builder;
  }
  const gzip = format === 'tar.gz';
  if (!streamingTar && readTarFast(bytes, gzip, builder)) return builder;
  // Outside the fast path's subset (or rejected): the streaming reader decides, from scratch.
  const streamed = new ArchiveBuilder(limits, keep, { archive: true });
  await scanTar(bytes, gzip, streamed);
  return streamed;
}

/**
 * Read an archive held in memory. `name` is used as the display name (`LoadedArchive.name`) and in
 * messages; the format is detected from the bytes, never from the name.
 */
export async function readArchiveBytes(
  name: string,
  bytes: Buffer,
  options: ReadOptions = {},
): Promise<LoadedArchive> {
  const limits = resolveLimits(options.limits);
  const shouldLoad = options.shouldLoad ?? defaultShouldLoad;
  if (bytes.length > maxContainerBytes(limits)) {
    throw new InputError(
      'total-too-large',
      `"${name}" is ${bytes.length} bytes, more than any archive within the limits can be (${maxContainerBytes(limits)})`,
    );
  }
  const format = detectFormat(bytes, name);
  const streamingTar = options.streamingTar === true;
  const builder = await scanArchive(bytes, format, limits, shouldLoad, streamingTar);
  const plan = builder.resolveLinks();
  const missing = new Set<string>();
  for (const target of plan.values()) if (builder.getContent(target) === undefined) missing.add(target);
  // A loaded symlink whose target was not itself selected: read just those targets in a second
  // pass (the archive already passed every check, so this pass is bounded the same way).
  const extra =
    missing.size > 0
      ? await scanArchive(bytes, format, limits, (path) => missing.has(path), streamingTar)
      : undefined;
  for (const [link, target] of plan) {
    const content = builder.getContent(target) ?? extra?.getContent(target);
    if (content !== undefined) builder.setLinkContent(link, content);
  }
  return builder.build(name, sha256Hex(bytes), format);
}

function notFound(path: string, cause: unknown): InputError {
  return new InputError('not-found', `"${path}" does not exist or cannot be read`, { entry: path, cause });
}

/** Read a directory tree (symlinks are recorded, not followed; `.git/` skipped, of `.terraform/` only
 * `modules/`: the installed remote modules, as an archive of the directory carries them). */
export async function readDirectory(dir: string, options: ReadOptions = {}): Promise<LoadedArchive> {
  resolveLimits(options.limits); // invalid limits are refused before the path is looked at
  let stats;
  try {
    stats = await fs.stat(dir);
  } catch (cause) {
    throw notFound(dir, cause);
  }
  if (!stats.isDirectory()) {
    throw new InputError('unsupported-format', `"${dir}" is not a directory`, { entry: dir });
  }
  return readTree(dir, options);
}

/** `readDirectory` of a path known to be a directory (`readInput` stat'ed it). */
async function readTree(dir: string, options: ReadOptions): Promise<LoadedArchive> {
  const limits = resolveLimits(options.limits);
  const shouldLoad = options.shouldLoad ?? defaultShouldLoad;
  const builder = new ArchiveBuilder(limits, shouldLoad, { archive: false });
  await scanDirectory(dir, builder, options.directories, options.ahead);
  const plan = builder.resolveLinks();
  for (const [link, target] of plan) {
    let content = builder.getContent(target);
    if (content === undefined) {
      content = await readTreeFile(dir, target, limits.maxFileBytes);
      if (sha256Hex(content) !== builder.getEntry(target)?.sha256) {
        throw new InputError('corrupt-archive', `"${target}" changed while the directory was being read`, {
          entry: target,
        });
      }
    }
    builder.setLinkContent(link, content);
  }
  const name = nodePath.basename(nodePath.resolve(dir));
  return builder.build(name, (entries) => directoryListingSha256({ entries }), 'directory');
}

/** Whether `archive` was read from a directory or an archive file, as messages name it. */
export function inputKind(archive: Pick<LoadedArchive, 'format'>): InputKind {
  return archive.format === 'directory' ? 'directory' : 'archive';
}

/** Read a directory or an archive file from disk. */
export async function readInput(pathOnDisk: string, options: ReadOptions = {}): Promise<LoadedArchive> {
  let stats;
  try {
    stats = await fs.stat(pathOnDisk);
  } catch (cause) {
    throw notFound(pathOnDisk, cause);
  }
  if (stats.isDirectory()) return readTree(pathOnDisk, options);
  const name = nodePath.basename(pathOnDisk);
  if (!stats.isFile()) {
    throw new InputError('unsupported-format', `"${pathOnDisk}" is neither a regular file nor a directory`, {
      entry: pathOnDisk,
    });
  }
  const limits = resolveLimits(options.limits);
  if (stats.size > maxContainerBytes(limits)) {
    throw new InputError(
      'total-too-large',
      `"${name}" is ${stats.size} bytes, more than any archive within the limits can be (${maxContainerBytes(limits)})`,
    );
  }
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(pathOnDisk);
  } catch (cause) {
    throw notFound(pathOnDisk, cause);
  }
  return readArchiveBytes(name, bytes, options);
}
export type * from './types';
