/**
 * A conservative verifier for HCL native syntax: it either proves that hcl2json would accept a file
 * (`{ ok: true }`, with the body structure and the tokens needed to read literal values), or gives
 * up (`{ ok: false }`). Giving up says nothing about the file: the caller then runs the full
 * hcl2json parse, which gives the authoritative verdict and message. So the only property that
 * matters is soundness: **whenever this returns `ok: true`, hcl2json (hclsyntax + the tmccombs
 * converter, as packaged by @cdktf/hcl2json) accepts the file.**
 *
 * It is a port of the acceptance logic of hashicorp/hcl `hclsyntax` (scan_tokens.rl, peeker.go,
 * parser.go, parser_template.go; parser error paths become "give up") restricted to what real
 * configurations use; everything outside that subset gives up rather than guessing:
 * - characters HCL rejects or that this port does not model: `&`, `|`, `^`, `;`, `~`, `'`, the
 *   backtick, `@`, `$`, `\` and any other punctuation outside strings, template strip markers
 *   (`${~`, `~}`), non-ASCII identifiers (Unicode tables differ between versions), a carriage
 *   return not followed by a line feed, unterminated comments;
 * - number literals other than `123`, `1.5`, `1e3`, `1.5e-3` (leading zeros allowed: `01` is 1 for
 *   hclsyntax and hcl2json alike; after `.` only digits);
 * - quoted-string escapes other than `\n \r \t \" \\`, `\uXXXX`, `\UXXXXXXXX`;
 * - unary `-` / `!` applied directly to a literal of the wrong type (`-true`, `!1`, `-null`):
 *   valid syntax, but hcl2json's converter fails on it;
 * - a duplicate argument in one body ("Attribute redefined"), a name used both as an argument and
 *   as a block type, blocks of one type with different numbers of labels (the full path reports
 *   these with its own messages);
 * - nesting deeper than `depthLimit` (the caller reports that), or expression chains deeper than
 *   `MAX_RECURSION` (no stack overflow on hostile input).
 *
 * Only acceptance is modelled, so every parser error path is "give up" and no error recovery is
 * needed. Operator precedence does not affect acceptance (any `term (op term)*` chain parses), so
 * binary operators are read as a flat chain.
 */
import { codePointColumn } from '../decode';
import { CHECK_EVERY } from '../../util/deadline';
import {
  GiveUp,
  isGoSpace,
  lex,
  lineIndex,
  TOKEN,
  tokenEnd,
  unescapeQuoted,
  type LineIndex,
  type Tokens,
} from '../lexer';
import type { SyntaxAttribute, SyntaxBlock, SyntaxBody } from '../syntax';

// Token types, as module constants (cheaper in the hot loops than property reads).
const {
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
} = TOKEN;

export { TOKEN };
export type { Tokens };

/** The verifier's syntax tree (`exprStart`/`exprEnd` index its tokens). */
export type VerifiedBody = SyntaxBody;

export type VerifyResult =
  | {
      ok: true;
      body: VerifiedBody;
      tokens: Tokens;
      maxDepth: number;
      /** The text's line starts (shared like the tokens: valid until the next verification). */
      lines: LineIndex;
    }
  | { ok: false; reason: string; line: number; column: number };

export interface VerifyOptions {
  /** Give up when bracket nesting (block bodies included) exceeds this. Default 128. */
  depthLimit?: number;
  /** Called every `CHECK_EVERY` steps (e.g. a deadline's `checkpoint`); what it throws ends the
   * verification (it is not a give-up). */
  checkpoint?: (() => void) | undefined;
}

/** Expression recursion (unary chains, nested conditionals) beyond which the verifier gives up. */
const MAX_RECURSION = 1000;

/** True when two attributes share a name ("Attribute redefined"). */
function hasDuplicateName(attributes: readonly SyntaxAttribute[]): boolean {
  const n = attributes.length;
  if (n < 2) return false;
  if (n <= 16) {
    for (let i = 1; i < n; i++) {
      const name = (attributes[i] as SyntaxAttribute).name;
      for (let j = 0; j < i; j++) if ((attributes[j] as SyntaxAttribute).name === name) return true;
    }
    return false;
  }
  return new Set(attributes.map((a) => a.name)).size !== n;
}

