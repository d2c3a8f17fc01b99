/**
 * A content-addressed cache of per-file extraction results (what module loading reads from each
 * configuration file, `LOADER_PROJECTION`, or the file's parse error), kept in an `ObjectStore`.
 *
 * Results are keyed by the file's SHA-256 under a fingerprint of everything that can change them
 * (`EXTRACTOR_VERSION`, the projection, the nesting limit, the hcl2json version). One object per
 * file would cost one request per file (1,800 GETs for a large monorepo: far slower on S3 than
 * parsing), so results are batched into gzip'd manifests:
 *
 * - `extract/<fingerprint>/archives/<archive sha256>.json.gz`: every configuration file of one
 *   archive. A rescan of the same archive costs one GET and parses nothing.
 * - `extract/<fingerprint>/lineage/<sha256 of the lineage name>.json.gz` (only with a lineage, a
 *   stable name of the repository such as `github.com/org/repo`): the manifest of the last scan
 *   under that name. A scan of a new commit of a mostly unchanged repository costs two GETs and
 *   parses only the files whose content changed (entries are found by content hash, so renamed
 *   and moved files hit too).
 *
 * Anything read from the store is untrusted: a manifest that is not valid gzip'd JSON of the right
 * format, fingerprint or size is ignored, and each entry is validated before use (a malformed entry
 * is a miss). Store failures never fail a scan: a failed read is a miss, a failed write is counted.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { EMPTY_BODY, movedResult, syntaxOfPath } from '../hcl';
import type { HclAttribute, HclBlock, HclBody, HclObjectItem, ParseResult } from '../hcl';
import type { SourcePos, SourceRange } from '../model';
import type { ObjectStore } from '../storage/types';

/** Bump when anything about extraction changes what a file yields (parser, verifier, projection
 * semantics): old entries are then never read again. */
export const EXTRACTOR_VERSION = 3;

const FORMAT = 'tfguard-extract-manifest';
/** Largest manifest accepted, uncompressed. */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

export interface ExtractionCacheOptions {
  store: ObjectStore;
  /** Everything besides the file content that determines a result (see `cacheFingerprint`). */
  fingerprint: string;
  /** Stable name of the repository, for reuse across commits. */
  lineage?: string;
}

/** A lineage's manifest read before the archive (`ExtractionCache.preload`). */
export interface PreloadedManifest {
  /** Its bytes (null: missing or unreadable) and their content when valid. */
  readonly body: Buffer | null;
  readonly manifest: Manifest | null;
  /** The store requests it took (added to the cache's when it is opened). */
  readonly stats: Pick<CacheStats, 'gets' | 'bytesRead' | 'failures' | 'rejected'>;
  /** Whether it holds a result for this content (SHA-256). */
  has(sha256: string): boolean;
}

export interface CacheStats {
  /** Which manifest was found: the archive's own, the lineage's, or none. */
  source: 'archive' | 'lineage' | 'none';
  hits: number;
  misses: number;
  /** Entries found in a manifest but rejected (malformed or foreign). */
  rejected: number;
  gets: number;
  puts: number;
  bytesRead: number;
  bytesWritten: number;
  /** Store operations that failed (the scan went on without the cache for them). */
  failures: number;
}

/**
 * Compact encoding: body = [attributes, blocks]; attribute = [name, value, line, endLine, keys?]
 * (`keys`: the object items' keys, when it has items); block = [type, labels, line, endLine,
 * body?] (body omitted when empty). Every source range goes to one flat array of numbers per file
 * (`r`), in the order the nodes are written (a body's attributes, each followed by its items, then
 * its blocks; bodies in the order of the walk): no array per node to allocate when decoding.
 *
 * In `r`, an attribute is 6 numbers, [column, byte] of its start, its end and its value's start,
 * when it runs from `line` to `endLine`, its value starts on `line` and both end together (the
 * usual case), else 12 (start and end of `range`, then of `valueRange`, each as line, column,
 * byte), preceded by that count; each item follows with 12 (keyRange, valueRange). A block is 4
 * numbers ([column, byte] of its start and end) when it runs from `line` to `endLine`, else 6,
 * preceded by the count. Ranges are stored without a file name: entries are found by content, so
 * a renamed file reuses them under its own path.
 */
