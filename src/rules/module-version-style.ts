import { moduleConstraintBounded, parseModuleConstraints } from '../constraints';
import type { ModuleVersionStyle } from '../model';
import { MODULE_VERSION_STYLES } from '../model';
import { oneOf } from '../util/settings';
import type { RuleFinding } from './types';
import { at, isDeployable, kindCaveat } from './helpers';
import type { Rule } from './types';

interface Piece {
  op: string;
  version: string;
  /** Segments written (`~> 5` → 1). */
  written: number;
}

/**
 * The pieces of a constraint as Terraform reads a module call's `version` (hashicorp/go-version
 * alone: src/constraints/module.ts), or null when it would reject it (terraform init reports it).
 */
function pieces(constraint: string): Piece[] | null {
  try {
    return parseModuleConstraints(constraint).map((c) => ({
      op: c.op,
      version: c.version.segments.slice(0, Math.max(c.version.written, 1)).join('.'),
      written: c.version.written,
    }));
  } catch {
    return null;
  }
}

type Shape = 'exact' | 'pessimistic' | 'unbounded-pessimistic' | 'other';

function shape(constraint: string, ps: Piece[]): Shape {
  if (ps.length === 1 && ps[0]?.op === '=') return 'exact';
  if (ps.some((p) => p.op === '~>') && !ps.some((p) => p.op === '=')) {
    // go-version: `~> 5` is `>= 5` for a module, 6.x included; only another bound holds the major.
    return moduleConstraintBounded(constraint) ? 'pessimistic' : 'unbounded-pessimistic';
  }
  return 'other';
}

/** `~> MAJOR.MINOR` of the constraint's lowest lower bound, for the note; null without one. */
function pessimisticHint(ps: Piece[]): string | null {
  const lower = ps.find((p) => p.op === '>=' || p.op === '=' || p.op === '>' || p.op === '~>');
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
  options: [
    {
      key: 'module_version_style',
      field: 'moduleVersionStyle',
      type: oneOf(MODULE_VERSION_STYLES),
      default: 'any',
      origins: ['repository'],
      doc: 'the form of registry module versions in root modules: `"exact"`, `"pessimistic"` (`~>`) or `"any"` (not checked)',
      example: '"pessimistic"',
    },
  ],
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
        const found = shape(call.version, ps);
        if (found === style) continue;
        const loose = ps.find((p) => p.op === '~>' && p.written === 1);
        const what =
          found === 'exact'
            ? `exact version "${call.version}"`
            : found === 'unbounded-pessimistic' && loose !== undefined
              ? `version constraint "${call.version}", which admits every later major version ` +
                `(for a module version Terraform reads "~> ${loose.version}" as ">= ${loose.version}", ` +
                'hashicorp/go-version; init -upgrade installs the next major release)'
              : `version constraint "${call.version}"`;
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
        } else if (found === 'unbounded-pessimistic') {
          const hint = pessimisticHint(ps) as string;
          note =
            `Write "${hint}" (releases of that major version) or "${hint}.0" (patch releases only); ` +
            'a single number after ~> holds nothing for modules, unlike provider versions.';
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
            (style === 'pessimistic' && found === 'unbounded-pessimistic'
              ? ' that holds the major version'
              : '') +
            caveat.suffix,
          ...(caveat.weak ? { confidence: 'low' as const } : {}),
          note,
        });
      }
    }
    return out;
  },
};
