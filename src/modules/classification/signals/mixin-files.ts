import type { Signal } from '../types';
import { strong } from '../types';
import { MIXIN_SEGMENT } from '../paths';

/** Mixins (`mixins/`, `*.mixin.tf`) are copied into the modules that use them. */
export const mixinFiles: Signal = {
  id: 'mixin-files',
  decide({ module, segments }) {
    const files = module.files;
    if (files.length === 0) return null;
    if (!segments.includes(MIXIN_SEGMENT) && !files.every((f) => /\.mixin\.tf(\.json)?$/.test(f)))
      return null;
    return strong('fragment', 'mixin files, copied into the modules that use them');
  },
};
