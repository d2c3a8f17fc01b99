/**
 * An exact, linear-time lexer for the structure of HCL native syntax.
 *
 * It finds the body structure of a file (blocks with their labels, attributes, and the lines they
 * span) without evaluating expressions, so it can decide which names are blocks and which are
 * attributes, measure the nesting depth before the file is handed to hcl2json (whose recursive
 * descent parser overflows on deep nesting), and report lexical errors with positions.
 *
 * The token rules follow hashicorp/hcl `hclsyntax` (scan_tokens.rl, scan_string_lit.rl, peeker.go):
 * - `#` and `//` comments run to the end of the line and count as a newline; `/* *\/` comments do
 *   not end an attribute even when they span lines.
 * - Quoted strings are templates: `\` escapes, `${ }` interpolations and `%{ }` directives (which
 *   contain ordinary expressions, so strings nest), `$${` and `%%{` are literal. A raw newline inside
 *   a quoted string is an error.
 * - Heredocs start with `<<ID` or `<<-ID` directly followed by a newline (LF or CRLF); they end at
 *   the first line that, with surrounding white space removed, equals `ID` and is followed by a
 *   newline. Heredocs are templates too (no backslash escapes).
 * - Newlines end an attribute only at the nesting level of the body (not inside `( [ {`).
 *
 * The scanner never recurses: it keeps an explicit stack, so 100k nested brackets cost memory
 * proportional to the input and nothing else. It stops at the first lexical error. Grammar errors
 * that are not lexical (for example `a b = 1`) are tolerated here; hcl2json gives the verdict.
 */
import { codePointColumn } from '../decode';

export interface ScanAttribute {
  name: string;
  /** 1-based line of the attribute name. */
  line: number;
  /** 1-based line of the last token of the expression. */
  endLine: number;
  /** UTF-16 offset of the attribute name in the scanned text. */
  start: number;
  /** UTF-16 offset just past the last token of the expression. */
  end: number;
}

export interface ScanBlock {
  type: string;
  /** Label values (quoted labels unescaped, bare labels as written). */
  labels: string[];
  /** 1-based line of the block type name. */
  line: number;
  /** 1-based line of the closing brace. */
  endLine: number;
  /** UTF-16 offset of the block type name. */
  start: number;
  /** UTF-16 offset just past the closing brace. */
  end: number;
  /** UTF-16 offset just past the opening brace. */
  bodyStart: number;
  body: ScanBody;
}

export interface ScanBody {
  /** Attributes in source order. */
  attributes: ScanAttribute[];
  /** Blocks in source order. */
  blocks: ScanBlock[];
}

export interface ScanError {
  message: string;
  line: number;
  /** 1-based column, counted in code points. */
  column: number;
}

export interface ScannerOptions {
  /** Record where the nesting depth first exceeds this value (`depthLimitExceeded`). */
  depthLimit?: number;
  /** Collect the file's comments (`ScanResult.comments`), e.g. for inline annotations. */
  comments?: boolean;
}

/** A comment (`#`, `//` or `/* *\/`), as the lexer found it: never text inside a string or heredoc. */
export interface ScanComment {
  /** The text after `#` / `//`, or between `/*` and `*\/`. */
  text: string;
  /** 1-based line where the comment starts. */
  line: number;
  /** 1-based line where it ends (differs from `line` only for a `/* *\/` comment). */
  endLine: number;
  /** UTF-16 offset of the comment marker. */
  start: number;
  /** UTF-16 offset just past the comment (before the newline that ends a line comment). */
  end: number;
  /** No attribute or block of the file starts before it (a comment in the file's header). */
  beforeItems: boolean;
}

