import type { Signal } from '../types';
import { strong } from '../types';

/** A `backend` or `cloud` block: where `plan`/`apply` run. */
export const backend: Signal = {
  id: 'backend',
  decide({ module }) {
    const b = module.backend;
    if (b === null) return null;
    return strong('root', b.kind === 'cloud' ? 'has a cloud block' : `has a backend "${b.type}" block`);
  },
};
