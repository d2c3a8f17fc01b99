import { shortSource } from '../addrs';
import { registryChecks } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/**
 * Registry cross-check: the `SHA256SUMS` of a locked provider version must verify against a signing
 * key the registry publishes for it (Terraform's trust rules); otherwise nothing the registry says
 * about that version can be trusted, and `terraform init` refuses to install from it.
 */
export const lockSignatureInvalid: Rule = {
  id: 'lock-signature-invalid',
  defaultSeverity: 'error',
  summary:
    "Registry check: the registry's SHA256SUMS for a locked provider version must carry a valid signature.",
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const { root: a, lockFile, entry: e, check } of registryChecks(ctx)) {
      if (check.outcome.status !== 'signature-invalid') continue;
      out.push({
        module: a.root,
        file: lockFile,
        line: e.line,
        range: e.range,
        message: `the registry's checksums for ${shortSource(check.source, a.engine)} ${check.version} cannot be authenticated: ${check.outcome.reason}`,
        note: 'Do not install this version until the registry serves correctly signed checksums; the hashes were not compared.',
      });
    }
    return out;
  },
};
