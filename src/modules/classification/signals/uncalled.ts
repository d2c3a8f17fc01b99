import type { Signal } from '../types';
import { weak } from '../types';

/** The last guess, which always decides: a module that nothing calls is a root. */
export const uncalled: Signal = {
  id: 'uncalled',
  decide(_subject, ctx) {
    return weak('root', `not called by any module in the ${ctx.input ?? 'archive'}`);
  },
};
