/**
 * Terraform's normalized constraint form, as written to (and required in) `.terraform.lock.hcl`
 * (`getproviders.VersionConstraintsString`): missing version parts become 0, duplicates are
 * removed, the rest is sorted by boundary version (build metadata breaking ties) and then by
 * operator (`>`, `>=`, `=`, `~> X.Y.Z`, `~> X.Y`, `<=`, `<`, `!=`), and joined with ", ".
 * `=` is written as a bare version; `~> X` and `~> X.Y` are written `~> X.Y`; every other
 * version is written `X.Y.Z`, with its pre-release and metadata.
 */
import { parseConstraints, toConstraints, type Constraint } from './parse';
import { ConstraintSyntaxError, compareVersions, extraLess, formatVersion, type Version } from './version';

/** The canonical text of one constraint (as it appears in a lock file). */
export function formatConstraint(c: Constraint): string {
  const v = c.version;
  let text: string;
  if (c.op === '~>' && v.parts !== 3) {
    text = `${v.major}.${v.minor}`;
    if (v.prerelease !== '') text += `-${v.prerelease}`;
    if (v.metadata !== '') text += `+${v.metadata}`;
  } else {
    text = formatVersion(v);
  }
  return c.op === '=' ? text : `${c.op} ${text}`;
}

function operatorRank(c: Constraint): number {
  switch (c.op) {
    case '>':
      return 1;
    case '>=':
      return 2;
    case '=':
      return 3;
    case '~>':
      return c.version.parts === 3 ? 4 : 5;
    case '<=':
      return 6;
    case '<':
      return 7;
    case '!=':
      return 8;
  }
}

function boundaryCompare(a: Version, b: Version): number {
  const cmp = compareVersions(a, b);
  if (cmp !== 0) return cmp;
  if (a.metadata === b.metadata) return 0;
  return extraLess(a.metadata, b.metadata) ? -1 : 1;
}

/** Sorted, deduplicated copy of `cs` in Terraform's canonical order. */
export function canonicalOrder(cs: Constraint[]): Constraint[] {
  const unique = new Map<string, Constraint>();
  for (const c of cs) {
    const key = formatConstraint(c);
    if (!unique.has(key)) unique.set(key, c);
  }
  return [...unique.values()].sort(
    (a, b) => boundaryCompare(a.version, b.version) || operatorRank(a) - operatorRank(b),
  );
}

/**
 * The lock-file `constraints` string Terraform records for the AND of all inputs (one entry per
 * module that constrains the provider). Strings use the configuration grammar; an input list with
 * no constraints gives `''` (Terraform then writes no `constraints` argument).
 */
export function normalizeConstraints(list: Array<string | Constraint[]>): string {
  return canonicalOrder(list.flatMap((s) => toConstraints(s)))
    .map(formatConstraint)
    .join(', ');
}

/**
 * Whether `s` is acceptable as a lock file's `constraints`: it parses (go-versions grammar, where
 * `''` means no constraints) and is already in normalized form.
 */
export function isNormalized(s: string): boolean {
  if (typeof s !== 'string') return false;
  try {
    return (
      canonicalOrder(parseConstraints(s, { grammar: 'lock' }))
        .map(formatConstraint)
        .join(', ') === s
    );
  } catch (err) {
    if (err instanceof ConstraintSyntaxError) return false;
    throw err;
  }
}
