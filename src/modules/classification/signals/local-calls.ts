import type { Signal } from '../types';
import { strong } from '../types';

/** A module called through a local source by another module of the archive (not a fragment) is
 * reusable: this is why a module called only by its examples is shared. */
export const localCalls: Signal = {
  id: 'local-calls',
  decide({ path }, ctx) {
    const calledBy = (ctx.callers.get(path) ?? []).filter((c) => !ctx.isFragment(c.caller));
    if (calledBy.length === 0) return null;
    const first = calledBy[0] as (typeof calledBy)[number];
    const more = calledBy.length > 1 ? ` and ${calledBy.length - 1} more` : '';
    return strong('shared', `called by module "${first.caller}" (module.${first.call})${more}`);
  },
};
