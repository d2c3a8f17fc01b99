import type { Signal } from '../types';
import { strong } from '../types';

/** `run { module { source = "./tests/setup" } }` in a `.tftest.hcl` file: a target below a test
 * directory is a `terraform test` helper. */
export const testHelper: Signal = {
  id: 'test-helper',
  decide({ path }, { helperRuns }) {
    const helper = helperRuns.get(path);
    return helper === undefined ? null : strong('test', `test helper: run "${helper.run}" in ${helper.file}`);
  },
};
