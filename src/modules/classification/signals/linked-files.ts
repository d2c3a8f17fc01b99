import type { Signal } from '../types';
import { strong } from '../types';

/** A directory whose files are all targets of symbolic (or hard) links elsewhere in the archive
 * is used through those links, not as a module here. */
export const linkedFiles: Signal = {
  id: 'linked-files',
  decide({ module }, { signals }) {
    const files = module.files;
    if (files.length === 0 || !files.every((f) => signals.linkTargets.has(f))) return null;
    return strong('fragment', 'its files are linked into other directories, not used as a module here');
  },
};
