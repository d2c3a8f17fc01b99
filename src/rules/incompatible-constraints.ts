import { shortSource } from '../addrs';
import { findConflict, validateConstraints } from '../constraints';
import type { ConstraintContribution, RootTree } from '../modules';
import type { RuleFinding } from './types';
import type { SourceLocation } from '../model';
import { at, moduleAnchor } from './helpers';
import type { Rule, RuleContext } from './types';

/**
 * "Each module must declare its own provider requirements … so that Terraform can ensure that there
 * is a single version of the provider that is compatible with all modules in the configuration"
 * (Terraform docs, Providers Within Modules). When no version satisfies them all, `init` fails.
 */
export const incompatibleConstraints: Rule = {
  id: 'incompatible-constraints',
  defaultSeverity: 'error',
  summary:
    "Within one root module's tree, some provider version must satisfy every module's constraints for that provider.",
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const tree of ctx.roots) {
      for (const rp of tree.providers) {
        const shown = shortSource(rp.source);
        const lower = shown.toLowerCase();
        if (lower === 'hashicorp/terraform' || lower.startsWith('terraform.io/builtin/')) continue;
        // Invalid strings are `invalid-version-constraint`'s; judge the rest.
        const valid = rp.contributions.filter(
          (c) => c.constraints.trim() !== '' && validateConstraints(c.constraints) === null,
        );
        if (valid.length === 0) continue;
        const byId = new Map<string, ConstraintContribution>();
        for (const c of valid) {
          const base = c.remote === undefined ? c.module : `${c.module} [${c.remote.key}]`;
          let id = base;
          for (let n = 2; byId.has(id); n++) id = `${base} (${n})`;
          byId.set(id, c);
        }
        const conflict = findConflict([...byId].map(([id, c]) => ({ id, constraints: c.constraints })));
        if (conflict === null) continue;
        const order = [...byId.keys()];
        const ids = [...new Set(conflict.ids)]
          .filter((id) => byId.has(id))
          .sort((a, b) => order.indexOf(a) - order.indexOf(b));
        const parts = ids.map((id) => {
          const c = byId.get(id) as ConstraintContribution;
          // A remote module is named by its module key, its address and the version selected.
          return c.remote === undefined
            ? `"${id}" requires "${c.constraints}"`
            : `remote module "${c.remote.key}" (${c.module}) requires "${c.constraints}"`;
        });
        const remote = ids.map((id) => byId.get(id)).filter((c) => c?.remote !== undefined);
        out.push({
          module: tree.root,
          ...locate(
            ctx,
            tree,
            ids.map((id) => byId.get(id)?.module ?? id),
            byId.get(tree.root)?.location ?? null,
            remote.map((c) => c?.location ?? null),
          ),
          message:
            `no version of provider ${shown} satisfies every module of root "${tree.root}": ${parts.join(', ')} ` +
            `(${conflict.reason})`,
          note: 'Widen the shared module constraints to a minimum only (>=) and keep the maximum in the root module.',
        });
      }
    }
    return out;
  },
};

/** The root's own constraint if it takes part, else the root's call of a conflicting remote module,
 * else the root's module call leading to the first conflicting module (breadth-first over the
 * tree's local calls), else the root's first file. */
function locate(
  ctx: RuleContext,
  tree: RootTree,
  conflicting: string[],
  rootLocation: SourceLocation | null,
  remoteCalls: (SourceLocation | null)[] = [],
): { file: string | null; line: number | null } {
  const rootModule = ctx.moduleByPath.get(tree.root);
  if (conflicting.includes(tree.root) && rootLocation !== null) return at(rootLocation);
  const rootFiles = new Set(rootModule?.files ?? []);
  const fromRoot = remoteCalls.find((l) => l !== null && rootFiles.has(l.file));
  if (fromRoot !== undefined && fromRoot !== null) return at(fromRoot);
  const targets = new Set(conflicting);
  // A remote module counts as the archive module whose call leads to it.
  for (const l of remoteCalls) {
    if (l === null) continue;
    for (const path of tree.modules)
      if (ctx.moduleByPath.get(path)?.files.includes(l.file)) targets.add(path);
  }
  const firstHop = new Map<string, string>(); // module → name of the root call that reaches it
  const queue: string[] = [];
  for (const c of tree.calls) {
    if (c.from === tree.root && !firstHop.has(c.to) && c.to !== tree.root) {
      firstHop.set(c.to, c.name);
      queue.push(c.to);
    }
  }
  for (let i = 0; i < queue.length; i++) {
    const cur = queue[i] as string;
    if (targets.has(cur)) {
      const callName = firstHop.get(cur);
      const call = rootModule?.moduleCalls.find((mc) => mc.name === callName);
      if (call) return at(call.location);
      break;
    }
    for (const c of tree.calls) {
      if (c.from === cur && !firstHop.has(c.to) && c.to !== tree.root) {
        firstHop.set(c.to, firstHop.get(cur) as string);
        queue.push(c.to);
      }
    }
  }
  return rootModule ? moduleAnchor(rootModule) : { file: null, line: null };
}
