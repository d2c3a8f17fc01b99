/**
 * Version ranges of the policy: whether a constraint set admits versions outside an allowed range,
 * and the narrowest plain rewrite of a constraint into that range. Decided with the constraint
 * analysis tfguard uses for `incompatible-constraints` (src/constraints/semantics.ts): over every
 * release `M.m.p`, plus pre-releases pinned with `=`.
 */
import { pessimisticUpper, analyze } from '../constraints/semantics';
import type { Constraint, Operator } from '../constraints';

function piece(op: Operator, version: Constraint['version']): Constraint {
  return { op, explicitOp: true, version, raw: op };
}

/** The constraints whose union is everything `c` excludes (each alternative one list). */
function negations(c: Constraint): Constraint[][] {
  switch (c.op) {
    case '>=':
      return [[piece('<', c.version)]];
    case '>':
      return [[piece('<=', c.version)]];
    case '<':
      return [[piece('>=', c.version)]];
    case '<=':
      return [[piece('>', c.version)]];
    case '~>':
      return [[piece('<', c.version)], [piece('>=', pessimisticUpper(c))]];
    case '=':
      return [[piece('!=', c.version)]];
    case '!=':
      return [[piece('=', c.version)]];
  }
}

/** True when some version that `constraints` accept is outside `allowed` (both ANDed lists). */
export function admitsOutside(constraints: readonly Constraint[], allowed: readonly Constraint[]): boolean {
  return allowed.some((a) => negations(a).some((neg) => analyze([...constraints, ...neg]).satisfiable));
}

/**
 * The constraint that accepts exactly what both `constraints` and `allowed` accept, written with
 * the pieces as they were written, each piece the others already imply left out (`>= 5.0` and
 * `>= 5.40, < 7.0` give `>= 5.40, < 7.0`). Null when no version satisfies both.
 */
export function intersectConstraints(
  constraints: readonly Constraint[],
  allowed: readonly Constraint[],
): string | null {
  let pieces = [...constraints, ...allowed];
  if (!analyze(pieces).satisfiable) return null;
  for (const p of [...pieces]) {
    const others = pieces.filter((x) => x !== p);
    if (others.length > 0 && !admitsOutside(others, [p])) pieces = others;
  }
  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of pieces) {
    const text = p.raw.replace(/^(~>|>=|<=|!=|>|<|=)\s*/, '$1 ').trim();
    if (!seen.has(text)) {
      seen.add(text);
      out.push(text);
    }
  }
  return out.join(', ');
}
