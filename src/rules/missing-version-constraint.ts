import { compareVersions, isSatisfiable, parseVersion } from '../constraints';
import type { ModuleInfo, ProviderRequirement } from '../modules';
import type { RuleFinding } from './types';
import type { TextEdit } from '../model';
import { insertObjectItem } from './fix-helpers';
import {
  at,
  describeProvider,
  fixWith,
  isBuiltinProvider,
  isDeployable,
  isLegacyTerraformProvider,
  kindCaveat,
  lockedVersion,
  releaseLine,
  safelySatisfies,
  sourceFor,
  treeConstraints,
  treesWith,
  inputNoun,
} from './helpers';
import type { Rule, RuleContext } from './types';

/** The constraint to add, from the lock files, or why there is none (what a person must do). */
type Derived = { constraint: string; why: string } | { reason: string };

/**
 * A root module: `~> MAJOR.MINOR` of the version its lock file records (what `init` installs now).
 */
function forRoot(ctx: RuleContext, m: ModuleInfo, p: ProviderRequirement): Derived {
  const locked = lockedVersion(ctx, m.path, p.source);
  if (locked.status === 'no-lock')
    return { reason: 'the root has no lock file to take the tested version from' };
  if (locked.status !== 'locked') return { reason: `${locked.lockFile} records no readable version for it` };
  const line = releaseLine(locked.version);
  const tree = ctx.roots.find((t) => t.root === m.path);
  const combined = tree === undefined ? null : treeConstraints(tree, p.source);
  if (
    line === null ||
    !safelySatisfies(locked.version, line) ||
    combined === null ||
    !safelySatisfies(locked.version, combined)
  )
    return { reason: `the locked version ${locked.version} does not fit the configuration's constraints` };
  return { constraint: line, why: `the release line of the version ${locked.lockFile} locks` };
}

/**
 * A shared module: `>= ` the lowest version locked across the roots that use it, so that every one
 * of them keeps its locked version. Only when every deployable root that uses the module locks the
 * provider, and the minimum leaves every other configuration that uses it (examples, tests)
 * satisfiable.
 */
function forShared(ctx: RuleContext, m: ModuleInfo, p: ProviderRequirement): Derived {
  const trees = treesWith(ctx, m.path);
  const deployable = trees.filter((t) => isDeployable(t, ctx));
  if (deployable.length === 0)
    return {
      reason: `no root module that uses it is in the ${inputNoun(ctx)} to take the tested version from`,
    };
  const versions: string[] = [];
  for (const t of deployable) {
    const locked = lockedVersion(ctx, t.root, p.source);
    if (locked.status !== 'locked') return { reason: `root "${t.root}" that uses it locks no version of it` };
    const combined = treeConstraints(t, p.source);
    if (combined === null || !safelySatisfies(locked.version, combined))
      return { reason: `the version root "${t.root}" locks does not fit its constraints` };
    versions.push(locked.version);
  }
  let lowest: string | null = null;
  try {
    for (const v of versions) {
      if (parseVersion(v).prerelease !== '') return { reason: `a root locks the pre-release ${v}` };
      if (lowest === null || compareVersions(parseVersion(v), parseVersion(lowest)) < 0) lowest = v;
    }
  } catch {
    return { reason: 'a locked version cannot be read' };
  }
  if (lowest === null) return { reason: 'no root locks it' };
  const constraint = `>= ${lowest}`;
  for (const t of trees) {
    if (deployable.includes(t)) continue;
    const combined = treeConstraints(t, p.source);
    if (combined === null) return { reason: `the constraints of "${t.root}" cannot be read` };
    if (combined !== '' && !isSatisfiable([combined, constraint]))
      return { reason: `"${constraint}" would leave "${t.root}" without a version that satisfies it` };
  }
  const roots = deployable.map((t) => t.root);
  return {
    constraint,
    why:
      roots.length === 1
        ? `the version root "${roots[0]}" locks`
        : `the lowest version locked by the roots that use it (${roots.join(', ')})`,
  };
}

/**
 * "Each provider dependency you declare should have a version constraint given in the version
 * argument" (Terraform docs, Provider Requirements → Version Constraints). Providers that are only
 * used, never declared, belong to `undeclared-provider`.
 *
 * The fix adds the constraint the lock files show is in use: a root module gets `~> MAJOR.MINOR` of
 * its locked version; a shared module `>= ` the lowest version locked by the roots that use it. A
 * module whose kind is a guess, or whose tested version no lock file shows, gets advice only.
 */
export const missingVersionConstraint: Rule = {
  id: 'missing-version-constraint',
  defaultSeverity: 'error',
  summary: 'Every required_providers entry must have a version constraint.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      const caveat = kindCaveat(m);
      for (const p of m.providers) {
        if (p.implicit || p.declared === null || p.constraints !== null) continue;
        // A version tfguard could not evaluate is provider-version-unknown's, not a missing one.
        if (p.versionExpression !== undefined) continue;
        if (isBuiltinProvider(p) || isLegacyTerraformProvider(p)) continue;
        const derived: Derived = caveat.weak
          ? { reason: `tfguard's guess of what "${m.path}" is decides the right constraint` }
          : isDeployable(m, ctx)
            ? forRoot(ctx, m, p)
            : m.kind === 'shared'
              ? forShared(ctx, m, p)
              : { reason: `a ${m.kind} module has no lock file to take the tested version from` };
        let fix: RuleFinding['fix'];
        if ('constraint' in derived && p.entry !== undefined) {
          const src = sourceFor(ctx, p.entry.valueRange.file);
          const anchor = p.entry.items?.find((it) => it.key === 'source');
          const edits: TextEdit[] | undefined =
            src === undefined
              ? undefined
              : insertObjectItem(
                  src,
                  p.entry,
                  {
                    key: 'version',
                    hcl: JSON.stringify(derived.constraint),
                    json: JSON.stringify(derived.constraint),
                  },
                  anchor === undefined ? 'last' : { after: anchor },
                );
          fix = fixWith(
            `add the version constraint from ${derived.why}`,
            `version = "${derived.constraint}"`,
            edits,
          );
        }
        const shared = m.kind === 'shared';
        out.push({
          module: m.path,
          ...at(p.constraintLocation ?? p.declared),
          message: `required_providers entry for provider ${describeProvider(p)} has no version constraint, so any version is accepted`,
          ...(fix !== undefined ? { fix } : {}),
          note:
            'reason' in derived
              ? (shared
                  ? 'Add version = ">= X.Y" with the oldest version this module is known to work with'
                  : 'Add a bounded constraint such as version = "~> X.Y" (the release line you have tested)') +
                ` (no fix: ${derived.reason}).`
              : shared
                ? 'A shared module states only the minimum; the root modules that use it set the maximum.'
                : 'The pessimistic operator allows only updates within the release line you run today.',
        });
      }
    }
    return out;
  },
};
