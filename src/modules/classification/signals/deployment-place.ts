import type { Signal } from '../types';
import { strong } from '../types';
import { ROOT_SEGMENTS } from '../paths';

/** A path with a deployment directory (`environments`, `envs`, `live`, `stacks`, `deployments`). */
export const deploymentPlace: Signal = {
  id: 'deployment-place',
  decide({ segments }) {
    const seg = segments.find((s) => ROOT_SEGMENTS.includes(s));
    return seg === undefined ? null : strong('root', `its path has a "${seg}" directory`);
  },
};
