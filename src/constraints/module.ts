/**
 * Module versions as Terraform selects them, which is NOT how it selects provider versions.
 *
 * A module call's `version` is parsed by hashicorp/go-version alone (`version.NewConstraint`, in
 * hashicorp/terraform internal/configs/version_constraint.go), and `terraform init` installs the
 * newest published release that `Constraints.Check` accepts (internal/initwd/module_install.go,
 * `installRegistryModule`: `latestMatch`). go-version's pessimistic operator
 * (go-version constraint.go, `constraintPessimistic`) requires the version to be at least the
 * constraint and to equal it in every segment *before the last one written*
 * (`for i := 0; i < c.si-1; i++`), so:
 *
 *   `~> 5`     = `>= 5.0.0`            (one segment written: nothing is held; 6.x, 7.x… all match)
 *   `~> 5.2`   = `>= 5.2.0, < 6.0.0`
 *   `~> 5.2.3` = `>= 5.2.3, < 5.3.0`
 *
 * Provider constraints (apparentlymart/go-versions, src/constraints/semantics.ts) read `~> 5` as
 * `>= 5.0, < 6.0`. Checked with `terraform init` 1.11 against a registry serving 5.x and 6.x
 * (test/modules/remote-module-version-oracle.test.ts).
 *
 * Other go-version rules kept here: an optional `v`, any number of numeric segments (padded to
 * three), metadata ignored by `=`; a pre-release is a candidate only when go-versions' "requested
 * exactly" rule admits it (Terraform checks pre-releases with both libraries), approximated by the
 * provider semantics' `satisfies` on the same string, written without a space after an operator
 * (the pre-release rows of the oracle test pin this down).
 */
import { ConstraintSyntaxError } from './version';
import { satisfies } from './semantics';

/** go-version `Version`. */
export interface ModuleVersion {
  /** Numeric segments, padded with zeros to at least three. */
  segments: number[];
  /** How many segments were written (`5` → 1, `5.2` → 2). */
  written: number;
  prerelease: string;
  metadata: string;
  original: string;
}

export type ModuleOperator = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~>';

export interface ModuleConstraint {
  op: ModuleOperator;
  version: ModuleVersion;
  /** The piece as written. */
  raw: string;
}

/** go-version's `VersionRegexpRaw` (version.go), anchored. */
const VERSION =
  /^v?([0-9]+(?:\.[0-9]+)*?)(?:-([0-9]+[0-9A-Za-z~-]*(?:\.[0-9A-Za-z~-]+)*)|(?:-?([A-Za-z~-]+[0-9A-Za-z~-]*(?:\.[0-9A-Za-z~-]+)*)))?(?:\+([0-9A-Za-z~-]+(?:\.[0-9A-Za-z~-]+)*))?$/;
/** go-version's constraint regexp: `^\s*(op)\s*(version)\s*$` (Go's `\s`). */
const PIECE = /^[\t\n\f\r ]*(=|!=|>=|<=|>|<|~>)?[\t\n\f\r ]*(.*?)[\t\n\f\r ]*$/s;

/** go-version `NewVersion`; throws ConstraintSyntaxError. */
export function parseModuleVersion(s: string): ModuleVersion {
  const m = VERSION.exec(s);
  if (m === null) throw new ConstraintSyntaxError(`"${s}" is not a version go-version can read`, s);
  const segments = (m[1] as string).split('.').map((d) => {
    const n = Number(d);
    if (!Number.isSafeInteger(n)) throw new ConstraintSyntaxError(`version number "${d}" is too large`, s);
    return n;
  });
  const written = segments.length;
  while (segments.length < 3) segments.push(0);
  return { segments, written, prerelease: m[2] ?? m[3] ?? '', metadata: m[4] ?? '', original: s };
}

/** go-version `NewConstraint`: comma-separated pieces, all of which must hold. Throws. */
export function parseModuleConstraints(s: string): ModuleConstraint[] {
  return s.split(',').map((piece) => {
    const m = PIECE.exec(piece) as RegExpExecArray;
    const text = m[2] as string;
    if (text === '' || !VERSION.test(text) || /^[=!<>~]/.test(text)) {
      throw new ConstraintSyntaxError(`malformed module version constraint "${piece.trim()}"`, s);
    }
    return { op: (m[1] ?? '=') as ModuleOperator, version: parseModuleVersion(text), raw: piece.trim() };
  });
}

/** Null when Terraform accepts `s` as a module `version`, else why not. */
export function validateModuleConstraints(s: string): string | null {
  try {
    parseModuleConstraints(s);
    return null;
  } catch (err) {
    if (err instanceof ConstraintSyntaxError) return err.message;
    throw err;
  }
}

function allZero(xs: number[]): boolean {
  return xs.every((x) => x === 0);
}

/** go-version `comparePart`. */
function comparePart(a: string, b: string): number {
  if (a === b) return 0;
  const an = /^[+-]?[0-9]+$/.test(a);
  const bn = /^[+-]?[0-9]+$/.test(b);
  if (a === '') return bn ? -1 : 1;
  if (b === '') return an ? 1 : -1;
  if (an && !bn) return -1;
  if (!an && bn) return 1;
  if (!an && !bn) return a > b ? 1 : -1;
  return Number(a) > Number(b) ? 1 : -1;
}

