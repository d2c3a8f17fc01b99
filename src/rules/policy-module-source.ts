import { policyAnswers } from '../policy';
import { at } from './helpers';
import type { Rule, RuleFinding } from './types';

/**
 * A module call whose `source` none of the policy's `module_sources` globs match (`*` matches any
 * text, `/` included). Local paths (`./`, `../`) always pass: they are the repository's own code.
 * A registry address is matched as written and without the public registry's host.
 */
export const policyModuleSource: Rule = {
  id: 'policy-module-source',
  defaultSeverity: 'error',
  summary: "A module source must match one of the policy file's module_sources (local paths always pass).",
  check(ctx) {
    const input = ctx.policy;
    const globs = input?.policy.moduleSources;
    if (input === undefined || globs === null || globs === undefined) return [];
    const out: RuleFinding[] = [];
    const answers = policyAnswers(input.policy);
    let listed: string | undefined;
    for (const m of ctx.modules) {
      for (const c of m.moduleCalls) {
        if (c.source === null || answers.moduleSourceAllowed(c.source)) continue;
        listed ??= globs.map((g) => JSON.stringify(g)).join(', ') || 'none';
        out.push({
          module: m.path,
          ...at(c.sourceLocation ?? c.location),
          message: `module "${c.name}" comes from ${JSON.stringify(c.source)}, which matches none of the policy's module_sources (${listed})`,
          note: 'Use an approved module, or ask for its source to be added to module_sources in the policy.',
        });
      }
    }
    return out;
  },
};
