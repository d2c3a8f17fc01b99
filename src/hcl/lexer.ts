/**
 * The one lexer for HCL native syntax, shared by the fast path's verifier (`fast/verify.ts`) and the
 * full path's structural scanner (`full/scanner.ts`).
 *
 * It tokenizes like hashicorp/hcl `hclsyntax` (scan_tokens.rl, scan_string_lit.rl): `#` and `//`
 * comments run to the end of the line and count as a newline; quoted strings and heredocs are
 * templates whose `${ }` / `%{ }` sequences contain ordinary expressions (so strings nest), and
 * `$${` / `%%{` are literal; heredocs start with `<<ID` / `<<-ID` directly followed by a newline and
 * end at the first line that, trimmed, equals `ID`. It never recurses: modes live on explicit
 * stacks.
 *
 * Two modes:
 * - **strict** (the verifier): anything whose treatment this port does not model exactly (a stray
 *   carriage return, non-ASCII identifiers, unknown escapes or punctuation, template strip markers,
 *   malformed numbers, nesting beyond a limit, anything unterminated) throws `GiveUp`. The token
 *   arrays are shared between strict calls (no allocation per file).
 * - **tolerant** (the scanner, inline suppressions): accepts any text. Unknown characters become
 *   `OTHER` tokens, identifiers follow Unicode ID_Start/ID_Continue, escapes are skipped, and the
 *   first lexical error (`unterminated comment`, a newline inside a quoted string) is returned with
 *   its offset and ends the token stream. Unclosed constructs at the end of the text are left open
 *   (the caller's bracket stack reports them).
 */
import { CHECK_EVERY } from '../util/deadline';
// Token types.
const T_EOF = 0;
const T_NEWLINE = 1;
/** `#` / `//` comment that ends with a newline: acts as a newline where newlines count. */
const T_COMMENT_NL = 2;
/** Block comment, or a line comment at the end of the file: always skipped. */
const T_COMMENT = 3;
const T_IDENT = 4;
const T_NUMBER = 5;
const T_OQUOTE = 6;
const T_CQUOTE = 7;
const T_QUOTED_LIT = 8;
const T_OHEREDOC = 9;
const T_CHEREDOC = 10;
const T_STRING_LIT = 11;
const T_INTERP = 12;
const T_CONTROL = 13;
const T_SEQ_END = 14;
const T_OBRACE = 15;
const T_CBRACE = 16;
const T_OBRACK = 17;
const T_CBRACK = 18;
const T_OPAREN = 19;
const T_CPAREN = 20;
const T_DOT = 21;
const T_COMMA = 22;
const T_STAR = 23;
const T_EQUAL = 24;
const T_QUESTION = 25;
const T_COLON = 26;
const T_MINUS = 27;
const T_BANG = 28;
const T_ELLIPSIS = 29;
const T_FATARROW = 30;
/** Binary operators other than `*` and `-` (which have their own types): `+ / % < > == != >= <= && ||`. */
const T_BINOP = 31;
const T_DCOLON = 32;
/** Tolerant mode only: a character HCL does not accept outside strings. */
const T_OTHER = 33;

export const TOKEN = {
  EOF: T_EOF,
  NEWLINE: T_NEWLINE,
  COMMENT_NL: T_COMMENT_NL,
  COMMENT: T_COMMENT,
  IDENT: T_IDENT,
  NUMBER: T_NUMBER,
  OQUOTE: T_OQUOTE,
  CQUOTE: T_CQUOTE,
  QUOTED_LIT: T_QUOTED_LIT,
  OHEREDOC: T_OHEREDOC,
  CHEREDOC: T_CHEREDOC,
  STRING_LIT: T_STRING_LIT,
  INTERP: T_INTERP,
  CONTROL: T_CONTROL,
  SEQ_END: T_SEQ_END,
  OBRACE: T_OBRACE,
  CBRACE: T_CBRACE,
  OBRACK: T_OBRACK,
  CBRACK: T_CBRACK,
  OPAREN: T_OPAREN,
  CPAREN: T_CPAREN,
  DOT: T_DOT,
  COMMA: T_COMMA,
  STAR: T_STAR,
  EQUAL: T_EQUAL,
  QUESTION: T_QUESTION,
  COLON: T_COLON,
  MINUS: T_MINUS,
  BANG: T_BANG,
  ELLIPSIS: T_ELLIPSIS,
  FATARROW: T_FATARROW,
  BINOP: T_BINOP,
  DCOLON: T_DCOLON,
  OTHER: T_OTHER,
} as const;

