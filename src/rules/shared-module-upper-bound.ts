import { formatConstraint, suggestMinimumOnly, upperBounding } from '../constraints';
import type { RuleFinding } from './types';
import {
  at,
  checkableConstraint,
  constraintOrigin,
  describeProvider,
  fixWith,
  kindCaveat,
  requirementEdits,
} from './helpers';
import type { Rule } from './types';

/**
 * Shared modules declare a minimum provider version only. Terraform's provider-requirements guide:
 * "Do not use ~> (or other maximum-version constraints) for modules you intend to reuse across many
 * configurations" — the root module manages the maximum.
 */
export const sharedModuleUpperBound: Rule = {
  id: 'shared-module-upper-bound',
  defaultSeverity: 'error',
  summary:
    'A shared (reusable) module must not cap a provider version with ~>, <, <=, = or an exact version; only a minimum (>=).',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      // A module only Terragrunt units run is their roots' configuration: its cap is their bound.
      if (m.kind !== 'shared' || m.unitSourceOf !== undefined) continue;
      const caveat = kindCaveat(m);
      for (const p of m.providers) {
        const c = checkableConstraint(p);
        if (c === null) continue;
        const caps = upperBounding(c);
        if (caps.length === 0) continue;
        const minimumOnly = suggestMinimumOnly(c);
        out.push({
          module: m.path,
          ...at(p.constraintLocation ?? p.declared),
          message:
            `shared module caps provider ${describeProvider(p)} with "${c}"${constraintOrigin(p)} ` +
            `(upper bound: ${caps.map(formatConstraint).join(', ')}); a reusable module should declare only a minimum version` +
            caveat.suffix,
          ...(caveat.weak ? { confidence: 'low' as const } : {}),
          ...(minimumOnly !== null && !caveat.weak
            ? {
                fix: fixWith('keep only the minimum version', minimumOnly, requirementEdits(p, minimumOnly)),
              }
            : {}),
          note:
            minimumOnly !== null
              ? 'Document known incompatibilities with newer versions instead, and let the root module set the maximum.'
              : 'Declare the oldest version the module is known to work with as ">= X.Y", and let the root module set the maximum.',
        });
      }
    }
    return out;
  },
};
