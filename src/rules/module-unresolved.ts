import type { RuleFinding } from './types';
import { at, diagnosticsOf } from './helpers';
import type { Rule } from './types';

/**
 * A module call whose code tfguard cannot read: today, a local path into an installed copy of a
 * remote module (`./.terraform/modules/<name>/…`, or a directory a vendoring step fills before
 * `init`, such as `./vendor/modules/x//sub`). Terraform resolves it after `init`; tfguard says once
 * per call what it therefore did not check, instead of calling the directory missing.
 */
export const moduleUnresolved: Rule = {
  id: 'module-unresolved',
  defaultSeverity: 'notice',
  summary:
    'A module call whose code is not in the archive (an installed copy of a remote module) is named, with what was therefore not checked.',
  check(ctx) {
    return diagnosticsOf(ctx, 'module-unresolved').map((d): RuleFinding => ({
      module: d.module,
      ...at(d.location),
      message:
        `module "${d.call}" (source "${d.source}") is not in the archive: ${d.reason}; ` +
        'its provider requirements were not checked, and lock entries it may need are not called stale',
      note: 'Scan the archive after terraform init with .terraform/modules included, or keep the module sources in the archive, to check them too.',
    }));
  },
};
