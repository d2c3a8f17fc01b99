import type { ModuleVersionStyle } from '../model';
import type { RuleFinding } from './types';
import { at, isDeployable, kindCaveat } from './helpers';
import type { Rule } from './types';

/**
 * One piece of a module `version` constraint, as hashicorp/go-version's `NewConstraint` reads it
 * (Terraform parses a module call's `version` with go-version alone): an optional operator, an
 * optional `v`, a version of any number of numeric parts, optional pre-release and metadata.
 */
const PIECE =
  /^\s*(=|!=|>=|<=|>|<|~>)?\s*v?(\d+(?:\.\d+)*)(?:-?[0-9A-Za-z~-]+(?:\.[0-9A-Za-z~-]+)*)?(?:\+[0-9A-Za-z~-]+(?:\.[0-9A-Za-z~-]+)*)?\s*$/;

interface Piece {
  op: string;
  version: string;
}

/** The pieces of a constraint, or null when go-version would reject it (terraform init reports it). */
function pieces(constraint: string): Piece[] | null {
  const out: Piece[] = [];
  for (const raw of constraint.split(',')) {
    const m = PIECE.exec(raw);
    if (m === null) return null;
    out.push({ op: m[1] ?? '=', version: m[2] as string });
  }
  return out;
}

type Shape = 'exact' | 'pessimistic' | 'other';

function shape(ps: Piece[]): Shape {
  if (ps.length === 1 && ps[0]?.op === '=') return 'exact';
  if (ps.some((p) => p.op === '~>') && !ps.some((p) => p.op === '=')) return 'pessimistic';
  return 'other';
}

/** `~> MAJOR.MINOR` of the constraint's lowest lower bound, for the note; null without one. */
function pessimisticHint(ps: Piece[]): string | null {
  const lower = ps.find((p) => p.op === '>=' || p.op === '=' || p.op === '>');
  if (lower === undefined) return null;
  const [major = '0', minor = '0'] = lower.version.split('.');
  return `~> ${major}.${minor}`;
}

const ASKS: Record<Exclude<ModuleVersionStyle, 'any'>, string> = {
  exact: 'module_version_style = "exact" asks root modules for one exact version',
  pessimistic: 'module_version_style = "pessimistic" asks root modules for a ~> constraint',
};

/**
 * A team's choice of how root modules pin registry modules: `exact` (the release that was tested,
 * upgraded deliberately, e.g. by Renovate/Dependabot pull requests) or `pessimistic` (`~>`: patch or
 * minor releases of the tested line arrive with `init -upgrade`). Off unless `module_version_style`
 * chooses one; a missing `version` is `module-version-missing`'s finding.
 */
export const moduleVersionStyle: Rule = {
  id: 'module-version-style',
  defaultSeverity: 'warning',
  summary:
    'With module_version_style set, a root module must give registry module calls an exact version ("exact") or a ~> constraint ("pessimistic").',
  check(ctx) {
    const style = ctx.config.moduleVersionStyle;
    if (style === 'any') return [];
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      if (!isDeployable(m, ctx)) continue;
      const caveat = kindCaveat(m);
      for (const call of m.moduleCalls) {
        if (call.sourceKind !== 'registry' || call.version === null || call.version.trim() === '') continue;
        const ps = pieces(call.version);
        if (ps === null) continue;
        const found = shape(ps);
        if (found === style) continue;
        const what =
          found === 'exact' ? `exact version "${call.version}"` : `version constraint "${call.version}"`;
        let note: string;
        if (style === 'exact') {
          note =
            'Write the release you have tested, e.g. version = "1.2.3" (or "= 1.2.3"), and upgrade it on purpose ' +
            '(terraform init -upgrade then changes nothing).';
        } else if (found === 'exact') {
          const [major = '0', minor = '0', patch = '0'] = (ps[0] as Piece).version.split('.');
          note =
            `Use "~> ${major}.${minor}.${patch}" (patch releases of ${major}.${minor}) or ` +
            `"~> ${major}.${minor}" (minor releases of ${major}).`;
        } else {
          const hint = pessimisticHint(ps);
          note =
            hint === null
              ? 'Use "~> MAJOR.MINOR" of the oldest release you support.'
              : `Use "${hint}" (the release line of its lower bound) or another ~> constraint.`;
        }
        out.push({
          module: m.path,
          ...at(call.versionLocation ?? call.location),
          message:
            `module "${call.name}" (registry source "${call.source ?? ''}") has ${what}, but ${ASKS[style]}` +
            caveat.suffix,
          ...(caveat.weak ? { confidence: 'low' as const } : {}),
          note,
        });
      }
    }
    return out;
  },
};
