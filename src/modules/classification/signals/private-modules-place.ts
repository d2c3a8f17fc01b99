import type { Signal } from '../types';
import { strong, weak } from '../types';

/** Directory names that hold a repository's internal modules by convention. */
export const PRIVATE_MODULE_SEGMENTS: readonly string[] = ['_modules', '_module'];

/**
 * `_modules/` and `_module/` hold modules that the repository's own configurations (or its
 * Terragrunt units, through sources tfguard may not resolve) run; nothing deploys from there
 * (16 false findings on such modules guessed to be roots). Strong unless the module
 * configures a provider, which a module meant to be called should not: then a guess.
 */
export const privateModulesPlace: Signal = {
  id: 'private-modules-place',
  decide({ segments, configured }) {
    const seg = segments.find((s) => PRIVATE_MODULE_SEGMENTS.includes(s));
    if (seg === undefined) return null;
    const reason = `its path has a "${seg}" directory (modules the repository calls, not deployed on their own)`;
    return configured.length === 0
      ? strong('shared', reason)
      : weak('shared', `${reason}, though it configures provider "${configured[0]}"`);
  },
};
