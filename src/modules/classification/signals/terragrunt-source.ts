import type { Signal } from '../types';
import { strong } from '../types';

/** A directory that Terragrunt units run (`terraform { source = "../../modules//app" }`). */
export const terragruntSource: Signal = {
  id: 'terragrunt-source',
  decide({ path }, { unitsBySource }) {
    const units = unitsBySource.get(path);
    if (units === undefined) return null;
    return strong(
      'shared',
      `run by Terragrunt unit "${units[0]}"${units.length > 1 ? ` and ${units.length - 1} more` : ''}`,
    );
  },
};