/** The token stream of a verified file: parallel arrays, `count` tokens (the last one is EOF). The
 * arrays are shared between calls: valid only until the next `verifyHcl` call. */
export interface Tokens {
  count: number;
  type: Uint8Array;
  start: Int32Array;
  end: Int32Array;
}

export class GiveUp {
  constructor(
    readonly reason: string,
    readonly offset: number,
  ) {}
}

export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
export function isIdentStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}
/** ASCII characters that may continue an identifier: letters, digits, `_`, `-`. */
const IDENT_CONTINUE = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (isIdentStart(c) || isDigit(c) || c === 0x2d) IDENT_CONTINUE[c] = 1;
}
export function isIdentContinue(c: number): boolean {
  return c < 128 && IDENT_CONTINUE[c] === 1;
}
/** ASCII characters that may start an identifier. */
const IDENT_START = new Uint8Array(128);
for (let c = 0; c < 128; c++) if (isIdentStart(c)) IDENT_START[c] = 1;
/**
 * A plain run inside a quoted string, up to `"` `\` `$` `%` CR LF: a sticky regular expression
 * (`lastIndex` in, `lastIndex` out, no match object with `test`), which V8 runs as native code from
 * its first use, where a `charCodeAt` loop runs interpreted for the first thousands of strings of a
 * process. (For identifiers, mostly short, the call costs more than it saves once the lexer is
 * optimised: they keep a table loop.)
 */
const QUOTED_RUN = /[^"\\$%\r\n]*/y;
export function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

const DOLLAR = 0;
const PERCENT = 1;
const CR = 2;
const SEARCH = ['$', '%', '\r'];

// Leading zeros are decimal (`01` is 1, `010` is 10): cty.ParseNumberVal reads base 10, and
// hcl2json gives the same values.
const NUMBER_FORM = /^[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** The depth limit when there is none (2^30 - 1, V8's largest small integer). */
const NO_LIMIT = 0x3fffffff;

/** Tokens `main` reads per call: returning now and then lets a long file's lexing enter the
 * optimised code as soon as there is some (a loop already running enters it only by on-stack
 * replacement, which did not happen again after a deoptimisation in a cold scan). */
const MAIN_BATCH = 1024;

// Lexer modes.
const M_MAIN = 0;
const M_QUOTE = 1;
const M_HEREDOC = 2;

export interface LineIndex {
  /** Offsets where lines start (shared between calls, like the token arrays). */
  starts: Int32Array;
  count: number;
}

let sharedLines = new Int32Array(1 << 14);

/** Line starts of `text`, in an array shared between calls (valid until the next call). */
export function lineIndex(text: string): LineIndex {
  let starts = sharedLines;
  let count = 1;
  starts[0] = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', nl + 1)) {
    if (count === starts.length) {
      const grown = new Int32Array(starts.length * 2);
      grown.set(starts);
      starts = grown;
      sharedLines = grown;
    }
    starts[count++] = nl + 1;
  }
  return { starts, count };
}

const ID_START = /[\p{ID_Start}_]/u;
const ID_CONTINUE = /[\p{ID_Continue}-]/u;

/** Length of the identifier at `i` (0 if there is none), with Unicode identifiers: ID_Start or `_`,
 * then ID_Continue or `-` (hclsyntax's rules; the strict mode stays with ASCII). */
export function identLength(text: string, i: number): number {
  const n = text.length;
  let j = i;
  let first = true;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c < 0x80) {
      if (first ? !isIdentStart(c) : !isIdentContinue(c)) break;
      j++;
    } else {
      const cp = text.codePointAt(j) as number;
      const ch = String.fromCodePoint(cp);
      if (!(first ? ID_START : ID_CONTINUE).test(ch)) break;
      j += ch.length;
    }
    first = false;
  }
  return j - i;
}

