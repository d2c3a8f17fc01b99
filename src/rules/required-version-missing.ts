import type { RuleFinding } from './types';
import { at, engineName, isDeployable, kindCaveat, modulesWithParseErrors, moduleAnchor } from './helpers';
import type { Rule } from './types';

/**
 * A root module should say which CLI versions it works with (`terraform { required_version }`), so an
 * older or much newer binary fails early instead of misbehaving (Terraform docs, Terraform Settings →
 * Specifying a Required Terraform Version).
 */
export const requiredVersionMissing: Rule = {
  id: 'required-version-missing',
  defaultSeverity: 'notice',
  summary:
    'A root module should constrain the Terraform/OpenTofu version with terraform { required_version }.',
  check(ctx) {
    const out: RuleFinding[] = [];
    const unparsed = modulesWithParseErrors(ctx);
    for (const m of ctx.modules) {
      if (!isDeployable(m, ctx) || m.requiredVersions.length > 0 || unparsed.has(m.path)) continue;
      // A Terragrunt unit constrains the CLI with terragrunt's own terraform_version_constraint.
      if (m.terragrunt !== undefined) continue;
      // A Terraform Stack names its CLI version in `.terraform-version`
      // (https://developer.hashicorp.com/terraform/language/stacks/create/config).
      if (m.terraformStack === true) continue;
      const anchor = m.requiredProvidersBlocks[0];
      const caveat = kindCaveat(m);
      out.push({
        module: m.path,
        ...(anchor ? at(anchor) : moduleAnchor(m)),
        message:
          `root module has no terraform { required_version } constraint, so any ${engineName(ctx)} version may run it` +
          caveat.suffix,
        ...(caveat.weak ? { confidence: 'low' as const } : {}),
        note: 'Add terraform { required_version = ">= X.Y" } with the oldest CLI version you support.',
      });
    }
    return out;
  },
};
