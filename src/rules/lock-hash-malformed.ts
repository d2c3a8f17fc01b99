import { isWellFormedH1, isWellFormedZh } from '../lockfile';
import { shortSource } from '../addrs';
import { cliName, liveEntries, lockRoots } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/**
 * A hash Terraform cannot use: not `h1:` + base64 of 32 bytes, not `zh:` + 64 lowercase hex
 * (Terraform silently treats such a string as matching nothing). An entry without any hash pins no
 * package content at all.
 */
export const lockHashMalformed: Rule = {
  id: 'lock-hash-malformed',
  defaultSeverity: 'error',
  summary:
    'Every lock entry must record hashes, each "h1:" + base64 of 32 bytes or "zh:" + 64 lowercase hex digits.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const a of lockRoots(ctx)) {
      const cli = cliName(a.engine);
      if (a.lock === null) continue;
      for (const e of liveEntries(a)) {
        const name = shortSource(e.source as string, a.engine);
        if (e.hashes.length === 0 && e.hashesLine === null) {
          out.push({
            module: a.root,
            file: a.lock.path,
            line: e.line,
            range: e.range,
            message: `the lock entry for ${name} records no hashes, so any package content is accepted`,
            note: `Run "${cli} providers lock -platform=..." for the team's platforms, which records their checksums, and commit the lock file.`,
          });
          continue;
        }
        for (const h of e.hashes) {
          const scheme = h.value.slice(0, h.value.indexOf(':') + 1);
          if (scheme === 'h1:' && isWellFormedH1(h.value)) continue;
          if (scheme === 'zh:' && isWellFormedZh(h.value)) continue;
          const why =
            scheme === 'h1:'
              ? 'an h1: hash must be standard base64 (with padding) of 32 bytes'
              : scheme === 'zh:'
                ? 'a zh: hash must be 64 lowercase hex digits'
                : `"${scheme}" is not a hash scheme Terraform knows (h1: or zh:)`;
          out.push({
            module: a.root,
            file: a.lock.path,
            line: h.line,
            range: h.range,
            message: `malformed hash ${JSON.stringify(h.value)} for ${name}: ${why}; it can never match a package`,
          });
        }
      }
    }
    return out;
  },
};
