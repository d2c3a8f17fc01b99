import type { ProviderRequirement, ProviderUse } from '../modules';
import type { RuleFinding } from './types';
import type { TextEdit } from '../model';
import { appendToTuple, insertObjectItem } from './fix-helpers';
import {
  compareLocations,
  compareStrings,
  fixWith,
  kindCaveat,
  modulesWithParseErrors,
  plural,
  sourceFor,
} from './helpers';
import type { Rule, RuleContext } from './types';

/** The edits that declare `refs` in the entry's `configuration_aliases`: appended to the list when
 * there is one, else a new item after the entry's last. */
function aliasEdits(ctx: RuleContext, req: ProviderRequirement, refs: string[]): TextEdit[] | undefined {
  if (req.entry?.items === undefined) return undefined;
  const src = sourceFor(ctx, req.entry.valueRange.file);
  if (src === undefined) return undefined;
  const json = refs.map((r) => JSON.stringify(r));
  const list = req.entry.items.find((it) => it.key === 'configuration_aliases');
  if (list !== undefined) {
    return appendToTuple(
      src,
      list.valueRange,
      refs.map((r) => ({ hcl: r, json: JSON.stringify(r) })),
    );
  }
  return insertObjectItem(
    src,
    req.entry,
    { key: 'configuration_aliases', hcl: `[${refs.join(', ')}]`, json: `[${json.join(', ')}]` },
    'last',
  );
}

/**
 * A shared module that refers to an aliased configuration `NAME.ALIAS` must declare it with
 * `configuration_aliases` so callers can pass it in (Terraform docs, Providers Within Modules →
 * Provider Aliases Within Modules).
 *
 * The fix declares every missing alias of the provider at once (each finding of that provider
 * carries the same edit), in the entry's list or as a new `configuration_aliases` item.
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
      const missingOf = (name: string): string[] =>
        [...byRef.keys()].filter((ref) => ref.slice(0, ref.indexOf('.')) === name).sort(compareStrings);
      for (const [ref, uses] of byRef) {
        uses.sort((a, b) => compareLocations(a.location, b.location));
        const first = uses[0] as ProviderUse;
        const name = first.name;
        const req = m.providers.find((p) => p.name === name && !p.implicit && p.declared !== null);
        const aliases = [...(req?.configurationAliases ?? []), ...missingOf(name)];
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
                fix: fixWith(
                  `declare the alias in the required_providers entry for "${name}"`,
                  `configuration_aliases = [${aliases.join(', ')}]`,
                  aliasEdits(ctx, req, missingOf(name)),
                ),
              }
            : {}),
          note: `Callers then pass it with providers = { ${ref} = ${name}.<their alias> }.`,
        });
      }
    }
    return out;
  },
};
