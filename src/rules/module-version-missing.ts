import type { RuleFinding } from './types';
import { at } from './helpers';
import type { Rule } from './types';

/**
 * A registry module without `version` resolves to the newest release at every `init`; "we recommend
 * explicitly constraining the acceptable version numbers to avoid unexpected or unwanted changes"
 * (Terraform docs, Module Blocks → Version).
 */
export const moduleVersionMissing: Rule = {
  id: 'module-version-missing',
  defaultSeverity: 'warning',
  summary: 'A module call with a registry source should constrain the module version.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      for (const call of m.moduleCalls) {
        if (call.sourceKind !== 'registry') continue;
        if (call.version !== null && call.version.trim() !== '') continue;
        out.push({
          module: m.path,
          ...at(call.location),
          message: `module "${call.name}" uses registry source "${call.source ?? ''}" without a version constraint, so every init may pick a newer release`,
          note: 'Add version = "~> X.Y" (the release line you have tested).',
        });
      }
    }
    return out;
  },
};
