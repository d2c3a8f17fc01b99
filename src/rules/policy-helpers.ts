/**
 * Helpers shared by the `policy-*` rules (the organisation's policy, src/policy): where a provider's
 * finding points, how the policy is named in messages, and which exceptions apply. Not a rule.
 */
import { globMatches, providerMatches, type PolicyException, type PolicyInput } from '../policy';
import type { LockProviderEntry } from '../lockfile';
import type { Engine } from '../model';
import type { ModuleInfo, ProviderRequirement } from '../modules';
import { liveEntries, lockRoots } from './lock-helpers';
import { at, isBuiltinProvider, moduleAnchor } from './helpers';
import type { Finding, RuleContext } from './types';

/** `policy.hcl:12`: where in the policy file a block is, for messages. */
export function policyAt(input: PolicyInput, line: number): string {
  return `${input.policy.file}:${line}`;
}

/** Whether the policy judges a module's provider: not the built-in one, and not one whose source
 * is an expression tfguard could not evaluate (which provider it is is unknown). */
export function isJudged(p: ProviderRequirement): boolean {
  return !isBuiltinProvider(p) && p.sourceExpression?.status !== 'unknown';
}

/** Where a finding about a module's provider points: its `required_providers` entry, else its
 * constraint, else the module's first file. */
export function providerWhere(m: ModuleInfo, p: ProviderRequirement): ReturnType<typeof at> {
  const loc = p.declared ?? p.constraintLocation;
  return loc !== null ? at(loc) : moduleAnchor(m);
}

/** Whether exception `e` is for the scanned repository (none known: no exception is). */
export function forRepository(e: PolicyException, input: PolicyInput): boolean {
  return input.repository !== null && globMatches(e.repository, input.repository);
}

/** Past its `expires` date (the date itself still counts). */
export function isExpired(e: PolicyException, input: PolicyInput): boolean {
  return input.today > e.expires;
}

/**
 * Marks the `policy-*` findings an unexpired exception for the scanned repository covers as
 * suppressed, with the exception's reason and place in the policy file (as inline annotations
 * mark theirs): they stay in the report and count in no summary or exit code. An exception that
 * names a provider covers only findings about that provider.
 */
export function applyPolicyExceptions(
  findings: Finding[],
  input: PolicyInput,
  providers: ReadonlyMap<Finding, string>,
): void {
  const live = input.policy.exceptions.filter((e) => forRepository(e, input) && !isExpired(e, input));
  if (live.length === 0) return;
  for (const f of findings) {
    if (f.suppressed !== undefined || !f.ruleId.startsWith('policy-')) continue;
    const source = providers.get(f);
    const e = live.find(
      (x) =>
        x.rule === f.ruleId &&
        (x.provider === null || (source !== undefined && providerMatches(x.provider, source))),
    );
    if (e === undefined) continue;
    f.suppressed = {
      reason: `${e.reason} (policy exception until ${e.expires})`,
      file: input.policy.file,
      line: e.line,
    };
  }
}

/** The policy of the scan, when it has one. */
export function policyOf(ctx: RuleContext): PolicyInput | undefined {
  return ctx.policy;
}

/**
 * Lock entries (of deployable roots) for providers no module of the root's tree declares or uses:
 * providers the tree gets through remote modules tfguard did not read. What a policy rule reports
 * at the lock entry, since no configuration line names them.
 */
export function lockOnlyEntries(ctx: RuleContext): readonly LockOnlyEntry[] {
  const key = ctx.lock;
  const known = key === undefined ? undefined : lockOnlyCache.get(key);
  if (known !== undefined) return known;
  const out: LockOnlyEntry[] = [];
  const trees = new Map(ctx.roots.map((t) => [t.root, t]));
  for (const a of lockRoots(ctx)) {
    if (a.lock === null) continue;
    const tree = trees.get(a.root);
    const declared = new Set<string>();
    for (const path of tree?.modules ?? [a.root])
      for (const p of ctx.moduleByPath.get(path)?.providers ?? []) declared.add(p.source);
    for (const entry of liveEntries(a)) {
      if (entry.source === null || declared.has(entry.source)) continue;
      out.push({ root: a.root, lockFile: a.lock.path, engine: a.engine, entry });
    }
  }
  if (key !== undefined) lockOnlyCache.set(key, out);
  return out;
}

interface LockOnlyEntry {
  root: string;
  lockFile: string;
  engine: Engine;
  entry: LockProviderEntry;
}

/** Per scan (its lock analysis): two rules ask. */
const lockOnlyCache = new WeakMap<object, LockOnlyEntry[]>();
