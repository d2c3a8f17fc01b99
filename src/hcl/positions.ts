/**
 * Source positions as Terraform's `hcl.Pos` gives them: 1-based line, 1-based column counted in
 * Unicode code points, 0-based byte offset into the file as uploaded (so a leading UTF-8 byte order
 * mark, which `decodeSource` strips from the text, still counts 3 bytes).
 *
 * The parsers work on the decoded text and know UTF-16 offsets; one `PositionMap` per file turns
 * those into positions. For the common ASCII-only file that is a binary search over line starts and
 * two subtractions; for a file with other characters the byte and column counts walk the line.
 */
import type { HclObjectItem } from './types';
import type { SourcePos, SourceRange } from '../model';

export class PositionMap {
  /** UTF-16 offsets of line starts, computed on the first lookup (a file whose nodes are never
   * located costs nothing). */
  private starts: ArrayLike<number> | null = null;
  private lineCount = 0;
  /** `starts` is a lexer's array (`borrowLineStarts`), valid until `releaseLineStarts`. */
  private borrowed = false;
  private readonly ascii: boolean;
  /** For non-ASCII text: the byte offset of each line start (BOM included). */
  private lineBytes: number[] | null = null;

  constructor(
    readonly file: string,
    private readonly text: string,
    /** Bytes before the text in the file: 3 when a BOM was stripped, else 0. */
    private readonly bomBytes: number,
    /** The file's size in bytes, when the caller knows it: then telling an ASCII-only text (one
     * byte per UTF-16 unit) costs nothing. */
    byteLength?: number,
  ) {
    this.ascii =
      byteLength !== undefined
        ? byteLength - bomBytes === text.length
        : Buffer.byteLength(text, 'utf8') === text.length;
  }

  private lineStarts(): ArrayLike<number> {
    if (this.starts !== null) return this.starts;
    const starts = [0];
    const text = this.text;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', nl + 1)) starts.push(nl + 1);
    this.starts = starts;
    this.lineCount = starts.length;
    return starts;
  }

  /**
   * Uses the line starts a lexer already found for this text (`count` offsets from `starts`) until
   * `releaseLineStarts`: they are not searched for twice. The lexer reuses its array, so the caller
   * releases them before the next lexer run; lookups after that find their own again.
   */
  borrowLineStarts(starts: Int32Array, count: number): void {
    if (this.starts !== null) return;
    this.starts = starts;
    this.lineCount = count;
    this.borrowed = true;
  }

  releaseLineStarts(): void {
    if (!this.borrowed) return;
    this.starts = null;
    this.lineCount = 0;
    this.lastLine = 0;
    this.borrowed = false;
  }

  /** Line index (0-based) of the previous lookup: lookups mostly move forward a little. */
  private lastLine = 0;

  /** Line index (0-based) of UTF-16 offset `at` (already clamped to the text); `hint`, a 1-based
   * line the caller expects (checked, never trusted), spares the search when right. */
  private lineIndexOf(at: number, hint = 0): number {
    const starts = this.lineStarts();
    const count = this.lineCount;
    if (hint > 0 && hint <= count) {
      const h = hint - 1;
      if ((starts[h] as number) <= at && (h + 1 >= count || (starts[h + 1] as number) > at)) return h;
    }
    let lo = this.lastLine;
    if (!((starts[lo] as number) <= at && (lo + 1 >= count || (starts[lo + 1] as number) > at))) {
      lo = 0;
      let hi = count - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if ((starts[mid] as number) <= at) lo = mid;
        else hi = mid - 1;
      }
      this.lastLine = lo;
    }
    return lo;
  }

  /** The 1-based line of UTF-16 offset `offset` (clamped to the text), without column or byte. */
  line(offset: number): number {
    return this.lineIndexOf(Math.min(Math.max(0, offset), this.text.length)) + 1;
  }

  /** The position of UTF-16 offset `offset` (clamped to the text); `lineHint` as in `lineIndexOf`. */
  pos(offset: number, lineHint = 0): SourcePos {
    const at = Math.min(Math.max(0, offset), this.text.length);
    const lo = this.lineIndexOf(at, lineHint);
    const lineStart = this.lineStarts()[lo] as number;
    if (this.ascii) return { line: lo + 1, column: at - lineStart + 1, byte: at + this.bomBytes };
    const lineBytes = this.lineByteStarts();
    let column = 1;
    let byte = lineBytes[lo] as number;
    for (let i = lineStart; i < at; i++) {
      const c = this.text.charCodeAt(i);
      if (c >= 0xdc00 && c <= 0xdfff) continue; // low surrogate: counted with its high half
      column++;
      byte += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 4 : 3;
    }
    return { line: lo + 1, column, byte };
  }

  /** The range of UTF-16 offsets [start, end); `line`/`endLine` (hints) their lines. */
  range(start: number, end: number, line = 0, endLine = 0): SourceRange {
    return { file: this.file, start: this.pos(start, line), end: this.pos(end, endLine) };
  }

  /** Two ranges that end at the same offset (an attribute and its value): one end position;
   * `line`/`endLine` (hints) the lines of its name and of its last token. */
  rangesTo(
    start: number,
    valueStart: number,
    end: number,
    line = 0,
    endLine = 0,
  ): [SourceRange, SourceRange] {
    const e = this.pos(end, endLine);
    const s = this.pos(start, line);
    return [
      { file: this.file, start: s, end: e },
      { file: this.file, start: this.pos(valueStart, line), end: e },
    ];
  }

  private lineByteStarts(): number[] {
    if (this.lineBytes !== null) return this.lineBytes;
    const out = [this.bomBytes];
    const starts = this.lineStarts();
    for (let l = 1; l < this.lineCount; l++) {
      const from = starts[l - 1] as number;
      const to = starts[l] as number;
      out.push((out[l - 1] as number) + Buffer.byteLength(this.text.slice(from, to), 'utf8'));
    }
    this.lineBytes = out;
    return out;
  }
}

/** Object items located by their UTF-16 offsets, as `HclObjectItem`s. */
export function itemRanges(
  items: readonly { key: string; keyStart: number; keyEnd: number; valueStart: number; valueEnd: number }[],
  positions: PositionMap,
): HclObjectItem[] {
  return items.map((it) => ({
    key: it.key,
    keyRange: positions.range(it.keyStart, it.keyEnd),
    valueRange: positions.range(it.valueStart, it.valueEnd),
  }));
}

/** Source ranges of tuple elements given as offsets. */
export function elementRanges(
  elements: readonly { start: number; end: number }[],
  positions: PositionMap,
): SourceRange[] {
  return elements.map((e) => positions.range(e.start, e.end));
}
