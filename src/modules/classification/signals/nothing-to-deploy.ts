import type { Signal } from '../types';
import { weak } from '../types';
import { ROOT_SEGMENTS, SHARED_SEGMENT } from '../paths';

/** No resources, data sources, module calls, provider blocks or backend, nothing calls it, and no
 * `modules`/deployment directory in its path: not a module anyone uses, whatever lock file it
 * keeps (a weak fragment). */
export const nothingToDeploy: Signal = {
  id: 'nothing-to-deploy',
  decide({ module: m, path, segments }) {
    if (
      path === '.' ||
      segments.includes(SHARED_SEGMENT) ||
      segments.some((s) => ROOT_SEGMENTS.includes(s))
    ) {
      return null;
    }
    const declaresNothing =
      m.moduleCalls.length === 0 &&
      m.providerConfigs.length === 0 &&
      m.backend === null &&
      !m.providerUses.some((u) => u.kind === 'resource' || u.kind === 'data' || u.kind === 'ephemeral');
    if (!declaresNothing) return null;
    return weak(
      'fragment',
      'declares no resources, data sources, module calls or providers, and nothing calls it',
    );
  },
};
