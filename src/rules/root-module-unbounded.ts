import { hasUpperBound, suggestUpperBound } from '../constraints';
import type { RuleFinding } from './types';
import {
  at,
  constraintOrigin,
  fixWith,
  checkableConstraint,
  describeProvider,
  isDeployable,
  kindCaveat,
  requirementEdits,
} from './helpers';
import type { Rule } from './types';

/**
 * Root modules (where `apply` runs) should also set a maximum provider version so an upgrade never
 * happens by accident; `~>` is the convenient form (Terraform docs, "Best Practices for Provider
 * Versions").
 */
export const rootModuleUnbounded: Rule = {
  id: 'root-module-unbounded',
  defaultSeverity: 'error',
  summary:
    'A root module must give every provider version constraint an upper bound (~>, <, <= or an exact version).',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      if (!isDeployable(m, ctx)) continue;
      const caveat = kindCaveat(m);
      for (const p of m.providers) {
        const c = checkableConstraint(p);
        if (c === null || hasUpperBound(c)) continue;
        const suggestion = suggestUpperBound(c);
        out.push({
          module: m.path,
          ...at(p.constraintLocation ?? p.declared),
          message:
            `root module constraint "${c}"${constraintOrigin(p)} for provider ${describeProvider(p)} has no upper bound, ` +
            'so a future (possibly incompatible) major version can be installed on the next init -upgrade' +
            caveat.suffix,
          ...(caveat.weak ? { confidence: 'low' as const } : {}),
          ...(suggestion !== null && !caveat.weak
            ? {
                fix: fixWith('bound the version with ~>', suggestion, requirementEdits(p, suggestion)),
              }
            : {}),
          note:
            suggestion !== null
              ? `Use the pessimistic operator: "${suggestion}" allows only updates within that release line.`
              : 'Add a maximum, for example with the pessimistic operator "~> MAJOR.MINOR".',
        });
      }
    }
    return out;
  },
};
