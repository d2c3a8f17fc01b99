import type { Signal } from '../types';
import { weak } from '../types';

/** A guess: a module in a module library (an ancestor directory whose modules call each other),
 * in a repository with no backend and no lock file anywhere, is reusable. */
export const moduleLibrary: Signal = {
  id: 'module-library',
  decide({ path }, ctx) {
    const library = ctx.libraryEvidence(path);
    return library === null ? null : weak('shared', library);
  },
};
