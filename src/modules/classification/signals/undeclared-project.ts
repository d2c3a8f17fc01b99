import type { Signal } from '../types';
import { weak } from '../types';
import { SHARED_SEGMENT } from '../paths';

/**
 * A directory left out of a complete project list (`atlantis.yaml` projects without autodiscover,
 * `digger.yml` projects): the repository's tooling does not plan or apply it, and nothing calls
 * it, so it is not taken for a root. It is held to consistency only, like an example (declared
 * providers, sources, satisfiable constraints; no lock file or pinning). Weak: a person may still
 * run it by hand. A directory under
 * `modules/` says nothing here: a reusable module may be called from other repositories, which the
 * later guesses weigh.
 */
export const undeclaredProject: Signal = {
  id: 'undeclared-project',
  decide({ segments }, { completeList }) {
    if (completeList === null || segments.includes(SHARED_SEGMENT)) return null;
    return weak('example', `not among the projects (${completeList}), and nothing calls it`);
  },
};
