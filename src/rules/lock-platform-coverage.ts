import { isWellFormedH1 } from '../lockfile';
import { shortSource } from '../addrs';
import { cliName, liveEntries, lockRoots, registryCheckFor } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule, RuleContext } from './types';

/**
 * An unpacked package whose lock entry records only `zh:` hashes: Terraform cannot check a
 * directory against zip hashes and installs it unverified. The lock file lacks the `h1:` for that
 * package's platform.
 */
function unverifiableUnpacked(ctx: RuleContext): RuleFinding[] {
  const out: RuleFinding[] = [];
  for (const a of lockRoots(ctx)) {
    if (a.lock === null) continue;
    for (const e of liveEntries(a)) {
      if (e.hashes.length === 0 || !e.hashes.every((h) => h.value.startsWith('zh:'))) continue;
      for (const pkg of a.packages) {
        if (pkg.kind !== 'unpacked' || pkg.source !== e.source || pkg.version !== e.version) continue;
        out.push({
          module: a.root,
          file: a.lock.path,
          line: e.hashesLine ?? e.line,
          range: e.hashesRange ?? e.range,
          message:
            `the lock entry for ${shortSource(pkg.source, a.engine)} ${pkg.version} records only zh: checksums, so the unpacked ` +
            `package ${pkg.path} (${pkg.platform}) is not verified at all: Terraform accepts any content there`,
          note: `Run "${cliName(a.engine)} providers lock -platform=${pkg.platform}", which records the h1: checksum for ${pkg.platform}, and commit the lock file.`,
        });
      }
    }
  }
  return out;
}

/**
 * A lock file only lets `terraform init` install packages whose checksum it records. `init` records
 * an `h1:` for the platform it runs on (and, from a registry, every platform's `zh:`), so a team on
 * several operating systems needs the hashes of each (`terraform providers lock -platform=...`).
 * Offline, each configured platform needs its own `h1:`; with the registry check, each configured
 * platform's `zh:` from the signed SHA256SUMS must be recorded.
 */
export const lockPlatformCoverage: Rule = {
  id: 'lock-platform-coverage',
  defaultSeverity: 'warning',
  summary:
    'Every lock entry must record checksums for every platform configured in .tfguard.hcl (platforms = [...]).',
  check(ctx) {
    const out: RuleFinding[] = [];
    out.push(...unverifiableUnpacked(ctx));
    const platforms = ctx.lock?.platforms ?? ctx.config.platforms;
    if (platforms.length === 0) return out;
    for (const a of lockRoots(ctx)) {
      const lockCommand = `${cliName(a.engine)} providers lock ${platforms.map((p) => `-platform=${p}`).join(' ')}`;
      if (a.lock === null) continue;
      for (const e of liveEntries(a)) {
        if (e.version === null) continue;
        const name = `${shortSource(e.source as string, a.engine)} ${e.version}`;
        const where = {
          module: a.root,
          file: a.lock.path,
          line: e.hashesLine ?? e.line,
          range: e.hashesRange ?? e.range,
        };
        const check = registryCheckFor(a, e);
        if (check !== undefined && check.outcome.status === 'verified') {
          const recorded = new Set(e.hashes.map((h) => h.value));
          const outcome = check.outcome;
          const unpublished = platforms.filter((p) => outcome.platforms[p] === undefined);
          // The OpenTofu registry's `packages` name each platform's `h1:` (OpenTofu 1.12 records them
          // all: rfc/20251027-provider-registry-hashes.md, CHANGELOG v1.12 "additional h1: hashes").
          // A package matches a lock entry by any recorded hash, so that h1: covers its platform too.
          const h1Of = (p: string): string[] =>
            (outcome.packages?.[p] ?? []).filter((h) => h.startsWith('h1:'));
          const absent = platforms.filter((p) => {
            const zh = outcome.platforms[p];
            return zh !== undefined && !recorded.has(zh) && !h1Of(p).some((h) => recorded.has(h));
          });
          // Without `packages` (Terraform's registry) an h1: cannot be tied to a platform without
          // downloading the package: one of the recorded ones may be that platform's.
          const attributed = new Set(Object.values(outcome.packages ?? {}).flat());
          const loose = e.hashes.filter((h) => isWellFormedH1(h.value) && !attributed.has(h.value)).length;
          const known = absent.filter((p) => outcome.packages?.[p] !== undefined || loose === 0);
          const unsure = absent.filter((p) => !known.includes(p));
          const those = (list: string[]): string => (list.length === 1 ? 'that platform' : 'those platforms');
          if (known.length > 0) {
            const what = known.every((p) => outcome.packages?.[p] !== undefined)
              ? 'zh: or h1: checksum'
              : 'zh: checksum';
            out.push({
              ...where,
              message: `the lock entry for ${name} has no ${what} for ${known.join(', ')}; ${cliName(a.engine)} init on ${those(known)} fails`,
              note: `Run "${lockCommand}" and commit the lock file.`,
            });
          }
          if (unsure.length > 0) {
            out.push({
              ...where,
              confidence: 'low',
              message:
                `the lock entry for ${name} has no zh: checksum for ${unsure.join(', ')}; unless one of its ${loose} h1: ` +
                `checksum${loose === 1 ? ' is' : 's is'} the package for ${those(unsure)} (tfguard cannot tell without the package), ` +
                `${cliName(a.engine)} init there fails`,
              note: `Run "${lockCommand}" and commit the lock file: it records every platform's checksum.`,
            });
          }
          if (unpublished.length > 0) {
            out.push({
              ...where,
              message: `the registry publishes no ${name} package for ${unpublished.join(', ')}, so the lock file cannot cover ${unpublished.length === 1 ? 'that platform' : 'those platforms'}`,
              note: 'Choose a provider version built for every platform the team uses, or change "platforms" in .tfguard.hcl.',
            });
          }
          continue;
        }
        const h1 = e.hashes.filter((h) => isWellFormedH1(h.value)).length;
        if (h1 < platforms.length) {
          out.push({
            ...where,
            message:
              `the lock entry for ${name} records ${h1} h1: checksum${h1 === 1 ? '' : 's'} for ${platforms.length} ` +
              `configured platforms (${platforms.join(', ')}); ${cliName(a.engine)} init may fail on some of them`,
            note: `Run "${lockCommand}" and commit the lock file.`,
          });
        }
      }
    }
    return out;
  },
};
