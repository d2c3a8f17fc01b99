import type { RuleFinding } from './types';
import { at, kindCaveat } from './helpers';
import type { Rule } from './types';

/**
 * "A module intended to be called by one or more other modules must not contain any provider blocks"
 * (Terraform docs, Providers Within Modules): configurations are passed in by the root, and a module
 * with its own provider configuration cannot be used with count, for_each or depends_on.
 */
export const sharedModuleProviderConfig: Rule = {
  id: 'shared-module-provider-config',
  defaultSeverity: 'error',
  summary: 'A shared (reusable) module must not contain provider blocks.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      // A module only Terragrunt units run is their roots' configuration: its cap is their bound.
      if (m.kind !== 'shared' || m.unitSourceOf !== undefined) continue;
      const caveat = kindCaveat(m);
      for (const pc of m.providerConfigs) {
        // An empty aliased block is a proxy through which callers pass a configuration (the legacy
        // form of configuration_aliases), not a configuration of the module's own.
        if (pc.configured !== true && pc.alias !== null) continue;
        const label = pc.alias === null ? `"${pc.name}"` : `"${pc.name}" (alias "${pc.alias}")`;
        out.push({
          module: m.path,
          ...at(pc.location),
          message:
            `shared module contains a provider block for ${label}; provider configurations belong in the root module` +
            caveat.suffix,
          ...(caveat.weak ? { confidence: 'low' as const } : {}),
          note:
            pc.alias === null
              ? 'Remove the block and configure the provider in the root module; the module inherits the default configuration.'
              : pc.forEach === true
                ? // OpenTofu 1.9 provider for_each: a module receives one instance, never the set.
                  `Remove the block; configure provider "${pc.name}" with for_each in the root and call the module once per instance: module "..." { for_each = ..., providers = { ${pc.name} = ${pc.name}.${pc.alias}[each.key] } }.`
                : `Remove the block, declare configuration_aliases = [${pc.name}.${pc.alias}] in required_providers and let callers pass it with providers = { ${pc.name}.${pc.alias} = ... }.`,
        });
      }
    }
    return out;
  },
};
