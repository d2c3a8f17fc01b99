import { shortSource } from '../addrs';
import type { RuleFinding } from './types';
import { at, isBuiltinProvider, isLegacyTerraformProvider } from './helpers';
import type { Rule } from './types';

/**
 * Without `source` Terraform assumes `hashicorp/<NAME>`; "We recommend using explicit source addresses
 * for all providers" (Terraform docs, Provider Requirements → Source Addresses).
 */
export const missingProviderSource: Rule = {
  id: 'missing-provider-source',
  defaultSeverity: 'warning',
  summary: 'Every required_providers entry should name its source address explicitly.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      for (const p of m.providers) {
        if (p.implicit || p.declared === null || p.sourceExplicit) continue;
        if (isBuiltinProvider(p) || isLegacyTerraformProvider(p)) continue;
        const implied = shortSource(p.source);
        const replacement = p.legacyString
          ? `${p.name} = { source = "${implied}", version = ${JSON.stringify(p.constraints ?? '')} }`
          : `source = "${implied}"`;
        out.push({
          module: m.path,
          ...at(p.declared),
          message: p.legacyString
            ? `provider "${p.name}" uses the legacy string form (${p.name} = ${JSON.stringify(p.constraints ?? '')}) without a source; "${implied}" is assumed`
            : `required_providers entry "${p.name}" has no source; "${implied}" is assumed`,
          fix: {
            description: p.legacyString
              ? 'rewrite the entry as an object with the source that is currently assumed'
              : 'add the source that is currently assumed (check that it is the provider you mean)',
            replacement,
          },
        });
      }
    }
    return out;
  },
};