/**
 * The body problems the full path reports by itself (`checkStructure`): a repeated argument
 * ("Attribute redefined"), a name used both as an argument and as a block type, blocks of one type
 * with different numbers of labels. The verifier gives up on them, so their messages come from the
 * full path unchanged.
 */
function hasStructureIssue(body: VerifiedBody): boolean {
  const { attributes, blocks } = body;
  if (hasDuplicateName(attributes)) return true;
  if (blocks.length === 0) return false;
  if (blocks.length + attributes.length <= 24) {
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i] as SyntaxBlock;
      for (const a of attributes) if (a.name === b.type) return true;
      for (let j = 0; j < i; j++) {
        const first = blocks[j] as SyntaxBlock;
        if (first.type === b.type) {
          if (first.labels.length !== b.labels.length) return true;
          break;
        }
      }
    }
    return false;
  }
  const names = new Set(attributes.map((a) => a.name));
  const labelCounts = new Map<string, number>();
  for (const b of blocks) {
    if (names.has(b.type)) return true;
    const count = labelCounts.get(b.type);
    if (count === undefined) labelCounts.set(b.type, b.labels.length);
    else if (count !== b.labels.length) return true;
  }
  return false;
}

// Characters found with cached forward searches in heredocs.
const INDEX_FORM = /^(?:0|[1-9][0-9]*)$/;

/**
 * When the tokens from `k` are a plain string (`"…"` without template sequences), a number, or a
 * name followed by `.name` steps, and the next token ends the line (a newline or a line comment):
 * the index of that token; else -1. `parseExpression` reads such a sequence as one term with no
 * operator after it, where newlines count (an attribute's value in a body).
 */
function simpleValueEnd(type: Uint8Array, k: number): number {
  const t = type[k];
  let q = -1;
  if (t === T_OQUOTE) {
    const close = plainStringClose(type, k);
    if (close !== -1) q = close + 1;
  } else if (t === T_IDENT) {
    q = k + 1;
    while (type[q] === T_DOT && type[q + 1] === T_IDENT) q += 2;
  } else if (t === T_NUMBER) {
    q = k + 1;
  }
  if (q === -1) return -1;
  const e = type[q];
  return e === T_NEWLINE || e === T_COMMENT_NL ? q : -1;
}

/** When the `"` token at `k` opens a string without template sequences (`""` or `"…"`): the index
 * of its closing `"`; else -1. */
function plainStringClose(type: Uint8Array, k: number): number {
  const a = type[k + 1];
  if (a === T_CQUOTE) return k + 1;
  return a === T_QUOTED_LIT && type[k + 2] === T_CQUOTE ? k + 2 : -1;
}

// Expression kinds that matter for hcl2json's unary-operator conversion.
const K_OTHER = 0;
const K_NUMBER = 1;
const K_BOOL = 2;
const K_NULL = 3;

/**
 * Verifies a file. `text` is the decoded source (BOM already stripped).
 */
class Verifier {
  private pos = 0;
  private includeNL = true;
  private readonly nlStack: boolean[] = [true];
  /** Index of the last token read. */
  private lastRead = -1;
  private recursion = 0;
  private readonly last: number;
  private readonly type: Uint8Array;
  private readonly start: Int32Array;
  private readonly end: Int32Array;

  /** Items read since the last checkpoint. */
  private steps = 0;

  constructor(
    private readonly text: string,
    tokens: Tokens,
    private readonly lineStarts: LineIndex,
    private readonly checkpoint?: (() => void) | undefined,
  ) {
    this.type = tokens.type;
    this.start = tokens.start;
    this.end = tokens.end;
    this.last = tokens.count - 1;
  }

  /** Index (0-based) of the line `lineOf` found last: the parser asks in nearly increasing order of
   * offset, so most lookups move the cursor forward by a line or two. */
  private lineCursor = 0;

