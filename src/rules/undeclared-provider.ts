import type { RuleFinding } from '../model';
import {
  compareLocations,
  displaySource,
  isBuiltinProvider,
  modulesWithParseErrors,
  plural,
} from './helpers';
import type { Rule } from './types';

/**
 * "Each module must declare its own provider requirements" — requirements, unlike provider
 * configurations, are not inherited (Terraform docs, Providers Within Modules). A used but undeclared
 * provider gets the implied source `hashicorp/<NAME>` and no version constraint.
 */
export const undeclaredProvider: Rule = {
  id: 'undeclared-provider',
  defaultSeverity: 'warning',
  summary:
    "A provider used by a resource, data source, provider block or module call must be declared in the module's required_providers.",
  check(ctx) {
    const out: RuleFinding[] = [];
    const unparsed = modulesWithParseErrors(ctx);
    for (const m of ctx.modules) {
      // The declaration may sit in the file that failed to parse.
      if (unparsed.has(m.path)) continue;
      for (const p of m.providers) {
        if (!p.implicit || isBuiltinProvider(p)) continue;
        const uses = m.providerUses
          .filter((u) => u.name === p.name)
          .sort((a, b) => compareLocations(a.location, b.location));
        const first = uses[0];
        const implied = displaySource(p.source);
        out.push({
          module: m.path,
          file: first?.location.file ?? null,
          line: first?.location.line ?? null,
          message:
            `provider "${p.name}" is used but not declared in required_providers` +
            (first ? ` (${plural(uses.length, 'use')}, first ${first.address})` : '') +
            `; "${implied}" with any version is assumed`,
          note: `Declare it: terraform { required_providers { ${p.name} = { source = "${implied}", version = ">= X.Y" } } }.`,
        });
      }
    }
    return out;
  },
};
