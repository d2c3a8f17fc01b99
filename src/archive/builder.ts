import { createHash, hash as oneShotHash, type Hash } from 'node:crypto';
import { InputError } from '../errors';
import type { ArchiveEntry, EntryType, LoadedArchive } from './types';
import type { ArchiveLimits } from '../model';
import {
  collisionKey,
  compareUtf8,
  dirname,
  displayName,
  isMacOsDebris,
  normaliseEntryPath,
  type NormaliseOptions,
} from './paths';

/** Linux's MAXSYMLINKS: how many links one path resolution may traverse. */
export const MAX_LINK_HOPS = 40;

const MiB = 1024 * 1024;

function formatBytes(n: number): string {
  return n >= MiB ? `${(n / MiB).toFixed(1)} MiB` : `${n} bytes`;
}

interface LinkRecord {
  path: string;
  shown: string;
  kind: 'symlink' | 'hardlink';
  /** Target with `/` separators, relative to `dirname(path)` (symlinks) or the root (`fromRoot`). */
  target: string;
  fromRoot: boolean;
}

/** Receives the content of one regular file while it streams: hashes it, enforces the per-file and
 * total caps on the bytes actually seen, and keeps the bytes only when the file is to be loaded. */
export class FileSink {
  /** The incremental hash, started only when a second chunk arrives: most files come in one chunk
   * (always with the in-memory tar reader), and a one-shot hash is several times cheaper for small
   * files. */
  private hash: Hash | null = null;
  private first: Buffer | null = null;
  private readonly chunks: Buffer[] | null;
  private bytes = 0;
  private done = false;

  constructor(
    private readonly builder: ArchiveBuilder,
    readonly path: string,
    readonly shown: string,
    keep: boolean,
    private readonly mode: number | undefined,
  ) {
    this.chunks = keep ? [] : null;
  }

  get size(): number {
    return this.bytes;
  }

  /** Whether the content is kept (the file is to be loaded): the chunks written stay referenced. */
  get keeps(): boolean {
    return this.chunks !== null;
  }

  /** The per-file and total caps on `length` more bytes seen. */
  private count(length: number): void {
    this.bytes += length;
    const limits = this.builder.limits;
    if (this.bytes > limits.maxFileBytes) {
      throw new InputError(
        'file-too-large',
        `"${this.shown}" is larger than the per-file limit of ${formatBytes(limits.maxFileBytes)} (read ${formatBytes(this.bytes)} so far)`,
        { entry: this.shown },
      );
    }
    this.builder.countContentBytes(length, this.shown);
  }

  write(chunk: Buffer): void {
    this.count(chunk.length);
    if (this.hash === null && this.first === null) {
      this.first = chunk;
    } else {
      if (this.hash === null) {
        this.hash = createHash('sha256');
        if (this.first !== null) this.hash.update(this.first);
      }
      this.hash.update(chunk);
    }
    this.chunks?.push(chunk);
  }

  /** Record the finished file; returns its SHA-256. */
  finish(): string {
    if (this.done) throw new Error(`FileSink for ${this.path} finished twice`);
    const sha256 =
      this.hash !== null
        ? this.hash.digest('hex')
        : oneShotHash('sha256', this.first ?? Buffer.alloc(0), 'hex');
    return this.commit(sha256);
  }

  /**
   * The whole file at once, read and hashed elsewhere (the directory reader's thread,
   * directory-reads.ts): `length` bytes with SHA-256 `sha256`, `content` their bytes when the
   * file is kept. The caps of `write` apply to `length`; then the file is recorded as `finish`
   * records it.
   */
  finishRead(length: number, sha256: string, content: Buffer | undefined): string {
    if (this.done || this.bytes !== 0) throw new Error(`FileSink for ${this.path} already written`);
    if (this.chunks !== null && content?.length !== length) {
      throw new Error(`FileSink for ${this.path}: a kept file needs its ${length} bytes`);
    }
    this.count(length);
    if (this.chunks !== null && length > 0) this.chunks.push(content as Buffer);
    return this.commit(sha256);
  }