  lineOf(offset: number): number {
    const { starts, count } = this.lineStarts;
    let c = this.lineCursor;
    if ((starts[c] as number) <= offset) {
      while (c + 1 < count && (starts[c + 1] as number) <= offset) c++;
      this.lineCursor = c;
      return c + 1;
    }
    let lo = 0;
    let hi = c;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  pushNL(v: boolean): void {
    this.nlStack.push(v);
    this.includeNL = v;
  }
  popNL(): void {
    this.nlStack.pop();
    this.includeNL = this.nlStack[this.nlStack.length - 1] as boolean;
  }
  /** Index of the next significant token (a `#`/`//` comment reads as a newline where they count). */
  peekIndex(): number {
    const { type } = this;
    let k = this.pos;
    for (;;) {
      const t = type[k] as number;
      if (t === T_COMMENT) {
        k++;
        continue;
      }
      if (t === T_NEWLINE || t === T_COMMENT_NL) {
        if (this.includeNL) return k;
        k++;
        continue;
      }
      return k;
    }
  }
  peek(): number {
    const { type } = this;
    const t = type[this.peekIndex()] as number;
    return t === T_COMMENT_NL ? T_NEWLINE : t;
  }
  /** Reads the next significant token; returns its index. */
  read(): number {
    const k = this.peekIndex();
    if (k < this.last) this.pos = k + 1;
    else this.pos = this.last;
    return k;
  }
  fail(reason: string, k: number): never {
    const { start } = this;
    throw new GiveUp(reason, start[k] as number);
  }
  isKeyword(k: number, word: string): boolean {
    const { text, type, start, end } = this;
    return (
      type[k] === T_IDENT &&
      (end[k] as number) - (start[k] as number) === word.length &&
      text.startsWith(word, start[k])
    );
  }
  take(): number {
    const k = this.read();
    this.lastRead = k;
    return k;
  }
  expect(t: number, what: string): number {
    const { type } = this;
    const k = this.take();
    if (type[k] !== t) this.fail(`expected ${what}`, k);
    return k;
  }

  parseExpression(): number {
    if (++this.recursion > MAX_RECURSION) this.fail('expression too deep', this.pos);
    let kind = this.parseOperand();
    while (true) {
      const t = this.peek();
      if (t === T_BINOP || t === T_STAR || t === T_MINUS) {
        this.take();
        this.parseOperand();
        kind = K_OTHER;
        continue;
      }
      break;
    }
    if (this.peek() === T_QUESTION) {
      this.take();
      this.parseExpression();
      if (this.peek() !== T_COLON) this.fail('expected ":"', this.peekIndex());
      this.take();
      this.parseExpression();
      kind = K_OTHER;
    }
    this.recursion--;
    return kind;
  }

  /** parseExpressionWithTraversals. */
  parseOperand(): number {
    const kind = this.parseTerm();
    return this.parseTraversals() ? K_OTHER : kind;
  }

  /** Returns true when at least one traversal step was read. */
  parseTraversals(): boolean {
    const { text, type, start, end } = this;
    let any = false;
    for (;;) {
      const t = this.peek();
      if (t === T_DOT) {
        this.take();
        const k = this.peekIndex();
        const a = type[k];
        if (a === T_IDENT) {
          this.take();
        } else if (a === T_NUMBER) {
          if (!INDEX_FORM.test(text.slice(start[k], end[k]))) this.fail('legacy index', k);
          this.take();
        } else if (a === T_STAR) {
          this.take();
          while (this.peek() === T_DOT) {
            this.take();
            const m = this.peekIndex();
            if (type[m] === T_NUMBER) {
              if (!INDEX_FORM.test(text.slice(start[m], end[m]))) this.fail('legacy index', m);
              this.take();
            } else if (type[m] === T_IDENT) {
              this.take();
            } else {
              this.fail('attribute name expected', m);
            }
          }
        } else {
          this.fail('attribute name expected', k);
        }
        any = true;
      } else if (t === T_OBRACK) {
        this.take();
        if (this.peek() === T_STAR) {
          this.take();
          this.expect(T_CBRACK, '"]"');
        } else {
          this.pushNL(false);
          this.parseExpression();
          const c = this.take();
          if (type[c] !== T_CBRACK) this.fail('expected "]"', c);
          this.popNL();
        }
        any = true;
      } else {
        return any;
      }
    }
  }

  parseTemplate(closer: number): void {
    const { type } = this;
    const ctl: number[] = []; // 0 = if, 1 = if after else, 2 = for
    for (;;) {
      const k = this.take();
      const t = type[k];
      if (t === closer) break;
      if (t === T_QUOTED_LIT || t === T_STRING_LIT) continue;
      if (t === T_INTERP) {
        this.pushNL(false);
        this.parseExpression();
        if (this.peek() !== T_SEQ_END) this.fail('expected "}"', this.peekIndex());
        this.take();
        this.popNL();
        continue;
      }
      if (t === T_CONTROL) {
        this.pushNL(false);
        const kw = this.take();
        if (type[kw] !== T_IDENT) this.fail('template directive keyword', kw);
        if (this.isKeyword(kw, 'if')) {
          this.parseExpression();
          ctl.push(0);
        } else if (this.isKeyword(kw, 'else')) {
          if (ctl[ctl.length - 1] !== 0) this.fail('unexpected else', kw);
          ctl[ctl.length - 1] = 1;
        } else if (this.isKeyword(kw, 'endif')) {
          const top = ctl.pop();
          if (top !== 0 && top !== 1) this.fail('unexpected endif', kw);
        } else if (this.isKeyword(kw, 'for')) {
          this.expect(T_IDENT, 'a variable name');
          if (this.peek() === T_COMMA) {
            this.take();
            this.expect(T_IDENT, 'a variable name');
          }
          if (!this.isKeyword(this.peekIndex(), 'in')) this.fail('expected "in"', this.peekIndex());
          this.take();
          this.parseExpression();
          ctl.push(2);
        } else if (this.isKeyword(kw, 'endfor')) {
          if (ctl.pop() !== 2) this.fail('unexpected endfor', kw);
        } else {
          this.fail('unknown template directive', kw);
        }
        if (this.peek() !== T_SEQ_END) this.fail('expected "}"', this.peekIndex());
        this.take();
        this.popNL();
        continue;
      }
      this.fail('unexpected token in template', k);
    }
    if (ctl.length > 0) this.fail('unbalanced template directives', this.pos);
  }

  parseForExpr(closer: number): void {
    const { type } = this;
    this.pushNL(false);
    this.take(); // `for`
    this.expect(T_IDENT, 'a variable name');
    if (this.peek() === T_COMMA) {
      this.take();
      this.expect(T_IDENT, 'a variable name');
    }
    if (!this.isKeyword(this.peekIndex(), 'in')) this.fail('expected "in"', this.peekIndex());
    this.take();
    this.parseExpression();
    if (this.peek() !== T_COLON) this.fail('expected ":"', this.peekIndex());
    this.take();
    this.parseExpression();
    let hasKey = false;
    if (this.peek() === T_FATARROW) {
      this.take();
      hasKey = true;
      this.parseExpression();
    }
    let group = false;
    if (this.peek() === T_ELLIPSIS) {
      this.take();
      group = true;
    }
    if (this.isKeyword(this.peekIndex(), 'if')) {
      this.take();
      this.parseExpression();
    }
    const c = this.take();
    if (type[c] !== closer) this.fail('extra characters after the for expression', c);
    if (closer === T_CBRACK ? hasKey || group : !hasKey) this.fail('invalid for expression', c);
    this.popNL();
  }

  parseTerm(): number {
    const { type } = this;
    const k = this.peekIndex();
    const t = type[k];
    switch (t) {
      case T_OPAREN: {
        this.take();
        this.pushNL(false);
        this.parseExpression();
        if (this.peek() !== T_CPAREN) this.fail('expected ")"', this.peekIndex());
        this.take();
        this.popNL();
        return K_OTHER;
      }
      case T_NUMBER:
        this.take();
        return K_NUMBER;
      case T_IDENT:
        return this.parseIdentTerm(k);
      case T_OQUOTE: {
        // A string without template sequences (most of them): nothing to read in between. A
        // quoted string holds no newline or comment token, so these are the next tokens read.
        const close = plainStringClose(type, k);
        if (close !== -1) {
          this.pos = close + 1;
          this.lastRead = close;
          return K_OTHER;
        }
        this.take();
        this.parseTemplate(T_CQUOTE);
        return K_OTHER;
      }
      case T_OHEREDOC:
        this.take();
        this.parseTemplate(T_CHEREDOC);
        return K_OTHER;
      case T_MINUS:
      case T_BANG:
        return this.parseUnary(k, t);
      case T_OBRACK:
        return this.parseTuple();
      case T_OBRACE:
        return this.parseObject();
      default:
        return this.fail('expected an expression', k);
    }
  }

  // The larger kinds of term are methods of their own, so that each compiles small: a rare form
  // met for the first time deoptimises only its method (see Lexer.run in ../lexer.ts).

  /** A term that starts with an identifier at `k`: a (namespaced) function call, a keyword, or a
   * variable. */
  parseIdentTerm(k: number): number {
    const { type } = this;
    this.take();
    if (this.peek() === T_DCOLON) {
      // A namespaced function (`provider::aws::arn_parse(...)`): `::` IDENT, repeated, then `(`.
      while (this.peek() === T_DCOLON) {
        this.take();
        this.expect(T_IDENT, 'a function name');
      }
      if (this.peek() !== T_OPAREN) this.fail('expected "("', this.peekIndex());
    }
    if (this.peek() === T_OPAREN) {
      this.take();
      this.pushNL(false);
      for (;;) {
        if (this.peek() === T_CPAREN) {
          this.take();
          break;
        }
        this.parseExpression();
        const sep = this.take();
        const st = type[sep];
        if (st === T_CPAREN) break;
        if (st === T_ELLIPSIS) {
          if (this.peek() !== T_CPAREN) this.fail('expected ")"', this.peekIndex());
          this.take();
          break;
        }
        if (st !== T_COMMA) this.fail('expected ","', sep);
      }
      this.popNL();
      return K_OTHER;
    }
    if (this.isKeyword(k, 'true') || this.isKeyword(k, 'false')) return K_BOOL;
    if (this.isKeyword(k, 'null')) return K_NULL;
    return K_OTHER;
  }

  /** `-x` / `!x`, the operator at `k` of type `t`. */
  parseUnary(k: number, t: number): number {
    this.take();
    if (++this.recursion > MAX_RECURSION) this.fail('expression too deep', k);
    const operand = this.parseOperand();
    this.recursion--;
    // hcl2json's converter evaluates a unary operator on a literal and fails on a type mismatch.
    if (operand === K_NULL || (t === T_MINUS ? operand === K_BOOL : operand === K_NUMBER)) {
      this.fail('unary operator on a literal of the wrong type', k);
    }
    return K_OTHER;
  }

  /** A tuple or a `[for ...]` expression. */
  parseTuple(): number {
    const { type } = this;
    this.take();
    this.pushNL(false);
    if (this.isKeyword(this.peekIndex(), 'for')) {
      this.parseForExpr(T_CBRACK);
    } else {
      for (;;) {
        if (this.peek() === T_CBRACK) {
          this.take();
          break;
        }
        this.parseExpression();
        const sep = this.take();
        if (type[sep] === T_CBRACK) break;
        if (type[sep] !== T_COMMA) this.fail('expected ","', sep);
      }
    }
    this.popNL();
    return K_OTHER;
  }

  /** An object or a `{for ...}` expression. */
  parseObject(): number {
    this.take();
    this.pushNL(false);
    const isFor = this.isKeyword(this.peekIndex(), 'for');
    this.popNL();
    if (isFor) {
      this.parseForExpr(T_CBRACE);
      return K_OTHER;
    }
    this.pushNL(true);
    for (;;) {
      const p = this.peek();
      if (p === T_NEWLINE) {
        this.take();
        continue;
      }
      if (p === T_CBRACE) {
        this.take();
        break;
      }
      this.parseExpression();
      const eq = this.peek();
      if (eq !== T_EQUAL && eq !== T_COLON) this.fail('expected "="', this.peekIndex());
      this.take();
      this.parseExpression();
      const sep = this.peek();
      if (sep === T_CBRACE) {
        this.take();
        break;
      }
      if (sep !== T_COMMA && sep !== T_NEWLINE) this.fail('expected "," or a newline', this.peekIndex());
      this.take();
    }
    this.popNL();
    return K_OTHER;
  }

  /** Attribute after `ident =`: returns the attribute (the newline after it is left to the caller). */
  finishAttribute(identTok: number): SyntaxAttribute {
    const { text, type, start, end } = this;
    this.take(); // `=`
    const exprStart = this.pos;
    // The common values, read here without the expression parser's calls per token: a plain
    // string, a number, or a name with `.name` steps, directly followed by the end of the line.
    // `parseExpression` accepts exactly these token sequences the same way (see `simpleValueEnd`).
    const simpleEnd = this.includeNL ? simpleValueEnd(type, exprStart) : -1;
    if (simpleEnd !== -1) {
      this.pos = simpleEnd;
      this.lastRead = simpleEnd - 1;
    } else {
      this.parseExpression();
    }
    const lastTok = this.lastRead;
    const exprEnd = lastTok + 1;
    const s = start[identTok] as number;
    // A heredoc's this.last token is its closing line: the attribute ends at the marker.
    let e = end[lastTok] as number;
    if (type[lastTok] === T_CHEREDOC) {
      while (e > s && isGoSpace(text.charCodeAt(e - 1))) e--;
    }
    return {
      name: detach(text.slice(s, end[identTok])),
      line: this.lineOf(s),
      endLine: this.lineOf(start[lastTok] as number),
      start: s,
      end: e,
      exprStart,
      exprEnd,
    };
  }

  parseBody(closer: number, into: VerifiedBody): void {
    const { type } = this;
    for (;;) {
      // Counted with or without a checkpoint: a count that starts mid-scan deoptimised this.
      if (++this.steps === CHECK_EVERY) {
        this.steps = 0;
        if (this.checkpoint !== undefined) this.checkpoint();
      }
      const k = this.peekIndex();
      const t = type[k] === T_COMMENT_NL ? T_NEWLINE : type[k];
      if (t === closer) {
        this.take();
        if (hasStructureIssue(into)) this.fail('structure', k);
        return;
      }
      if (t === T_NEWLINE) {
        this.take();
        continue;
      }
      if (t !== T_IDENT) this.fail('argument or block definition required', k);
      this.take();
      const next = this.peek();
      if (next === T_EQUAL) {
        into.attributes.push(this.finishAttribute(k));
        const eol = this.peek();
        if (eol === T_NEWLINE) this.take();
        else if (eol !== T_EOF) this.fail('missing newline after argument', this.peekIndex());
        continue;
      }
      if (next !== T_OQUOTE && next !== T_OBRACE && next !== T_IDENT)
        this.fail('argument or block definition required', k);
      into.blocks.push(this.parseBlock(k));
    }
  }

  parseBlock(identTok: number): SyntaxBlock {
    const { text, type, start, end } = this;
    const labels: string[] = [];
    for (;;) {
      const k = this.take();
      const t = type[k];
      if (t === T_OBRACE) break;
      if (t === T_IDENT) {
        labels.push(detach(text.slice(start[k], end[k])));
        continue;
      }
      if (t === T_OQUOTE) {
        let label = '';
        for (;;) {
          const m = this.take();
          if (type[m] === T_CQUOTE) break;
          if (type[m] !== T_QUOTED_LIT) this.fail('template sequence in a block label', m);
          label += unescapeLiteral(text.slice(start[m], end[m]));
        }
        labels.push(detach(label));
        continue;
      }
      this.fail('invalid block definition', k);
    }
    const s = start[identTok] as number;
    const block: SyntaxBlock = {
      type: detach(text.slice(s, end[identTok])),
      labels,
      line: this.lineOf(s),
      endLine: 0,
      start: s,
      end: 0,
      body: { attributes: [], blocks: [] },
    };
    const p = this.peek();
    if (p === T_NEWLINE || p === T_EOF || p === T_CBRACE) {
      this.parseBody(T_CBRACE, block.body);
    } else {
      // One-line block: a single attribute, then `}` on the same line.
      const k = this.take();
      if (type[k] !== T_IDENT || this.peek() !== T_EQUAL) this.fail('invalid single-argument block', k);
      block.body.attributes.push(this.finishAttribute(k));
      if (this.peek() !== T_CBRACE) this.fail('invalid single-argument block', this.peekIndex());
      this.take();
    }
    const closeTok = this.lastRead;
    block.end = end[closeTok] as number;
    block.endLine = this.lineOf(start[closeTok] as number);
    const eol = this.peek();
    if (eol === T_NEWLINE) this.take();
    else if (eol !== T_EOF) this.fail('missing newline after block definition', this.peekIndex());
    return block;
  }
}

export function verifyHcl(text: string, options: VerifyOptions = {}): VerifyResult {
  const depthLimit = options.depthLimit ?? 128;
  let tokens: Tokens;
  let maxDepth: number;
  try {
    ({ tokens, maxDepth } = lex(text, { strict: true, depthLimit, checkpoint: options.checkpoint }));
  } catch (err) {
    if (err instanceof GiveUp) return giveUp(text, err);
    throw err;
  }
  const lineStarts = lineIndex(text);
  const root: VerifiedBody = { attributes: [], blocks: [] };
  try {
    new Verifier(text, tokens, lineStarts, options.checkpoint).parseBody(T_EOF, root);
  } catch (err) {
    if (err instanceof GiveUp) return giveUp(text, err);
    throw err;
  }
  return { ok: true, body: root, tokens, maxDepth, lines: lineStarts };
}

function giveUp(text: string, err: GiveUp): VerifyResult {
  const offset = Math.min(Math.max(0, err.offset), text.length);
  let line = 1;
  let lineStart = 0;
  for (let nl = text.indexOf('\n'); nl !== -1 && nl < offset; nl = text.indexOf('\n', nl + 1)) {
    line++;
    lineStart = nl + 1;
  }
  return { ok: false, reason: err.reason, line, column: codePointColumn(text, lineStart, offset) };
}

/**
 * A copy of `s` that does not keep alive the string it was taken from. V8 represents a slice of 13
 * or more characters as a view into its parent, so a block label kept in a result would otherwise
 * retain the whole text of its file (50 MB of HCL would stay in memory for the whole scan).
 */
export function detach(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}

/**
 * The value of a quoted-literal token's text, as hclsyntax's ParseStringLiteralToken gives it (for
 * the escapes the verifier accepts). `$${` / `%%{` become `${` / `%{` — except `$${~` / `%%{~`,
 * which the real scanner keeps as they are (callers that need exact values avoid those).
 */
export function unescapeLiteral(raw: string): string {
  if (raw.indexOf('\\') === -1 && raw.indexOf('{') === -1) return raw;
  // On the escapes the verifier accepts, the scanner's unescaping is exactly this.
  return unescapeQuoted(raw);
}

/** One item of an object constructor, as UTF-16 offsets into the verified text. */
export interface ObjectItemOffsets {
  key: string;
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

/** Tokens that open and close a nesting level (a template's `${` … `}` included). */
export const OPENERS = new Set<number>([
  T_OBRACE,
  T_OBRACK,
  T_OPAREN,
  T_INTERP,
  T_CONTROL,
  T_OQUOTE,
  T_OHEREDOC,
]);
export const CLOSERS = new Set<number>([T_CBRACE, T_CBRACK, T_CPAREN, T_SEQ_END, T_CQUOTE, T_CHEREDOC]);

function isTrivia(t: number): boolean {
  return t === T_COMMENT || t === T_COMMENT_NL || t === T_NEWLINE;
}

/** Offset of the first token of [from, to) that is no comment or newline (the expression's start:
 * `a = /* c *\/ 1` starts at `1`); `to`'s start when there is none. */
export function expressionOffset(tokens: Tokens, from: number, to: number): number {
  let i = from;
  while (i < to - 1 && isTrivia(tokens.type[i] as number)) i++;
  return tokens.start[i] as number;
}

/**
 * The items of the expression in tokens [from, to) when it is an object constructor (`{ k = v }`),
 * else null. Keys are the identifier or the unescaped quoted literal; any other key expression (a
 * template with interpolations, a parenthesised expression) keeps its source text. Only valid on a
 * verified file (the token stream is known to be well nested).
 */
export function objectItems(
  text: string,
  tokens: Tokens,
  from: number,
  to: number,
): ObjectItemOffsets[] | null {
  const { type, start } = tokens;
  let i = from;
  while (i < to && isTrivia(type[i] as number)) i++;
  let last = to - 1;
  while (last > i && isTrivia(type[last] as number)) last--;
  if (type[i] !== T_OBRACE || type[last] !== T_CBRACE) return null;
  const items: ObjectItemOffsets[] = [];
  i++;
  for (;;) {
    while (i < last && (isTrivia(type[i] as number) || type[i] === T_COMMA)) i++;
    if (i >= last) return items;
    // Key: tokens up to `=` or `:` at this level.
    const keyFirst = i;
    let depth = 0;
    while (i < last) {
      const t = type[i] as number;
      if (depth === 0 && (t === T_EQUAL || t === T_COLON)) break;
      if (OPENERS.has(t)) depth++;
      else if (CLOSERS.has(t)) depth--;
      i++;
    }
    if (i >= last) return null;
    let keyLast = i - 1;
    while (keyLast > keyFirst && isTrivia(type[keyLast] as number)) keyLast--;
    const keyStart = start[keyFirst] as number;
    const keyEnd = tokenEnd(text, tokens, keyLast);
    let key = text.slice(keyStart, keyEnd);
    if (keyLast === keyFirst && type[keyFirst] === T_IDENT) key = text.slice(keyStart, keyEnd);
    else if (type[keyFirst] === T_OQUOTE && type[keyLast] === T_CQUOTE) {
      if (keyLast === keyFirst + 1) key = '';
      else if (keyLast === keyFirst + 2 && type[keyFirst + 1] === T_QUOTED_LIT) {
        key = unescapeLiteral(text.slice(start[keyFirst + 1], tokens.end[keyFirst + 1]));
      }
    }
    i++; // `=` or `:`
    while (i < last && isTrivia(type[i] as number) && type[i] !== T_NEWLINE) i++;
    const valueFirst = i;
    depth = 0;
    while (i < last) {
      const t = type[i] as number;
      if (depth === 0 && (t === T_COMMA || t === T_NEWLINE || t === T_COMMENT_NL)) break;
      if (OPENERS.has(t)) depth++;
      else if (CLOSERS.has(t)) depth--;
      i++;
    }
    let valueLast = i - 1;
    while (valueLast > valueFirst && isTrivia(type[valueLast] as number)) valueLast--;
    if (valueLast < valueFirst) return null;
    items.push({
      key: detach(key),
      keyStart,
      keyEnd,
      valueStart: start[valueFirst] as number,
      valueEnd: tokenEnd(text, tokens, valueLast),
    });
  }
}

/** One element of a tuple constructor, as UTF-16 offsets into the verified text. */
export interface ElementOffsets {
  start: number;
  end: number;
}

/**
 * The elements of the expression in tokens [from, to) when it is a tuple constructor (`[a, b]`),
 * else null: each element from its first to its last token (comments around it excluded). Only
 * valid on a verified file (the token stream is known to be well nested).
 */
export function tupleElements(
  text: string,
  tokens: Tokens,
  from: number,
  to: number,
): ElementOffsets[] | null {
  const { type, start } = tokens;
  let i = from;
  while (i < to && isTrivia(type[i] as number)) i++;
  let last = to - 1;
  while (last > i && isTrivia(type[last] as number)) last--;
  if (type[i] !== T_OBRACK || type[last] !== T_CBRACK) return null;
  const out: ElementOffsets[] = [];
  i++;
  for (;;) {
    while (i < last && (isTrivia(type[i] as number) || type[i] === T_COMMA)) i++;
    if (i >= last) return out;
    const first = i;
    let depth = 0;
    while (i < last) {
      const t = type[i] as number;
      if (depth === 0 && t === T_COMMA) break;
      if (OPENERS.has(t)) depth++;
      else if (CLOSERS.has(t)) depth--;
      i++;
    }
    let end = i - 1;
    while (end > first && isTrivia(type[end] as number)) end--;
    out.push({ start: start[first] as number, end: tokenEnd(text, tokens, end) });
  }
}
