/**
 * Reading references written as templates.
 *
 * hcl2json renders any non-literal expression as a `"${...}"` string (`provider = aws.east` →
 * `"${aws.east}"`), and Terraform's JSON syntax writes references as plain strings
 * (`"provider": "aws.east"`) or as templates (`"${aws.east}"`). `stripTemplate` turns the first form
 * into the second so consumers can read both the same way.
 */
import { lex, TOKEN } from './lexer';
import type { Tokens } from './lexer';

/** Characters that may start something nested inside an interpolation (or end it early). */
const NESTING = /["{}[\]()%$#/<\\\n]/;

/** Closing token → the opening tokens it closes. */
const OPENER_OF = new Map<number, readonly number[]>([
  [TOKEN.SEQ_END, [TOKEN.INTERP, TOKEN.CONTROL]],
  [TOKEN.CBRACE, [TOKEN.OBRACE]],
  [TOKEN.CBRACK, [TOKEN.OBRACK]],
  [TOKEN.CPAREN, [TOKEN.OPAREN]],
]);
/** Tokens that open a nested sequence or bracket. */
const OPENERS = new Set<number>([TOKEN.INTERP, TOKEN.CONTROL, TOKEN.OBRACE, TOKEN.OBRACK, TOKEN.OPAREN]);

/** The template-mode tokens of one string, lexed at most once however many of its
 * interpolations need them, and a cursor for the in-order search of `interpolationEnd`. */
interface TemplateTokens {
  tokens: Tokens | null;
  k: number;
}

/**
 * Offset just past the `}` that closes the interpolation whose `${` starts at `start` of `s` (a
 * template as hcl2json renders it), or -1. Read with the shared lexer in template mode, so strings,
 * nested templates and braces inside the interpolation are told apart exactly as in HCL. `lexed`
 * carries the tokens between the calls for one string (their `start`s only increase).
 */
function interpolationEnd(s: string, start: number, lexed: TemplateTokens = { tokens: null, k: 0 }): number {
  // Most interpolations are plain references (`${aws.east}`, `${var.v}`): nothing in them opens a
  // string, bracket, template or comment, so the first `}` closes them. Only others are lexed.
  const close = s.indexOf('}', start + 2);
  if (close !== -1 && !NESTING.test(s.slice(start + 2, close))) return close + 1;
  lexed.tokens ??= lex(s, { template: true }).tokens;
  const tokens = lexed.tokens;
  const { type, start: starts, end } = tokens;
  let k = lexed.k;
  while (k < tokens.count && (starts[k] as number) < start) k++;
  lexed.k = k;
  if (type[k] !== TOKEN.INTERP || starts[k] !== start) return -1;
  // Brackets must match inside the interpolation (an unbalanced one is no expression).
  const stack: number[] = [];
  for (; k < tokens.count; k++) {
    const t = type[k] as number;
    const opener = OPENER_OF.get(t);
    if (opener === undefined) {
      if (OPENERS.has(t)) stack.push(t);
      continue;
    }
    const top = stack.pop();
    if (top === undefined || !opener.includes(top)) return -1;
    if (stack.length === 0) return end[k] as number;
  }
  return -1;
}

/**
 * `"${aws.x}"` → `"aws.x"` when the whole string is one interpolation; anything else (other types,
 * literal strings, `"a-${b}"`, `"${a}${b}"`, `"$${a}"`) is returned unchanged.
 */
export function stripTemplate(v: unknown): unknown {
  if (typeof v !== 'string' || !v.startsWith('${')) return v;
  if (interpolationEnd(v, 0) !== v.length) return v;
  let inner = v.slice(2, -1);
  // Strip markers (`${~ x ~}`) only trim white space around the interpolation.
  if (inner.startsWith('~')) inner = inner.slice(1);
  if (inner.endsWith('~')) inner = inner.slice(0, -1);
  inner = inner.trim();
  return inner === '' ? v : inner;
}

/** One piece of a template string: literal text, or the source of one `${...}` interpolation. */
export type TemplatePart = { kind: 'literal'; text: string } | { kind: 'interpolation'; expr: string };

/** Splits of strings read before (templates repeat: a Terragrunt root configuration's values are
 * read once per unit that includes it, and scans of one repository repeat), up to
 * `SPLIT_MEMO_CHARS` characters of keys; then the memo starts over. The splits are frozen. */
const splitMemo = new Map<string, readonly TemplatePart[] | null>();
const SPLIT_MEMO_CHARS = 1 << 21;
let splitMemoChars = 0;

/**
 * Splits a template string as hcl2json renders it (or as Terraform's JSON syntax writes it) into
 * literal text and interpolations: `"~> ${local.major}.0"` → `~> `, `local.major`, `.0`. The escapes
 * `$${` and `%%{` become literal `${` and `%{`; strip markers (`${~ x ~}`) are dropped with the white
 * space around the expression. Null when the string holds a template directive (`%{ if }`,
 * `%{ for }`) or an interpolation that does not close: such a value is not a plain concatenation.
 * The result is shared between calls with the same string (and frozen).
 */
export function templateParts(s: string): readonly TemplatePart[] | null {
  const known = splitMemo.get(s);
  if (known !== undefined) return known;
  const parts = splitTemplate(s);
  if (s.length <= SPLIT_MEMO_CHARS) {
    if (splitMemoChars + s.length > SPLIT_MEMO_CHARS) {
      splitMemo.clear();
      splitMemoChars = 0;
    }
    splitMemo.set(s, parts);
    splitMemoChars += s.length;
  }
  return parts;
}

/** Offset of the first `$` or `%` at or after `from` (the length of `s` when none). */
function nextSign(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x24 || c === 0x25) return i;
  }
  return s.length;
}

function splitTemplate(s: string): readonly TemplatePart[] | null {
  const parts: TemplatePart[] = [];
  const lexed: TemplateTokens = { tokens: null, k: 0 };
  let literal = '';
  let i = 0;
  while (i < s.length) {
    // Literal text up to the next `$` or `%` in one piece.
    const next = nextSign(s, i);
    if (next > i) {
      literal += s.slice(i, next);
      i = next;
      continue;
    }
    const c = s[i] as string;
    if ((c === '$' || c === '%') && s[i + 1] === c && s[i + 2] === '{') {
      literal += `${c}{`;
      i += 3;
      continue;
    }
    if (c === '%' && s[i + 1] === '{') return null;
    if (c === '$' && s[i + 1] === '{') {
      const end = interpolationEnd(s, i, lexed);
      if (end === -1) return null;
      let inner = s.slice(i + 2, end - 1);
      if (inner.startsWith('~')) inner = inner.slice(1);
      if (inner.endsWith('~')) inner = inner.slice(0, -1);
      if (literal !== '') parts.push(Object.freeze({ kind: 'literal', text: literal }));
      literal = '';
      parts.push(Object.freeze({ kind: 'interpolation', expr: inner.trim() }));
      i = end;
      continue;
    }
    literal += c;
    i++;
  }
  if (literal !== '') parts.push(Object.freeze({ kind: 'literal', text: literal }));
  return Object.freeze(parts);
}

/** True when `v` is a string with at least one `${...}` interpolation or template directive: an
 * expression, not a literal. */
export function hasInterpolation(v: unknown): boolean {
  if (typeof v !== 'string' || !(v.includes('${') || v.includes('%{'))) return false;
  const parts = templateParts(v);
  return parts === null || parts.some((p) => p.kind === 'interpolation');
}
