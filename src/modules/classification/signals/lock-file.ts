import type { Signal } from '../types';
import { strong, weak } from '../types';
import { SHARED_SEGMENT } from '../paths';

/** A dependency lock file: with provider configuration, an initialised deployment (`root`);
 * without, under `modules/` or in a module library, a module initialised for its tests (weak
 * `shared`); otherwise a `root`. */
export const lockFile: Signal = {
  id: 'lock-file',
  decide({ module, path, segments, configured }, ctx) {
    const lock = module.lockFile;
    if (lock === null) return null;
    if (configured.length > 0) {
      return strong(
        'root',
        `has a dependency lock file (${lock}) and configures provider "${configured[0]}"`,
      );
    }
    const library = ctx.libraryEvidence(path);
    if (segments.includes(SHARED_SEGMENT) || library !== null) {
      return weak(
        'shared',
        `has a dependency lock file (${lock}) but no backend or provider configuration, and ${
          library ?? `its path has a "${SHARED_SEGMENT}" directory`
        }`,
      );
    }
    return strong('root', `has a dependency lock file (${lock})`);
  },
};
