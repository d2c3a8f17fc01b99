import { validateConstraints } from '../constraints';
import type { RuleFinding } from '../model';
import { at, describeProvider, isLegacyTerraformProvider } from './helpers';
import type { Rule } from './types';

/**
 * A constraint Terraform cannot parse stops `init` ("Invalid version constraint"). When this rule
 * fires, the constraint-shape rules skip the entry so one problem gives one finding; an entry for
 * the legacy `hashicorp/terraform` provider is left to `builtin-terraform-provider`.
 */
export const invalidVersionConstraint: Rule = {
  id: 'invalid-version-constraint',
  defaultSeverity: 'error',
  summary: 'A provider version constraint must use valid Terraform constraint syntax.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      for (const p of m.providers) {
        // The legacy hashicorp/terraform entry must go entirely (builtin-terraform-provider).
        if (p.constraints === null || isLegacyTerraformProvider(p)) continue;
        const error = validateConstraints(p.constraints);
        if (error === null) continue;
        out.push({
          module: m.path,
          ...at(p.constraintLocation ?? p.declared),
          message: `version constraint "${p.constraints}" for provider ${describeProvider(p)} is not valid: ${error}`,
          note: 'Use comma-separated constraints of the form OPERATOR VERSION, e.g. ">= 5.0, < 6.0"; operators: = != > >= < <= ~>.',
        });
      }
    }
    return out;
  },
};
