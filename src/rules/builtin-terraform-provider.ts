import { shortSource } from '../addrs';
import type { RuleFinding } from './types';
import { at, isLegacyTerraformProvider } from './helpers';
import type { Rule } from './types';

/**
 * `hashicorp/terraform` is the legacy release of what is now the built-in provider
 * (`terraform.io/builtin/terraform`, which needs no declaration); it is not compatible with
 * OpenTofu and should not be declared (Terraform/OpenTofu docs, Provider Requirements → Built-in
 * Providers).
 */
export const builtinTerraformProvider: Rule = {
  id: 'builtin-terraform-provider',
  defaultSeverity: 'error',
  summary: 'required_providers must not declare the legacy hashicorp/terraform provider.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      for (const p of m.providers) {
        if (p.declared === null || !isLegacyTerraformProvider(p)) continue;
        out.push({
          module: m.path,
          ...at(p.declared),
          message:
            `required_providers entry "${p.name}" declares the legacy provider "${shortSource(p.source)}"; ` +
            'the terraform_remote_state data source comes from the built-in provider terraform.io/builtin/terraform, which needs no declaration',
          note: 'Remove the entry.',
        });
      }
    }
    return out;
  },
};
