import { shortSource } from '../addrs';
import { registryChecks } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/**
 * Registry cross-check: when the registry cannot be reached (timeout, network error, 5xx after
 * retries, a response that is not what the protocol says), the registry-based checks are skipped
 * for that provider version — never reported as unknown hashes — and this notice says so.
 */
export const lockRegistryUnavailable: Rule = {
  id: 'lock-registry-unavailable',
  defaultSeverity: 'notice',
  summary:
    'Registry check: the registry could not be asked about a locked provider version, so its hashes were not cross-checked.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const { root: a, lockFile, entry: e, check } of registryChecks(ctx)) {
      if (check.outcome.status !== 'unavailable') continue;
      out.push({
        module: a.root,
        file: lockFile,
        line: e.line,
        range: e.range,
        message: `could not check ${shortSource(check.source, a.engine)} ${check.version} against its registry: ${check.outcome.reason}`,
        note: 'lock-hash-unknown and the registry part of lock-platform-coverage were skipped for this entry; the next scan tries again.',
      });
    }
    return out;
  },
};
