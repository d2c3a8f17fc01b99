import { shortSource } from '../addrs';
import type { RuleFinding } from './types';
import { compareLocations, isBuiltinProvider, modulesWithParseErrors, plural } from './helpers';
import type { Rule, RuleContext } from './types';
import type { ModuleInfo } from '../modules';

/**
 * "Each module must declare its own provider requirements" — requirements, unlike provider
 * configurations, are not inherited (Terraform docs, Providers Within Modules). A used but undeclared
 * provider gets the implied source `hashicorp/<NAME>` and no version constraint.
 */
export const undeclaredProvider: Rule = {
  id: 'undeclared-provider',
  defaultSeverity: 'warning',
  summary:
    "A provider used by a resource, data source, ephemeral resource or provider block must be declared in the module's required_providers.",
  check(ctx) {
    const out: RuleFinding[] = [];
    const unparsed = modulesWithParseErrors(ctx);
    for (const m of ctx.modules) {
      // The declaration may sit in the file that failed to parse.
      if (unparsed.has(m.path)) continue;
      // Terragrunt units that run this module generate a required_providers entry for these names.
      const generated = new Set(m.generatedDeclarations ?? []);
      // A unit's generated files land in its source module's working copy: the module declares
      // what they configure. A source tfguard did not read (remote, unresolved) may declare anything.
      const source = unitSource(ctx, m);
      if (source === 'unread') continue;
      for (const p of source?.providers ?? []) if (p.declared !== null) generated.add(p.name);
      for (const p of m.providers) {
        if (!p.implicit || isBuiltinProvider(p) || generated.has(p.name)) continue;
        const uses = m.providerUses
          .filter((u) => u.name === p.name)
          .sort((a, b) => compareLocations(a.location, b.location));
        const first = uses[0];
        const implied = shortSource(p.source);
        // Aliases the module refers to: a shared module must also declare them (the
        // missing-configuration-alias finding is folded into this one for an undeclared provider).
        const aliases =
          m.kind === 'shared'
            ? [
                ...new Set(
                  uses
                    .filter((u) => u.alias !== null && u.kind !== 'provider-block')
                    .map((u) => `${u.name}.${u.alias}`),
                ),
              ]
            : [];
        const entry =
          `${p.name} = { source = "${implied}", version = ">= X.Y"` +
          (aliases.length > 0 ? `, configuration_aliases = [${aliases.join(', ')}]` : '') +
          ' }';
        out.push({
          module: m.path,
          file: first?.location.file ?? null,
          line: first?.location.line ?? null,
          message:
            `provider "${p.name}" is used but not declared in required_providers` +
            (first ? ` (${plural(uses.length, 'use')}, first ${first.address})` : '') +
            `; "${implied}" with any version is assumed`,
          note: `Declare it with its real source: terraform { required_providers { ${entry} } }.`,
        });
      }
    }
    return out;
  },
};

/** For a Terragrunt unit that runs another module: that module, or `unread` when tfguard did not
 * read it (a remote or unresolved source). */
function unitSource(ctx: RuleContext, m: ModuleInfo): ModuleInfo | 'unread' | undefined {
  if (m.terragrunt === undefined || m.terragrunt.source === null) return undefined;
  const call = m.moduleCalls.find((c) => c.name === 'terragrunt');
  if (call === undefined) return undefined;
  const target =
    call.sourceKind === 'local' && call.target !== null ? ctx.moduleByPath.get(call.target) : undefined;
  return target ?? 'unread';
}
