/**
 * Values of simple expressions, read straight from a verified file's tokens and rendered exactly as
 * hcl2json renders them (tmccombs/hcl2json convert.go, as embedded in @cdktf/hcl2json):
 *
 * - a quoted string without `{` in its literal parts → its unescaped value (hcl2json keeps the
 *   template escapes `$${` / `%%{` as written, unlike Terraform, so those are left to it), its
 *   interpolations written `${` + the expression's source text + `}` (what hcl2json does for any
 *   expression but a literal, a nested template or a conditional, which are left to it);
 * - a plain decimal number, leading zeros included → the JSON number (what `JSON.parse` makes of
 *   cty's decimal text);
 * - `true` / `false` / `null`;
 * - a reference `a.b.c` / `a.b[0]` written without spaces → `"${a.b.c}"` (the cdktf fork of the converter has
 *   no special case for type keywords: `string` → `"${string}"`); as a value (not an object key),
 *   also with string keys and line breaks or spaces inside its brackets (`module.m[\n  "k"\n].x`,
 *   an `import` block's `to`): its source text, as written, as `${…}`;
 * - a function call `f(…)` with a plain name → its source text as `"${f(…)}"` (the converter does
 *   not evaluate calls: `upper("x")` stays `"${upper(\"x\")}"`, spaces and line breaks kept);
 * - tuples `[...]` and objects `{ k = v }` of those (object keys: identifiers, references such as
 *   `aws.east` (their source text) or quoted strings;
 *   keys come out sorted, as Go's `encoding/json` writes a map, and a repeated key keeps its last
 *   value).
 *
 * Anything else returns `NOT_EVALUABLE` and is left to hcl2json. The differential corpus test
 * checks every value this produces against hcl2json's.
 */
import { CLOSERS, detach, OPENERS, TOKEN, unescapeLiteral } from './verify';
import type { Tokens } from './verify';

export const NOT_EVALUABLE: unique symbol = Symbol('not evaluable');
type Result = unknown;

