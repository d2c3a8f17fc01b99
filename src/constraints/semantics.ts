/**
 * What a conjunction of constraints allows, following go-versions `MeetingConstraints` and
 * `RequestedByConstraints` as used by `terraform init`:
 *
 * - `= V` / bare `V`: exactly V, build metadata included; `!= V`: anything but exactly V.
 * - `> V`, `>= V`, `< V`, `<= V`: precedence comparison (metadata ignored).
 * - `~> X.Y.Z` = `>= X.Y.Z, < X.(Y+1).0`; `~> X.Y` and `~> X` = `>= X.Y.0, < (X+1).0.0`
 *   (the upper bound never carries the pre-release: `~> 1.2.0-beta1` allows `1.2.x`).
 * - Pre-release versions are selected only when an `=` constraint names them exactly (and every
 *   other constraint allows them too); otherwise only releases count.
 */
import { parseConstraints, toConstraints, type Constraint } from './parse';
import {
  ConstraintSyntaxError,
  compareVersions,
  formatVersion,
  parseVersion,
  toVersion,
  versionsIdentical,
  type Version,
} from './version';

function release(major: number, minor: number, patch: number): Version {
  return { major, minor, patch, prerelease: '', metadata: '', parts: 3 };
}

/** The exclusive upper bound a `~>` constraint implies. */
export function pessimisticUpper(c: Constraint): Version {
  const v = c.version;
  return c.version.parts === 3 ? release(v.major, v.minor + 1, 0) : release(v.major + 1, 0, 0);
}

/** Set membership of one constraint, without the pre-release selection rule. */
export function meets(v: Version, c: Constraint): boolean {
  const cmp = compareVersions(v, c.version);
  switch (c.op) {
    case '=':
      return versionsIdentical(v, c.version);
    case '!=':
      return !versionsIdentical(v, c.version);
    case '>':
      return cmp > 0;
    case '>=':
      return cmp >= 0;
    case '<':
      return cmp < 0;
    case '<=':
      return cmp <= 0;
    case '~>':
      return cmp >= 0 && compareVersions(v, pessimisticUpper(c)) < 0;
  }
}

export interface SatisfiesOptions {
  /** Plain set membership: do not apply the "pre-releases only when pinned with =" rule. */
  includePrerelease?: boolean;
}

/**
 * Whether Terraform accepts `version` under `constraints` (a lock file's version is checked the same
 * way): every constraint must hold, and a pre-release is accepted only when an `=` constraint names
 * exactly that version. An empty constraint list allows every release.
 */
export function satisfies(
  version: string | Version,
  constraints: string | Constraint[],
  options: SatisfiesOptions = {},
): boolean {
  const v = toVersion(version);
  const cs = toConstraints(constraints);
  if (!cs.every((c) => meets(v, c))) return false;
  if (v.prerelease === '' || options.includePrerelease === true) return true;
  return cs.some((c) => c.op === '=' && versionsIdentical(c.version, v));
}

/**
 * The version `terraform init` would select from `versions` (newest allowed, pre-releases only when
 * pinned), or null when none matches. Version strings must be valid exact versions (else
 * ConstraintSyntaxError). An empty constraint list allows every release.
 */
export function maxSatisfying(versions: string[], constraints: string | Constraint[]): string | null {
  const cs = toConstraints(constraints);
  let best: { raw: string; v: Version } | null = null;
  for (const raw of versions) {
    let v: Version;
    try {
      v = parseVersion(raw);
    } catch (err) {
      throw new ConstraintSyntaxError(
        `available version ${JSON.stringify(raw)} is invalid: ${(err as Error).message}`,
        raw,
        {
          cause: err,
        },
      );
    }
    if (!satisfies(v, cs)) continue;
    if (best === null || compareVersions(v, best.v) > 0) best = { raw, v };
  }
  return best === null ? null : best.raw;
}

// ---------------------------------------------------------------------------------------------
// Satisfiability over the whole version space
// ---------------------------------------------------------------------------------------------

