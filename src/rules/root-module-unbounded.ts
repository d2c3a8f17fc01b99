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
import type { Rule, RuleContext } from './types';
import type { ModuleInfo, ProviderRequirement } from '../modules';

/**
 * Root modules (where `apply` runs) should also set a maximum provider version so an upgrade never
 * happens by accident; `~>` is the convenient form (Terraform docs, "Best Practices for Provider
 * Versions").
 *
 * A module that only Terragrunt units run (`unitSourceOf`) is those roots' configuration: a
 * provider it leaves unbounded that no unit's generated files bound is reported once, at the
 * module's constraint, naming the units; a unit is not reported again for what its source module
 * constrains.
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
      if (isDeployable(m, ctx)) {
        // A Terragrunt unit runs its source module with its generated files: a provider the source
        // module constrains is judged there, once (bounded there, the unit's root is bounded).
        const source = unitSourceModule(ctx, m);
        for (const p of m.providers) {
          const c = checkableConstraint(p);
          if (c === null || hasUpperBound(c)) continue;
          if (
            source !== undefined &&
            source.providers.some((q) => q.source === p.source && checkableConstraint(q) !== null)
          )
            continue;
          out.push(unbounded(ctx, m, p, c, m.path, ''));
        }
      } else if (m.unitSourceOf !== undefined) {
        // A module only Terragrunt units run is their roots' configuration: its constraint must be
        // bounded unless each unit's generated files bound it (docs/classification.md, "Terragrunt").
        for (const p of m.providers) {
          const c = checkableConstraint(p);
          if (c === null || hasUpperBound(c)) continue;
          const units = m.unitSourceOf.filter((u) => {
            const q = ctx.moduleByPath.get(u)?.providers.find((x) => x.source === p.source);
            const qc = q === undefined ? null : checkableConstraint(q);
            return qc === null || !hasUpperBound(qc);
          });
          if (units.length === 0) continue;
          const named =
            units.length > 3
              ? `${units.slice(0, 3).join(', ')} and ${units.length - 3} more`
              : units.join(', ');
          out.push(
            unbounded(
              ctx,
              m,
              p,
              c,
              units[0] as string,
              ` (the configuration of Terragrunt unit${units.length > 1 ? 's' : ''} ${named}, whose generated files do not bound it)`,
            ),
          );
        }
      }
    }
    return out;
  },
};

/** The module a Terragrunt unit runs, when only units run it (`unitSourceOf`). */
function unitSourceModule(ctx: RuleContext, m: ModuleInfo): ModuleInfo | undefined {
  if (m.terragrunt === undefined) return undefined;
  for (const call of m.moduleCalls) {
    if (call.name !== 'terragrunt' || call.target === null) continue;
    const t = ctx.moduleByPath.get(call.target);
    if (t?.unitSourceOf?.includes(m.path) === true) return t;
  }
  return undefined;
}

function unbounded(
  ctx: RuleContext,
  m: ModuleInfo,
  p: ProviderRequirement,
  c: string,
  lockRoot: string,
  whose: string,
): RuleFinding {
  const caveat = kindCaveat(m);
  const locked = lockedVersion(ctx, lockRoot, p.source);
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
  return {
    module: m.path,
    ...at(p.constraintLocation ?? p.declared),
    message:
      `root module constraint "${c}"${constraintOrigin(p)} for provider ${describeProvider(p)}${whose} has no upper bound, ` +
      'so a future (possibly incompatible) major version can be installed on the next init -upgrade' +
      caveat.suffix,
    ...(caveat.weak ? { confidence: 'low' as const } : {}),
    ...(suggestion !== null && !caveat.weak
      ? { fix: fixWith(description, suggestion, requirementEdits(p, suggestion)) }
      : {}),
    note,
  };
}
