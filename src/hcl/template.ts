/**
 * Reading references written as templates.
 *
 * hcl2json renders any non-literal expression as a `"${...}"` string (`provider = aws.east` →
 * `"${aws.east}"`), and Terraform's JSON syntax writes references as plain strings
 * (`"provider": "aws.east"`) or as templates (`"${aws.east}"`). `stripTemplate` turns the first form
 * into the second so consumers can read both the same way.
 */

/**
 * Offset just past the `}` that closes the interpolation whose `${` starts at `start`, or -1.
 * Strings inside the interpolation may contain braces and nested templates, so this keeps a small
 * explicit stack (no recursion).
 */
const OPEN: Record<string, string> = { '}': '{', ']': '[', ')': '(' };

function interpolationEnd(s: string, start: number): number {
  // Stack entries: '{' (brace or interpolation in expression mode) or '"' (inside a string).
  const stack: string[] = ['{'];
  let i = start + 2;
  while (i < s.length) {
    const c = s[i] as string;
    const top = stack[stack.length - 1];
    if (top === '"') {
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '"') stack.pop();
      else if ((c === '$' || c === '%') && s[i + 1] === c && s[i + 2] === '{') {
        i += 3;
        continue;
      } else if ((c === '$' || c === '%') && s[i + 1] === '{') {
        stack.push('{');
        i += 2;
        continue;
      }
      i++;
      continue;
    }
    if (c === '"') stack.push('"');
    else if (c === '{' || c === '[' || c === '(') stack.push(c);
    else if (c === '}' || c === ']' || c === ')') {
      if (stack.pop() !== OPEN[c]) return -1;
      if (stack.length === 0) return i + 1;
    }
    i++;
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

/**
 * Splits a template string as hcl2json renders it (or as Terraform's JSON syntax writes it) into
 * literal text and interpolations: `"~> ${local.major}.0"` → `~> `, `local.major`, `.0`. The escapes
 * `$${` and `%%{` become literal `${` and `%{`; strip markers (`${~ x ~}`) are dropped with the white
 * space around the expression. Null when the string holds a template directive (`%{ if }`,
 * `%{ for }`) or an interpolation that does not close: such a value is not a plain concatenation.
 */
export function templateParts(s: string): TemplatePart[] | null {
  const parts: TemplatePart[] = [];
  let literal = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if ((c === '$' || c === '%') && s[i + 1] === c && s[i + 2] === '{') {
      literal += `${c}{`;
      i += 3;
      continue;
    }
    if (c === '%' && s[i + 1] === '{') return null;
    if (c === '$' && s[i + 1] === '{') {
      const end = interpolationEnd(s, i);
      if (end === -1) return null;
      let inner = s.slice(i + 2, end - 1);
      if (inner.startsWith('~')) inner = inner.slice(1);
      if (inner.endsWith('~')) inner = inner.slice(0, -1);
      if (literal !== '') parts.push({ kind: 'literal', text: literal });
      literal = '';
      parts.push({ kind: 'interpolation', expr: inner.trim() });
      i = end;
      continue;
    }
    literal += c;
    i++;
  }
  if (literal !== '') parts.push({ kind: 'literal', text: literal });
  return parts;
}

/** True when `v` is a string with at least one `${...}` interpolation or template directive: an
 * expression, not a literal. */
export function hasInterpolation(v: unknown): boolean {
  if (typeof v !== 'string' || !(v.includes('${') || v.includes('%{'))) return false;
  const parts = templateParts(v);
  return parts === null || parts.some((p) => p.kind === 'interpolation');
}