/** Smallest release version strictly greater than `v` (releases are integer triples). */
function nextRelease(v: Version): Version {
  return release(v.major, v.minor, v.patch + 1);
}

/** `M.m.p` of a pre-release `M.m.p-x`, i.e. the smallest release above it. */
function releaseOf(v: Version): Version {
  return release(v.major, v.minor, v.patch);
}

interface Bound {
  /** Release versions `>= at` (lower) or `< at` (upper). */
  at: Version;
  from: Constraint;
}

export interface Analysis {
  satisfiable: boolean;
  /** Greatest lower bound among releases (inclusive), with the constraint that sets it. */
  lower: Bound | null;
  /** Least upper bound among releases (exclusive), with the constraint that sets it. */
  upper: Bound | null;
  /** Distinct exact pins (`=`), when there are any. */
  pins: Constraint[];
  /** Why it is unsatisfiable, in words (empty when satisfiable). */
  reason: string;
}

function lowerOf(c: Constraint): Version | null {
  const v = c.version;
  switch (c.op) {
    case '>=':
    case '~>':
      // A pre-release boundary M.m.p-x admits the release M.m.p and above.
      return releaseOf(v);
    case '>':
      return v.prerelease === '' ? nextRelease(v) : releaseOf(v);
    default:
      return null;
  }
}

function upperOf(c: Constraint): Version | null {
  const v = c.version;
  switch (c.op) {
    case '<':
      return releaseOf(v);
    case '<=':
      return v.prerelease === '' ? nextRelease(v) : releaseOf(v);
    case '~>':
      return pessimisticUpper(c);
    default:
      return null;
  }
}

function lowerText(c: Constraint): string {
  return `${c.op === '>' ? '>' : '>='} ${formatVersion(c.version)}`;
}

function upperText(c: Constraint): string {
  if (c.op === '~>') return `< ${formatVersion(pessimisticUpper(c))}`;
  return `${c.op} ${formatVersion(c.version)}`;
}

function show(c: Constraint): string {
  return JSON.stringify(c.raw);
}

/**
 * Decides whether some version can satisfy all of `cs` under Terraform's selection rules. The
 * space is every release `M.m.p` (unbounded patch numbers, so a range spanning two minor lines is
 * never exhausted by `!=`) plus any pre-release named by an `=` pin.
 */