/** White space as Go's `unicode.IsSpace` (used by `bytes.TrimSpace` on heredoc marker lines). */
export function isGoSpace(c: number): boolean {
  return (
    c === 0x20 ||
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** The value of a quoted string literal's content (between the quotes), as HCL unescapes it. */
export function unescapeQuoted(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c === '\\' && i + 1 < raw.length) {
      const e = raw[i + 1] as string;
      i++;
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case 'u':
        case 'U': {
          const len = e === 'u' ? 4 : 8;
          const digits = raw.slice(i + 1, i + 1 + len);
          const cp = /^[0-9a-fA-F]+$/.test(digits) && digits.length === len ? parseInt(digits, 16) : NaN;
          if (Number.isNaN(cp) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            out += '\\' + e;
          } else {
            out += String.fromCodePoint(cp);
            i += len;
          }
          break;
        }
        default:
          out += '\\' + e;
      }
    } else if ((c === '$' || c === '%') && raw[i + 1] === c && raw[i + 2] === '{') {
      out += c + '{';
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

/** End offset of token `k`; a heredoc's closing token ends at its marker, not after the newline. */
export function tokenEnd(text: string, tokens: Tokens, k: number): number {
  let e = tokens.end[k] as number;
  if (tokens.type[k] === T_CHEREDOC) {
    const s = tokens.start[k] as number;
    while (e > s && isGoSpace(text.charCodeAt(e - 1))) e--;
  }
  return e;
}

/** The first lexical error of a tolerant lex; the token stream ends before it. */
export interface LexError {
  message: string;
  /** UTF-16 offset the error is reported at (the opening quote, the comment marker). */
  offset: number;
}

export interface LexResult {
  tokens: Tokens;
  /** Deepest nesting of `{ [ ( ${ %{` seen. */
  maxDepth: number;
  /** Tolerant mode: the lexical error that ended the stream, if any. */
  error: LexError | null;
}

export interface LexOptions {
  /** Strict: throw `GiveUp` on anything not modelled exactly (see above). Default false. */
  strict?: boolean;
  /** Strict mode: give up when nesting exceeds this. Default: no limit. */
  depthLimit?: number;
  /** Read the whole text as the content of a template (as in a heredoc that never closes): literal
   * text and `${ }` / `%{ }` sequences, as hcl2json renders expressions. Tolerant mode only. */
  template?: boolean;
  /** Called every `CHECK_EVERY` steps (e.g. a deadline's `checkpoint`); what it throws ends the lexing. */
  checkpoint?: (() => void) | undefined;
}

let shared = { type: new Uint8Array(1 << 16), start: new Int32Array(1 << 16), end: new Int32Array(1 << 16) };

/**
 * Tokenizes like hclsyntax's scanner (for the subset described above). Throws `GiveUp`.
 */
class Lexer {
  private type: Uint8Array;
  /** Offsets of the opening quotes of the quoted strings being read (innermost last). */
  private readonly quotes: number[] = [];
  error: LexError | null = null;
  private start: Int32Array;
  private end: Int32Array;
  private count = 0;
  /** Mode stack (the scanner's fcall/fret) and brace accounting for template sequences. */
  private readonly modes: number[] = [M_MAIN];
  private readonly markers: string[] = [];
  private readonly heredocAtLineStart: boolean[] = [];
  private braces = 0;
  private readonly retBraces: number[] = [];
  private depth = 0;
  maxDepth = 0;

  constructor(
    private readonly text: string,
    private readonly strict: boolean,
    private readonly depthLimit: number,
    private readonly checkpoint?: (() => void) | undefined,
  ) {
    if (strict) {
      // The token arrays are shared by every strict call (a verification is synchronous): no
      // allocation per file.
      this.type = shared.type;
      this.start = shared.start;
      this.end = shared.end;
    } else {
      const cap = Math.max(64, Math.min(1 << 16, text.length + 1));
      this.type = new Uint8Array(cap);
      this.start = new Int32Array(cap);
      this.end = new Int32Array(cap);
    }
  }

  /** Tolerant mode: record the first lexical error; the caller then ends the stream. */
  private stop(message: string, offset: number): number {
    this.error = { message, offset };
    return this.text.length;
  }

  private emit(t: number, s: number, e: number): void {
    if (this.count === this.type.length) this.grow();
    this.type[this.count] = t;
    this.start[this.count] = s;
    this.end[this.count] = e;
    this.count++;
  }

  private grow(): void {
    const cap = this.type.length * 2;
    const nt = new Uint8Array(cap);
    nt.set(this.type);
    const ns = new Int32Array(cap);
    ns.set(this.start);
    const ne = new Int32Array(cap);
    ne.set(this.end);
    this.type = nt;
    this.start = ns;
    this.end = ne;
    if (this.strict) shared = { type: nt, start: ns, end: ne };
  }

  private open(at: number): void {
    this.depth++;
    if (this.depth > this.maxDepth) this.maxDepth = this.depth;
    if (this.depth > this.depthLimit && this.strict) throw new GiveUp('nesting too deep', at);
  }

  private close(): void {
    this.depth--;
  }

  /** Cached position of the next `$`, `%` and carriage return (the text length when none). */
  private readonly nextCache = [-1, -1, -1];

  /** Position of the next `ch` (DOLLAR, PERCENT, CR) at or after `from`; `from` never decreases
   * between calls, so every search runs over each character once. */
  private nextOf(ch: number, from: number): number {
    let at = this.nextCache[ch] as number;
    if (at < from) {
      at = this.text.indexOf(SEARCH[ch] as string, from);
      if (at === -1) at = this.text.length;
      this.nextCache[ch] = at;
    }
    return at;
  }

  /** `${` / `%{` at `i` inside a template: emit the opener and enter main mode. */
  private templateSeq(i: number, dollar: boolean): number {
    if (this.strict && this.text.charCodeAt(i + 2) === 0x7e /* ~ */)
      throw new GiveUp('template strip marker', i);
    this.emit(dollar ? T_INTERP : T_CONTROL, i, i + 2);
    this.open(i);
    this.braces++;
    this.retBraces.push(this.braces);
    this.modes.push(M_MAIN);
    return i + 2;
  }

  /** Template mode: a heredoc whose (empty) marker never closes it. */
  startInTemplate(): void {
    this.modes.push(M_HEREDOC);
    this.markers.push('');
    this.heredocAtLineStart.push(false);
  }

  run(): Tokens {
    const n = this.text.length;
    const checkpoint = this.checkpoint;
    let steps = 0;
    let checkAt = CHECK_EVERY;
    let i = 0;
    // One literal run per step in strings and heredocs, up to MAIN_BATCH tokens per step in the
    // main mode (which counts nothing itself: a counter per token there cost a quarter of a cold
    // run's lexing). The checkpoint comes every CHECK_EVERY steps or tokens, whichever is first. The
    // modes are separate methods so that each is small enough for V8 to optimise early and
    // cheaply: as one 430-line loop the function was recompiled by TurboFan up to seven times per
    // scan (each 150-350 ms of compiler time) as rare branches met feedback for the first time,
    // most of a cold CLI run's cost (docs/performance.md).
    while (i < n) {
      if (checkpoint !== undefined && (++steps === CHECK_EVERY || this.count >= checkAt)) {
        steps = 0;
        checkAt = this.count + CHECK_EVERY;
        checkpoint();
      }
      const mode = this.modes[this.modes.length - 1] as number;
      if (mode === M_QUOTE) i = this.quoted(i);
      else if (mode === M_HEREDOC) i = this.heredoc(i);
      else i = this.main(i);
    }
    if (this.strict && this.modes.length !== 1) throw new GiveUp('unterminated template', n);
    this.emit(T_EOF, n, n);
    return { count: this.count, type: this.type, start: this.start, end: this.end };
  }

  /** Quoted-string mode at `i`: a literal run, then the closing quote or a template sequence. */
  private quoted(i: number): number {
    const text = this.text;
    const n = text.length;
    const litStart = i;
    while (i < n) {
      QUOTED_RUN.lastIndex = i;
      QUOTED_RUN.test(text);
      i = QUOTED_RUN.lastIndex;
      if (i >= n) break;
      const c = text.charCodeAt(i);
      if (c === 0x22 /* " */ || c === 0x0a) break;
      if (c === 0x0d) {
        if (this.strict) break;
        i++;
        continue;
      }
      if (c === 0x5c /* \ */) {
        const e = text.charCodeAt(i + 1);
        if (!this.strict) {
          // Any escape is skipped, except that a backslash does not hide a newline.
          i += e === 0x0a ? 1 : 2;
          continue;
        }
        if (e === 0x6e || e === 0x72 || e === 0x74 || e === 0x22 || e === 0x5c) {
          i += 2;
          continue;
        }
        if (e === 0x75 /* u */ || e === 0x55 /* U */) {
          const len = e === 0x75 ? 4 : 8;
          let k = 0;
          while (k < len && isHex(text.charCodeAt(i + 2 + k))) k++;
          if (k !== len || isHex(text.charCodeAt(i + 2 + len))) throw new GiveUp('escape sequence', i);
          const cp = parseInt(text.slice(i + 2, i + 2 + len), 16);
          if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) throw new GiveUp('escape sequence', i);
          i += 2 + len;
          continue;
        }
        throw new GiveUp('escape sequence', i);
      }
      if ((c === 0x24 /* $ */ || c === 0x25) /* % */ && text.charCodeAt(i + 1) === 0x7b /* { */) break;
      if ((c === 0x24 || c === 0x25) && text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === 0x7b) {
        i += 3; // `$${` / `%%{`: literal
        continue;
      }
      i++;
    }
    if (i > n) i = n; // a tolerant escape skipped past the end
    if (i > litStart) this.emit(T_QUOTED_LIT, litStart, i);
    if (i >= n) {
      if (this.strict) throw new GiveUp('unterminated string', litStart);
      return i;
    }
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      this.emit(T_CQUOTE, i, i + 1);
      this.modes.pop();
      if (!this.strict) this.quotes.pop();
      i++;
    } else if (c === 0x0a || c === 0x0d) {
      if (this.strict) throw new GiveUp('newline in a quoted string', i);
      i = this.stop(
        'unterminated string: a quoted string may not span lines',
        this.quotes[this.quotes.length - 1] as number,
      );
    } else {
      i = this.templateSeq(i, c === 0x24);
    }
    return i;
  }

  /** Heredoc (and template) mode at `i`: a closing marker line, or one line's literal up to a
   * template sequence. */
  private heredoc(i: number): number {
    const text = this.text;
    const n = text.length;
    const top = this.heredocAtLineStart.length - 1;
    let nl = text.indexOf('\n', i);
    if (nl === -1) {
      if (this.strict) throw new GiveUp('unterminated heredoc', i);
      nl = n; // tolerant: the rest of the text is template, and no line closes the heredoc
    }
    // The real scanner only accepts a carriage return directly before a line feed.
    const cr = this.nextOf(CR, i);
    if (this.strict && cr < nl - 1) throw new GiveUp('carriage return', cr);
    if (this.heredocAtLineStart[top] === true && nl < n) {
      // A line that is exactly the marker (after TrimSpace) and ends with a newline closes it.
      const lineEnd = cr === nl - 1 ? nl - 1 : nl;
      let a = i;
      let b = lineEnd;
      while (a < b && isGoSpace(text.charCodeAt(a))) a++;
      while (b > a && isGoSpace(text.charCodeAt(b - 1))) b--;
      const marker = this.markers[this.markers.length - 1] as string;
      if (marker !== '' && b - a === marker.length && text.startsWith(marker, a)) {
        // A line holding `$` / `%` is split into several literal tokens by the real scanner, so it
        // is never a closing line; a marker line has neither.
        this.emit(T_CHEREDOC, i, lineEnd);
        this.emit(T_NEWLINE, lineEnd, nl + 1);
        this.markers.pop();
        this.heredocAtLineStart.pop();
        this.modes.pop();
        i = nl + 1;
        return i;
      }
    }
    // The literal runs to the end of the line or to the first `${` / `%{` (`$${` / `%%{` are
    // literal). The next `$` and `%` are found with cached forward searches (linear overall).
    const litStart = i;
    let seq = -1;
    for (let p = i; ;) {
      const s = Math.min(this.nextOf(DOLLAR, p), this.nextOf(PERCENT, p));
      if (s >= nl) break;
      const c0 = text.charCodeAt(s);
      const c1 = text.charCodeAt(s + 1);
      if (c1 === 0x7b) {
        seq = s;
        break;
      }
      p = c1 === c0 && text.charCodeAt(s + 2) === 0x7b ? s + 3 : s + 1;
    }
    if (seq === -1) {
      i = Math.min(nl + 1, n);
      this.emit(T_STRING_LIT, litStart, i);
      this.heredocAtLineStart[top] = true;
    } else {
      if (seq > litStart) this.emit(T_STRING_LIT, litStart, seq);
      this.heredocAtLineStart[top] = false;
      i = this.templateSeq(seq, text.charCodeAt(seq) === 0x24);
    }
    return i;
  }

  /** Main mode from `i`: tokens until the mode changes (a quoted string with a template sequence or
   * an escape, a heredoc, the end of a template sequence) or the text ends. One call reads many
   * tokens: a call and a dispatch per token were most of a cold run's lexing. The common tokens
   * are here, written straight into the token arrays; the rest are in `otherToken`, so that this
   * function's type feedback is complete early (see `run`). */
  private main(i: number): number {
    const text = this.text;
    const n = text.length;
    const strict = this.strict;
    let type = this.type;
    let start = this.start;
    let end = this.end;
    let count = this.count;
    const stop = count + MAIN_BATCH;
    while (i < n && count < stop) {
      // Room for the three tokens of a plain quoted string.
      if (count + 3 > type.length) {
        this.count = count;
        this.grow();
        type = this.type;
        start = this.start;
        end = this.end;
      }
      let c = text.charCodeAt(i);
      // Blanks are skipped here, not as a token of their own.
      if (c === 0x20 || c === 0x09) {
        i++;
        while (i < n && ((c = text.charCodeAt(i)) === 0x20 || c === 0x09)) i++;
        if (i >= n) break;
      }
      if (c < 0x80 && IDENT_START[c] === 1) {
        let j = i + 1;
        while (j < n) {
          const d = text.charCodeAt(j);
          if (d >= 0x80 || IDENT_CONTINUE[d] === 0) break;
          j++;
        }
        if (j < n && text.charCodeAt(j) >= 0x80) {
          if (strict) throw new GiveUp('non-ASCII identifier', i);
          j = i + identLength(text, i);
        }
        type[count] = T_IDENT;
        start[count] = i;
        end[count++] = j;
        i = j;
        continue;
      }
      if (c === 0x0a) {
        type[count] = T_NEWLINE;
        start[count] = i;
        end[count++] = ++i;
        continue;
      }
      switch (c) {
        case 0x23: /* # */ {
          const nl = text.indexOf('\n', i);
          if (nl === -1) {
            type[count] = T_COMMENT;
            start[count] = i;
            end[count++] = n;
            i = n;
          } else {
            type[count] = T_COMMENT_NL;
            start[count] = i;
            end[count++] = nl + 1;
            i = nl + 1;
          }
          continue;
        }
        case 0x22: /* " */ {
          type[count] = T_OQUOTE;
          start[count] = i;
          end[count++] = i + 1;
          // Most strings are a plain literal: read it here, with no mode change.
          QUOTED_RUN.lastIndex = i + 1;
          QUOTED_RUN.test(text);
          const e = QUOTED_RUN.lastIndex;
          if (e < n && text.charCodeAt(e) === 0x22) {
            if (e > i + 1) {
              type[count] = T_QUOTED_LIT;
              start[count] = i + 1;
              end[count++] = e;
            }
            type[count] = T_CQUOTE;
            start[count] = e;
            end[count++] = e + 1;
            i = e + 1;
            continue;
          }
          this.count = count;
          this.modes.push(M_QUOTE);
          if (!strict) this.quotes.push(i);
          return i + 1;
        }
        case 0x7b /* { */:
          type[count] = T_OBRACE;
          start[count] = i;
          end[count++] = i + 1;
          this.open(i);
          this.braces++;
          i++;
          continue;
        case 0x7d /* } */:
          start[count] = i;
          end[count] = i + 1;
          this.depth--;
          this.braces--;
          i++;
          if (this.retBraces.length > 0 && this.retBraces[this.retBraces.length - 1] === this.braces + 1) {
            type[count++] = T_SEQ_END;
            this.retBraces.pop();
            this.modes.pop();
            this.count = count;
            return i;
          }
          type[count++] = T_CBRACE;
          continue;
        case 0x5b:
          type[count] = T_OBRACK;
          start[count] = i;
          end[count++] = i + 1;
          this.open(i);
          i++;
          continue;
        case 0x5d:
          type[count] = T_CBRACK;
          start[count] = i;
          end[count++] = i + 1;
          this.depth--;
          i++;
          continue;
        case 0x28:
          type[count] = T_OPAREN;
          start[count] = i;
          end[count++] = i + 1;
          this.open(i);
          i++;
          continue;
        case 0x29:
          type[count] = T_CPAREN;
          start[count] = i;
          end[count++] = i + 1;
          this.depth--;
          i++;
          continue;
        case 0x2c:
          type[count] = T_COMMA;
          start[count] = i;
          end[count++] = i + 1;
          i++;
          continue;
        case 0x3d: /* = */ {
          const d = text.charCodeAt(i + 1);
          if (d !== 0x3d && d !== 0x3e) {
            type[count] = T_EQUAL;
            start[count] = i;
            end[count++] = i + 1;
            i++;
            continue;
          }
          break;
        }
        case 0x2e /* . */:
          if (text.charCodeAt(i + 1) !== 0x2e) {
            type[count] = T_DOT;
            start[count] = i;
            end[count++] = i + 1;
            i++;
            continue;
          }
          break;
        default:
          break;
      }
      // The rest, one token, which may change the mode (a heredoc opener).
      const modes = this.modes.length;
      this.count = count;
      i = this.otherToken(i);
      count = this.count;
      type = this.type;
      start = this.start;
      end = this.end;
      if (this.modes.length !== modes) return i;
    }
    this.count = count;
    return i;
  }
  /** Main mode, the tokens `main` leaves: carriage returns, numbers, operators, `/` comments,
   * heredoc openers and what the subset rejects. */
  private otherToken(i: number): number {
    const text = this.text;
    const n = text.length;
    const c = text.charCodeAt(i);
    if (c === 0x0d) {
      if (text.charCodeAt(i + 1) !== 0x0a) {
        if (this.strict) throw new GiveUp('carriage return', i);
        i++; // tolerant: white space
        return i;
      }
      this.emit(T_NEWLINE, i, i + 2);
      i += 2;
      return i;
    }
    if (isDigit(c)) {
      // NumberLit = digit (digit | '.' | [eE][+-]?digit)*, not ending with '.'.
      let j = i + 1;
      let good = j;
      for (;;) {
        const d = text.charCodeAt(j);
        if (isDigit(d)) {
          j++;
          good = j;
        } else if (d === 0x2e) {
          j++;
        } else if (d === 0x65 || d === 0x45) {
          const s = text.charCodeAt(j + 1);
          if (isDigit(s)) {
            j += 2;
            good = j;
          } else if ((s === 0x2b || s === 0x2d) && isDigit(text.charCodeAt(j + 2))) {
            j += 3;
            good = j;
          } else break;
        } else break;
      }
      if (this.strict && !NUMBER_FORM.test(text.slice(i, good))) throw new GiveUp('number literal', i);
      this.emit(T_NUMBER, i, good);
      i = good;
      return i;
    }
    switch (c) {
      case 0x2f: /* / */ {
        const d = text.charCodeAt(i + 1);
        if (d === 0x2f) {
          const nl = text.indexOf('\n', i);
          if (nl === -1) {
            this.emit(T_COMMENT, i, n);
            i = n;
          } else {
            this.emit(T_COMMENT_NL, i, nl + 1);
            i = nl + 1;
          }
          return i;
        }
        if (d === 0x2a) {
          const e = text.indexOf('*/', i + 2);
          if (e === -1) {
            if (this.strict) throw new GiveUp('unterminated comment', i);
            i = this.stop('unterminated comment: "/*" is never closed', i);
            return i;
          }
          this.emit(T_COMMENT, i, e + 2);
          i = e + 2;
          return i;
        }
        this.emit(T_BINOP, i, i + 1);
        i++;
        return i;
      }
      case 0x2e /* . */:
        if (text.charCodeAt(i + 1) === 0x2e && text.charCodeAt(i + 2) === 0x2e) {
          this.emit(T_ELLIPSIS, i, i + 3);
          i += 3;
        } else {
          this.emit(T_DOT, i, i + 1);
          i++;
        }
        return i;
      case 0x2a:
        this.emit(T_STAR, i, i + 1);
        i++;
        return i;
      case 0x2b: /* + */
      case 0x25 /* % */:
        this.emit(T_BINOP, i, i + 1);
        i++;
        return i;
      case 0x2d /* - */:
        this.emit(T_MINUS, i, i + 1);
        i++;
        return i;
      case 0x3d: /* = */ {
        const d = text.charCodeAt(i + 1);
        if (d === 0x3d) {
          this.emit(T_BINOP, i, i + 2);
          i += 2;
        } else if (d === 0x3e) {
          this.emit(T_FATARROW, i, i + 2);
          i += 2;
        } else {
          this.emit(T_EQUAL, i, i + 1);
          i++;
        }
        return i;
      }
      case 0x21 /* ! */:
        if (text.charCodeAt(i + 1) === 0x3d) {
          this.emit(T_BINOP, i, i + 2);
          i += 2;
        } else {
          this.emit(T_BANG, i, i + 1);
          i++;
        }
        return i;
      case 0x3e: /* > */ {
        const len = text.charCodeAt(i + 1) === 0x3d ? 2 : 1;
        this.emit(T_BINOP, i, i + len);
        i += len;
        return i;
      }
      case 0x3c: /* < */ {
        const d = text.charCodeAt(i + 1);
        if (d === 0x3d) {
          this.emit(T_BINOP, i, i + 2);
          i += 2;
          return i;
        }
        if (d === 0x3c) {
          // Heredoc opener: `<<` `-`? Ident Newline.
          let j = i + 2;
          if (text.charCodeAt(j) === 0x2d) j++;
          const m0 = j;
          const tolerantLength = this.strict ? 0 : identLength(text, j);
          if (tolerantLength > 0 || isIdentStart(text.charCodeAt(j))) {
            j++;
            while (j < n && isIdentContinue(text.charCodeAt(j))) j++;
            if (j < n && text.charCodeAt(j) >= 0x80) {
              if (this.strict) throw new GiveUp('non-ASCII heredoc marker', i);
            }
            if (!this.strict) j = m0 + tolerantLength;
            let k = j;
            if (text.charCodeAt(k) === 0x0d) k++;
            if (text.charCodeAt(k) === 0x0a) {
              this.emit(T_OHEREDOC, i, k + 1);
              this.markers.push(text.slice(m0, j));
              this.heredocAtLineStart.push(true);
              this.modes.push(M_HEREDOC);
              i = k + 1;
              return i;
            }
          }
        }
        this.emit(T_BINOP, i, i + 1);
        i++;
        return i;
      }
      case 0x3f:
        this.emit(T_QUESTION, i, i + 1);
        i++;
        return i;
      case 0x3a /* : */:
        if (text.charCodeAt(i + 1) === 0x3a) {
          this.emit(T_DCOLON, i, i + 2);
          i += 2;
          return i;
        }
        this.emit(T_COLON, i, i + 1);
        i++;
        return i;
      case 0x26 /* & */:
        if (text.charCodeAt(i + 1) === 0x26) {
          this.emit(T_BINOP, i, i + 2);
          i += 2;
          return i;
        }
        if (this.strict) throw new GiveUp('"&"', i);
        this.emit(T_OTHER, i, i + 1);
        i++;
        return i;
      case 0x7c /* | */:
        if (text.charCodeAt(i + 1) === 0x7c) {
          this.emit(T_BINOP, i, i + 2);
          i += 2;
          return i;
        }
        if (this.strict) throw new GiveUp('"|"', i);
        this.emit(T_OTHER, i, i + 1);
        i++;
        return i;
      default: {
        if (this.strict) throw new GiveUp(`character U+${c.toString(16).padStart(4, '0')}`, i);
        const id = c >= 0x80 ? identLength(text, i) : 0;
        if (id > 0) {
          this.emit(T_IDENT, i, i + id);
          i += id;
          return i;
        }
        // One character (a surrogate pair is one).
        const len = c >= 0xd800 && c <= 0xdbff && i + 1 < n ? 2 : 1;
        this.emit(T_OTHER, i, i + len);
        i += len;
        return i;
      }
    }
  }
}

/**
 * Tokenizes `text`. Strict mode throws `GiveUp`; its tokens are valid only until the next strict
 * call. Tolerant mode never throws and returns tokens of its own.
 */
export function lex(text: string, options: LexOptions = {}): LexResult {
  const strict = options.strict === true;
  // No limit is the largest small integer, not Infinity: a double where the optimised code had
  // seen only small integers deoptimised `main` for the rest of a scan (the first tolerant lex).
  const lexer = new Lexer(
    text,
    strict,
    Math.min(options.depthLimit ?? NO_LIMIT, NO_LIMIT),
    options.checkpoint,
  );
  if (options.template === true && !strict) lexer.startInTemplate();
  const tokens = lexer.run();
  return { tokens, maxDepth: lexer.maxDepth, error: lexer.error };
}
