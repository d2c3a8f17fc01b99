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
import { EMPTY_BODY } from '../hcl';
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

/** Compact encoding: body = [attributes, blocks]; attribute = [name, value, line, endLine, spans,
 * items?] where spans = the 12 numbers of `range` and `valueRange` (each start and end as line,
 * column, byte), or the usual case in 6: [column, byte] of the range's start, its end and the
 * value's start, when the range runs from `line` to `endLine`, the value starts on `line` and both
 * end together; items = [key, 12 numbers of keyRange and valueRange][]; block = [type, labels, line,
 * endLine, spans, body?] with spans the 6 numbers of `range`, or 4 ([column, byte] of its start and
 * end) when it runs from `line` to `endLine`; body omitted when empty. Ranges are stored without a
 * file name: entries are found by content, so a renamed file reuses them under its own path. */
type CompactItem = [string, number[]];
type CompactAttr = [string, unknown, number, number, number[], CompactItem[]?];
type CompactBlock = [string, string[], number, number, number[], CompactBody?];
type CompactBody = [CompactAttr[], CompactBlock[]];
/** An entry: a body (`b`, the syntax), or a parse error (`e`: path, message, line, column). */
type Entry = { s: 'hcl' | 'json'; b: CompactBody } | { e: [string, string, number, number] };

interface Manifest {
  format: typeof FORMAT;
  version: number;
  fingerprint: string;
  archive: string;
  files: Record<string, Entry>;
}

function spans(...ranges: SourceRange[]): number[] {
  const out: number[] = [];
  for (const r of ranges) {
    out.push(r.start.line, r.start.column, r.start.byte, r.end.line, r.end.column, r.end.byte);
  }
  return out;
}

/** An attribute's spans: 6 numbers in the usual case (see the encoding above), else 12. */
function attributeSpans(a: HclAttribute): number[] {
  const { range: r, valueRange: v } = a;
  if (
    r.start.line === a.line &&
    r.end.line === a.endLine &&
    v.start.line === a.line &&
    v.end.line === r.end.line &&
    v.end.column === r.end.column &&
    v.end.byte === r.end.byte
  ) {
    return [r.start.column, r.start.byte, r.end.column, r.end.byte, v.start.column, v.start.byte];
  }
  return spans(r, v);
}

/** A block's spans: 4 numbers when its range runs from `line` to `endLine`, else 6. */
function blockSpans(b: HclBlock): number[] {
  const r = b.range;
  return r.start.line === b.line && r.end.line === b.endLine
    ? [r.start.column, r.start.byte, r.end.column, r.end.byte]
    : spans(r);
}

