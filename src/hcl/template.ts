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
