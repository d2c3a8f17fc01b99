import type { RuleFinding } from './types';
import { at, diagnosticsOf } from './helpers';
import type { Rule } from './types';

/**
 * Terraform 1.11 rejects a second block with "Error: Duplicate required providers configuration — A
 * module may have only one required providers configuration. The required providers were previously
 * configured at main.tf:2,3-21." (checked with `terraform providers`).
 */
export const duplicateRequiredProviders: Rule = {
  id: 'duplicate-required-providers',
  defaultSeverity: 'error',
  summary: 'A module may have only one required_providers block.',
  check(ctx) {
    return diagnosticsOf(ctx, 'duplicate-required-providers').map((d): RuleFinding => ({
      module: d.module,
      ...at(d.location),
      message: `duplicate required_providers block: a module may have only one, and one was already declared at ${d.first.file}:${d.first.line}`,
      note: 'Merge the entries into a single required_providers block.',
    }));
  },
};