  private commit(sha256: string): string {
    this.done = true;
    // One chunk is kept as it is (a view into the reader's buffer; nothing writes to it).
    const content =
      this.chunks === null
        ? undefined
        : this.chunks.length === 1
          ? (this.chunks[0] as Buffer)
          : Buffer.concat(this.chunks, this.bytes);
    this.builder.commitFile(this.path, this.bytes, sha256, this.mode, content);
    return sha256;
  }
}

/**
 * Format-independent part of reading an input: entry accounting and limits, duplicate detection,
 * link validation and resolution, and assembling the `LoadedArchive`. Every reader (tar, zip,
 * directory) feeds entries into one builder.
 */
export class ArchiveBuilder {
  private rawEntries = 0;
  private declaredBytes = 0;
  private contentBytes = 0;
  private readonly entries = new Map<string, ArchiveEntry>();
  private readonly shownNames = new Map<string, string>();
  private readonly files = new Map<string, Buffer>();
  private readonly links = new Map<string, LinkRecord>();
  /** Archives only: `collisionKey` of every path and ancestor seen → the path that claimed it. */
  private readonly collisionKeys = new Map<string, string>();

  constructor(
    readonly limits: ArchiveLimits,
    readonly keep: (path: string) => boolean,
    private readonly normaliseOptions: NormaliseOptions,
  ) {}

  /** Count one raw container entry (before any filtering); enforces `maxEntries`. */
  countEntry(shown: string | undefined): void {
    this.rawEntries += 1;
    if (this.rawEntries > this.limits.maxEntries) {
      throw new InputError(
        'too-many-entries',
        `more than ${this.limits.maxEntries} entries${shown === undefined ? '' : ` (at "${shown}")`}`,
        { entry: shown },
      );
    }
  }

  /** Validate and normalise a raw name. Returns null for entries to ignore silently: the root
   * directory itself (`./`) and macOS debris (`._*`, `__MACOSX/`). Anything but a directory
   * naming the root (`.`, an empty name) is invalid. */
  admit(name: string, isDirectory: boolean): string | null {
    const path = normaliseEntryPath(name, this.limits, this.normaliseOptions);
    if (path === null) {
      if (isDirectory) return null;
      const shown = displayName(name);
      throw new InputError('invalid-path', `a non-directory entry names the archive root: "${shown}"`, {
        entry: shown,
      });
    }
    if (isMacOsDebris(path)) return null;
    return path;
  }

  /**
   * `admit` for `path`, an admitted directory's path (or none) and `name`, one name as a directory
   * listing gives them (no `/`, no NUL, never `.` or `..`): `path` is already normal, so only the
   * length (`bytes`, its UTF-8 length) and depth (`depth` segments) limits and macOS debris (`._*`,
   * a top-level `__MACOSX`: an admitted directory is never inside it) are left to check. A path
   * over a limit goes through `admit`, which rejects it as it always has.
   */
  admitChild(path: string, name: string, bytes: number, depth: number, isDirectory: boolean): string | null {
    if (bytes > this.limits.maxPathLength || depth > this.limits.maxPathDepth) {
      return this.admit(path, isDirectory);
    }
    return name.startsWith('._') || (depth === 1 && name === '__MACOSX') ? null : path;
  }

  private claim(path: string, shown: string, type: EntryType): boolean {
    const existing = this.entries.get(path);
    if (existing !== undefined) {
      // The same directory listed twice is harmless (tar -r, overlapping inputs); anything else
      // would let the later entry shadow the earlier one.
      if (existing.type === 'directory' && type === 'directory') return false;
      const first = this.shownNames.get(path) ?? path;
      throw new InputError(
        'duplicate-entry',
        `duplicate entry "${path}": "${shown}" (${type}) repeats the earlier "${first}" (${existing.type}); a later entry may not shadow an earlier one`,
        { entry: shown },
      );
    }
    if (this.normaliseOptions.archive) this.claimCollisionKeys(path, shown);
    return true;
  }

