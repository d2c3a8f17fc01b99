/**
 * Glob matching for the `roots` / `shared` settings of `.tfguard.hcl`, on archive-relative module
 * paths (`/`-separated, `"."` for the top directory).
 *
 * - `**` as a whole segment matches zero or more segments (`modules/**` matches `modules` and
 *   `modules/a/b`; `**` matches every path, including `"."`);
 * - `*` matches any run of characters inside one segment, `?` exactly one character (never `/`);
 * - `"."` (or an empty pattern) is the top directory; a leading `./` and trailing `/` are ignored.
 */

function segments(path: string): string[] {
  const trimmed = path.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '.') return [];
  return trimmed.split('/').filter((s) => s !== '' && s !== '.');
}

const compiled = new Map<string, RegExp>();

function segmentRegex(segment: string): RegExp {
  let re = compiled.get(segment);
  if (re === undefined) {
    let source = '';
    for (const ch of segment) {
      if (ch === '*') source += '[^/]*';
      else if (ch === '?') source += '[^/]';
      else source += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    re = new RegExp(`^${source}$`, 'u');
    compiled.set(segment, re);
  }
  return re;
}

function matchFrom(pattern: string[], pi: number, path: string[], si: number): boolean {
  for (;;) {
    if (pi === pattern.length) return si === path.length;
    const p = pattern[pi] as string;
    if (p === '**') {
      // Collapse runs of `**`, then try every split point.
      let next = pi + 1;
      while (pattern[next] === '**') next++;
      if (next === pattern.length) return true;
      for (let k = si; k <= path.length; k++) if (matchFrom(pattern, next, path, k)) return true;
      return false;
    }
    if (si === path.length) return false;
    if (!segmentRegex(p).test(path[si] as string)) return false;
    pi++;
    si++;
  }
}

/** True when `path` (a module path such as `envs/prod` or `"."`) matches the glob `pattern`. */
export function matchGlob(pattern: string, path: string): boolean {
  return matchFrom(segments(pattern), 0, segments(path), 0);
}