type CompactAttr = [string, unknown, number, number, string[]?];
type CompactBlock = [string, string[], number, number, CompactBody?];
type CompactBody = [CompactAttr[], CompactBlock[]];
/** An entry: a body (`b`, the syntax, `r` the ranges), or a parse error (`e`: path, message, line,
 * column). */
type Entry = { s: 'hcl' | 'json'; b: CompactBody; r: number[] } | { e: [string, string, number, number] };

interface Manifest {
  format: typeof FORMAT;
  version: number;
  fingerprint: string;
  archive: string;
  files: Record<string, Entry>;
}

function pushRange(out: number[], r: SourceRange): void {
  out.push(r.start.line, r.start.column, r.start.byte, r.end.line, r.end.column, r.end.byte);
}

function pushAttribute(out: number[], a: HclAttribute): void {
  const { range: r, valueRange: v } = a;
  if (
    r.start.line === a.line &&
    r.end.line === a.endLine &&
    v.start.line === a.line &&
    v.end.line === r.end.line &&
    v.end.column === r.end.column &&
    v.end.byte === r.end.byte
  ) {
    out.push(6, r.start.column, r.start.byte, r.end.column, r.end.byte, v.start.column, v.start.byte);
  } else {
    out.push(12);
    pushRange(out, r);
    pushRange(out, v);
  }
  for (const it of a.items ?? []) {
    pushRange(out, it.keyRange);
    pushRange(out, it.valueRange);
  }
}

function pushBlock(out: number[], b: HclBlock): void {
  const r = b.range;
  if (r.start.line === b.line && r.end.line === b.endLine) {
    out.push(4, r.start.column, r.start.byte, r.end.column, r.end.byte);
  } else {
    out.push(6);
    pushRange(out, r);
  }
}

function encodeBody(body: HclBody, ranges: number[]): CompactBody {
  const root: CompactBody = [[], []];
  const work: { from: HclBody; to: CompactBody }[] = [{ from: body, to: root }];
  while (work.length > 0) {
    const { from, to } = work.pop() as (typeof work)[number];
    for (const a of from.attributes) {
      const attr: CompactAttr = [a.name, a.value, a.line, a.endLine];
      if (a.items !== undefined) attr.push(a.items.map((it) => it.key));
      pushAttribute(ranges, a);
      to[0].push(attr);
    }
    for (const b of from.blocks) {
      const block: CompactBlock = [b.type, b.labels, b.line, b.endLine];
      pushBlock(ranges, b);
      if (b.body.attributes.length > 0 || b.body.blocks.length > 0) {
        const inner: CompactBody = [[], []];
        block.push(inner);
        work.push({ from: b.body, to: inner });
      }
      to[1].push(block);
    }
  }
  return root;
}

function isLine(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1;
}

/** Reads a file's ranges (`r`, checked to hold only non-negative integers) in order. Each method
 * returns null when the numbers are malformed or run out. */
class RangeReader {
  private at = 0;

  constructor(
    private readonly file: string,
    private readonly n: readonly number[],
  ) {}

  get done(): boolean {
    return this.at === this.n.length;
  }

  /** True when `count` more numbers are left. */
  private has(count: number): boolean {
    return this.at + count <= this.n.length;
  }

  /** A full range: line, column, byte of its start and end. */
  range(): SourceRange | null {
    if (!this.has(6)) return null;
    const n = this.n;
    const i = this.at;
    const sl = n[i] as number;
    const sc = n[i + 1] as number;
    const sb = n[i + 2] as number;
    const el = n[i + 3] as number;
    const ec = n[i + 4] as number;
    const eb = n[i + 5] as number;
    if (sl < 1 || sc < 1 || el < 1 || ec < 1 || eb < sb || el < sl) return null;
    this.at += 6;
    return {
      file: this.file,
      start: { line: sl, column: sc, byte: sb },
      end: { line: el, column: ec, byte: eb },
    };
  }

  /** A position on `line` from the next column and byte; null when malformed. */
  private position(line: number): SourcePos | null {
    if (!this.has(2)) return null;
    const column = this.n[this.at] as number;
    const byte = this.n[this.at + 1] as number;
    if (column < 1) return null;
    this.at += 2;
    return { line, column, byte };
  }

