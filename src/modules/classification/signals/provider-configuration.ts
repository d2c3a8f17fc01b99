import type { Signal } from '../types';
import { weak } from '../types';

/** A guess: a module that configures a provider and that nothing calls is deployed on its own. */
export const providerConfiguration: Signal = {
  id: 'provider-configuration',
  decide({ configured }, ctx) {
    if (configured.length === 0) return null;
    return weak(
      'root',
      `configures provider "${configured[0]}" and nothing in the ${ctx.input ?? 'archive'} calls it`,
    );
  },
};
