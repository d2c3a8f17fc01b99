import type { Signal } from '../types';
import { strong } from '../types';
import { EXAMPLE_SEGMENTS } from '../paths';

/** A path with an `examples`, `example`, `_examples` or `samples` directory. */
export const examplePlace: Signal = {
  id: 'example-place',
  decide({ segments }) {
    const ex = segments.find((s) => EXAMPLE_SEGMENTS.includes(s));
    return ex === undefined ? null : strong('example', `its path has an "${ex}" directory`);
  },
};