  /** An attribute's `range` and `valueRange` (6 or 12 numbers after their count). */
  attribute(line: number, endLine: number): [SourceRange, SourceRange] | null {
    if (!this.has(1)) return null;
    const count = this.n[this.at++];
    if (count === 12) {
      const r = this.range();
      const v = r === null ? null : this.range();
      return r === null || v === null ? null : [r, v];
    }
    if (count !== 6) return null;
    const s = this.position(line);
    const e = s === null ? null : this.position(endLine);
    const v = e === null ? null : this.position(line);
    if (s === null || e === null || v === null || e.byte < s.byte || e.byte < v.byte) return null;
    return [
      { file: this.file, start: s, end: e },
      { file: this.file, start: v, end: e },
    ];
  }

  /** A block's `range` (4 or 6 numbers after their count). */
  block(line: number, endLine: number): SourceRange | null {
    if (!this.has(1)) return null;
    const count = this.n[this.at++];
    if (count === 6) return this.range();
    if (count !== 4) return null;
    const s = this.position(line);
    const e = s === null ? null : this.position(endLine);
    if (s === null || e === null || e.byte < s.byte) return null;
    return { file: this.file, start: s, end: e };
  }
}

/** Decodes and validates a compact body of `file` and its ranges; null when anything is off.
 * Iterative. */
