/**
 * Edits that insert into a configuration file without reprinting it: a missing item of a
 * `required_providers` entry (`source`, `version`, `configuration_aliases`), a missing argument of a
 * `module` block (`version`), one more element of a tuple. Each function reads the file's bytes
 * around the parser's source ranges and returns the smallest edits that give a valid file, or
 * undefined when the shape around the insertion point is one it does not handle (the fix then stays
 * advice).
 *
 * Native syntax: an item goes on its own line, indented like its neighbour, when the object or body
 * spans lines; inline, after a comma, when it is written on one line. Where the lines around it were
 * aligned the way `terraform fmt` aligns them (the `=` of consecutive arguments, trailing comments;
 * hclwrite's `formatCells`), the new line joins that alignment and its neighbours are re-padded, so
 * a file that passed `terraform fmt -check` still does. JSON: the property is inserted with its comma,
 * on its own line with the neighbour's indentation when the object spans lines.
 *
 * Offsets: the text is read as latin1, so a string index is a byte offset; every character the
 * scanning looks at (brackets, quotes, `=`, `#`, newlines) is ASCII, which never occurs inside a
 * UTF-8 multi-byte sequence.
 */
import type { HclObjectItem } from '../hcl';
import type { SourcePos, SourceRange, TextEdit } from '../model';

/** A file's bytes as a latin1 string (index = byte offset), with its line starts. */
export interface SourceText {
  file: string;
  bytes: Buffer;
  text: string;
  /** Byte offset of the start of each line (line 1 first). */
  lineStarts: number[];
}

const TEXTS = new WeakMap<Buffer, SourceText>();

export function sourceText(file: string, bytes: Buffer): SourceText {
  const known = TEXTS.get(bytes);
  if (known !== undefined && known.file === file) return known;
  const text = bytes.toString('latin1');
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const out = { file, bytes, text, lineStarts };
  TEXTS.set(bytes, out);
  return out;
}

