import type { Signal } from '../types';
import { strong } from '../types';

/** The archive's top directory that nothing calls: where `terraform` runs in a checkout. */
export const topDirectory: Signal = {
  id: 'top-directory',
  decide({ path }, ctx) {
    if (path !== '.') return null;
    return ctx.input === 'directory'
      ? strong('root', 'the scanned directory itself, and nothing in it calls it')
      : strong('root', "the archive's top directory, and nothing in the archive calls it");
  },
};