/** go-version `comparePrereleases`. */
function comparePrereleases(a: string, b: string): number {
  if (a === b) return 0;
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const c = comparePart(pa[i] ?? '', pb[i] ?? '');
    if (c !== 0) return c;
  }
  return 0;
}

/** go-version `Version.Compare`: segments (the shorter one counts as zeros), then pre-release;
 * metadata is ignored. */
export function compareModuleVersions(a: ModuleVersion, b: ModuleVersion): -1 | 0 | 1 {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    if (i >= a.segments.length) return allZero(b.segments.slice(i)) ? 0 : -1;
    if (i >= b.segments.length) return allZero(a.segments.slice(i)) ? 0 : 1;
    const x = a.segments[i] as number;
    const y = b.segments[i] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  if (a.prerelease === b.prerelease) return 0;
  if (a.prerelease === '') return 1;
  if (b.prerelease === '') return -1;
  return comparePrereleases(a.prerelease, b.prerelease) < 0 ? -1 : 1;
}

/** go-version `prereleaseCheck`. */
function prereleaseCheck(v: ModuleVersion, c: ModuleVersion): boolean {
  const vPre = v.prerelease !== '';
  const cPre = c.prerelease !== '';
  if (cPre && vPre) {
    return v.segments.length === c.segments.length && v.segments.every((s, i) => s === c.segments[i]);
  }
  return !(vPre && !cPre);
}

/** go-version `Constraint.Check`. */
function check(v: ModuleVersion, c: ModuleConstraint): boolean {
  const k = c.version;
  const cmp = compareModuleVersions(v, k);
  switch (c.op) {
    case '=':
      return cmp === 0;
    case '!=':
      return cmp !== 0;
    case '>':
      return prereleaseCheck(v, k) && cmp === 1;
    case '<':
      return prereleaseCheck(v, k) && cmp === -1;
    case '>=':
      return prereleaseCheck(v, k) && cmp >= 0;
    case '<=':
      return prereleaseCheck(v, k) && cmp <= 0;
    case '~>': {
      if (!prereleaseCheck(v, k) || (k.prerelease !== '' && v.prerelease === '')) return false;
      if (cmp < 0) return false;
      const cs = k.segments.length;
      if (cs > v.segments.length) return false;
      for (let i = 0; i < k.written - 1; i++) if (v.segments[i] !== k.segments[i]) return false;
      return (k.segments[cs - 1] as number) <= (v.segments[cs - 1] as number);
    }
  }
}

function toConstraints(cs: string | ModuleConstraint[]): ModuleConstraint[] {
  return typeof cs === 'string' ? (cs.trim() === '' ? [] : parseModuleConstraints(cs)) : cs;
}

/**
 * Whether `terraform init` may install module version `version` for the call's `constraint`
 * (empty: any release). A pre-release must also be requested exactly (Terraform checks it with
 * go-versions first); a version go-version cannot read is never installed.
 */
export function moduleVersionAllowed(version: string, constraint: string | ModuleConstraint[]): boolean {
  let v: ModuleVersion;
  try {
    v = parseModuleVersion(version);
  } catch {
    return false;
  }
  const cs = toConstraints(constraint);
  if (v.prerelease !== '') {
    const text = cs.map((c) => c.raw).join(',');
    // go-versions' canonical syntax (`MeetingConstraintsString`) separates constraints by spaces:
    // `= 6.0.0-rc1` does not parse there, and Terraform then skips the pre-release (terraform 1.11
    // installs it for `=6.0.0-rc1` and `6.0.0-rc1`, not for `= 6.0.0-rc1`).
    if (cs.some((c) => /^(?:=|!=|>=|<=|>|<|~>)\s/.test(c.raw))) return false;
    try {
      if (text === '' || !satisfies(version.replace(/^v/, ''), text)) return false;
    } catch {
      return false; // module_install.go: constraints go-versions cannot read skip the pre-release
    }
  }
  return cs.every((c) => check(v, c));
}

/** The version `terraform init` installs from `published` (the newest allowed), or null. */
export function selectModuleRelease(published: readonly string[], constraint: string): string | null {
  const cs = toConstraints(constraint);
  let best: { raw: string; v: ModuleVersion } | null = null;
  for (const raw of published) {
    if (!moduleVersionAllowed(raw, cs)) continue;
    const v = parseModuleVersion(raw);
    if (best === null || compareModuleVersions(v, best.v) > 0) best = { raw, v };
  }
  return best === null ? null : best.raw;
}

/**
 * The `~>` pieces of a module constraint that hold no major version: `~> N` with one segment,
 * which go-version reads as `>= N` (every later major version too). Empty when there are none or
 * the constraint does not parse.
 */
export function unboundedPessimistic(constraint: string): ModuleConstraint[] {
  let cs: ModuleConstraint[];
  try {
    cs = parseModuleConstraints(constraint);
  } catch {
    return [];
  }
  return cs.filter((c) => c.op === '~>' && c.version.written === 1);
}

/** Whether a module constraint caps the version from above (`<`, `<=`, `=`, or `~>` with two or
 * more segments); `~> 5` alone does not. False when it does not parse. */
export function moduleConstraintBounded(constraint: string): boolean {
  let cs: ModuleConstraint[];
  try {
    cs = parseModuleConstraints(constraint);
  } catch {
    return false;
  }
  return cs.some(
    (c) => c.op === '<' || c.op === '<=' || c.op === '=' || (c.op === '~>' && c.version.written > 1),
  );
}
