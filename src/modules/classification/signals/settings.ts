import type { Signal } from '../types';
import { strong } from '../types';
import { matchGlob } from '../../glob';

/** `.tfguard.hcl` (or `--config`) globs: `roots`, `shared`, `examples`, `tests`, `fragments`, in
 * that order. Always strong: the user said so. */
export const settings: Signal = {
  id: 'settings',
  decide({ path }, { config }) {
    const lists = [
      ['root', 'roots', config.roots],
      ['shared', 'shared', config.shared],
      ['example', 'examples', config.examples],
      ['test', 'tests', config.tests],
      ['fragment', 'fragments', config.fragments],
    ] as const;
    for (const [kind, key, globs] of lists) {
      const g = globs.find((x) => matchGlob(x, path));
      if (g !== undefined) return strong(kind, `matches the ${key} pattern "${g}" of the settings`);
    }
    return null;
  },
};
