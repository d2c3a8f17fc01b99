import type { Signal } from '../types';
import { strong } from '../types';
import { TEST_SEGMENTS } from '../paths';

/** A path with a test directory (`tests`, `e2e`, `fixtures`…) or a CI directory (`.github`…). */
export const testPlace: Signal = {
  id: 'test-place',
  decide({ segments }) {
    const te = segments.find((s) => TEST_SEGMENTS.includes(s));
    return te === undefined ? null : strong('test', `its path has a "${te}" directory`);
  },
};
