import type { Signal } from '../types';
import { strong } from '../types';

/** A directory with `terragrunt.hcl` is a Terragrunt unit: a root (`plan`/`apply` run there). */
export const terragruntUnit: Signal = {
  id: 'terragrunt-unit',
  decide({ path }, { unitByDir }) {
    const unit = unitByDir.get(path);
    if (unit === undefined) return null;
    return strong(
      'root',
      unit.source === null
        ? `Terragrunt unit (${unit.file})`
        : `Terragrunt unit: ${unit.file} runs source "${unit.source}"`,
    );
  },
};
