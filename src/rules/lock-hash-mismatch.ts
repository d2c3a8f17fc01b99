import { isPackageNotLoaded } from '../lockfile';
import { shortSource } from '../addrs';
import { cliName, liveEntries, pathFromRoot, lockRoots } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

const LOCATION: Record<string, string> = {
  plugins: 'provider mirror',
  'plugin-dir': 'plugin directory',
  cache: 'provider cache',
};

/**
 * Terraform installs a package only if it matches one of the recorded hashes of its scheme
 * ("doesn't match any of the checksums previously recorded in the dependency lock file"): a packed
 * zip by `zh:` (its sha256) or `h1:` (dirhash of its entries), an unpacked directory by `h1:`.
 * As in Terraform, an entry with no hashes accepts anything, and an unpacked directory is not
 * checked when the entry records only `zh:` hashes.
 */
export const lockHashMismatch: Rule = {
  id: 'lock-hash-mismatch',
  defaultSeverity: 'error',
  summary: 'A provider package kept in the archive must match one of the checksums its lock entry records.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const a of lockRoots(ctx)) {
      const cli = cliName(a.engine);
      if (a.lock === null) continue;
      const entries = liveEntries(a);
      for (const pkg of a.packages) {
        const e = entries.find((x) => x.source === pkg.source && x.version === pkg.version);
        // Nothing recorded: Terraform installs any content (lock-hash-malformed reports the entry).
        if (e === undefined || e.hashes.length === 0) continue;
        // Only zh: recorded: Terraform cannot check an unpacked directory against them and accepts
        // it (internal/providercache/package_install.go); lock-platform-coverage warns instead.
        if (pkg.kind === 'unpacked' && e.hashes.every((h) => h.value.startsWith('zh:'))) continue;
        const what = `${LOCATION[pkg.location] ?? 'package'} ${pkg.kind} package ${pkg.path} (${shortSource(pkg.source, a.engine)} ${pkg.version}, ${pkg.platform})`;
        const where = { module: a.root, file: a.lock.path, line: e.line, range: e.range };
        if (pkg.error !== null) {
          if (isPackageNotLoaded(pkg.error)) continue;
          out.push({
            ...where,
            message: `the ${what} cannot be verified against the lock file: ${pkg.error}`,
            note: 'Terraform cannot install a package it cannot read; replace it with the published package.',
          });
          continue;
        }
        const recorded = new Set(e.hashes.map((h) => h.value));
        if ((pkg.h1 !== null && recorded.has(pkg.h1)) || (pkg.zh !== null && recorded.has(pkg.zh))) continue;
        const computed = [pkg.h1, pkg.zh].filter((h): h is string => h !== null);
        const quirk = pkg.h1Unpacked !== null && pkg.h1Unpacked !== pkg.h1 && recorded.has(pkg.h1Unpacked);
        out.push({
          ...where,
          message:
            `the ${what} hashes to ${computed.join(' / ')}, which is none of the ${e.hashes.length} ` +
            `checksum${e.hashes.length === 1 ? '' : 's'} recorded for it; ${cli} init refuses to install it`,
          note: quirk
            ? 'The zip contains directory entries: Terraform records the h1 of the unpacked files but checks a packed ' +
              'mirror zip with dirhash.HashZip, which counts directory entries, so it never matches. Repack without ' +
              'directory entries (zip -D) or keep the package unpacked.'
            : 'The package and the lock file describe different content. Restore the published package; if this ' +
              `package is the one to trust, add its checksums with "${cli} providers lock -fs-mirror=${pathFromRoot(a.root, pkg.mirror)}" ` +
              'and commit the lock file.',
        });
      }
    }
    return out;
  },
};