/** The 0-based line index of byte `at`. */
function lineIndex(src: SourceText, at: number): number {
  let lo = 0;
  let hi = src.lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((src.lineStarts[mid] as number) <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** `SourcePos` of byte `at` (column in code points, as the parser counts them). */
export function posAt(src: SourceText, at: number): SourcePos {
  const li = lineIndex(src, at);
  const start = src.lineStarts[li] as number;
  const column = [...src.bytes.subarray(start, at).toString('utf8')].length + 1;
  return { line: li + 1, column, byte: at };
}

function rangeOf(src: SourceText, start: number, end: number): SourceRange {
  return { file: src.file, start: posAt(src, start), end: posAt(src, end) };
}

function insertion(src: SourceText, at: number, text: string): TextEdit {
  return { range: rangeOf(src, at, at), text };
}

/** Start and end (before `\r\n` / `\n`, or the end of the file) of 0-based line `li`. */
function lineBounds(src: SourceText, li: number): { start: number; end: number } {
  const start = src.lineStarts[li] as number;
  const next = src.lineStarts[li + 1];
  let end = next === undefined ? src.text.length : next - 1;
  if (end > start && src.text[end - 1] === '\r') end--;
  return { start, end };
}

/** The file's line ending: that of line `li`, else the file's first, else `\n`. */
function eolOf(src: SourceText, li: number): string {
  const next = src.lineStarts[li + 1];
  const probe = next !== undefined ? next - 1 : src.text.indexOf('\n');
  return probe > 0 && src.text[probe - 1] === '\r' ? '\r\n' : '\n';
}

function indentOf(src: SourceText, li: number): string {
  const { start, end } = lineBounds(src, li);
  return /^[ \t]*/.exec(src.text.slice(start, end))?.[0] ?? '';
}

/** True when only blanks precede `at` on its line. */
function firstOnLine(src: SourceText, at: number): boolean {
  const { start } = lineBounds(src, lineIndex(src, at));
  return /^[ \t]*$/.test(src.text.slice(start, at));
}

// ---------------------------------------------------------------------------------------------
// Lines as terraform fmt sees them (hclwrite format.go: lead, assign and comment cells)
// ---------------------------------------------------------------------------------------------

/** One line split into hclwrite's cells. `null` when the line holds something the small scanner
 * below does not follow (a heredoc, a block comment, an unterminated string). */
interface Cells {
  indent: string;
  /** Code before the `=` of an assignment (or all the code, when there is none), trimmed. */
  lead: string;
  /** From the `=` to the end of the code, trimmed; null when the line has no assign cell. */
  assign: string | null;
  /** The trailing `#` / `//` comment, when the line has code before it. */
  comment: string | null;
  /** Blanks between the lead and the `=`, and between the code and the comment, as written. */
  assignGap: string;
  commentGap: string;
}

function splitCells(line: string): Cells | null {
  const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
  let i = indent.length;
  let depth = 0;
  let eq = -1;
  let eqDepth = 0;
  let commentAt = -1;
  let inString = false;
  let interp = 0;
  while (i < line.length) {
    const c = line[i] as string;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"' && interp === 0) inString = false;
      else if ((c === '$' || c === '%') && line[i + 1] === '{') {
        interp++;
        depth++;
        i++;
      } else if (c === '}' && interp > 0) {
        interp--;
        depth--;
      }
      i++;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '#' || (c === '/' && line[i + 1] === '/')) {
      commentAt = i;
      break;
    } else if (c === '/' && line[i + 1] === '*') return null;
    else if (c === '<' && line[i + 1] === '<') return null;
    else if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') depth--;
    else if (
      c === '=' &&
      eq < 0 &&
      i > indent.length &&
      !/[=>]/.test(line[i + 1] ?? '') &&
      !/[=!<>]/.test(line[i - 1] as string)
    ) {
      eq = i;
      eqDepth = depth;
    }
    i++;
  }
  if (inString) return null;
  const codeEnd = commentAt < 0 ? line.length : commentAt;
  const code = line.slice(indent.length, codeEnd);
  const trimmedCode = code.replace(/[ \t]+$/, '');
  const commentGap = code.slice(trimmedCode.length);
  const comment = commentAt < 0 || trimmedCode === '' ? null : line.slice(commentAt);
  // An assign cell needs the `=` and a right-hand side whose brackets balance on the line.
  if (eq >= 0 && depth - eqDepth === 0 && eqDepth >= 0) {
    const before = line.slice(indent.length, eq);
    const lead = before.replace(/[ \t]+$/, '');
    return {
      indent,
      lead,
      assign: line.slice(eq, indent.length + trimmedCode.length),
      comment,
      assignGap: before.slice(lead.length),
      commentGap: comment === null ? '' : commentGap,
    };
  }
  return {
    indent,
    lead: trimmedCode,
    assign: null,
    comment,
    assignGap: '',
    commentGap: comment === null ? '' : commentGap,
  };
}

/** The lines with `terraform fmt`'s alignment of assign and comment cells applied (hclwrite
 * `formatCells`): in each run of consecutive lines with an assign cell, `=` one column after the
 * longest lead; then in each run with a comment cell, the comment one column after the longest code. */
function aligned(lines: Cells[]): Cells[] {
  const out = lines.map((l) => ({ ...l }));
  const width = (s: string): number => [...Buffer.from(s, 'latin1').toString('utf8')].length;
  for (let i = 0; i < out.length;) {
    if (out[i]?.assign === null) {
      i++;
      continue;
    }
    let j = i;
    while (j < out.length && out[j]?.assign !== null) j++;
    const max = Math.max(...out.slice(i, j).map((l) => width(l.indent + l.lead)));
    for (const l of out.slice(i, j)) l.assignGap = ' '.repeat(max - width(l.indent + l.lead) + 1);
    i = j;
  }
  const codeWidth = (l: Cells): number =>
    width(l.indent + l.lead + (l.assign === null ? '' : l.assignGap + l.assign));
  for (let i = 0; i < out.length;) {
    if (out[i]?.comment === null) {
      i++;
      continue;
    }
    let j = i;
    while (j < out.length && out[j]?.comment !== null) j++;
    const max = Math.max(...out.slice(i, j).map(codeWidth));
    for (const l of out.slice(i, j)) l.commentGap = ' '.repeat(max - codeWidth(l) + 1);
    i = j;
  }
  return out;
}

function joinCells(l: Cells): string {
  return (
    l.indent +
    l.lead +
    (l.assign === null ? '' : l.assignGap + l.assign) +
    (l.comment === null ? '' : l.commentGap + l.comment)
  );
}

/**
 * The edits that insert `newLine` (text without indentation or line ending, `key = value`) as a new
 * line after 0-based line `after` (or before line `after + 1`), indented with `indent`. When the
 * neighbouring lines are aligned as `terraform fmt` aligns them, the new line joins the alignment
 * and neighbours whose padding changes are re-padded; otherwise the new line is written with single
 * spaces and nothing else changes.
 */
function insertLine(src: SourceText, after: number, indent: string, newLine: string): TextEdit[] | undefined {
  const eol = eolOf(src, after);
  const lineCount = src.lineStarts.length;
  const cellsOf = (li: number): Cells | null => {
    const { start, end } = lineBounds(src, li);
    return splitCells(src.text.slice(start, end));
  };
  const relevant = (c: Cells | null): c is Cells => c !== null && (c.assign !== null || c.comment !== null);
  // The window: neighbouring lines that take part in an alignment run.
  let first = after + 1;
  while (first - 1 >= 0 && relevant(cellsOf(first - 1))) first--;
  let last = after; // inclusive
  while (last + 1 < lineCount && relevant(cellsOf(last + 1))) last++;
  const window: Cells[] = [];
  for (let li = first; li <= last; li++) window.push(cellsOf(li) as Cells);
  const added = splitCells(indent + newLine);
  if (added === null) return undefined;
  const asWritten = window.map(joinCells);
  const clean = aligned(window).every((l, k) => joinCells(l) === asWritten[k]);
  const at = lineBounds(src, after).end;
  if (!clean) return [insertion(src, at, eol + joinCells(added))];
  const pos = after + 1 - first;
  const next = aligned([...window.slice(0, pos), added, ...window.slice(pos)]);
  const edits: TextEdit[] = [];
  next.forEach((l, k) => {
    if (k === pos) return;
    const w = k < pos ? k : k - 1;
    const old = window[w] as Cells;
    const { start } = lineBounds(src, first + w);
    const assignAt = start + old.indent.length + old.lead.length;
    if (old.assign !== null && l.assignGap !== old.assignGap) {
      edits.push({ range: rangeOf(src, assignAt, assignAt + old.assignGap.length), text: l.assignGap });
    }
    if (old.comment !== null && l.commentGap !== old.commentGap) {
      const commentGapAt = assignAt + (old.assign === null ? 0 : old.assignGap.length + old.assign.length);
      edits.push({
        range: rangeOf(src, commentGapAt, commentGapAt + old.commentGap.length),
        text: l.commentGap,
      });
    }
  });
  edits.push(insertion(src, at, eol + joinCells(next[pos] as Cells)));
  return edits.sort((a, b) => a.range.start.byte - b.range.start.byte);
}

// ---------------------------------------------------------------------------------------------
// Inserting items
// ---------------------------------------------------------------------------------------------

/** An item to insert: native syntax `key = value` and JSON `"key": value`. */
export interface NewItem {
  key: string;
  /** The value as native-syntax expression text. */
  hcl: string;
  /** The value as JSON text. */
  json: string;
}

function isJson(file: string): boolean {
  return file.endsWith('.json');
}

/** Only blanks, a comma and a line comment from `at` to the end of its line. */
function restOfLineIsTrailing(src: SourceText, at: number, commaAllowed: boolean): boolean {
  const { end } = lineBounds(src, lineIndex(src, at));
  const rest = src.text.slice(at, end);
  return (commaAllowed ? /^[ \t]*,?[ \t]*((#|\/\/).*)?$/ : /^[ \t]*((#|\/\/).*)?$/).test(rest);
}

/**
 * Inserts `item` into the object of a `required_providers` entry (`aws = { ... }`, or the JSON
 * object): before its first item (`'first'`), after its last (`'last'`) or after a given one.
 * Undefined when the value is not an object the parser itemised, or its shape is not one handled
 * here.
 */
export function insertObjectItem(
  src: SourceText,
  entry: { valueRange: SourceRange; items?: HclObjectItem[] },
  item: NewItem,
  where: 'first' | 'last' | { after: HclObjectItem },
): TextEdit[] | undefined {
  const items = entry.items;
  if (items === undefined || entry.valueRange.file !== src.file) return undefined;
  const json = isJson(src.file);
  const open = entry.valueRange.start.byte;
  const close = entry.valueRange.end.byte - 1;
  if (src.text[open] !== '{' || src.text[close] !== '}') return undefined;
  if (items.length === 0) {
    // `{}`: written on one line only.
    if (!/^\{[ \t]*\}$/.test(src.text.slice(open, close + 1))) return undefined;
    return [
      {
        range: rangeOf(src, open, close + 1),
        text: json ? `{${JSON.stringify(item.key)}: ${item.json}}` : `{ ${item.key} = ${item.hcl} }`,
      },
    ];
  }
  const openLine = lineIndex(src, open);
  if (where !== 'first') {
    const lastItem = where === 'last' ? (items[items.length - 1] as HclObjectItem) : where.after;
    const end = lastItem.valueRange.end.byte;
    const li = lineIndex(src, end);
    const multiLine = lineIndex(src, lastItem.keyRange.start.byte) > openLine;
    const indent = indentOf(src, lineIndex(src, lastItem.keyRange.start.byte));
    if (json) {
      const sep = multiLine ? `,${eolOf(src, li)}${indent}` : ', ';
      return [insertion(src, end, `${sep}${JSON.stringify(item.key)}: ${item.json}`)];
    }
    if (multiLine && firstOnLine(src, lastItem.keyRange.start.byte) && restOfLineIsTrailing(src, end, true)) {
      return insertLine(src, li, indent, `${item.key} = ${item.hcl}`);
    }
    return [insertion(src, end, `, ${item.key} = ${item.hcl}`)];
  }
  const firstItem = items[0] as HclObjectItem;
  const start = firstItem.keyRange.start.byte;
  const li = lineIndex(src, start);
  const multiLine = li > openLine && firstOnLine(src, start);
  if (json) {
    const sep = multiLine ? `,${eolOf(src, li)}${indentOf(src, li)}` : ', ';
    return [insertion(src, start, `${JSON.stringify(item.key)}: ${item.json}${sep}`)];
  }
  if (multiLine) {
    // On the line after the `{`, ahead of any comment about the first item.
    if (!restOfLineIsTrailing(src, open + 1, false)) return undefined;
    return insertLine(src, openLine, indentOf(src, li), `${item.key} = ${item.hcl}`);
  }
  return [insertion(src, start, `${item.key} = ${item.hcl}, `)];
}

/**
 * Inserts `item` as an argument of a block, on the line after the argument at `anchor` (its whole
 * range, name to value); JSON: a property after the anchor property. Undefined when the anchor
 * shares its line with something else (native syntax needs each argument on its own line).
 */
export function insertArgumentAfter(
  src: SourceText,
  anchor: SourceRange,
  item: NewItem,
): TextEdit[] | undefined {
  if (anchor.file !== src.file) return undefined;
  const end = anchor.end.byte;
  const li = lineIndex(src, end);
  const indent = indentOf(src, lineIndex(src, anchor.start.byte));
  if (isJson(src.file)) {
    const multiLine = firstOnLine(src, anchor.start.byte);
    const sep = multiLine ? `,${eolOf(src, li)}${indent}` : ', ';
    return [insertion(src, end, `${sep}${JSON.stringify(item.key)}: ${item.json}`)];
  }
  if (!firstOnLine(src, anchor.start.byte) || !restOfLineIsTrailing(src, end, false)) return undefined;
  return insertLine(src, li, indent, `${item.key} = ${item.hcl}`);
}

/**
 * Appends elements to the tuple at `valueRange` (`[a, b]` / a JSON array): inline after the last
 * element, or one per line, indented like the last, when the tuple spans lines. Undefined when the
 * tuple holds comments (where the elements go would be a guess).
 */
export function appendToTuple(
  src: SourceText,
  valueRange: SourceRange,
  elements: { hcl: string; json: string }[],
): TextEdit[] | undefined {
  if (valueRange.file !== src.file || elements.length === 0) return undefined;
  const open = valueRange.start.byte;
  const close = valueRange.end.byte - 1;
  const body = src.text.slice(open, close + 1);
  if (body[0] !== '[' || body[body.length - 1] !== ']') return undefined;
  if (!isJson(src.file) && /#|\/\/|\/\*/.test(body.replace(/"(?:[^"\\]|\\.)*"/g, '""'))) return undefined;
  const values = elements.map((e) => (isJson(src.file) ? e.json : e.hcl));
  // The last element's end: the last non-blank character before `]`.
  let k = close - 1;
  while (k > open && /\s/.test(src.text[k] as string)) k--;
  if (k === open) {
    // Empty: `[]`, or `[` and `]` on different lines.
    return [insertion(src, open + 1, values.join(', '))];
  }
  const li = lineIndex(src, k);
  if (lineIndex(src, close) > li) {
    const sep = `${eolOf(src, li)}${indentOf(src, li)}`;
    // A trailing comma stays the style: each new element gets one too.
    return src.text[k] === ','
      ? [insertion(src, k + 1, values.map((v) => `${sep}${v},`).join(''))]
      : [insertion(src, k + 1, values.map((v) => `,${sep}${v}`).join(''))];
  }
  return src.text[k] === ','
    ? [insertion(src, k + 1, ` ${values.join(', ')}`)]
    : [insertion(src, k + 1, `, ${values.join(', ')}`)];
}

/** The edit that replaces the bytes of `range` with `text`. */
export function replaceRange(range: SourceRange, text: string): TextEdit {
  return { range, text };
}

/** Whether two edits are the same edit: one file, one range, one text. */
export function sameEdit(a: TextEdit, b: TextEdit): boolean {
  return (
    a.range.file === b.range.file &&
    a.range.start.byte === b.range.start.byte &&
    a.range.end.byte === b.range.end.byte &&
    a.text === b.text
  );
}