  /**
   * Reject two paths that are one file on a case-insensitive or normalisation-insensitive file
   * system (`main.tf` / `MAIN.tf`, NFC / NFD `café`, `straße` / `strasse`), including through their
   * directories (`a/x.tf` / `A/y.tf`): extracted on macOS or Windows, one would replace or merge
   * with the other, so what Terraform reads there is not what was scanned (node-tar
   * CVE-2021-37712, CVE-2026-23950). Directory input is what it is on this machine: not checked.
   */
  private claimCollisionKeys(path: string, shown: string): void {
    for (let prefix = path; prefix !== ''; prefix = dirname(prefix)) {
      const key = collisionKey(prefix);
      const owner = this.collisionKeys.get(key);
      if (owner === undefined) {
        this.collisionKeys.set(key, prefix);
        continue;
      }
      if (owner === prefix) return; // this prefix (and so every ancestor) is already claimed
      // Canonically equivalent names look identical: show their code points as well.
      const spelled =
        prefix.normalize('NFC') === owner.normalize('NFC')
          ? ` (${escapeNonAscii(prefix)} and ${escapeNonAscii(owner)})`
          : '';
      throw new InputError(
        'duplicate-entry',
        `"${shown}" collides with the earlier "${displayName(owner)}": "${displayName(prefix)}" and "${displayName(owner)}"${spelled} differ only in letter case or Unicode normalisation, so on a case-insensitive file system (macOS, Windows) one would replace the other`,
        { entry: shown },
      );
    }
  }

  private record(entry: ArchiveEntry, shown: string): void {
    this.entries.set(entry.path, entry);
    this.shownNames.set(entry.path, shown);
  }

  addDirectory(path: string, shown: string, mode?: number): void {
    if (!this.claim(path, shown, 'directory')) return;
    const entry: ArchiveEntry = { path, type: 'directory', size: 0 };
    if (mode !== undefined) entry.mode = mode;
    this.record(entry, shown);
  }

  /**
   * Record a symlink or hardlink. `target` is the raw target; symlink targets are relative to the
   * link's directory, hardlink targets (and `fromRoot` symlinks) to the archive root.
   */
  addLink(
    path: string,
    shown: string,
    kind: 'symlink' | 'hardlink',
    target: string,
    options: { mode?: number; fromRoot?: boolean } = {},
  ): void {
    this.claim(path, shown, kind);
    const fromRoot = kind === 'hardlink' || options.fromRoot === true;
    const shownTarget = displayName(target);
    if (target.includes('\0')) {
      throw new InputError('invalid-path', `link "${shown}" has a target containing a NUL byte`, {
        entry: shown,
      });
    }
    if (target === '') {
      throw new InputError('invalid-path', `link "${shown}" has an empty target`, { entry: shown });
    }
    let work = target;
    if (this.normaliseOptions.archive) {
      if (/^[/\\]/.test(work) || /^[A-Za-z]:/.test(work)) {
        throw new InputError(
          'link-outside',
          `link "${shown}" points to the absolute path "${shownTarget}", outside the archive`,
          { entry: shown },
        );
      }
      work = work.replace(/\\/g, '/');
    } else if (work.startsWith('/')) {
      throw new InputError('link-outside', `link "${shown}" points to "${shownTarget}", outside the input`, {
        entry: shown,
      });
    }
    // Lexical resolution gives the recorded target; `resolveLinks` later re-checks it following
    // intermediate symlinks, as the operating system would on extraction.
    const stack = fromRoot ? [] : splitPath(dirname(path));
    for (const segment of work.split('/')) {
      if (segment === '' || segment === '.') continue;
      if (segment === '..') {
        if (stack.length === 0) {
          throw new InputError(
            'link-outside',
            `link "${shown}" -> "${shownTarget}" resolves outside the ${this.normaliseOptions.archive ? 'archive' : 'input directory'}`,
            { entry: shown },
          );
        }
        stack.pop();
        continue;
      }
      stack.push(segment);
    }
    const linkTarget = stack.length === 0 ? '.' : stack.join('/');
    if (kind === 'hardlink') this.checkHardlinkTarget(shown, shownTarget, linkTarget);
    const entry: ArchiveEntry = {
      path,
      type: kind,
      size: 0,
      linkTarget,
    };
    if (options.mode !== undefined) entry.mode = options.mode;
    this.record(entry, shown);
    this.links.set(path, { path, shown, kind, target: work, fromRoot });
  }

