import type { RuleFinding } from './types';
import { at, diagnosticsOf, inputNoun } from './helpers';
import type { Rule } from './types';

/**
 * A module whose code tfguard cannot read: a remote module that remote resolution could not
 * resolve (resolution off, a host not allowed, a registry that did not answer; src/modules/remote),
 * or a local path into an installed copy of a remote module (`./.terraform/modules/<name>/…`, or a directory a vendoring step fills before
 * `init`, such as `./vendor/modules/x//sub`). Terraform resolves it after `init`; tfguard says once
 * per call what it therefore did not check, instead of calling the directory missing.
 */
export const moduleUnresolved: Rule = {
  id: 'module-unresolved',
  defaultSeverity: 'notice',
  summary:
    'A module whose code tfguard could not read (a remote module not resolved, an installed copy missing from the scanned directory or archive) is named, with what was therefore not checked.',
  check(ctx) {
    const input = inputNoun(ctx);
    return diagnosticsOf(ctx, 'module-unresolved').map((d): RuleFinding => {
      if (d.remote !== undefined) {
        const version = d.remote.version === null ? '' : `, version "${d.remote.version}"`;
        return {
          module: d.module,
          ...at(d.location),
          message:
            `remote module "${d.call}" (source "${d.source}"${version}) was not resolved: ${d.reason}; ` +
            'its provider requirements (and those of the modules it calls) were not checked, and lock entries ' +
            'it may need are not called stale',
          note:
            'Scan with --remote-modules (registry modules, and git or HTTP packages on hosts allowed with module_hosts), ' +
            `or scan the ${input} after terraform init with .terraform/modules included.`,
        };
      }
      return {
        module: d.module,
        ...at(d.location),
        message:
          `module "${d.call}" (source "${d.source}") is not in the ${input}: ${d.reason}; ` +
          'its provider requirements were not checked, and lock entries it may need are not called stale',
        note: `Scan the ${input} after terraform init with .terraform/modules included, or keep the module sources in the ${input}, to check them too.`,
      };
    });
  },
};
