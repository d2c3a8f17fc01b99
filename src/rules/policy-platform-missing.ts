import { isWellFormedH1, type LockProviderEntry, type RootLockAnalysis } from '../lockfile';
import type { Engine } from '../model';
import { shortSource } from '../addrs';
import { cliName, liveEntries, lockRoots, registryCheckFor } from './lock-helpers';
import type { Rule, RuleContext, RuleFinding } from './types';

/**
 * The platforms the policy requires (`required_platforms`) that a lock entry does not cover:
 * `terraform init` on such a platform refuses the package. Which platform a checksum is for is
 * known only from the registry: its signed `SHA256SUMS` name each platform's zip (`zh:`), and
 * OpenTofu's registry lists each platform's `packages` hashes (`h1:` too); packages kept in the
 * archive (mirrors) name theirs. So with the registry check (`--registry`) the entry is judged
 * per platform, as `lock-platform-coverage` does; without it, an entry that records only `h1:`
 * checksums, fewer than the required platforms, certainly misses some, and anything else cannot be
 * judged: one notice per lock file says so, never a guess presented as certain.
 */
const EMPTY: ReadonlySet<string> = new Set();
const NO_PACKAGES: readonly RootLockAnalysis['packages'][number][] = [];

export const policyPlatformMissing: Rule = {
  id: 'policy-platform-missing',
  defaultSeverity: 'error',
  summary:
    'Every lock entry must record checksums for every platform the policy requires (required_platforms).',
  check(ctx) {
    const input = ctx.policy;
    const platforms = input?.policy.requiredPlatforms ?? [];
    if (input === undefined || platforms.length === 0) return [];
    const out: RuleFinding[] = [];
    const required = 'the policy requires';
    const flags = platforms.map((p) => `-platform=${p}`).join(' ');
    for (const a of lockRoots(ctx)) {
      if (a.lock === null) continue;
      const command = `${cliName(a.engine)} providers lock ${flags}`;
      const unjudged: LockProviderEntry[] = [];
      for (const e of liveEntries(a)) {
        if (e.version === null || e.source === null) continue;
        // Without the registry check and packages in the archive (the usual scan), neither is
        // searched for each entry.
        const check = a.registry.length === 0 ? undefined : registryCheckFor(a, e);
        const local =
          a.packages.length === 0
            ? NO_PACKAGES
            : a.packages.filter((p) => p.source === e.source && p.version === e.version);
        if (local.length === 0 && (check === undefined || check.outcome.status !== 'verified')) {
          // Then nothing names a checksum's platform, and only an entry whose h1: checksums are
          // fewer than the platforms is certain to miss one (reported below); any other cannot
          // be judged, and is only counted.
          const h1 = h1Count(e);
          if (h1 === null || h1 >= platforms.length) {
            unjudged.push(e);
            continue;
          }
        }
        const name = nameOf(e, a.engine);
        const where = {
          module: a.root,
          file: a.lock.path,
          line: e.hashesLine ?? e.line,
          range: e.hashesRange ?? e.range,
          provider: e.source,
        };
        const needsSet = local.length > 0 || (check !== undefined && check.outcome.status === 'verified');
        const recorded = needsSet ? new Set(e.hashes.map((h) => h.value)) : EMPTY;
        // Packages in the archive (a filesystem mirror) name their platform.
        const coveredLocally =
          local.length === 0
            ? EMPTY
            : new Set(
                local
                  .filter((p) => [p.h1, p.h1Unpacked, p.zh].some((h) => h !== null && recorded.has(h)))
                  .map((p) => p.platform),
              );
        if (check !== undefined && check.outcome.status === 'verified') {
          const o = check.outcome;
          const published = (p: string): boolean =>
            o.platforms[p] !== undefined || o.packages?.[p] !== undefined;
          const covers = (p: string): boolean =>
            coveredLocally.has(p) ||
            (o.platforms[p] !== undefined && recorded.has(o.platforms[p] as string)) ||
            (o.packages?.[p] ?? []).some((h) => recorded.has(h));
          const unpublished = platforms.filter((p) => !published(p));
          const missing = platforms.filter((p) => published(p) && !covers(p));
          if (missing.length > 0) {
            out.push({
              ...where,
              message:
                `the lock entry for ${name} records no checksum for ${missing.join(', ')}, which ${required}: ` +
                `${cliName(a.engine)} init on ${missing.length === 1 ? 'that platform' : 'those platforms'} refuses the package`,
              note: `Run "${command}" and commit the lock file.`,
            });
          }
          if (unpublished.length > 0) {
            out.push({
              ...where,
              message: `the registry publishes no ${name} package for ${unpublished.join(', ')}, which ${required}, so the lock file cannot cover ${unpublished.length === 1 ? 'it' : 'them'}`,
              note: 'Choose a provider version built for every platform the policy requires.',
            });
          }
          continue;
        }
        const rest = platforms.filter((p) => !coveredLocally.has(p));
        if (rest.length === 0) continue;
        const h1 = h1Count(e);
        if (h1 !== null && h1 < platforms.length) {
          // Each h1: is one platform's package: fewer of them than platforms cannot cover them all.
          out.push({
            ...where,
            message:
              `the lock entry for ${name} records ${h1} h1: checksum${h1 === 1 ? '' : 's'} and no zh:, so it covers at most ` +
              `${h1} of the ${platforms.length} platforms ${required} (${platforms.join(', ')})`,
            note: `Run "${command}" and commit the lock file.`,
          });
          continue;
        }
        unjudged.push(e);
      }
      const first = unjudged[0];
      if (first !== undefined) {
        const names = unjudged.slice(0, 3).map((e) => nameOf(e, a.engine));
        out.push({
          module: a.root,
          file: a.lock.path,
          line: first.line,
          message:
            `could not judge whether ${unjudged.length === 1 ? `the lock entry for ${names[0] ?? ''}` : `${unjudged.length} lock entries (${names.join(', ')}${unjudged.length > 3 ? ', ...' : ''})`} ` +
            `cover${unjudged.length === 1 ? 's' : ''} the platforms ${required} (${platforms.join(', ')}): ${unjudgedWhy(ctx, a)}`,
          note: `Scan with --registry to check each platform, or run "${command}" to be sure.`,
          lower: 2,
        });
      }
    }
    return out;
  },
};

/** `hashicorp/aws 5.1.0`: a lock entry in messages. */
function nameOf(e: LockProviderEntry, engine: Engine): string {
  return `${shortSource(e.source as string, engine)} ${e.version ?? ''}`;
}

/** The number of well-formed h1: checksums of an entry that records no zh: (null when it does). */
function h1Count(e: LockProviderEntry): number | null {
  // Whether there is a zh: first: checking an h1: checksum's base64 costs more.
  for (const h of e.hashes) if (h.value.startsWith('zh:')) return null;
  let h1 = 0;
  for (const h of e.hashes) if (isWellFormedH1(h.value)) h1++;
  return h1;
}

/** Why a lock file's platforms could not be judged. */
function unjudgedWhy(ctx: RuleContext, a: ReturnType<typeof lockRoots>[number]): string {
  if (ctx.lock?.registryChecked !== true)
    return 'which platform a checksum is for is known only from the registry, and the registry check is off';
  const failed = a.registry.find((c) => c.outcome.status !== 'verified');
  return failed !== undefined && failed.outcome.status !== 'verified'
    ? `the registry did not confirm the checksums (${failed.outcome.reason})`
    : 'the registry did not confirm the checksums';
}
