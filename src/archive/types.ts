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
