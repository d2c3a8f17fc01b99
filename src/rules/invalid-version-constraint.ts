import { validateConstraints } from '../constraints';
import type { RuleFinding } from './types';
import {
  at,
  constraintOrigin,
  describeProvider,
  engineName,
  expressionText,
  isLegacyTerraformProvider,
} from './helpers';
import type { Rule } from './types';

/**
 * A constraint Terraform cannot parse stops `init` ("Invalid version constraint"). When this rule
 * fires, the constraint-shape rules skip the entry so one problem gives one finding; an entry for
 * the legacy `hashicorp/terraform` provider is left to `builtin-terraform-provider`.
 *
 * A `version` written as an expression is invalid when the engine cannot evaluate it during init:
 * Terraform 1.17 reads only const variables and locals there, OpenTofu and older Terraform only a
 * literal string (src/modules/constants.ts); a value it can evaluate is judged like a literal.
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
        const expr = p.versionExpression;
        if (expr?.status === 'rejected') {
          out.push({
            module: m.path,
            ...at(p.constraintLocation ?? p.declared),
            message: `version ${expressionText(expr)} for provider ${describeProvider(p)} cannot be evaluated during ${engineName(ctx)} init: ${expr.detail}`,
            note:
              ctx.engine === 'opentofu'
                ? 'Write the constraint as a literal string, e.g. version = ">= 5.0".'
                : 'Terraform 1.17 and later read only literals, locals and variables declared with const = true here; write a literal string, or declare the variable const = true.',
          });
          continue;
        }
        const error = validateConstraints(p.constraints);
        if (error === null) continue;
        out.push({
          module: m.path,
          ...at(p.constraintLocation ?? p.declared),
          message: `version constraint "${p.constraints}"${constraintOrigin(p)} for provider ${describeProvider(p)} is not valid: ${error}`,
          note: 'Use comma-separated constraints of the form OPERATOR VERSION, e.g. ">= 5.0, < 6.0"; operators: = != > >= < <= ~>.',
        });
      }
    }
    return out;
  },
};
