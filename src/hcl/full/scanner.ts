/**
 * The structure of a file in HCL native syntax, for any text: blocks with their labels, attributes
 * and the offsets and lines they span, found without evaluating expressions. It decides which names
 * are blocks and which are attributes, measures the nesting depth before the file is handed to
 * hcl2json (whose recursive descent parser overflows on deep nesting), reports lexical errors with
 * positions, and collects comments.
 *
 * It walks the tokens of the shared lexer (`../lexer.ts`, tolerant mode) with an explicit bracket
 * stack, so 100k nested brackets cost memory proportional to the input and nothing else:
 * - newlines (and line comments, which end with one) end an attribute only at the nesting level of
 *   the body, not inside `( [ {`; `/* *\/` comments never end one;
 * - `}` `]` `)` must match the innermost opener, and anything left open at the end is an error;
 * - it stops at the first error. Grammar errors that are not lexical (for example `a b = 1`) are
 *   tolerated here; hcl2json gives the verdict.
 */
import { lex, TOKEN, tokenEnd, unescapeQuoted } from '../lexer';
import { PositionMap } from '../positions';
import { CHECK_EVERY } from '../../util/deadline';
import type { SyntaxBlock, SyntaxBody } from '../syntax';

/** The scanner's syntax tree (`exprStart`/`exprEnd` index the tolerant lexer's tokens). */
export type ScanBody = SyntaxBody;

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
  /** Called every `CHECK_EVERY` tokens (e.g. a deadline's `checkpoint`); what it throws ends the scan. */
  checkpoint?: (() => void) | undefined;
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
  /** F_BLOCK: the block whose body this is. */
  block: SyntaxBlock | null;
  /** F_QUOTE: the string is a block label. */
  label: boolean;
  /** F_HEREDOC: the closing marker. */
  marker: string;
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

const {
  EOF: T_EOF,
  NEWLINE: T_NEWLINE,
  COMMENT_NL: T_COMMENT_NL,
  COMMENT: T_COMMENT,
  IDENT: T_IDENT,
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
  EQUAL: T_EQUAL,
} = TOKEN;

/**
 * Scans HCL native syntax and returns its body structure. Linear in the input size; never recurses.
 */
