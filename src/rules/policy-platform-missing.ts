import { isWellFormedH1 } from '../lockfile';
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
    for (const a of lockRoots(ctx)) {
      if (a.lock === null) continue;
      const command = `${cliName(a.engine)} providers lock ${platforms.map((p) => `-platform=${p}`).join(' ')}`;
      const unjudged: string[] = [];
      let firstUnjudged: { line: number } | null = null;
      for (const e of liveEntries(a)) {
        if (e.version === null || e.source === null) continue;
        const name = `${shortSource(e.source, a.engine)} ${e.version}`;
        const where = {
          module: a.root,
          file: a.lock.path,
          line: e.hashesLine ?? e.line,
          range: e.hashesRange ?? e.range,
          provider: e.source,
        };
        const check = registryCheckFor(a, e);
        const local = a.packages.filter((p) => p.source === e.source && p.version === e.version);
        const needsSet = local.length > 0 || (check !== undefined && check.outcome.status === 'verified');
        const recorded = needsSet ? new Set(e.hashes.map((h) => h.value)) : EMPTY;
        // Packages in the archive (a filesystem mirror) name their platform.
        const coveredLocally = new Set(
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
        const zh = e.hashes.some((h) => h.value.startsWith('zh:'));
        const h1 = zh ? 0 : e.hashes.filter((h) => isWellFormedH1(h.value)).length;
        if (!zh && h1 < platforms.length) {
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
        unjudged.push(name);
        firstUnjudged ??= { line: e.line };
      }
      if (unjudged.length > 0 && firstUnjudged !== null) {
        out.push({
          module: a.root,
          file: a.lock.path,
          line: firstUnjudged.line,
          message:
            `could not judge whether ${unjudged.length === 1 ? `the lock entry for ${unjudged[0] ?? ''}` : `${unjudged.length} lock entries (${unjudged.slice(0, 3).join(', ')}${unjudged.length > 3 ? ', ...' : ''})`} ` +
            `cover${unjudged.length === 1 ? 's' : ''} the platforms ${required} (${platforms.join(', ')}): ${unjudgedWhy(ctx, a)}`,
          note: `Scan with --registry to check each platform, or run "${command}" to be sure.`,
          lower: 2,
        });
      }
    }
    return out;
  },
};

/** Why a lock file's platforms could not be judged. */
function unjudgedWhy(ctx: RuleContext, a: ReturnType<typeof lockRoots>[number]): string {
  if (ctx.lock?.registryChecked !== true)
    return 'which platform a checksum is for is known only from the registry, and the registry check is off';
  const failed = a.registry.find((c) => c.outcome.status !== 'verified');
  return failed !== undefined && failed.outcome.status !== 'verified'
    ? `the registry did not confirm the checksums (${failed.outcome.reason})`
    : 'the registry did not confirm the checksums';
}
