import type { Signal } from '../types';
import { strong } from '../types';

/** A directory that deployment tooling declares (src/modules/declarations): an Atlantis or Digger
 * project, a Spacelift stack, a Terramate stack, an Atmos component instance, a `tfe_workspace`
 * working directory, an env0 environment, a CDKTF synthesized stack or a Terraform Stack. That
 * tooling runs plan and apply there: a root, named by the first declaration's file and line. */
export const deploymentDeclaration: Signal = {
  id: 'deployment-declaration',
  decide({ path }, { declaredByDir }) {
    const declared = declaredByDir.get(path);
    return declared === undefined ? null : strong('root', declared);
  },
};