// Leading zeros allowed (`007` is 7 for hcl2json too); at most 15 significant integer digits.
const SIMPLE_NUMBER = /^0*(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?$/;
/** An index a reference may hold (`x[0]`): a decimal without leading zeros. */
const INDEX_NUMBER = /^(?:0|[1-9][0-9]*)$/;

class Evaluator {
  constructor(
    private readonly text: string,
    private readonly t: Tokens,
    private readonly limit: number,
  ) {}

  /** Index of the next token at or after `k` that is not a newline or comment (within the range). */
  skipLayout(k: number): number {
    const { type } = this.t;
    while (k < this.limit) {
      const ty = type[k];
      if (ty !== TOKEN.NEWLINE && ty !== TOKEN.COMMENT && ty !== TOKEN.COMMENT_NL) break;
      k++;
    }
    return k;
  }

  /**
   * End (exclusive token index) of the reference starting with the identifier at `k`:
   * IDENT (`.` IDENT | `[` NUMBER `]`)*, all tokens adjacent (no spaces or comments inside). From
   * the `]` of an index at `k`, the steps written adjacent after it.
   */
  traversalEnd(k: number): number {
    const { type, start, end } = this.t;
    let m = k + 1;
    for (;;) {
      if (m + 1 < this.limit && type[m] === TOKEN.DOT && start[m] === end[m - 1]) {
        if (type[m + 1] === TOKEN.IDENT && start[m + 1] === end[m]) {
          m += 2;
          continue;
        }
        return m;
      }
      if (
        m + 2 < this.limit &&
        type[m] === TOKEN.OBRACK &&
        start[m] === end[m - 1] &&
        type[m + 1] === TOKEN.NUMBER &&
        start[m + 1] === end[m] &&
        type[m + 2] === TOKEN.CBRACK &&
        start[m + 2] === end[m + 1] &&
        INDEX_NUMBER.test(this.text.slice(start[m + 1], end[m + 1]))
      ) {
        m += 3;
        continue;
      }
      return m;
    }
  }

  /**
   * End (exclusive token index) of the reference value starting with the identifier at `k`: what
   * `traversalEnd` reads, and also indexes written with a string key or with spaces or line breaks
   * inside the brackets (`[ "k" ]`, `[\n  0\n]`; hclsyntax ignores line breaks inside brackets, and
   * hcl2json writes the expression's source text whatever its layout). A comment, a template key or
   * any other index expression ends it before its `[`.
   */
  referenceEnd(k: number): number {
    const { type, start, end } = this.t;
    let m = this.traversalEnd(k);
    for (;;) {
      if (m >= this.limit || type[m] !== TOKEN.OBRACK) return m;
      const open = m;
      let n = this.skipNewlines(open + 1);
      if (n >= this.limit) return open;
      if (type[n] === TOKEN.NUMBER) {
        if (!INDEX_NUMBER.test(this.text.slice(start[n], end[n]))) return open;
        n++;
      } else if (type[n] === TOKEN.OQUOTE) {
        n++;
        if (n < this.limit && type[n] === TOKEN.QUOTED_LIT) n++;
        if (n >= this.limit || type[n] !== TOKEN.CQUOTE) return open;
        n++;
      } else {
        return open;
      }
      n = this.skipNewlines(n);
      if (n >= this.limit || type[n] !== TOKEN.CBRACK) return open;
      m = this.traversalEnd(n);
    }
  }

  /** Index of the next token at or after `k` that is not a newline (within the range). */
  skipNewlines(k: number): number {
    while (k < this.limit && this.t.type[k] === TOKEN.NEWLINE) k++;
    return k;
  }

  /**
   * The `}` closing the interpolation `${` at `k`, when hcl2json writes that interpolation as
   * `${` + the expression's source text + `}` (a reference, a call, an operation, an index…); -1
   * otherwise: an expression that does not start with a name (`${1}`, `${"y"}`, `${[1]}`, `${-x}`),
   * `${true}` and alike (hcl2json writes their values), a conditional at the top (its `%{if}`
   * form), a comment or a line break inside.
   */
  interpolationEnd(k: number): number {
    const { type, start, end } = this.t;
    const first = k + 1;
    let depth = 0;
    let m = first;
    for (; m < this.limit; m++) {
      const ty = type[m] as number;
      if (ty === TOKEN.NEWLINE || ty === TOKEN.COMMENT || ty === TOKEN.COMMENT_NL) return -1;
      if (OPENERS.has(ty)) depth++;
      else if (CLOSERS.has(ty)) {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && ty === TOKEN.QUESTION) return -1;
    }
    if (m >= this.limit || type[m] !== TOKEN.SEQ_END || m === first) return -1;
    // Only expressions that start with a name: hcl2json writes a literal's value, and a template
    // that is one interpolation of a tuple, an object, a unary operation or a parenthesised
    // expression in forms of its own.
    if (type[first] !== TOKEN.IDENT) return -1;
    const word = this.text.slice(start[first], end[first]);
    if (word === 'true' || word === 'false' || word === 'null' || word === 'for') return -1;
    return m;
  }

  /** Reads one value at token `k`; returns the value and the index after it, or null. */
  value(k: number, depth: number): [Result, number] | null {
    if (k >= this.limit || depth > 32) return null;
    const { type, start, end } = this.t;
    const text = this.text;
    switch (type[k]) {
      case TOKEN.OQUOTE: {
        let out = '';
        let m = k + 1;
        while (m < this.limit) {
          if (type[m] === TOKEN.QUOTED_LIT) {
            const raw = text.slice(start[m], end[m]);
            // hcl2json keeps template escapes (`$${`, `%%{`) as written; leave those to it.
            if (raw.includes('{')) return null;
            out += unescapeLiteral(raw);
            m++;
          } else if (type[m] === TOKEN.INTERP) {
            const close = this.interpolationEnd(m);
            if (close === -1) return null;
            out += '${' + text.slice(start[m + 1], end[close - 1]) + '}';
            m = close + 1;
          } else {
            break;
          }
        }
        if (m >= this.limit || type[m] !== TOKEN.CQUOTE) return null;
        return [detach(out), m + 1];
      }
      case TOKEN.NUMBER: {
        const raw = text.slice(start[k], end[k]);
        if (!SIMPLE_NUMBER.test(raw)) return null;
        return [Number(raw), k + 1];
      }
      case TOKEN.IDENT: {
        const word = text.slice(start[k], end[k]);
        let m = k + 1;
        if (m >= this.limit || type[m] !== TOKEN.DOT) {
          if (word === 'true') return [true, m];
          if (word === 'false') return [false, m];
          if (word === 'null') return [null, m];
        }
        if (word === 'true' || word === 'false' || word === 'null' || word === 'for') return null;
        // A function call: hcl2json writes its source text, verbatim, as `${…}` (a file already
        // verified has balanced parentheses; those inside strings are not tokens of their own).
        if (m < this.limit && type[m] === TOKEN.OPAREN) {
          let open = 0;
          for (; m < this.limit; m++) {
            if (type[m] === TOKEN.OPAREN) open++;
            else if (type[m] === TOKEN.CPAREN && --open === 0) break;
          }
          if (m >= this.limit) return null;
          return [detach('${' + text.slice(start[k], end[m]) + '}'), m + 1];
        }
        m = this.referenceEnd(k);
        // Followed by more (an index expression, a call, a namespaced call): not a plain reference.
        const after = m < this.limit ? type[m] : TOKEN.EOF;
        if (
          after === TOKEN.DOT ||
          after === TOKEN.OBRACK ||
          after === TOKEN.OPAREN ||
          after === TOKEN.DCOLON
        ) {
          return null;
        }
        return [detach('${' + text.slice(start[k], end[m - 1]) + '}'), m];
      }
      case TOKEN.OBRACK: {
        const items: unknown[] = [];
        let m = this.skipLayout(k + 1);
        if (m < this.limit && type[m] === TOKEN.IDENT && text.slice(start[m], end[m]) === 'for') return null;
        for (;;) {
          if (m >= this.limit) return null;
          if (type[m] === TOKEN.CBRACK) return [items, m + 1];
          const item = this.value(m, depth + 1);
          if (item === null) return null;
          items.push(item[0]);
          m = this.skipLayout(item[1]);
          if (m >= this.limit) return null;
          if (type[m] === TOKEN.COMMA) m = this.skipLayout(m + 1);
          else if (type[m] !== TOKEN.CBRACK) return null;
        }
      }
      case TOKEN.OBRACE: {
        const entries = new Map<string, unknown>();
        let m = this.skipLayout(k + 1);
        for (;;) {
          if (m >= this.limit) return null;
          if (type[m] === TOKEN.CBRACE) break;
          let key: string;
          if (type[m] === TOKEN.IDENT) {
            // A bare name or a reference (`aws.east = ...`): the key is its source text.
            const e = this.traversalEnd(m);
            key = detach(text.slice(start[m], end[e - 1]));
            if (key === 'for') return null;
            m = e;
          } else if (type[m] === TOKEN.OQUOTE) {
            const s = this.value(m, depth + 1);
            if (s === null || typeof s[0] !== 'string') return null;
            key = s[0];
            m = s[1];
          } else {
            return null;
          }
          if (m >= this.limit || (type[m] !== TOKEN.EQUAL && type[m] !== TOKEN.COLON)) return null;
          const item = this.value(m + 1, depth + 1);
          if (item === null) return null;
          entries.delete(key);
          entries.set(key, item[0]);
          m = item[1];
          if (m >= this.limit) return null;
          if (type[m] === TOKEN.COMMA || type[m] === TOKEN.NEWLINE || type[m] === TOKEN.COMMENT_NL) {
            m = this.skipLayout(m + 1);
          } else if (type[m] === TOKEN.COMMENT) {
            m = this.skipLayout(m);
          } else if (type[m] !== TOKEN.CBRACE) {
            return null;
          }
        }
        const keys = [...entries.keys()].sort(compareBytes);
        const obj: Record<string, unknown> = {};
        for (const key of keys) obj[key] = entries.get(key);
        return [obj, m + 1];
      }
      default:
        return null;
    }
  }
}

/** Go's string order (UTF-8 bytes), which `encoding/json` uses for map keys. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The value of the expression spanning tokens [from, to) of a verified file, or `NOT_EVALUABLE`.
 */
export function evaluateExpression(text: string, tokens: Tokens, from: number, to: number): unknown {
  const ev = new Evaluator(text, tokens, to);
  const r = ev.value(from, 0);
  if (r === null || r[1] !== to) return NOT_EVALUABLE;
  return r[0];
}
