import type { Signal } from '../types';
import { strong } from '../types';
import { compareUtf8 } from '../../../archive';

/** A directory whose files are all copied into Terragrunt units by `generate` blocks
 * (`contents = file("./common/provider.tf")`) is a fragment of those units. */
export const generateSource: Signal = {
  id: 'generate-source',
  decide({ module }, { signals }) {
    const files = module.files;
    if (files.length === 0) return null;
    const into: string[][] = [];
    for (const f of files) {
      const units = signals.generateSources.get(f);
      if (units === undefined) return null;
      into.push(units);
    }
    const units = [...new Set(into.flat())].sort(compareUtf8);
    return strong(
      'fragment',
      `its files are copied into Terragrunt units by generate blocks (${units[0]}${units.length > 1 ? ` and ${units.length - 1} more` : ''})`,
    );
  },
};
