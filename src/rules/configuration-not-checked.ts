import type { RuleFinding } from './types';
import { at, diagnosticsOf } from './helpers';
import type { Rule } from './types';

const LISTED = 5;

function list(items: readonly string[]): string {
  const shown = items.slice(0, LISTED).join(', ');
  return items.length > LISTED ? `${shown} and ${items.length - LISTED} more` : shown;
}

/**
 * Configuration that tfguard deliberately does not check, said once instead of silently dropped:
 *
 * - a tree of scanner test samples (KICS's `test/positive1.tf`, `negative1.tf` beside
 *   `positive_expected_result.json`, https://github.com/Checkmarx/kics/blob/master/docs/creating-queries.md):
 *   each file is an independent sample, not a module anyone initialises, so no rule judges them
 *   (before, a vendored copy of KICS's queries gave 77 false `duplicate-required-providers` errors
 *   and 700 notices and warnings);
 * - a Terramate stack whose Terraform files `terramate generate` writes from `generate_hcl` blocks
 *   and the repository does not hold: tfguard never runs Terramate.
 */
export const configurationNotChecked: Rule = {
  id: 'configuration-not-checked',
  defaultSeverity: 'notice',
  summary:
    'Configuration tfguard deliberately does not check (scanner test samples, Terraform code that Terramate generates) is named once, with why.',
  check(ctx) {
    return diagnosticsOf(ctx, 'configuration-not-checked').map((d): RuleFinding => {
      if (d.what === 'scanner-fixtures') {
        const n = d.items.length;
        return {
          module: d.module,
          ...at(d.location),
          message:
            `"${d.module}" looks like a scanner's test fixtures: ${d.evidence}; ` +
            `the ${n} director${n === 1 ? 'y' : 'ies'} of samples (${list(d.items)}) ${n === 1 ? 'is' : 'are'} not a configuration anyone initialises, so tfguard did not check ${n === 1 ? 'it' : 'them'}`,
          note: 'If a directory there is a real configuration, classify it in .tfguard.hcl (roots, shared, examples or tests) and it is checked.',
        };
      }
      return {
        module: d.module,
        ...at(d.location),
        message:
          `${d.evidence} generates its Terraform code with generate_hcl (${list(d.items)}), which is not in the repository: ` +
          'tfguard does not run Terramate, so that code, its providers and its lock file were not checked',
        note: 'Run "terramate generate" and scan the result, or commit the generated files, if that code must be checked too.',
      };
    });
  },
};
