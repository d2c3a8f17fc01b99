import { shortSource } from '../addrs';
import type { ModuleInfo, ProviderRequirement } from '../modules';
import type { RuleFinding } from './types';
import type { TextEdit } from '../model';
import { insertObjectItem } from './fix-helpers';
import {
  at,
  fixWith,
  isBuiltinProvider,
  isDeployable,
  isLegacyTerraformProvider,
  lockedVersion,
  sourceFor,
  treesWith,
  inputNoun,
} from './helpers';
import type { Rule, RuleContext } from './types';

/**
 * The lock file that shows `init` resolved the implied source to a real provider, or why none does.
 * The roots that use the module: the module itself when it is deployable, else the deployable roots
 * of the trees it is part of.
 */
function lockEvidence(
  ctx: RuleContext,
  m: ModuleInfo,
  p: ProviderRequirement,
): { lockFile: string } | { reason: string } {
  const roots = isDeployable(m, ctx)
    ? [m.path]
    : treesWith(ctx, m.path)
        .filter((t) => isDeployable(t, ctx))
        .map((t) => t.root);
  if (roots.length === 0) return { reason: `no root module that uses it is in the ${inputNoun(ctx)}` };
  for (const root of roots) {
    const locked = lockedVersion(ctx, root, p.source);
    if (locked.status === 'locked') return { lockFile: locked.lockFile };
  }
  return { reason: `no lock file of the roots that use it (${roots.join(', ')}) has an entry for it` };
}

/** `NAMESPACE/TYPE` of an implied source (always on the engine's default registry). */
function writtenSource(source: string): string {
  const parts = source.split('/');
  return parts.length === 3 ? parts.slice(1).join('/') : source;
}

/** The edits that write the source into the entry: an inserted `source` item, or the legacy string
 * rewritten as an object that keeps the version expression as written. */
function sourceEdits(ctx: RuleContext, p: ProviderRequirement, source: string): TextEdit[] | undefined {
  if (p.entry === undefined) return undefined;
  const src = sourceFor(ctx, p.entry.valueRange.file);
  if (src === undefined) return undefined;
  if (!p.legacyString) {
    return insertObjectItem(
      src,
      p.entry,
      { key: 'source', hcl: JSON.stringify(source), json: JSON.stringify(source) },
      'first',
    );
  }
  const r = p.entry.valueRange;
  const written = src.bytes.subarray(r.start.byte, r.end.byte).toString('utf8');
  if (written.includes('\n')) return undefined;
  const text = src.file.endsWith('.json')
    ? `{"source": ${JSON.stringify(source)}, "version": ${written}}`
    : `{ source = ${JSON.stringify(source)}, version = ${written} }`;
  return [{ range: r, text }];
}

/**
 * Without `source` Terraform assumes `hashicorp/<NAME>`; "We recommend using explicit source addresses
 * for all providers" (Terraform docs, Provider Requirements → Source Addresses).
 *
 * The fix writes the assumed source, which changes nothing for Terraform, but only when a lock file
 * of a root that uses the module records that provider: then `init` found it, and it is the
 * provider the configuration runs with. Otherwise the assumed source may name no real provider,
 * and which one is meant is a person's call.
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
        const evidence = lockEvidence(ctx, m, p);
        const description = p.legacyString
          ? 'rewrite the entry as an object with the source that is currently assumed'
          : 'add the source that is currently assumed';
        out.push({
          module: m.path,
          ...at(p.declared),
          message: p.legacyString
            ? `provider "${p.name}" uses the legacy string form (${p.name} = ${JSON.stringify(p.constraints ?? '')}) without a source; "${implied}" is assumed`
            : `required_providers entry "${p.name}" has no source; "${implied}" is assumed`,
          fix:
            'lockFile' in evidence
              ? fixWith(
                  `${description} (${evidence.lockFile} records it)`,
                  replacement,
                  sourceEdits(ctx, p, writtenSource(p.source)),
                )
              : { description: `${description} (check that it is the provider you mean)`, replacement },
          ...('reason' in evidence
            ? {
                note: `Write the source of the provider you mean (no fix: ${evidence.reason}, so nothing shows that "${implied}" is it).`,
              }
            : {}),
        });
      }
    }
    return out;
  },
};
