/**
 * Helpers behind the best-practice rules: root modules should cap provider versions, shared modules
 * should state only a minimum (Terraform docs, "Version Constraints" → best practices).
 */
import { toConstraints, type Constraint } from './parse';
import { meets } from './semantics';
import { formatConstraint } from './normalize';
import { compareVersions, parseVersion, type Version } from './version';

const UPPER_OPS: ReadonlySet<string> = new Set(['~>', '<', '<=', '=']);

/** The constraints that cap the version: `~>`, `<`, `<=` and exact versions (`=` or bare). */
export function upperBounding(s: string | Constraint[]): Constraint[] {
  return toConstraints(s).filter((c) => UPPER_OPS.has(c.op));
}

/** True when any constraint caps the version (`~>`, `<`, `<=`, `=` or a bare exact version). */
export function hasUpperBound(s: string | Constraint[]): boolean {
  return upperBounding(s).length > 0;
}

/** `v` written with at least `minParts` numeric parts (but never fewer than were written). */
function writeVersion(v: Version, minParts: number): string {
  const parts = Math.max(v.parts, minParts);
  const nums = [v.major, v.minor, v.patch].slice(0, parts).join('.');
  return nums + (v.prerelease !== '' ? `-${v.prerelease}` : '') + (v.metadata !== '' ? `+${v.metadata}` : '');
}

/** Strongest of several lower-bounding constraints: highest boundary, `>` beating `>=` on a tie. */
function strongest(cs: Constraint[]): Constraint | null {
  let best: Constraint | null = null;
  for (const c of cs) {
    if (best === null) {
      best = c;
      continue;
    }
    const cmp = compareVersions(c.version, best.version);
    if (cmp > 0 || (cmp === 0 && c.op === '>' && best.op !== '>')) best = c;
  }
  return best;
}

/**
 * For a root module's constraint without an upper bound, the idiomatic capped form: keeps every
 * existing constraint and caps below the next major version of the effective minimum with `~>`.
 * `>= 4.0` → `~> 4.0`; `>= 4.2.1` → `~> 4.2, >= 4.2.1`; `> 1.0.0, != 1.3.0` → `~> 1.0, > 1.0.0, != 1.3.0`.
 * Null when the constraint already has an upper bound, or has no real minimum (`!= 1.0`, `>= 0`).
 */
export function suggestUpperBound(s: string): string | null {
  const cs = toConstraints(s);
  if (hasUpperBound(cs)) return null;
  const lower = strongest(cs.filter((c) => c.op === '>=' || c.op === '>'));
  if (lower === null) return null;
  const v = lower.version;
  if (lower.op === '>=' && v.major === 0 && v.minor === 0 && v.patch === 0 && v.prerelease === '')
    return null;
  const cap = `~> ${v.major}.${v.minor}`;
  const equivalent = lower.op === '>=' && v.patch === 0 && v.prerelease === '' && v.metadata === '';
  const out: string[] = [];
  for (const c of cs) {
    if (c === lower) {
      out.push(cap);
      if (!equivalent) out.push(c.raw);
    } else {
      out.push(c.raw);
    }
  }
  return out.join(', ');
}

/**
 * For a root module's constraint without an upper bound whose provider is locked at `locked`: the
 * constraint bounded to the locked version's release line, `~> MAJOR.MINOR`, keeping every existing
 * constraint the cap does not already imply (a minimum above `MAJOR.MINOR.0`, exclusions at or above
 * it). `>= 5.1` locked at 5.40.3 → `~> 5.40`; `>= 5.40.2, != 5.41.0` locked at 5.40.3 →
 * `~> 5.40, >= 5.40.2, != 5.41.0`. Null when the constraint already has an upper bound, or the
 * locked version is a pre-release or does not satisfy the result (a lock that disagrees with the
 * configuration is a person's call).
 */
export function suggestUpperBoundAt(s: string, locked: string): string | null {
  const cs = toConstraints(s);
  if (hasUpperBound(cs)) return null;
  const v = parseVersion(locked);
  if (v.prerelease !== '') return null;
  const floor = parseVersion(`${v.major}.${v.minor}.0`);
  const out = [`~> ${v.major}.${v.minor}`];
  for (const c of cs) {
    const cmp = compareVersions(c.version, floor);
    const implied = (c.op === '>=' && cmp <= 0) || (c.op === '>' && cmp < 0) || (c.op === '!=' && cmp < 0);
    if (!implied) out.push(c.raw);
  }
  const result = out.join(', ');
  return toConstraints(result).every((c) => meets(v, c)) ? result : null;
}

/**
 * For a shared module: the minimum-only form of `s`, i.e. the effective lower bound as `>=` (or `>`)
 * plus any `!=` exclusions still above it. `~> 4.0` → `>= 4.0`; `= 1.2.3` and `1.2.3` → `>= 1.2.3`;
 * `>= 4.0, < 6.0` → `>= 4.0`. Null when no lower bound can be derived (`< 6.0`, `!= 1.0`).
 */
export function suggestMinimumOnly(s: string): string | null {
  const cs = toConstraints(s);
  const lower = strongest(cs.filter((c) => c.op === '>=' || c.op === '>' || c.op === '~>' || c.op === '='));
  if (lower === null) return null;
  const minimum: Constraint = {
    op: lower.op === '>' ? '>' : '>=',
    explicitOp: true,
    version: lower.version,
    raw: `${lower.op === '>' ? '>' : '>='} ${writeVersion(lower.version, 2)}`,
  };
  const out = [minimum.raw];
  const seen = new Set<string>();
  for (const c of cs) {
    if (c.op !== '!=' || !meets(c.version, minimum)) continue;
    const key = formatConstraint(c);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(c.raw);
  }
  return out.join(', ');
}