  /**
   * A hardlink is harmless only when it names an entry the archive itself created earlier: a tar
   * extractor links to whatever exists at that path, so a target the archive does not provide (or
   * provides only later) links to a file that was already on the disk, outside the archive's
   * contents (node-tar CVE-2026-24842, CVE-2026-26960). A hardlink to a directory is never valid.
   */
  private checkHardlinkTarget(shown: string, shownTarget: string, target: string): void {
    const existing = this.entries.get(target);
    if (existing === undefined) {
      throw new InputError(
        'link-outside',
        `hardlink "${shown}" -> "${shownTarget}" names no earlier entry of the archive: extracted, it would link to a file that is not part of the archive`,
        { entry: shown },
      );
    }
    if (existing.type === 'directory') {
      throw new InputError('invalid-path', `hardlink "${shown}" -> "${shownTarget}" names a directory`, {
        entry: shown,
      });
    }
  }

  /** Start a regular file. `declaredSize` (when the container states one) is checked before any
   * content is read; the sink re-checks the bytes actually delivered. */
  beginFile(path: string, shown: string, declaredSize: number | undefined, mode?: number): FileSink {
    this.claim(path, shown, 'file');
    if (declaredSize !== undefined) {
      if (declaredSize > this.limits.maxFileBytes) {
        throw new InputError(
          'file-too-large',
          `"${shown}" declares ${formatBytes(declaredSize)}, more than the per-file limit of ${formatBytes(this.limits.maxFileBytes)}`,
          { entry: shown },
        );
      }
      this.declaredBytes += declaredSize;
      if (this.declaredBytes > this.limits.maxTotalBytes) {
        throw new InputError(
          'total-too-large',
          `total uncompressed size exceeds the limit of ${formatBytes(this.limits.maxTotalBytes)} (at "${shown}")`,
          { entry: shown },
        );
      }
    }
    // Reserve the path now so a duplicate later in the stream is detected even before this
    // file's content has been consumed.
    this.record({ path, type: 'file', size: 0 }, shown);
    return new FileSink(this, path, shown, this.keep(path), mode);
  }

  /** @internal called by FileSink */
  countContentBytes(n: number, shown: string): void {
    this.contentBytes += n;
    if (this.contentBytes > this.limits.maxTotalBytes) {
      throw new InputError(
        'total-too-large',
        `total uncompressed size exceeds the limit of ${formatBytes(this.limits.maxTotalBytes)} (at "${shown}")`,
        { entry: shown },
      );
    }
  }

  /** @internal called by FileSink */
  commitFile(
    path: string,
    size: number,
    sha256: string,
    mode: number | undefined,
    content: Buffer | undefined,
  ): void {
    const entry: ArchiveEntry = { path, type: 'file', size, sha256 };
    if (mode !== undefined) entry.mode = mode;
    this.entries.set(path, entry);
    if (content !== undefined) this.files.set(path, content);
  }

  get entryCount(): number {
    return this.entries.size;
  }

  getEntry(path: string): ArchiveEntry | undefined {
    return this.entries.get(path);
  }

  getContent(path: string): Buffer | undefined {
    return this.files.get(path);
  }

