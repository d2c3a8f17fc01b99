import { shortSource } from '../addrs';
import {
  isLockable,
  liveEntries,
  lockedTrees,
  readonlySeverity,
  treeHasParseErrors,
  treeHasRemoteModules,
  treeHasUnknownSources,
  treeHasUnresolvedTerragrunt,
} from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/**
 * `terraform init` (since 1.1) drops entries for providers nothing requires; with
 * `-lockfile=readonly` it fails on them instead ("Provider dependency changes detected").
 * Not judged when the tree calls remote modules, has unparsable files or a provider source tfguard
 * could not evaluate, or a Terragrunt unit with parts it could not resolve statically (`run_cmd` in a
 * `generate` block; the `terragrunt-unresolved` notice says which): its requirements are not known.
 */
export const lockProviderStale: Rule = {
  id: 'lock-provider-stale',
  defaultSeverity: 'warning',
  severityFor: (config) => readonlySeverity(config, 'warning'),
  summary: "A lock file must not keep entries for providers that nothing in the root's module tree requires.",
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const { root: a, tree, cli } of lockedTrees(ctx, { withStacks: false })) {
      if (
        treeHasRemoteModules(tree) ||
        treeHasParseErrors(ctx, tree) ||
        treeHasUnknownSources(ctx, tree) ||
        treeHasUnresolvedTerragrunt(ctx, tree)
      )
        continue;
      const required = new Set(tree.providers.map((p) => p.source));
      for (const e of liveEntries(a)) {
        const source = e.source as string;
        if (required.has(source) || !isLockable(source)) continue;
        out.push({
          module: a.root,
          file: a.lock.path,
          line: e.line,
          range: e.range,
          message:
            `the lock entry for ${shortSource(source, a.engine)}${e.version === null ? '' : ` ${e.version}`} is stale: ` +
            `no module in the tree of root "${a.root}" requires it; ${cli} init -lockfile=readonly fails`,
          note:
            `Run "${cli} init" (without -lockfile=readonly), which removes entries nothing requires, or delete the ` +
            `block, and commit the lock file ("${cli} providers lock" keeps the entry).`,
        });
      }
    }
    return out;
  },
};
