import type { ProviderUse } from '../modules';
import type { RuleFinding } from './types';
import { compareLocations, kindCaveat, modulesWithParseErrors, plural } from './helpers';
import type { Rule } from './types';

/**
 * A shared module that refers to an aliased configuration `NAME.ALIAS` must declare it with
 * `configuration_aliases` so callers can pass it in (Terraform docs, Providers Within Modules →
 * Provider Aliases Within Modules).
 */
export const missingConfigurationAlias: Rule = {
  id: 'missing-configuration-alias',
  defaultSeverity: 'error',
  summary:
    'A shared module that uses an aliased provider configuration NAME.ALIAS must declare it in configuration_aliases.',
  check(ctx) {
    const out: RuleFinding[] = [];
    const unparsed = modulesWithParseErrors(ctx);
    for (const m of ctx.modules) {
      if (m.kind !== 'shared' || unparsed.has(m.path)) continue;
      const caveat = kindCaveat(m);
      const declared = new Set(m.providers.flatMap((p) => p.configurationAliases));
      // A provider block with that alias inside the module is `shared-module-provider-config`'s finding.
      const local = new Set(
        m.providerConfigs.filter((c) => c.alias !== null).map((c) => `${c.name}.${c.alias}`),
      );
      // A provider used but not declared at all is `undeclared-provider`'s finding, whose note
      // already lists the aliases to declare.
      const undeclared = new Set(m.providers.filter((p) => p.implicit).map((p) => p.name));
      const byRef = new Map<string, ProviderUse[]>();
      for (const u of m.providerUses) {
        if (u.alias === null || u.kind === 'provider-block') continue;
        const ref = `${u.name}.${u.alias}`;
        if (declared.has(ref) || local.has(ref) || undeclared.has(u.name)) continue;
        const list = byRef.get(ref) ?? [];
        list.push(u);
        byRef.set(ref, list);
      }
      for (const [ref, uses] of byRef) {
        uses.sort((a, b) => compareLocations(a.location, b.location));
        const first = uses[0] as ProviderUse;
        const name = first.name;
        const req = m.providers.find((p) => p.name === name && !p.implicit && p.declared !== null);
        const aliases = [...(req?.configurationAliases ?? []), ref];
        out.push({
          module: m.path,
          file: first.location.file,
          line: first.location.line,
          message:
            `shared module uses provider configuration "${ref}" (${plural(uses.length, 'use')}, first ${first.address}) ` +
            (req
              ? `but the required_providers entry for "${name}" does not declare it in configuration_aliases`
              : `but the module has no required_providers entry for "${name}" declaring it in configuration_aliases`) +
            caveat.suffix,
          ...(caveat.weak ? { confidence: 'low' as const } : {}),
          ...(req && !caveat.weak
            ? {
                fix: {
                  description: `declare the alias in the required_providers entry for "${name}"`,
                  replacement: `configuration_aliases = [${aliases.join(', ')}]`,
                },
              }
            : {}),
          note: `Callers then pass it with providers = { ${ref} = ${name}.<their alias> }.`,
        });
      }
    }
    return out;
  },
};
