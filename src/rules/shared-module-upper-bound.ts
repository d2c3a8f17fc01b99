import { formatConstraint, suggestMinimumOnly, upperBounding } from '../constraints';
import type { RuleFinding } from './types';
import {
  at,
  checkableConstraint,
  inputNoun,
  constraintOrigin,
  describeProvider,
  fixWith,
  kindCaveat,
  requirementEdits,
} from './helpers';
import { sameEdit } from './fix-helpers';
import type { Rule, RuleContext } from './types';
import type { ModuleInfo } from '../modules';
import type { TextEdit } from '../model';
import {
  boundedWithoutSharedCaps,
  removableCap,
  rootBound,
  rootTreesWith,
  sourceAsWritten,
} from './root-bounds';

/**
 * Shared modules declare a minimum provider version only. Terraform's provider-requirements guide:
 * "Do not use ~> (or other maximum-version constraints) for modules you intend to reuse across many
 * configurations" — the root module manages the maximum.
 */
export const sharedModuleUpperBound: Rule = {
  id: 'shared-module-upper-bound',
  defaultSeverity: 'error',
  summary:
    'A shared (reusable) module must not cap a provider version with ~>, <, <=, = or an exact version; only a minimum (>=).',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      // A module only Terragrunt units run is their roots' configuration: its cap is their bound.
      if (m.kind !== 'shared' || m.unitSourceOf !== undefined) continue;
      const caveat = kindCaveat(m);
      for (const p of m.providers) {
        const c = checkableConstraint(p);
        if (c === null) continue;
        const caps = upperBounding(c);
        if (caps.length === 0) continue;
        const minimumOnly = suggestMinimumOnly(c);
        const moved = minimumOnly === null || caveat.weak ? null : boundsMovedUp(ctx, m, p.name, p.source);
        out.push({
          module: m.path,
          ...at(p.constraintLocation ?? p.declared),
          message:
            `shared module caps provider ${describeProvider(p)} with "${c}"${constraintOrigin(p)} ` +
            `(upper bound: ${caps.map(formatConstraint).join(', ')}); a reusable module should declare only a minimum version` +
            caveat.suffix,
          ...(caveat.weak ? { confidence: 'low' as const } : {}),
          ...(minimumOnly !== null && !caveat.weak
            ? {
                fix: fixWith(
                  moved?.edits.length
                    ? `keep only the minimum version; bound it in ${moved.roots.join(', ')}`
                    : 'keep only the minimum version',
                  minimumOnly,
                  moved === null || moved.blocked.length > 0
                    ? undefined
                    : withRootEdits(requirementEdits(p, minimumOnly), moved.edits),
                ),
              }
            : {}),
          note:
            (minimumOnly !== null
              ? 'Document known incompatibilities with newer versions instead, and let the root module set the maximum.'
              : 'Declare the oldest version the module is known to work with as ">= X.Y", and let the root module set the maximum.') +
            (moved === null ? '' : moved.note),
        });
      }
    }
    return out;
  },
};

/** The shared edit and the roots' bounds, applied together or not at all. */
function withRootEdits(shared: TextEdit[] | undefined, roots: TextEdit[]): TextEdit[] | undefined {
  return shared === undefined ? undefined : [...shared, ...roots];
}

/**
 * What removing the cap does to the roots that use module `m` ("move bounds up"): every
 * root whose combined constraints for `source` would have no upper bound once the shared modules'
 * caps are gone gets one in the same fix (`~> MAJOR.MINOR` of its locked version, else the caps
 * removed). A root that cannot be edited (its kind a guess, a Terragrunt unit, a shape tfguard does
 * not edit) blocks the fix. A module no root of the archive uses (published for other
 * repositories) loses its cap alone: its callers' roots are elsewhere, and bounding the provider is
 * their job (`root-module-unbounded` reports a root that does not, where it is scanned).
 */
function boundsMovedUp(
  ctx: RuleContext,
  m: ModuleInfo,
  localName: string,
  source: string,
): { edits: TextEdit[]; roots: string[]; blocked: string[]; note: string } {
  const trees = rootTreesWith(ctx, m.path);
  if (trees.length === 0) {
    return {
      edits: [],
      roots: [],
      blocked: [],
      note:
        ` No root module in the ${inputNoun(ctx)} uses this module: the roots that call it from elsewhere must bound ` +
        'the provider in their own required_providers (root-module-unbounded reports one that does not).',
    };
  }
  const edits: TextEdit[] = [];
  const roots: string[] = [];
  const blocked: string[] = [];
  const own = m.providers.find((q) => q.source === source && !q.implicit);
  const spelled = own === undefined ? undefined : sourceAsWritten(ctx, own);
  for (const t of trees) {
    const rp = t.providers.find((x) => x.source === source);
    if (rp === undefined || rp.constraints === null || boundedWithoutSharedCaps(ctx, rp)) continue;
    // The caps every shared module of the tree loses, deduplicated: what the root keeps without a lock.
    const caps = [
      ...new Set(
        rp.contributions
          .map((k) => removableCap(ctx, k.module, source))
          .filter((c): c is string => c !== null),
      ),
    ].sort();
    const b = rootBound(ctx, t, rp, localName, caps.length === 0 ? null : caps.join(', '), spelled);
    const what = ctx.moduleByPath.get(t.root)?.kind === 'example' ? 'example' : 'root';
    if ('reason' in b) blocked.push(`${what} "${t.root}" would lose its bound (${b.reason})`);
    else {
      // Units of one source module share its edit: once.
      const where = `"${b.module}" (${b.bound})`;
      if (!roots.includes(where)) roots.push(where);
      for (const e of b.edits) if (!edits.some((x) => sameEdit(x, e))) edits.push(e);
    }
  }
  const note =
    blocked.length > 0
      ? ` No fix: without the cap, ${blocked.join('; ')}; bound the provider there first.`
      : roots.length > 0
        ? ` The fix moves the bound to the root module${roots.length > 1 ? 's' : ''} ${roots.join(', ')}.`
        : '';
  return { edits, roots, blocked, note };
}
