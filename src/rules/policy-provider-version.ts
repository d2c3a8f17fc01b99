import { shortSource } from '../addrs';
import { parseConstraints, satisfies } from '../constraints';
import { admitsOutside, intersectConstraints, policyAnswers, rangeAnswers, remember } from '../policy';
import {
  at,
  checkableConstraint,
  deployableTrees,
  fixWith,
  lockedVersion,
  moduleAnchor,
  requirementEdits,
} from './helpers';
import { liveEntries, lockRoots } from './lock-helpers';
import { policyAt } from './policy-helpers';
import type { Rule, RuleContext, RuleFinding } from './types';

/** A locked version outside the policy's range: what `init` installs today breaks the policy. */
function lockedOutside(ctx: RuleContext): RuleFinding[] {
  const input = ctx.policy;
  if (input === undefined) return [];
  const out: RuleFinding[] = [];
  const policy = policyAnswers(input.policy);
  for (const a of lockRoots(ctx)) {
    if (a.lock === null) continue;
    for (const e of liveEntries(a)) {
      if (e.version === null || e.source === null) continue;
      const rule = policy.provider(e.source);
      if (rule?.versions == null) continue;
      // The same provider version is locked by many roots of a monorepo, and scanned again and
      // again with the same policy: each is judged once per policy block.
      const known = rangeAnswers(rule).locked;
      let ok = known.get(e.version);
      if (ok === undefined) {
        try {
          ok = satisfies(e.version, rule.versions.constraints);
        } catch {
          ok = true;
        }
        remember(known, e.version, ok);
      }
      if (ok) continue;
      out.push({
        module: a.root,
        file: a.lock.path,
        line: e.versionLine ?? e.line,
        ...(e.versionRange !== null ? { range: e.versionRange } : {}),
        message:
          `the lock file selects ${shortSource(e.source, a.engine)} ${e.version}, outside the versions the policy allows ` +
          `("${rule.versions.text}", ${policyAt(input, rule.line)})`,
        note: `Change the root's constraint to a version the policy allows and run "init -upgrade", then commit the lock file.`,
        provider: e.source,
      });
    }
  }
  return out;
}

/**
 * A root whose combined constraint admits versions outside the policy's range: the next
 * `init -upgrade` may select one. Reported at the root's own constraint (a warning); when the root
 * declares the provider with a literal constraint whose narrowing to the policy's range still accepts
 * the locked version, the fix writes that intersection.
 */
function admitsOutsideRange(ctx: RuleContext): RuleFinding[] {
  const input = ctx.policy;
  if (input === undefined) return [];
  const out: RuleFinding[] = [];
  const policy = policyAnswers(input.policy);
  for (const tree of deployableTrees(ctx)) {
    const m = ctx.moduleByPath.get(tree.root);
    if (m === undefined) continue;
    for (const rp of tree.providers) {
      const rule = policy.provider(rp.source);
      if (rule?.versions == null || rp.constraints === null) continue;
      if ((rp.unknownContributions?.length ?? 0) > 0) continue;
      // Most roots of a repository share a few constraint strings, scanned again and again with
      // the same policy: each is judged once per policy block.
      const answers = rangeAnswers(rule);
      let outside = answers.outside.get(rp.constraints);
      if (outside === undefined) {
        try {
          outside = admitsOutside(parseConstraints(rp.constraints), rule.versions.constraints);
        } catch {
          outside = false;
        }
        remember(answers.outside, rp.constraints, outside);
      }
      if (!outside) continue;
      const own = m.providers.find((p) => p.source === rp.source);
      const ownConstraint = own === undefined ? null : checkableConstraint(own);
      const name = shortSource(rp.source, tree.engine);
      const allowed = `"${rule.versions.text}" (${policyAt(input, rule.line)})`;
      let fix: RuleFinding['fix'];
      let why = '';
      if (own !== undefined && ownConstraint !== null) {
        let narrowed = answers.narrowed.get(ownConstraint);
        if (narrowed === undefined) {
          narrowed = intersectConstraints(parseConstraints(ownConstraint), rule.versions.constraints);
          remember(answers.narrowed, ownConstraint, narrowed);
        }
        const locked = lockedVersion(ctx, tree.root, rp.source);
        if (narrowed === null) why = ` No fix: no version satisfies both "${ownConstraint}" and the policy.`;
        else if (locked.status === 'locked' && !satisfies(locked.version, narrowed))
          why = ` No fix: the narrowed constraint "${narrowed}" would reject the locked version ${locked.version}.`;
        else
          fix = fixWith(
            `narrow the constraint to the versions the policy allows: "${narrowed}"`,
            narrowed,
            requirementEdits(own, narrowed),
          );
      }
      const where =
        own !== undefined ? at(own.constraintLocation ?? own.declared) : at(m.requiredProvidersBlocks[0]);
      out.push({
        module: m.path,
        ...(where.file !== null ? where : moduleAnchor(m)),
        message:
          `root module's constraint "${rp.constraints === '' ? '(none)' : rp.constraints}" for ${name} admits versions ` +
          `outside the ones the policy allows, ${allowed}, so the next init -upgrade may select one`,
        ...(fix !== undefined ? { fix } : {}),
        note:
          own === undefined || ownConstraint === null
            ? `Declare the provider in the root's required_providers with version = "${rule.versions.text}" (or a narrower range).${why}`
            : `Narrow the root's constraint into "${rule.versions.text}".${why}`,
        lower: 1,
        provider: rp.source,
      });
    }
  }
  return out;
}

/**
 * Provider versions against the policy's `versions` ranges: an error when a lock file selects a
 * version outside the range; a warning when a root's constraint admits versions outside it.
 */
export const policyProviderVersion: Rule = {
  id: 'policy-provider-version',
  defaultSeverity: 'error',
  summary:
    "Locked provider versions must be in the policy's range; a root constraint admitting others is a warning.",
  check(ctx) {
    if (ctx.policy === undefined || !ctx.policy.policy.providers.some((p) => p.versions !== null)) return [];
    return [...lockedOutside(ctx), ...admitsOutsideRange(ctx)];
  },
};