export function scanHcl(path: string, text: string, options: ScannerOptions = {}): ScanResult {
  const depthLimit = options.depthLimit ?? Infinity;
  const root: ScanBody = { attributes: [], blocks: [] };
  const stack: Frame[] = [];
  const errors: ScanError[] = [];
  const comments: ScanComment[] | null = options.comments === true ? [] : null;
  const checkpoint = options.checkpoint;
  const { tokens, error: lexError } = lex(text, { checkpoint });
  const { type, start, end } = tokens;

  // Lines are looked up by offset (binary search over line starts) only where a result needs one.
  // Lines and columns come from the one offset → position map (only where a result needs them).
  const positions = new PositionMap(path, text, 0);
  const lineOf = (offset: number): number => positions.line(offset);
  const located = (message: string, offset: number): ScanError => {
    const { line, column } = positions.pos(offset);
    return { message, line, column };
  };

  let depth = 0;
  let maxDepth = 0;
  let depthLimitExceeded: { line: number; column: number } | null = null;

  // The item being read in the innermost body.
  let state = S_ITEM;
  let name = '';
  let nameStart = 0;
  let exprStart = 0;
  let labels: string[] = [];
  // The last token seen (for attribute end positions): its start and end offsets.
  let lastStart = 0;
  let lastEnd = 0;
  let lastToken = 0;

  const push = (
    kind: number,
    pos: number,
    block: SyntaxBlock | null,
    label: boolean,
    marker: string,
  ): void => {
    stack.push({ kind, pos, block, label, marker });
    if (kind <= F_DIRECTIVE) {
      depth++;
      if (depth > maxDepth) maxDepth = depth;
      if (depth > depthLimit && depthLimitExceeded === null) {
        const at = located('', pos);
        depthLimitExceeded = { line: at.line, column: at.column };
      }
    }
  };

  const pop = (): void => {
    const frame = stack.pop();
    if (frame !== undefined && frame.kind <= F_DIRECTIVE) depth--;
  };

  const currentBody = (): ScanBody => {
    const top = stack[stack.length - 1];
    return top === undefined ? root : (top.block as SyntaxBlock).body;
  };

  const finishAttribute = (): void => {
    currentBody().attributes.push({
      name,
      line: lineOf(nameStart),
      endLine: lineOf(lastStart),
      start: nameStart,
      end: lastEnd,
      exprStart,
      exprEnd: lastToken + 1,
    });
  };

  /** A token (other than a newline) at body level. `ident` is set for identifiers. */
  const bodyToken = (at: number, ident: string | null): void => {
    switch (state) {
      case S_ITEM:
        if (ident !== null) {
          state = S_NAME;
          name = ident;
          nameStart = at;
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

  const recordComment = (list: ScanComment[], s: number, e: number, body: string): void => {
    list.push({
      text: body,
      line: lineOf(s),
      endLine: lineOf(Math.max(s, e - 1)),
      start: s,
      end: e,
      beforeItems:
        stack.length === 0 && state === S_ITEM && root.attributes.length === 0 && root.blocks.length === 0,
    });
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
        return `unbalanced brackets: the block "${(frame.block as SyntaxBlock).type}" is never closed`;
      default:
        return `unbalanced brackets: "${OPENERS[frame.kind]}" is never closed`;
    }
  };

  const count = tokens.count;
  for (let k = 0; k < count && errors.length === 0; k++) {
    if (checkpoint !== undefined && k % CHECK_EVERY === 0) checkpoint();
    const t = type[k] as number;
    const s = start[k] as number;
    const e = end[k] as number;
    if (t === T_EOF) break;
    const top = stack[stack.length - 1];
    const atBody = top === undefined || top.kind === F_BLOCK;

    switch (t) {
      case T_QUOTED_LIT:
      case T_STRING_LIT:
        continue;
      case T_NEWLINE:
        if (atBody) {
          if (state === S_EXPR) finishAttribute();
          state = S_ITEM;
        }
        continue;
      case T_COMMENT_NL:
      case T_COMMENT: {
        if (comments !== null) {
          const line = text.charCodeAt(s) === 0x23 || text.charCodeAt(s + 1) === 0x2f;
          if (line) {
            // A line comment ends before its newline (and a CR before it).
            let stop = t === T_COMMENT_NL ? e - 1 : e;
            if (text.charCodeAt(stop - 1) === 0x0d && stop - 1 > s) stop--;
            const from = s + (text.charCodeAt(s) === 0x23 ? 1 : 2);
            recordComment(comments, s, t === T_COMMENT_NL ? e - 1 : e, text.slice(from, stop));
          } else {
            recordComment(comments, s, e, text.slice(s + 2, e - 2));
          }
        }
        if (t === T_COMMENT_NL && atBody) {
          if (state === S_EXPR) finishAttribute();
          state = S_ITEM;
        }
        continue;
      }
      case T_OQUOTE: {
        const isLabel = atBody && (state === S_NAME || state === S_LABELS);
        if (atBody && !isLabel) bodyToken(s, null);
        push(F_QUOTE, s, null, isLabel, '');
        break;
      }
      case T_CQUOTE: {
        const frame = top as Frame;
        pop();
        if (frame.label) {
          labels.push(unescapeQuoted(text.slice(frame.pos + 1, s)));
          state = S_LABELS;
        }
        break;
      }
      case T_OHEREDOC: {
        if (atBody) bodyToken(s, null);
        let m = s + 2;
        if (text.charCodeAt(m) === 0x2d) m++;
        let me = e - 1;
        if (text.charCodeAt(me - 1) === 0x0d) me--;
        push(F_HEREDOC, s, null, false, text.slice(m, me));
        continue; // the opener does not end an expression
      }
      case T_CHEREDOC:
        pop();
        lastStart = s;
        lastEnd = tokenEnd(text, tokens, k);
        lastToken = k;
        continue;
      case T_INTERP:
      case T_CONTROL:
        push(t === T_INTERP ? F_INTERP : F_DIRECTIVE, s, null, false, '');
        break;
      case T_OBRACE:
        if (atBody && (state === S_NAME || state === S_LABELS)) {
          const block: SyntaxBlock = {
            type: name,
            labels,
            line: lineOf(nameStart),
            endLine: lineOf(nameStart),
            start: nameStart,
            end: e,
            body: { attributes: [], blocks: [] },
          };
          currentBody().blocks.push(block);
          push(F_BLOCK, s, block, false, '');
          state = S_ITEM;
        } else {
          if (atBody) bodyToken(s, null);
          push(F_BRACE, s, null, false, '');
        }
        break;
      case T_CBRACE:
      case T_SEQ_END:
      case T_CBRACK:
      case T_CPAREN: {
        const ch = text[s] as string;
        if (top === undefined) {
          errors.push(located(`unbalanced brackets: unexpected "${ch}"`, s));
          break;
        }
        const kind = top.kind;
        const matches =
          t === T_CBRACK
            ? kind === F_BRACKET
            : t === T_CPAREN
              ? kind === F_PAREN
              : kind === F_BLOCK || kind === F_BRACE || kind === F_INTERP || kind === F_DIRECTIVE;
        if (!matches) {
          const opener = located('', top.pos);
          errors.push(
            located(
              `unbalanced brackets: "${ch}" does not match "${OPENERS[kind]}" at line ${opener.line}, column ${opener.column}`,
              s,
            ),
          );
          break;
        }
        if (kind === F_BLOCK) {
          if (state === S_EXPR) finishAttribute();
          const block = top.block as SyntaxBlock;
          block.endLine = lineOf(s);
          block.end = e;
          pop();
          state = S_ITEM;
        } else {
          pop();
        }
        break;
      }
      case T_OBRACK:
      case T_OPAREN:
        if (atBody) bodyToken(s, null);
        push(t === T_OBRACK ? F_BRACKET : F_PAREN, s, null, false, '');
        break;
      case T_EQUAL:
        if (atBody) {
          if (state === S_NAME) {
            state = S_EXPR;
            exprStart = k + 1;
          } else bodyToken(s, null);
        }
        break;
      case T_IDENT:
        if (atBody) bodyToken(s, text.slice(s, e));
        break;
      default:
        if (atBody) bodyToken(s, null);
        break;
    }
    lastStart = s;
    lastEnd = e;
    lastToken = k;
  }

  if (errors.length === 0) {
    const top = stack[stack.length - 1];
    if (lexError !== null) {
      errors.push(located(lexError.message, lexError.offset));
    } else if (top !== undefined) {
      errors.push(located(unclosedMessage(top), top.pos));
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
