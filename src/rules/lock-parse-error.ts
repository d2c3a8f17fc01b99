import { lockRoots } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/** Terraform refuses to run with a lock file it cannot decode; each problem is reported with its line. */
export const lockParseError: Rule = {
  id: 'lock-parse-error',
  defaultSeverity: 'error',
  summary:
    'The lock file must parse: provider blocks with a normalized address, one exact normalized version, normalized constraints and scheme:value hashes, no duplicates.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const a of lockRoots(ctx)) {
      if (a.lock === null) continue;
      for (const e of a.lock.errors) {
        out.push({
          module: a.root,
          file: a.lock.path,
          line: e.line,
          range: e.range,
          message: e.message,
          note: a.lock.readable
            ? 'Terraform rejects the whole lock file; other lock checks skip the entries named here.'
            : 'Terraform rejects the lock file; no other lock check ran for this root.',
        });
      }
    }
    return out;
  },
};
