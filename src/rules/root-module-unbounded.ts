import { hasUpperBound, suggestUpperBound, suggestUpperBoundAt } from '../constraints';
import type { RuleFinding } from './types';
import {
  at,
  constraintOrigin,
  fixWith,
  checkableConstraint,
  describeProvider,
  isDeployable,
  kindCaveat,
  lockedVersion,
  requirementEdits,
} from './helpers';
import type { Rule } from './types';

/**
 * Root modules (where `apply` runs) should also set a maximum provider version so an upgrade never
 * happens by accident; `~>` is the convenient form (Terraform docs, "Best Practices for Provider
 * Versions").
 *
 * The fix bounds the constraint to the release line of the version the root's lock file records
 * (what `init` installs today), or, without a lock entry, of the constraint's own minimum. A lock
 * whose version the bounded constraint would reject gets no fix: which of the two is wrong is a
 * person's call.
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
        const locked = lockedVersion(ctx, m.path, p.source);
        let suggestion: string | null;
        let note: string;
        let description = 'bound the version with ~>';
        if (locked.status === 'locked') {
          suggestion = suggestUpperBoundAt(c, locked.version);
          description = `bound the version with ~> to the release line of the locked version ${locked.version}`;
          note =
            suggestion !== null
              ? `Use the pessimistic operator: "${suggestion}" allows only updates within the release line of the locked version ${locked.version}.`
              : `${locked.lockFile} locks version ${locked.version}, which "${c}" bounded to its release line would not accept: ` +
                'decide which version the root should run, then add a maximum, for example "~> MAJOR.MINOR".';
        } else if (locked.status === 'unreadable') {
          suggestion = null;
          note = `Add a maximum, for example "~> MAJOR.MINOR" of the version ${locked.lockFile} should lock (tfguard could not read its entry).`;
        } else {
          suggestion = suggestUpperBound(c);
          note =
            suggestion !== null
              ? `Use the pessimistic operator: "${suggestion}" allows only updates within that release line.`
              : 'Add a maximum, for example with the pessimistic operator "~> MAJOR.MINOR".';
        }
        out.push({
          module: m.path,
          ...at(p.constraintLocation ?? p.declared),
          message:
            `root module constraint "${c}"${constraintOrigin(p)} for provider ${describeProvider(p)} has no upper bound, ` +
            'so a future (possibly incompatible) major version can be installed on the next init -upgrade' +
            caveat.suffix,
          ...(caveat.weak ? { confidence: 'low' as const } : {}),
          ...(suggestion !== null && !caveat.weak
            ? { fix: fixWith(description, suggestion, requirementEdits(p, suggestion)) }
            : {}),
          note,
        });
      }
    }
    return out;
  },
};