function encodeBody(body: HclBody): CompactBody {
  const root: CompactBody = [[], []];
  const work: { from: HclBody; to: CompactBody }[] = [{ from: body, to: root }];
  while (work.length > 0) {
    const { from, to } = work.pop() as (typeof work)[number];
    for (const a of from.attributes) {
      const attr: CompactAttr = [a.name, a.value, a.line, a.endLine, attributeSpans(a)];
      if (a.items !== undefined) attr.push(a.items.map((it) => [it.key, spans(it.keyRange, it.valueRange)]));
      to[0].push(attr);
    }
    for (const b of from.blocks) {
      const block: CompactBlock = [b.type, b.labels, b.line, b.endLine, blockSpans(b)];
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

/** The numbers of a spans array, checked (non-negative integers, `lengths` allowed); null when
 * malformed. Plain loops: a warm rescan decodes a range for every node of every file. */
function spanNumbers(raw: unknown, ...lengths: number[]): number[] | null {
  if (!Array.isArray(raw) || !lengths.includes(raw.length)) return null;
  const n = raw as unknown[];
  for (let i = 0; i < n.length; i++) {
    const v = n[i];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return null;
  }
  return n as number[];
}

/** A position on `line` from a column and a byte offset; null when malformed. */
function position(line: number, column: number, byte: number): SourcePos | null {
  return column < 1 ? null : { line, column, byte };
}

/** An attribute's two ranges from its spans (6 or 12 numbers); null when malformed. */
function attributeRanges(file: string, raw: unknown, line: number, endLine: number): SourceRange[] | null {
  const n = spanNumbers(raw, 6, 12);
  if (n === null) return null;
  if (n.length === 12) return decodeRanges(file, n, 2);
  const s = position(line, n[0] as number, n[1] as number);
  const e = position(endLine, n[2] as number, n[3] as number);
  const v = position(line, n[4] as number, n[5] as number);
  if (s === null || e === null || v === null || e.byte < s.byte || e.byte < v.byte) return null;
  return [
    { file, start: s, end: e },
    { file, start: v, end: e },
  ];
}

/** A block's range from its spans (4 or 6 numbers); null when malformed. */
function blockRange(file: string, raw: unknown, line: number, endLine: number): SourceRange | null {
  const n = spanNumbers(raw, 4, 6);
  if (n === null) return null;
  if (n.length === 6) return decodeRanges(file, n, 1)?.[0] ?? null;
  const s = position(line, n[0] as number, n[1] as number);
  const e = position(endLine, n[2] as number, n[3] as number);
  if (s === null || e === null || e.byte < s.byte) return null;
  return { file, start: s, end: e };
}

/** `count` ranges of `file` from their compact numbers; null when malformed. */
function decodeRanges(file: string, raw: unknown, count: number): SourceRange[] | null {
  const n = spanNumbers(raw, count * 6);
  if (n === null) return null;
  const out: SourceRange[] = [];
  for (let k = 0; k < count * 6; k += 6) {
    const sl = n[k] as number;
    const sc = n[k + 1] as number;
    const sb = n[k + 2] as number;
    const el = n[k + 3] as number;
    const ec = n[k + 4] as number;
    const eb = n[k + 5] as number;
    if (sl < 1 || sc < 1 || el < 1 || ec < 1 || eb < sb || el < sl) return null;
    out.push({ file, start: { line: sl, column: sc, byte: sb }, end: { line: el, column: ec, byte: eb } });
  }
  return out;
}

/** Decodes and validates a compact body of `file`; null when anything is off. Iterative. */
function decodeBody(file: string, raw: unknown): HclBody | null {
  const root: HclBody = { attributes: [], blocks: [] };
  const work: { from: unknown; to: HclBody }[] = [{ from: raw, to: root }];
  while (work.length > 0) {
    const { from, to } = work.pop() as (typeof work)[number];
    if (!Array.isArray(from) || from.length !== 2) return null;
    const [attrs, blocks] = from as unknown[];
    if (!Array.isArray(attrs) || !Array.isArray(blocks)) return null;
    for (const a of attrs as unknown[]) {
      if (!Array.isArray(a) || (a.length !== 5 && a.length !== 6)) return null;
      const [name, value, line, endLine, rawSpans, rawItems] = a as unknown[];
      if (typeof name !== 'string' || !isLine(line) || !isLine(endLine) || endLine < line) return null;
      if (value === undefined) return null;
      const ranges = attributeRanges(file, rawSpans, line, endLine);
      if (ranges === null) return null;
      const attr: HclAttribute = {
        name,
        value,
        line,
        endLine,
        range: ranges[0] as SourceRange,
        valueRange: ranges[1] as SourceRange,
      };
      if (a.length === 6) {
        if (!Array.isArray(rawItems)) return null;
        const items: HclObjectItem[] = [];
        for (const it of rawItems as unknown[]) {
          if (!Array.isArray(it) || it.length !== 2 || typeof it[0] !== 'string') return null;
          const r = decodeRanges(file, it[1], 2);
          if (r === null) return null;
          items.push({ key: it[0], keyRange: r[0] as SourceRange, valueRange: r[1] as SourceRange });
        }
        attr.items = items;
      }
      to.attributes.push(attr);
    }
    for (const b of blocks as unknown[]) {
      if (!Array.isArray(b) || (b.length !== 5 && b.length !== 6)) return null;
      const [type, labels, line, endLine, rawSpans, body] = b as unknown[];
      if (typeof type !== 'string' || !isLine(line) || !isLine(endLine) || endLine < line) return null;
      if (!Array.isArray(labels) || !labels.every((l) => typeof l === 'string')) return null;
      const range = blockRange(file, rawSpans, line, endLine);
      if (range === null) return null;
      const block: HclBlock = {
        type,
        labels: labels as string[],
        line,
        endLine,
        range,
        body: b.length === 6 ? { attributes: [], blocks: [] } : EMPTY_BODY,
      };
      to.blocks.push(block);
      if (b.length === 6) work.push({ from: body, to: block.body });
    }
  }
  return root;
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
  const body = decodeBody(path, entry.b);
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
  return { s: result.file.syntax, b: encodeBody(result.file.body) };
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
  private dirty = false;

  private constructor(
    private readonly options: ExtractionCacheOptions,
    private readonly archiveSha256: string,
  ) {}

  /** Opens the cache for one archive: reads its manifest, or the lineage's. Never throws. */
  static async open(options: ExtractionCacheOptions, archiveSha256: string): Promise<ExtractionCache> {
    const cache = new ExtractionCache(options, archiveSha256);
    if (await cache.read(cache.archiveKey(), 'archive')) return cache;
    if (options.lineage !== undefined) await cache.read(cache.lineageKey(), 'lineage');
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

  private async read(key: string, source: 'archive' | 'lineage'): Promise<boolean> {
    let body: Buffer;
    try {
      this.stats.gets++;
      const object = await this.options.store.get(key);
      if (object === null) return false;
      body = object.body;
    } catch {
      this.stats.failures++;
      return false;
    }
    this.stats.bytesRead += body.length;
    let manifest: unknown;
    try {
      manifest = JSON.parse(
        gunzipSync(body, { maxOutputLength: MAX_MANIFEST_BYTES, chunkSize: 256 * 1024 }).toString('utf8'),
      );
    } catch {
      this.stats.rejected++;
      return false;
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
      return false;
    }
    const m = manifest as Manifest;
    this.loaded = Object.assign(Object.create(null) as Record<string, unknown>, m.files);
    this.loadedArchive = typeof m.archive === 'string' ? m.archive : null;
    this.stats.source = source;
    return true;
  }

  /** The cached result for a file with this content, or undefined. */
  lookup(sha256: string, path: string): ParseResult | undefined {
    const raw = SHA256.test(sha256) ? this.loaded[sha256] : undefined;
    if (raw !== undefined) {
      const result = decodeEntry(path, raw);
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
