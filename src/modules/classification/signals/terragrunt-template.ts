import type { Signal } from '../types';
import { strong } from '../types';

/**
 * A Terragrunt catalog unit: its `terragrunt.hcl` reads `values.*`, which only a
 * `terragrunt.stack.hcl` `unit` block supplies (https://terragrunt.gruntwork.io/docs/features/stacks/).
 * It is a template Terragrunt copies into `.terragrunt-stack/`, not a unit deployed where it sits.
 */
export const terragruntTemplate: Signal = {
  id: 'terragrunt-template',
  decide({ path }, { unitTemplateByDir }) {
    const t = unitTemplateByDir.get(path);
    if (t === undefined) return null;
    return strong(
      'fragment',
      `Terragrunt catalog unit: ${t.file} reads values.*, set by a terragrunt.stack.hcl`,
    );
  },
};
