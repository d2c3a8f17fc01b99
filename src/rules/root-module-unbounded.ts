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
import type { ModuleInfo, ProviderRequirement, RootProvider, RootTree } from '../modules';
import { treeOf } from './lock-helpers';
import { shortSource } from '../addrs';
import { callPaths } from './helpers';
import { capsSafely, rootBound, sourceAsWritten, unitSourceOf as unitSourceModule } from './root-bounds';

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
    const declared = new DeclaredSources();
    for (const m of ctx.modules) {
      if (isDeployable(m, ctx)) {
        // A Terragrunt unit runs its source module with its generated files: a provider the source
        // module constrains is judged there, once (bounded there, the unit's root is bounded).
        const source = unitSourceModule(ctx, m);
        for (const p of m.providers) {
          const c = checkableConstraint(p);
          if (c === null || hasUpperBound(c)) continue;
          if (source !== undefined && declared.of(source).has(p.source)) continue;
          out.push(unbounded(ctx, m, p, c, m.path, ''));
        }
        throughModules(ctx, m, source, declared, out);
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

/** The provider sources each module gives a checkable constraint, computed once per module and
 * check (a root, and the source module of every unit that runs it, are asked for every provider). */
class DeclaredSources {
  private readonly bySource = new Map<ModuleInfo, ReadonlySet<string>>();

  of(m: ModuleInfo): ReadonlySet<string> {
    let set = this.bySource.get(m);
    if (set === undefined) {
      const s = new Set<string>();
      for (const q of m.providers) if (checkableConstraint(q) !== null) s.add(q.source);
      set = s;
      this.bySource.set(m, set);
    }
    return set;
  }
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

/**
 * Providers root `m` gets only through the modules it calls, none of which bounds the version (they
 * say `>=`, as shared modules should) while the root bounds it nowhere: the combined constraints of
 * the root's tree have no maximum. Reported on the root's `required_providers` block, or
 * on the module call that brings the provider in when it has none, naming the modules. The fix adds
 * the entry to the root with `~> MAJOR.MINOR` of the locked version (else of the combined minimum).
 */
function throughModules(
  ctx: RuleContext,
  m: ModuleInfo,
  unitSource: ModuleInfo | undefined,
  declared: DeclaredSources,
  out: RuleFinding[],
): void {
  const tree = treeOf(ctx, m.path);
  if (tree === undefined) return;
  const own = declared.of(m);
  const sourceOwn = unitSource === undefined ? undefined : declared.of(unitSource);
  for (const rp of tree.providers) {
    const c = rp.constraints;
    if (c === null || c === '' || (rp.unknownContributions?.length ?? 0) > 0) continue;
    // The root's own constraint (reported above) and a unit source module's (reported there).
    if (own.has(rp.source) || sourceOwn?.has(rp.source) === true) continue;
    const via = rp.contributions.filter((k) => k.module !== m.path);
    if (via.length === 0 || via.some((k) => judged(ctx, k)) || capsSafely(c)) continue;
    out.push(throughFinding(ctx, m, tree, rp, c, via));
  }
}

/** A root or a unit's source module among the contributions has its own finding, whose fix bounds
 * this root too. */
function judged(ctx: RuleContext, k: RootProvider['contributions'][number]): boolean {
  const x = k.remote === undefined ? ctx.moduleByPath.get(k.module) : undefined;
  return x !== undefined && (isDeployable(x, ctx) || x.unitSourceOf !== undefined);
}

/** The finding of `throughModules` for one provider `rp` of root `m`'s tree, constrained `c`. */
function throughFinding(
  ctx: RuleContext,
  m: ModuleInfo,
  tree: RootTree,
  rp: RootProvider,
  c: string,
  via: RootProvider['contributions'],
): RuleFinding {
  const unresolved = tree.remoteCalls.filter((k) => k.origin === undefined || k.origin === null);
  const named = via.slice(0, 3).map((k) => `${k.module} ("${k.constraints}")`);
  if (via.length > 3) named.push(`${via.length - 3} more`);
  const first = via[0] as (typeof via)[number];
  const firstReq = ctx.moduleByPath.get(first.module)?.providers.find((q) => q.source === rp.source);
  const localName = firstReq?.name ?? (rp.source.split('/').pop() as string);
  // Where: the root's required_providers block, else the call that leads to the first module.
  const callName =
    m.requiredProvidersBlocks.length === 0 && first.remote === undefined
      ? callPaths(tree, first.module)[0]?.[0]
      : undefined;
  const where =
    m.requiredProvidersBlocks[0] ??
    (first.remote !== undefined
      ? first.location
      : m.moduleCalls.find((k) => k.name === callName)?.location) ??
    null;
  const caveat = kindCaveat(m);
  const guess = caveat.weak || unresolved.length > 0;
  const unresolvedNote =
    unresolved.length > 0
      ? ` (unless remote module${unresolved.length > 1 ? 's' : ''} ${unresolved
          .slice(0, 3)
          .map((u) => `"${u.name}"`)
          .join(', ')}, which tfguard did not read, bound${unresolved.length > 1 ? '' : 's'} it)`
      : '';
  // Without a lock entry the root takes the release line of the combined minimum; the modules keep
  // their minimums, so the root needs only the cap (`~> 0.9`, not `~> 0.9, >= 0.9.1`).
  const cap =
    suggestUpperBound(c)
      ?.split(', ')
      .find((x) => x.startsWith('~>')) ?? null;
  // The bound and its edits only for a finding that offers a fix (not a guess).
  const b = guess
    ? null
    : rootBound(
        ctx,
        tree,
        rp,
        localName,
        cap,
        firstReq === undefined || firstReq.implicit ? undefined : sourceAsWritten(ctx, firstReq),
      );
  const fixable = b !== null && !('reason' in b);
  return {
    module: m.path,
    ...at(where),
    message:
      `root module gets provider "${localName}" (${shortSource(rp.source, tree.engine)}) only through ` +
      `module${via.length > 1 ? 's' : ''} ${named.join(', ')} and bounds it nowhere: the combined constraint ` +
      `"${c}" has no upper bound, so a future (possibly incompatible) major version can be installed on the next init -upgrade` +
      unresolvedNote +
      caveat.suffix,
    ...(guess ? { confidence: 'low' as const } : {}),
    ...(fixable
      ? { fix: fixWith(`declare the provider in the root with "${b.bound}"`, b.bound, b.edits) }
      : {}),
    note:
      `Declare it in the root's required_providers with a maximum, for example "${cap ?? '~> MAJOR.MINOR'}"` +
      ' (the release line the root runs); shared modules keep their minimums.' +
      (b !== null && 'reason' in b ? ` No fix: ${b.reason}.` : ''),
  };
}
