import { isWellFormedH1, isWellFormedZh } from '../lockfile';
import { shortSource } from '../addrs';
import { cliName, registryChecks } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/**
 * Registry cross-check: every `zh:` a lock entry records must be a package checksum from the
 * registry's signed `SHA256SUMS` for that version, and — where the registry's download response
 * lists `packages` hashes (the OpenTofu registry) — every `h1:` must be one of them. A hash from
 * nowhere means the lock file was written against a package the registry never published.
 */
export const lockHashUnknown: Rule = {
  id: 'lock-hash-unknown',
  defaultSeverity: 'error',
  summary:
    "Registry check: every zh: hash must be in the registry's signed SHA256SUMS for that version (and every h1: in its published package hashes, when it lists them).",
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const { root: a, lockFile, entry: e, check } of registryChecks(ctx)) {
      const cli = cliName(a.engine);
      const name = `${shortSource(check.source, a.engine)} ${check.version}`;
      const host = check.source.split('/')[0];
      if (check.outcome.status === 'not-found') {
        out.push({
          module: a.root,
          file: lockFile,
          line: e.versionLine ?? e.line,
          range: e.versionRange ?? e.range,
          message: `${check.outcome.reason}, so none of the hashes locked for ${name} can come from it`,
          note: `Run "${cli} init -upgrade", which locks the newest version the registry publishes within the constraints, and commit the lock file.`,
        });
        continue;
      }
      if (check.outcome.status !== 'verified') continue;
      const published = new Set(Object.values(check.outcome.sums).map((hex) => `zh:${hex}`));
      const packageHashes =
        check.outcome.packages === null ? null : new Set(Object.values(check.outcome.packages).flat());
      const signed = check.outcome.trust === 'unsigned' ? 'published' : 'signed';
      for (const h of e.hashes) {
        if (isWellFormedZh(h.value) && !published.has(h.value)) {
          out.push({
            module: a.root,
            file: lockFile,
            line: h.line,
            range: h.range,
            message: `${h.value} is not in the ${signed} SHA256SUMS that ${host} publishes for ${name}; the lock file records a package the registry never released`,
            note: `Remove the hash and run "${cli} providers lock", which records the registry's checksums (it keeps the hashes already recorded), and commit the lock file; a checksum no release has deserves a look at where it came from.`,
          });
        } else if (isWellFormedH1(h.value) && packageHashes !== null && !packageHashes.has(h.value)) {
          out.push({
            module: a.root,
            file: lockFile,
            line: h.line,
            range: h.range,
            message: `${h.value} is none of the package hashes ${host} publishes for ${name}`,
            note: `Remove the hash and run "${cli} providers lock", which records the registry's checksums (it keeps the hashes already recorded), and commit the lock file; a checksum no release has deserves a look at where it came from.`,
          });
        }
      }
    }
    return out;
  },
};
