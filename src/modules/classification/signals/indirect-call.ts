import type { Signal } from '../types';
import { strong } from '../types';

/** A module that a Terraform Stacks beta file's `component` or a `module` block inside a
 * Terramate `generate_hcl` calls is run through that call: reusable, like a module a `module`
 * block of the archive calls (src/modules/declarations: `indirectCalls`). */
export const indirectCall: Signal = {
  id: 'indirect-call',
  decide({ path }, ctx) {
    const via = ctx.indirectCallers.get(path);
    return via === undefined ? null : strong('shared', `called by ${via}`);
  },
};
