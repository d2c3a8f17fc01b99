import type { Signal } from '../types';
import { strong } from '../types';
import { WRAPPER_SEGMENT, isAncestor } from '../paths';

/** Wrappers (terraform-aws-modules `wrappers/*`, `module "wrapper" { source = "../" }`): no
 * configured provider, and either a `wrappers` directory in the path with a local call, or a call
 * to the module of a parent directory. */
export const wrapper: Signal = {
  id: 'wrapper',
  decide({ module, path, segments, configured }) {
    if (configured.length > 0) return null;
    if (segments.includes(WRAPPER_SEGMENT) && module.moduleCalls.some((c) => c.sourceKind === 'local')) {
      return strong(
        'shared',
        `a wrapper: its path has a "${WRAPPER_SEGMENT}" directory and it calls a local module`,
      );
    }
    const up = module.moduleCalls.find(
      (c) => c.sourceKind === 'local' && c.target !== null && isAncestor(c.target, path),
    );
    if (up === undefined) return null;
    return strong(
      'shared',
      `a wrapper: it calls the module of a parent directory (module.${up.name}) and configures no provider`,
    );
  },
};