export interface ScanResult {
  path: string;
  body: ScanBody;
  /** Deepest nesting of `{ [ ( ${ %{` (block bodies included) seen in the file. */
  maxDepth: number;
  /** Position of the opening bracket that first took the depth past `options.depthLimit`. */
  depthLimitExceeded: { line: number; column: number } | null;
  /** Lexical errors; scanning stops at the first one, so there is at most one. */
  errors: ScanError[];
  /** Comments in source order, when `options.comments` is set (up to a lexical error). */
  comments?: ScanComment[];
}

// Frame kinds. The first six count towards the nesting depth.
const F_BLOCK = 0;
const F_BRACE = 1;
const F_BRACKET = 2;
const F_PAREN = 3;
const F_INTERP = 4;
const F_DIRECTIVE = 5;
const F_QUOTE = 6;
const F_HEREDOC = 7;

interface Frame {
  kind: number;
  /** Offset of the opening token. */
  pos: number;
  line: number;
  lineStart: number;
  /** F_BLOCK: the block whose body this is. */
  block: ScanBlock | null;
  /** F_QUOTE: the string is a block label. */
  label: boolean;
  /** F_HEREDOC: the closing marker, and whether the scanner stands at the start of a line. */
  marker: string;
  atLineStart: boolean;
}

// Body states (meaningful while the top of the stack is a body: the root or a block).
const S_ITEM = 0; // expecting an attribute or block name (or a newline, or `}`)
const S_NAME = 1; // after the name: `=`, a label or `{`
const S_LABELS = 2; // after at least one label: more labels or `{`
const S_EXPR = 3; // inside an attribute's expression
const S_SKIP = 4; // after a grammar error: ignore tokens up to the next newline of this body

const OPENERS: Record<number, string> = {
  [F_BLOCK]: '{',
  [F_BRACE]: '{',
  [F_BRACKET]: '[',
  [F_PAREN]: '(',
  [F_INTERP]: '${',
  [F_DIRECTIVE]: '%{',
};

const ID_START = /[\p{ID_Start}_]/u;
const ID_CONTINUE = /[\p{ID_Continue}-]/u;

function isAsciiIdStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}

function isAsciiIdContinue(c: number): boolean {
  return isAsciiIdStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
}

/** Length of the identifier at `i` (0 if there is none). HCL identifiers: ID_Start or `_`, then
 * ID_Continue or `-`. */
