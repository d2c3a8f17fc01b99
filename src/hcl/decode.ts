/**
 * Strict UTF-8 decoding of configuration files.
 *
 * Terraform reads configuration files as UTF-8: HCL's scanner strips one leading byte order mark and
 * rejects anything that is not valid UTF-8. We are stricter in one respect (a U+FEFF anywhere but at
 * the very start is rejected, even inside a string literal) because an invisible BOM in the middle
 * of a file is almost always a concatenation accident that hides content from reviewers.
 */
import { isUtf8 } from 'node:buffer';
import type { ParseErrorInfo } from './types';

/** `bomBytes`: bytes stripped before `text` (3 for a leading UTF-8 BOM, else 0), so positions can
 * count bytes in the file as uploaded. */
export type DecodeResult =
  { ok: true; text: string; bomBytes: number } | { ok: false; error: ParseErrorInfo };

const BOM = 0xfeff;

/**
 * Length of the well-formed UTF-8 sequence starting at `i`, or 0 when the bytes there are not a
 * well-formed sequence (Unicode table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
 */
function sequenceLength(buf: Buffer, i: number): number {
  const b0 = buf[i] as number;
  if (b0 < 0x80) return 1;
  const n = buf.length;
  const cont = (j: number, lo = 0x80, hi = 0xbf): boolean => {
    if (j >= n) return false;
    const b = buf[j] as number;
    return b >= lo && b <= hi;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

/** 1-based line and column (in characters, i.e. code points) of byte offset `offset`. */
function bytePosition(buf: Buffer, offset: number): { line: number; column: number } {
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset; i++) {
    const b = buf[i] as number;
    if (b === 0x0a) {
      line++;
      column = 1;
    } else if ((b & 0xc0) !== 0x80) {
      column++;
    }
  }
  return { line, column };
}

/** 1-based line and column (in code points) of UTF-16 offset `offset` in `text`. */
export function textPosition(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: codePointColumn(text, lineStart, offset) };
}

/** 1-based column of `offset`, counting code points from `lineStart`. */
export function codePointColumn(text: string, lineStart: number, offset: number): number {
  let column = 1;
  for (let i = lineStart; i < offset; i++) {
    const c = text.charCodeAt(i);
    // The low half of a surrogate pair does not start a new character.
    if (c < 0xdc00 || c > 0xdfff) column++;
  }
  return column;
}

function hex(b: number): string {
  return `0x${b.toString(16).padStart(2, '0')}`;
}

/**
 * Decodes a configuration file: strict UTF-8, one leading BOM stripped, a BOM anywhere else is an
 * error. CRLF line endings are kept as they are (the scanner and hcl2json both accept them).
 */
export function decodeSource(path: string, content: Buffer): DecodeResult {
  let start = 0;
  if (content.length >= 3 && content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf) start = 3;
  // Node's native check accepts exactly the well-formed sequences of table 3-7 (WHATWG's decoder);
  // the loop below only runs to locate the error.
  const valid = isUtf8(content);
  for (let i = valid ? content.length : start; i < content.length;) {
    if ((content[i] as number) < 0x80) {
      i++;
      continue;
    }
    const len = sequenceLength(content, i);
    if (len === 0) {
      const { line, column } = bytePosition(content, i);
      const shown = Array.from(content.subarray(i, Math.min(i + 4, content.length)), hex).join(' ');
      return {
        ok: false,
        error: {
          path,
          line,
          column,
          message: `invalid UTF-8: the bytes ${shown} at byte offset ${i} are not a valid UTF-8 sequence`,
        },
      };
    }
    i += len;
  }
  const text = content.toString('utf8', start);
  const bom = text.indexOf(String.fromCharCode(BOM));
  if (bom !== -1) {
    const { line, column } = textPosition(text, bom);
    return {
      ok: false,
      error: {
        path,
        line,
        column,
        message: 'byte order mark (U+FEFF) in the middle of the file; only a leading one is allowed',
      },
    };
  }
  return { ok: true, text, bomBytes: start };
}