export function analyze(cs: Constraint[]): Analysis {
  const pins: Constraint[] = [];
  for (const c of cs) {
    if (c.op === '=' && !pins.some((p) => versionsIdentical(p.version, c.version))) pins.push(c);
  }
  let lower: Bound | null = null;
  let upper: Bound | null = null;
  for (const c of cs) {
    const lo = lowerOf(c);
    if (lo !== null && (lower === null || compareVersions(lo, lower.at) > 0)) lower = { at: lo, from: c };
    const hi = upperOf(c);
    if (hi !== null && (upper === null || compareVersions(hi, upper.at) < 0)) upper = { at: hi, from: c };
  }
  const base = { lower, upper, pins };
  if (pins.length > 0) {
    const first = pins[0] as Constraint;
    if (pins.length > 1) {
      const second = pins[1] as Constraint;
      return {
        ...base,
        satisfiable: false,
        reason: `${show(first)} and ${show(second)} pin different exact versions`,
      };
    }
    const failing = cs.find((c) => !meets(first.version, c));
    if (failing !== undefined) {
      const verb = failing.op === '!=' ? 'excludes' : 'does not allow';
      return {
        ...base,
        satisfiable: false,
        reason: `${show(first)} pins a version that ${show(failing)} ${verb}`,
      };
    }
    return { ...base, satisfiable: true, reason: '' };
  }
  if (upper === null) return { ...base, satisfiable: true, reason: '' };
  const lowest = lower?.at ?? release(0, 0, 0);
  if (compareVersions(lowest, upper.at) >= 0) {
    let reason: string;
    if (lower === null) reason = `${show(upper.from)} allows no version (nothing is below 0.0.0)`;
    else if (lower.from === upper.from) reason = `${show(lower.from)} allows no release version`;
    else {
      reason = `${show(lower.from)} needs ${lowerText(lower.from)} but ${show(upper.from)} needs ${upperText(upper.from)}`;
    }
    if (lower !== null && (lower.from.version.prerelease !== '' || upper.from.version.prerelease !== '')) {
      reason += ' (a pre-release is selected only when pinned with "=")';
    }
    return { ...base, satisfiable: false, reason };
  }
  // A finite range only arises inside one minor line: [M.m.a, M.m.b). `!=` may exclude all of it.
  if (lowest.major === upper.at.major && lowest.minor === upper.at.minor) {
    const excluded = new Set<number>();
    const excluders: Constraint[] = [];
    for (const c of cs) {
      const v = c.version;
      if (
        c.op === '!=' &&
        v.prerelease === '' &&
        v.metadata === '' &&
        v.major === lowest.major &&
        v.minor === lowest.minor &&
        v.patch >= lowest.patch &&
        v.patch < upper.at.patch &&
        !excluded.has(v.patch)
      ) {
        excluded.add(v.patch);
        excluders.push(c);
      }
    }
    if (excluded.size === upper.at.patch - lowest.patch) {
      const range =
        lower === null
          ? show(upper.from)
          : lower.from === upper.from
            ? show(lower.from)
            : `${show(lower.from)} and ${show(upper.from)}`;
      return {
        ...base,
        satisfiable: false,
        reason: `${range} leave${lower !== null && lower.from !== upper.from ? '' : 's'} only versions that ${excluders.map(show).join(', ')} exclude${excluders.length === 1 ? 's' : ''}`,
      };
    }
  }
  return { ...base, satisfiable: true, reason: '' };
}

interface Contributor {
  id: string;
  constraints: Constraint[];
}

function parseContributor(entry: { id: string; constraints: string }): Contributor {
  try {
    return { id: entry.id, constraints: parseConstraints(entry.constraints) };
  } catch (err) {
    if (err instanceof ConstraintSyntaxError) {
      throw new ConstraintSyntaxError(`${entry.id}: ${err.message}`, entry.constraints, { cause: err });
    }
    throw err;
  }
}

function conjunctionOf(list: Contributor[]): Constraint[] {
  return list.flatMap((c) => c.constraints);
}

/**
 * When no version satisfies every contributor's constraints, names a minimal conflicting set of
 * contributor ids (a single self-contradictory contributor, else the first conflicting pair in list
 * order, else an irreducible larger set) and says why. Null when satisfiable. Invalid constraint
 * strings throw ConstraintSyntaxError (message prefixed with the id).
 */
export function findConflict(
  list: Array<{ id: string; constraints: string }>,
): null | { ids: string[]; reason: string } {
  const contributors = list.map(parseContributor);
  if (analyze(conjunctionOf(contributors)).satisfiable) return null;
  const explain = (set: Contributor[]): { ids: string[]; reason: string } => {
    const a = analyze(conjunctionOf(set));
    return { ids: set.map((c) => c.id), reason: a.reason };
  };
  for (const c of contributors) {
    if (!analyze(c.constraints).satisfiable) return explain([c]);
  }
  for (let i = 0; i < contributors.length; i++) {
    for (let j = i + 1; j < contributors.length; j++) {
      const pair = [contributors[i] as Contributor, contributors[j] as Contributor];
      if (!analyze(conjunctionOf(pair)).satisfiable) return explain(pair);
    }
  }
  // Deletion filter: drop every contributor whose removal keeps the set unsatisfiable.
  let set = contributors.slice();
  for (const c of contributors) {
    const without = set.filter((x) => x !== c);
    if (!analyze(conjunctionOf(without)).satisfiable) set = without;
  }
  return explain(set);
}

/** True when some version satisfies every string in `list` at once (each string a constraint set). */
export function isSatisfiable(list: string[]): boolean {
  return analyze(list.flatMap((s) => parseConstraints(s))).satisfiable;
}
