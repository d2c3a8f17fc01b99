/** What the archive layer reads: entries and the loaded archive. */

export type EntryType = 'file' | 'directory' | 'symlink' | 'hardlink';

export interface ArchiveEntry {
  /** Normalised archive-relative path, `/` separators, no leading `./`, no trailing `/`. */
  path: string;
  type: EntryType;
  /** Uncompressed size in bytes (0 for directories and links). */
  size: number;
  /** Lowercase hex SHA-256 of the content, for regular files. */
  sha256?: string;
  /** Unix permission bits when the container records them. */
  mode?: number;
  /** For links: the target, resolved to an archive-relative path. */
  linkTarget?: string;
}

export interface LoadedArchive {
  /** Display name: the file name of the archive or the directory given. */
  name: string;
  /** Lowercase hex SHA-256 of the archive bytes (for a directory: of a canonical listing). */
  sha256: string;
  format: 'directory' | 'tar' | 'tar.gz' | 'zip';
  /** Every entry, sorted by path (byte order). */
  entries: ArchiveEntry[];
  /** Contents of the files selected for loading (see `shouldLoad`), keyed by entry path. */
  files: Map<string, Buffer>;
}

/**
 * What a caller does with a directory's files while the rest is still being read: the reader
 * thread (directory-reads.ts) reads large trees ahead of the walk, and where the walk waits for it
 * there is time for other work. `loaded` is told of every kept file as it is recorded, in path
 * order (its bytes are final); `idle` is called while the walk waits, does one small piece of
 * work and says whether there was any. Neither may throw. What they do never changes what is read.
 */
export interface ReadAhead {
  loaded(path: string, content: Buffer, sha256: string): void;
  idle(): boolean;
}