function identLength(text: string, i: number): number {
  const n = text.length;
  let j = i;
  let first = true;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c < 0x80) {
      if (first ? !isAsciiIdStart(c) : !isAsciiIdContinue(c)) break;
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

/**
 * Scans HCL native syntax and returns its body structure. Linear in the input size; never recurses.
 */
export function scanHcl(path: string, text: string, options: ScannerOptions = {}): ScanResult {
  const depthLimit = options.depthLimit ?? Infinity;
  const n = text.length;
  const root: ScanBody = { attributes: [], blocks: [] };
  const stack: Frame[] = [];
  const errors: ScanError[] = [];
  const comments: ScanComment[] | null = options.comments === true ? [] : null;

  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0;
  let maxDepth = 0;
  let depthLimitExceeded: { line: number; column: number } | null = null;

  // The item being read in the innermost body.
  let state = S_ITEM;
  let name = '';
  let nameLine = 0;
  let nameStart = 0;
  let labels: string[] = [];
  // The last token seen (for attribute end positions).
  let lastLine = 1;
  let lastEnd = 0;

  const fail = (message: string, at: number, atLine: number, atLineStart: number): void => {
    errors.push({ message, line: atLine, column: codePointColumn(text, atLineStart, at) });
    i = n;
  };

  const push = (kind: number, pos: number, extra?: Partial<Frame>): Frame => {
    const frame: Frame = {
      kind,
      pos,
      line,
      lineStart,
      block: null,
      label: false,
      marker: '',
      atLineStart: false,
      ...extra,
    };
    stack.push(frame);
    if (kind <= F_DIRECTIVE) {
      depth++;
      if (depth > maxDepth) maxDepth = depth;
      if (depth > depthLimit && depthLimitExceeded === null) {
        depthLimitExceeded = { line, column: codePointColumn(text, lineStart, pos) };
      }
    }
    return frame;
  };

  /** The comment spans `start`..`end`; `body` is its text without the markers. */
  const recordComment = (
    list: ScanComment[],
    start: number,
    end: number,
    body: string,
    endLine: number,
  ): void => {
    list.push({
      text: body,
      line,
      endLine,
      start,
      end,
      beforeItems:
        stack.length === 0 && state === S_ITEM && root.attributes.length === 0 && root.blocks.length === 0,
    });
  };

  const pop = (): void => {
    const frame = stack.pop();
    if (frame !== undefined && frame.kind <= F_DIRECTIVE) depth--;
  };

  const currentBody = (): ScanBody => {
    const top = stack[stack.length - 1];
    return top === undefined ? root : (top.block as ScanBlock).body;
  };

  const finishAttribute = (): void => {
    currentBody().attributes.push({
      name,
      line: nameLine,
      endLine: lastLine,
      start: nameStart,
      end: lastEnd,
    });
  };

  /** A token (other than a newline) at body level. `ident` is set for identifiers. */
  const bodyToken = (start: number, ident: string | null): void => {
    switch (state) {
      case S_ITEM:
        if (ident !== null) {
          state = S_NAME;
          name = ident;
          nameLine = line;
          nameStart = start;
          labels = [];
        } else {
          state = S_SKIP;
        }
        break;
      case S_NAME:
      case S_LABELS:
        if (ident !== null) {
          labels.push(ident);
          state = S_LABELS;
        } else {
          state = S_SKIP;
        }
        break;
      default:
        break;
    }
  };

  const unclosedMessage = (frame: Frame): string => {
    switch (frame.kind) {
      case F_QUOTE:
        return 'unterminated string: the quoted string is not closed';
      case F_HEREDOC:
        return `unterminated heredoc: no closing marker "${frame.marker}" was found`;
      case F_INTERP:
        return 'unterminated template interpolation: "${" is never closed';
      case F_DIRECTIVE:
        return 'unterminated template directive: "%{" is never closed';
      case F_BLOCK:
        return `unbalanced brackets: the block "${(frame.block as ScanBlock).type}" is never closed`;
      default:
        return `unbalanced brackets: "${OPENERS[frame.kind]}" is never closed`;
    }
  };

  while (i < n) {
    const top = stack[stack.length - 1];
    const kind = top === undefined ? F_BLOCK : top.kind;

    // ------------------------------------------------------------------ quoted template string
    if (kind === F_QUOTE) {
      const frame = top as Frame;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c === 0x22 /* " */) {
          pop();
          lastLine = line;
          lastEnd = i + 1;
          if (frame.label) {
            labels.push(unescapeQuoted(text.slice(frame.pos + 1, i)));
            state = S_LABELS;
          }
          i++;
          break;
        }
        if (c === 0x0a) {
          fail(
            'unterminated string: a quoted string may not span lines',
            frame.pos,
            frame.line,
            frame.lineStart,
          );
          break;
        }
        if (c === 0x5c /* \ */) {
          i += text.charCodeAt(i + 1) === 0x0a ? 1 : 2;
          continue;
        }
        if ((c === 0x24 /* $ */ || c === 0x25) /* % */ && i + 1 < n) {
          const c1 = text.charCodeAt(i + 1);
          if (c1 === c && text.charCodeAt(i + 2) === 0x7b) {
            i += 3; // `$${` / `%%{`: literal
            continue;
          }
          if (c1 === 0x7b /* { */) {
            push(c === 0x24 ? F_INTERP : F_DIRECTIVE, i);
            lastLine = line;
            lastEnd = i + 2;
            i += 2;
            break;
          }
        }
        i++;
      }
      continue;
    }

    // ------------------------------------------------------------------ heredoc template
    if (kind === F_HEREDOC) {
      const frame = top as Frame;
      let leave = false;
      while (i < n && !leave) {
        if (frame.atLineStart) {
          frame.atLineStart = false;
          let j = i;
          while (j < n && text.charCodeAt(j) !== 0x0a && isGoSpace(text.charCodeAt(j))) j++;
          if (text.startsWith(frame.marker, j)) {
            let k = j + frame.marker.length;
            while (k < n && text.charCodeAt(k) !== 0x0a && isGoSpace(text.charCodeAt(k))) k++;
            if (k < n && text.charCodeAt(k) === 0x0a) {
              // Closing marker: the newline after it is an ordinary newline token.
              pop();
              lastLine = line;
              lastEnd = j + frame.marker.length;
              i = k;
              leave = true;
              continue;
            }
          }
        }
        const c = text.charCodeAt(i);
        if (c === 0x0a) {
          i++;
          line++;
          lineStart = i;
          frame.atLineStart = true;
          continue;
        }
        if ((c === 0x24 || c === 0x25) && i + 1 < n) {
          const c1 = text.charCodeAt(i + 1);
          if (c1 === c && text.charCodeAt(i + 2) === 0x7b) {
            i += 3;
            continue;
          }
          if (c1 === 0x7b) {
            push(c === 0x24 ? F_INTERP : F_DIRECTIVE, i);
            lastLine = line;
            lastEnd = i + 2;
            i += 2;
            leave = true;
            continue;
          }
        }
        i++;
      }
      continue;
    }

    // ------------------------------------------------------------------ expressions and bodies
    const atBody = kind === F_BLOCK;
    const c = text.charCodeAt(i);

    if (c === 0x20 || c === 0x09 || c === 0x0d) {
      i++;
      continue;
    }

    if (c === 0x0a) {
      if (atBody) {
        if (state === S_EXPR) finishAttribute();
        state = S_ITEM;
      }
      i++;
      line++;
      lineStart = i;
      continue;
    }

    // Comments. A line comment ends before its newline, which is then handled as a newline.
    if (c === 0x23 /* # */ || (c === 0x2f /* / */ && text.charCodeAt(i + 1) === 0x2f)) {
      const nl = text.indexOf('\n', i);
      const end = nl === -1 ? n : nl;
      if (comments !== null) {
        const body = text.slice(i + (c === 0x23 ? 1 : 2), end);
        recordComment(comments, i, end, body.endsWith('\r') ? body.slice(0, -1) : body, line);
      }
      i = end;
      continue;
    }
    if (c === 0x2f && text.charCodeAt(i + 1) === 0x2a /* * */) {
      const close = text.indexOf('*/', i + 2);
      if (close === -1) {
        fail('unterminated comment: "/*" is never closed', i, line, lineStart);
        break;
      }
      if (comments !== null) {
        let endLine = line;
        for (let nl = text.indexOf('\n', i); nl !== -1 && nl < close; nl = text.indexOf('\n', nl + 1))
          endLine++;
        recordComment(comments, i, close + 2, text.slice(i + 2, close), endLine);
      }
      for (let nl = text.indexOf('\n', i); nl !== -1 && nl < close; nl = text.indexOf('\n', nl + 1)) {
        line++;
        lineStart = nl + 1;
      }
      i = close + 2;
      continue;
    }

    if (c === 0x22 /* " */) {
      const isLabel = atBody && (state === S_NAME || state === S_LABELS);
      if (atBody && !isLabel) bodyToken(i, null);
      push(F_QUOTE, i, { label: isLabel });
      lastLine = line;
      lastEnd = i + 1;
      i++;
      continue;
    }

    if (c === 0x7b /* { */) {
      if (atBody && (state === S_NAME || state === S_LABELS)) {
        const block: ScanBlock = {
          type: name,
          labels,
          line: nameLine,
          endLine: nameLine,
          start: nameStart,
          end: i + 1,
          bodyStart: i + 1,
          body: { attributes: [], blocks: [] },
        };
        currentBody().blocks.push(block);
        push(F_BLOCK, i, { block });
        state = S_ITEM;
      } else {
        if (atBody) bodyToken(i, null);
        push(F_BRACE, i);
      }
      lastLine = line;
      lastEnd = i + 1;
      i++;
      continue;
    }

    if (c === 0x7d /* } */ || c === 0x5d /* ] */ || c === 0x29 /* ) */) {
      if (top === undefined) {
        fail(`unbalanced brackets: unexpected "${text[i]}"`, i, line, lineStart);
        break;
      }
      const expected =
        c === 0x7d ? [F_BLOCK, F_BRACE, F_INTERP, F_DIRECTIVE] : c === 0x5d ? [F_BRACKET] : [F_PAREN];
      if (!expected.includes(top.kind)) {
        const col = codePointColumn(text, top.lineStart, top.pos);
        fail(
          `unbalanced brackets: "${text[i]}" does not match "${OPENERS[top.kind]}" at line ${top.line}, column ${col}`,
          i,
          line,
          lineStart,
        );
        break;
      }
      if (top.kind === F_BLOCK) {
        if (state === S_EXPR) finishAttribute();
        const block = top.block as ScanBlock;
        block.endLine = line;
        block.end = i + 1;
        pop();
        state = S_ITEM;
      } else {
        pop();
      }
      lastLine = line;
      lastEnd = i + 1;
      i++;
      continue;
    }

    if (c === 0x5b /* [ */ || c === 0x28 /* ( */) {
      if (atBody) bodyToken(i, null);
      push(c === 0x5b ? F_BRACKET : F_PAREN, i);
      lastLine = line;
      lastEnd = i + 1;
      i++;
      continue;
    }

    if (c === 0x3d /* = */) {
      const next = text.charCodeAt(i + 1);
      const len = next === 0x3d || next === 0x3e ? 2 : 1; // `==`, `=>`
      if (atBody) {
        if (state === S_NAME && len === 1) state = S_EXPR;
        else bodyToken(i, null);
      }
      lastLine = line;
      lastEnd = i + len;
      i += len;
      continue;
    }

    if (c === 0x3c /* < */ && text.charCodeAt(i + 1) === 0x3c) {
      let j = i + 2;
      if (text.charCodeAt(j) === 0x2d /* - */) j++;
      const len = identLength(text, j);
      if (len > 0) {
        let k = j + len;
        if (text.charCodeAt(k) === 0x0d) k++;
        if (text.charCodeAt(k) === 0x0a) {
          if (atBody) bodyToken(i, null);
          push(F_HEREDOC, i, { marker: text.slice(j, j + len), atLineStart: true });
          i = k + 1;
          line++;
          lineStart = i;
          continue;
        }
      }
    }

    // Identifiers, numbers and any other single token.
    const idLen = identLength(text, i);
    if (idLen > 0) {
      if (atBody) bodyToken(i, text.slice(i, i + idLen));
      lastLine = line;
      lastEnd = i + idLen;
      i += idLen;
      continue;
    }
    let len = 1;
    if (c >= 0x30 && c <= 0x39) {
      while (i + len < n && isAsciiIdContinue(text.charCodeAt(i + len)) && text.charCodeAt(i + len) !== 0x2d)
        len++;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      len = 2;
    }
    if (atBody) bodyToken(i, null);
    lastLine = line;
    lastEnd = i + len;
    i += len;
  }

  if (errors.length === 0) {
    const top = stack[stack.length - 1];
    if (top !== undefined) {
      errors.push({
        message: unclosedMessage(top),
        line: top.line,
        column: codePointColumn(text, top.lineStart, top.pos),
      });
    } else if (state === S_EXPR) {
      finishAttribute();
    }
  }

  return {
    path,
    body: root,
    maxDepth,
    depthLimitExceeded,
    errors,
    ...(comments === null ? {} : { comments }),
  };
}
