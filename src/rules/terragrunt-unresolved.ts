import type { RuleFinding } from './types';
import { at, diagnosticsOf, inputNoun } from './helpers';
import type { Rule } from './types';

/**
 * What tfguard could not resolve in a Terragrunt configuration read statically (it never runs
 * Terragrunt, a shell or `run_cmd`): a `terraform { source }` or `include` path built from
 * `get_env(…)`, a conditional with a remote branch, `generate` contents built from `run_cmd` or from
 * values it cannot know, and what a `terragrunt.stack.hcl` generates. Said once, where it is written,
 * with what was therefore not checked, instead of an empty tree or a silent report.
 */
export const terragruntUnresolved: Rule = {
  id: 'terragrunt-unresolved',
  defaultSeverity: 'notice',
  summary:
    'A part of a Terragrunt configuration tfguard could not resolve statically (a source, include or generate built from run-time values, a stack) is named, with what was therefore not checked.',
  check(ctx) {
    return diagnosticsOf(ctx, 'terragrunt-unresolved').map((d): RuleFinding => ({
      module: d.module,
      ...at(d.location),
      message:
        `Terragrunt ${d.what} could not be resolved statically: ${d.reasons.join('; ')}` +
        (d.partial
          ? '; the unit may need providers tfguard cannot see, so lock entries they may explain are not called stale'
          : ''),
      note: d.partial
        ? 'tfguard never runs Terragrunt, run_cmd or a shell. Write the value as a literal, a local, or a path from get_repo_root()/find_in_parent_folders(), or accept that this part is unchecked.'
        : `tfguard checks what the ${inputNoun(ctx)} holds; run Terragrunt to generate the rest and scan that if it must be checked too.`,
    }));
  },
};
