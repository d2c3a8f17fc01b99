import type { RuleFinding } from './types';
import { at, describeProvider, isBuiltinProvider, isLegacyTerraformProvider } from './helpers';
import type { Rule } from './types';

/**
 * "Each provider dependency you declare should have a version constraint given in the version
 * argument" (Terraform docs, Provider Requirements → Version Constraints). Providers that are only
 * used, never declared, belong to `undeclared-provider`.
 */
export const missingVersionConstraint: Rule = {
  id: 'missing-version-constraint',
  defaultSeverity: 'error',
  summary: 'Every required_providers entry must have a version constraint.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      for (const p of m.providers) {
        if (p.implicit || p.declared === null || p.constraints !== null) continue;
        // A version tfguard could not evaluate is provider-version-unknown's, not a missing one.
        if (p.versionExpression !== undefined) continue;
        if (isBuiltinProvider(p) || isLegacyTerraformProvider(p)) continue;
        out.push({
          module: m.path,
          ...at(p.constraintLocation ?? p.declared),
          message: `required_providers entry for provider ${describeProvider(p)} has no version constraint, so any version is accepted`,
          note:
            m.kind === 'shared'
              ? 'Add version = ">= X.Y" with the oldest version this module is known to work with.'
              : 'Add a bounded constraint such as version = "~> X.Y" (the release line you have tested).',
        });
      }
    }
    return out;
  },
};