  /**
   * Validate the finished tree: no entry below a file or link, every link resolves inside (following
   * intermediate symlinks, at most MAX_LINK_HOPS). Returns, for each link whose own path is to be
   * loaded and which ends at a regular file, that file's path (link path → target file path).
   */
  resolveLinks(): Map<string, string> {
    // A directory walk records an entry only inside a directory it recorded (directory.ts): the
    // check is for archives, whose entries name their paths freely.
    for (const path of this.normaliseOptions.archive ? this.entries.keys() : []) {
      let parent = dirname(path);
      while (parent !== '') {
        const above = this.entries.get(parent);
        if (above !== undefined && above.type !== 'directory') {
          const shown = this.shownNames.get(path) ?? path;
          throw new InputError(
            'invalid-path',
            `"${shown}" is inside "${this.shownNames.get(parent) ?? parent}", which is a ${above.type}, not a directory`,
            { entry: shown },
          );
        }
        parent = dirname(parent);
      }
    }
    const plan = new Map<string, string>();
    for (const link of this.links.values()) {
      const hops = { count: 0 };
      let finalPath = this.follow(link, hops);
      if (!this.keep(link.path)) continue;
      // A hardlink at the end of the chain stands for the file it links to.
      for (;;) {
        const finalEntry = this.entries.get(finalPath);
        if (finalEntry?.type === 'file') {
          plan.set(link.path, finalPath);
          break;
        }
        const next = this.links.get(finalPath);
        if (finalEntry?.type !== 'hardlink' || next === undefined) break;
        this.hop(hops, link);
        finalPath = this.follow(next, hops, link);
      }
    }
    return plan;
  }

  /** Resolve a link's target to a real (non-symlink) archive path, following symlinks anywhere in
   * the path. Throws `link-outside` if any step leaves the root. */
  private follow(link: LinkRecord, hops: { count: number }, reportAs: LinkRecord = link): string {
    const resolved = link.fromRoot ? [] : splitPath(dirname(link.path));
    const pending = link.target.split('/').reverse();
    const scope = this.normaliseOptions.archive ? 'archive' : 'input directory';
    while (pending.length > 0) {
      const segment = pending.pop() as string;
      if (segment === '' || segment === '.') continue;
      if (segment === '..') {
        if (resolved.length === 0) {
          throw new InputError(
            'link-outside',
            `link "${reportAs.shown}" -> "${displayName(reportAs.target)}" resolves outside the ${scope} (through symlinks)`,
            { entry: reportAs.shown },
          );
        }
        resolved.pop();
        continue;
      }
      resolved.push(segment);
      const inner = this.links.get(resolved.join('/'));
      if (inner !== undefined && inner.kind === 'symlink') {
        this.hop(hops, reportAs);
        resolved.pop();
        if (inner.fromRoot) resolved.length = 0;
        const parts = inner.target.split('/');
        for (let i = parts.length - 1; i >= 0; i--) pending.push(parts[i] as string);
      }
    }
    return resolved.join('/');
  }

  private hop(hops: { count: number }, link: LinkRecord): void {
    hops.count += 1;
    if (hops.count > MAX_LINK_HOPS) {
      throw new InputError(
        'invalid-path',
        `link "${link.shown}" is part of a link loop or a chain of more than ${MAX_LINK_HOPS} links`,
        { entry: link.shown },
      );
    }
  }

  /** Attach content to a link path (the content of the file it resolves to). */
  setLinkContent(linkPath: string, content: Buffer): void {
    this.files.set(linkPath, content);
  }

  /** The entries, sorted by path in byte order. */
  sortedEntries(): ArchiveEntry[] {
    return [...this.entries.values()].sort((a, b) => compareUtf8(a.path, b.path));
  }

  /** The loaded input. `sha256` is the container's, or computed from the sorted entries (a
   * directory's listing). */
  build(
    name: string,
    sha256: string | ((entries: ArchiveEntry[]) => string),
    format: LoadedArchive['format'],
  ): LoadedArchive {
    if (this.entries.size === 0) {
      throw new InputError(
        'empty-archive',
        `${format === 'directory' ? 'directory' : 'archive'} "${name}" has no entries`,
      );
    }
    const entries = this.sortedEntries();
    const id = typeof sha256 === 'string' ? sha256 : sha256(entries);
    const files = new Map<string, Buffer>();
    for (const entry of entries) {
      const content = this.files.get(entry.path);
      if (content !== undefined) files.set(entry.path, content);
    }
    return { name, sha256: id, format, entries, files };
  }
}

function escapeNonAscii(text: string): string {
  return JSON.stringify(displayName(text)).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function splitPath(path: string): string[] {
  return path === '' ? [] : path.split('/');
}
