import type { RuleFinding } from './types';
import { at, diagnosticsOf, inputNoun } from './helpers';
import type { Rule } from './types';

/**
 * A directory that deployment tooling declares as a root (an Atlantis or Digger project, a
 * Spacelift stack, an Atmos component, …) must exist and hold configuration: the tool fails to
 * plan there, and tfguard has nothing to check. Declarations that may point into another
 * repository (`tfe_workspace`, `spacelift_stack`, env0 `vcs`) are reported as guesses.
 */
export const declaredRootMissing: Rule = {
  id: 'declared-root-missing',
  defaultSeverity: 'error',
  summary:
    'A directory that deployment tooling declares as a root (atlantis.yaml, digger.yml, .spacelift/config.yml, Atmos stacks, tfe_workspace, …) must exist and hold Terraform configuration.',
  check(ctx) {
    return diagnosticsOf(ctx, 'declared-root-missing').map((d): RuleFinding => {
      const where = `${d.location.file}:${d.location.line}`;
      const more = d.more > 0 ? ` (and ${d.more} more declaration${d.more === 1 ? '' : 's'} of it)` : '';
      if (d.glob) {
        return {
          module: d.module,
          ...at(d.location),
          message: `${d.tool} ${d.label} (${where}) matches no directory with Terraform configuration, so it generates no project`,
          note: 'Fix the glob, or remove it if the directories it meant are gone.',
        };
      }
      const what = d.exists
        ? `directory "${d.dir}", which holds no Terraform configuration`
        : `directory "${d.dir}", which is not in the ${inputNoun(ctx)}`;
      const finding: RuleFinding = {
        module: d.module,
        ...at(d.location),
        message: `${d.tool} ${d.label} (${where}) declares ${what}${more}`,
        note: `${d.tool} runs plan and apply there; fix the path in ${d.location.file}, or remove the declaration.`,
      };
      if (d.uncertain !== null) {
        finding.message += ` (${d.uncertain})`;
        finding.confidence = 'low';
      }
      return finding;
    });
  },
};
