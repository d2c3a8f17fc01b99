import type { Signal } from '../types';
import { weak } from '../types';
import { SHARED_SEGMENT } from '../paths';

/** A guess: a `modules` directory in the path means a reusable module. */
export const modulesPlace: Signal = {
  id: 'modules-place',
  decide({ segments }) {
    return segments.includes(SHARED_SEGMENT)
      ? weak('shared', `its path has a "${SHARED_SEGMENT}" directory`)
      : null;
  },
};