function decodeBody(file: string, raw: unknown, rawRanges: unknown): HclBody | null {
  if (!Array.isArray(rawRanges)) return null;
  const numbers = rawRanges as unknown[];
  // Plain loops: a warm rescan decodes a range for every node of every file.
  for (let i = 0; i < numbers.length; i++) {
    const v = numbers[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return null;
  }
  const ranges = new RangeReader(file, numbers as number[]);
  const root: HclBody = { attributes: [], blocks: [] };
  const work: { from: unknown; to: HclBody }[] = [{ from: raw, to: root }];
  while (work.length > 0) {
    const { from, to } = work.pop() as (typeof work)[number];
    if (!Array.isArray(from) || from.length !== 2) return null;
    const [attrs, blocks] = from as unknown[];
    if (!Array.isArray(attrs) || !Array.isArray(blocks)) return null;
    for (const a of attrs as unknown[]) {
      if (!Array.isArray(a) || (a.length !== 4 && a.length !== 5)) return null;
      const [name, value, line, endLine, keys] = a as unknown[];
      if (typeof name !== 'string' || !isLine(line) || !isLine(endLine) || endLine < line) return null;
      if (value === undefined) return null;
      const located = ranges.attribute(line, endLine);
      if (located === null) return null;
      const attr: HclAttribute = { name, value, line, endLine, range: located[0], valueRange: located[1] };
      if (a.length === 5) {
        if (!Array.isArray(keys)) return null;
        const items: HclObjectItem[] = [];
        for (const key of keys as unknown[]) {
          if (typeof key !== 'string') return null;
          const keyRange = ranges.range();
          const valueRange = keyRange === null ? null : ranges.range();
          if (keyRange === null || valueRange === null) return null;
          items.push({ key, keyRange, valueRange });
        }
        attr.items = items;
      }
      to.attributes.push(attr);
    }
    for (const b of blocks as unknown[]) {
      if (!Array.isArray(b) || (b.length !== 4 && b.length !== 5)) return null;
      const [type, labels, line, endLine, body] = b as unknown[];
      if (typeof type !== 'string' || !isLine(line) || !isLine(endLine) || endLine < line) return null;
      if (!Array.isArray(labels) || !labels.every((l) => typeof l === 'string')) return null;
      const range = ranges.block(line, endLine);
      if (range === null) return null;
      const block: HclBlock = {
        type,
        labels: labels as string[],
        line,
        endLine,
        range,
        body: b.length === 5 ? { attributes: [], blocks: [] } : EMPTY_BODY,
      };
      to.blocks.push(block);
      if (b.length === 5) work.push({ from: body, to: block.body });
    }
  }
  // Every number read: anything left over means the entry is not what this version writes.
  return ranges.done ? root : null;
}

function decodeEntry(path: string, raw: unknown): ParseResult | null | 'other-path' {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const entry = raw as Record<string, unknown>;
  if ('e' in entry) {
    const e = entry.e;
    if (!Array.isArray(e) || e.length !== 4) return null;
    const [where, message, line, column] = e as unknown[];
    if (typeof where !== 'string' || typeof message !== 'string' || !isLine(line) || !isLine(column))
      return null;
    // A parse error names its file: reuse it only for the same path.
    if (where !== path) return 'other-path';
    return { ok: false, error: { path, message, line, column } };
  }
  if (entry.s !== 'hcl' && entry.s !== 'json') return null;
  // The same bytes under a name of the other syntax (`{}` is a `.tf.json` file's empty body but a
  // `.tf` file's parse error): not this file's result.
  if (entry.s !== syntaxOfPath(path)) return 'other-path';
  const body = decodeBody(path, entry.b, entry.r);
  if (body === null) return null;
  return { ok: true, file: { path, syntax: entry.s, body } };
}

/** Results that depend on more than the content (a timeout, a crash, a closed parser) are not
 * cached. */
function cacheable(result: ParseResult): boolean {
  if (result.ok) return true;
  const m = result.error.message;
  return !(
    m.startsWith('internal parser error') ||
    m.startsWith('parser timed out') ||
    m.startsWith('parser crashed') ||
    m.startsWith('could not be parsed') ||
    m.startsWith('the file content was not loaded')
  );
}

function encodeEntry(result: ParseResult): Entry {
  if (!result.ok) {
    const e = result.error;
    return { e: [e.path, e.message, e.line, e.column] };
  }
  const r: number[] = [];
  const b = encodeBody(result.file.body, r);
  return { s: result.file.syntax, b, r };
}

function sha256Hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

const SHA256 = /^[0-9a-f]{64}$/;

export class ExtractionCache {
  readonly stats: CacheStats = {
    source: 'none',
    hits: 0,
    misses: 0,
    rejected: 0,
    gets: 0,
    puts: 0,
    bytesRead: 0,
    bytesWritten: 0,
    failures: 0,
  };
  private loaded: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  private loadedArchive: string | null = null;
  private readonly current = new Map<string, Entry>();
  /** Successful results decoded so far, by content. */
  private readonly decoded = new Map<string, ParseResult>();
  private dirty = false;

  private constructor(
    private readonly options: ExtractionCacheOptions,
    private readonly archiveSha256: string,
  ) {}

  /**
   * Reads the lineage's manifest before the archive is known (a directory scan: src/scan/ahead.ts
   * does not parse ahead the files the cache holds). `open` then takes it instead of reading it
   * again. Null without a lineage. Never throws.
   */
  static async preload(options: ExtractionCacheOptions): Promise<PreloadedManifest | null> {
    if (options.lineage === undefined) return null;
    const probe = new ExtractionCache(options, '');
    const { body, manifest } = await probe.readManifest(probe.lineageKey());
    const files = manifest?.files;
    return {
      body,
      manifest,
      stats: { ...probe.stats },
      has: (sha256) => files !== undefined && Object.prototype.hasOwnProperty.call(files, sha256),
    };
  }

  /**
   * Opens the cache for one archive: reads its manifest, or the lineage's (`preloaded`: the
   * lineage's read already, and the archive's own when its bytes are the same). Never throws.
   */
  static async open(
    options: ExtractionCacheOptions,
    archiveSha256: string,
    preloaded?: PreloadedManifest | null,
  ): Promise<ExtractionCache> {
    const cache = new ExtractionCache(options, archiveSha256);
    if (preloaded) {
      const s = preloaded.stats;
      cache.stats.gets += s.gets;
      cache.stats.bytesRead += s.bytesRead;
      cache.stats.failures += s.failures;
      cache.stats.rejected += s.rejected;
    }
    const body = await cache.fetch(cache.archiveKey());
    if (body !== null) {
      const same = preloaded?.body?.equals(body) === true && preloaded.manifest !== null;
      const manifest = same ? preloaded.manifest : cache.parseManifest(body);
      if (manifest !== null) {
        cache.adopt(manifest, 'archive');
        return cache;
      }
    }
    if (options.lineage === undefined) return cache;
    const { manifest } = preloaded ?? (await cache.readManifest(cache.lineageKey()));
    if (manifest !== null) cache.adopt(manifest, 'lineage');
    return cache;
  }

  private prefix(): string {
    return `extract/${this.options.fingerprint}/`;
  }

  private archiveKey(): string {
    return `${this.prefix()}archives/${this.archiveSha256}.json.gz`;
  }

  private lineageKey(): string {
    return `${this.prefix()}lineage/${sha256Hex(this.options.lineage ?? '')}.json.gz`;
  }

  /** An object's bytes, or null when it is missing or cannot be read (counted). */
  private async fetch(key: string): Promise<Buffer | null> {
    try {
      this.stats.gets++;
      const object = await this.options.store.get(key);
      if (object === null) return null;
      this.stats.bytesRead += object.body.length;
      return object.body;
    } catch {
      this.stats.failures++;
      return null;
    }
  }

  /** An object's bytes and, when they are a valid manifest, its content (`fetch`, `parseManifest`). */
  private async readManifest(key: string): Promise<{ body: Buffer | null; manifest: Manifest | null }> {
    const body = await this.fetch(key);
    return { body, manifest: body === null ? null : this.parseManifest(body) };
  }

  /** A manifest's content when it is valid gzip'd JSON of this format and fingerprint, else null
   * (counted as rejected). */
  private parseManifest(body: Buffer): Manifest | null {
    let manifest: unknown;
    try {
      manifest = JSON.parse(
        gunzipSync(body, { maxOutputLength: MAX_MANIFEST_BYTES, chunkSize: 256 * 1024 }).toString('utf8'),
      );
    } catch {
      this.stats.rejected++;
      return null;
    }
    if (
      typeof manifest !== 'object' ||
      manifest === null ||
      (manifest as Manifest).format !== FORMAT ||
      (manifest as Manifest).version !== EXTRACTOR_VERSION ||
      (manifest as Manifest).fingerprint !== this.options.fingerprint ||
      typeof (manifest as Manifest).files !== 'object' ||
      (manifest as Manifest).files === null ||
      Array.isArray((manifest as Manifest).files)
    ) {
      this.stats.rejected++;
      return null;
    }
    return manifest as Manifest;
  }

  private adopt(m: Manifest, source: 'archive' | 'lineage'): void {
    this.loaded = Object.assign(Object.create(null) as Record<string, unknown>, m.files);
    this.loadedArchive = typeof m.archive === 'string' ? m.archive : null;
    this.stats.source = source;
  }

  /** The cached result for a file with this content, or undefined. */
  lookup(sha256: string, path: string): ParseResult | undefined {
    const raw = SHA256.test(sha256) ? this.loaded[sha256] : undefined;
    if (raw !== undefined) {
      // A copy of a file looked up before: its result moved to this path, as decoding gives it.
      const earlier = this.decoded.get(sha256);
      const moved =
        earlier !== undefined && earlier.ok && earlier.file.syntax === syntaxOfPath(path)
          ? movedResult(earlier, path)
          : null;
      const result = moved ?? decodeEntry(path, raw);
      if (earlier === undefined && result !== null && result !== 'other-path' && result.ok)
        this.decoded.set(sha256, result);
      if (result === null) {
        this.stats.rejected++;
      } else if (result !== 'other-path') {
        this.stats.hits++;
        this.current.set(sha256, raw as Entry);
        return result;
      }
    }
    this.stats.misses++;
    return undefined;
  }

  /** Records the result of parsing a file that missed. */
  record(sha256: string, result: ParseResult): void {
    if (!cacheable(result) || !SHA256.test(sha256)) return;
    this.current.set(sha256, encodeEntry(result));
    this.dirty = true;
  }

  /** Writes the manifests that changed. Never throws. */
  async save(): Promise<void> {
    const writeArchive = this.dirty || this.stats.source !== 'archive';
    const writeLineage =
      this.options.lineage !== undefined && (this.dirty || this.loadedArchive !== this.archiveSha256);
    if (!writeArchive && !writeLineage) return;
    const files: Record<string, Entry> = {};
    for (const key of [...this.current.keys()].sort()) files[key] = this.current.get(key) as Entry;
    const manifest: Manifest = {
      format: FORMAT,
      version: EXTRACTOR_VERSION,
      fingerprint: this.options.fingerprint,
      archive: this.archiveSha256,
      files,
    };
    const body = gzipSync(JSON.stringify(manifest), { level: 6 });
    const keys = [...(writeArchive ? [this.archiveKey()] : []), ...(writeLineage ? [this.lineageKey()] : [])];
    await Promise.all(
      keys.map(async (key) => {
        try {
          this.stats.puts++;
          await this.options.store.put(key, body, { contentType: 'application/gzip' });
          this.stats.bytesWritten += body.length;
        } catch {
          this.stats.failures++;
        }
      }),
    );
  }
}
