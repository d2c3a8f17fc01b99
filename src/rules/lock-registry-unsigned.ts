import { shortSource } from '../addrs';
import { registryChecks } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/**
 * Registry cross-check under OpenTofu: the OpenTofu registry may return no signing keys, and OpenTofu
 * then skips the signature check. The hashes are still compared with the registry's SHA256SUMS, but
 * that file is not authenticated; this notice records it.
 */
export const lockRegistryUnsigned: Rule = {
  id: 'lock-registry-unsigned',
  defaultSeverity: 'notice',
  summary:
    'Registry check (OpenTofu): the registry returned no signing keys for a locked provider version, so its checksums are unauthenticated.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const { root: a, lockFile, entry: e, check } of registryChecks(ctx)) {
      if (check.outcome.status !== 'verified' || check.outcome.trust !== 'unsigned') continue;
      out.push({
        module: a.root,
        file: lockFile,
        line: e.line,
        range: e.range,
        message:
          `the registry returned no signing keys for ${shortSource(check.source, a.engine)} ${check.version}; as OpenTofu does, ` +
          'the signature check was skipped and the hashes were compared with unauthenticated checksums',
      });
    }
    return out;
  },
};
