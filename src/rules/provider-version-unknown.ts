import type { ModuleInfo, ProviderRequirement, ValueExpression } from '../modules';
import type { RuleFinding } from './types';
import { at, describeProvider, expressionText } from './helpers';
import type { Rule } from './types';

/** `comes from var.v, local.l` or `is the expression "${...}"`. */
function origin(e: ValueExpression): string {
  return e.references.length > 0
    ? `comes from ${e.references.join(', ')}`
    : `is the expression ${expressionText(e)}`;
}

function finding(
  m: ModuleInfo,
  p: ProviderRequirement,
  e: ValueExpression,
  what: 'version' | 'source',
): RuleFinding {
  const provider = what === 'source' ? `"${p.name}"` : describeProvider(p);
  const unchecked =
    what === 'version'
      ? 'its constraint was not checked'
      : 'which provider it is was not checked, nor its lock entry (its version is not combined with other modules either)';
  return {
    module: m.path,
    ...at(e.location ?? (what === 'version' ? p.constraintLocation : p.declared) ?? p.declared),
    message: `${what} of provider ${provider} ${origin(e)}, which has no constant value tfguard can read (${e.detail}); ${unchecked}`,
    note:
      'Terraform 1.17 evaluates it during init from -var, .tfvars files, the calling module or the default. ' +
      'To have it checked, give the const variable a default or build the value from literals and locals.',
  };
}

/**
 * Terraform 1.17 lets `required_providers` read const variables and locals (hashicorp/terraform#39153).
 * When tfguard cannot evaluate such a value (a const variable without a default, a function call),
 * it says so once and claims nothing else about that value: no missing or unbounded constraint, no
 * contribution to the tree's combined constraints (src/modules/constants.ts).
 */
export const providerVersionUnknown: Rule = {
  id: 'provider-version-unknown',
  defaultSeverity: 'notice',
  summary:
    'A required_providers version or source that reads variables or locals should have a constant value tfguard can check.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      for (const p of m.providers) {
        if (p.sourceExpression?.status === 'unknown') out.push(finding(m, p, p.sourceExpression, 'source'));
        if (p.versionExpression?.status === 'unknown')
          out.push(finding(m, p, p.versionExpression, 'version'));
      }
    }
    return out;
  },
};
