import { shortSource } from '../addrs';
import { remoteLabel } from '../modules';
import { lockedTrees, requiredProviders } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/** `terraform init -lockfile=readonly` fails when a required provider has no lock entry. */
export const lockProviderMissing: Rule = {
  id: 'lock-provider-missing',
  defaultSeverity: 'error',
  summary: "Every provider required anywhere in a root's module tree must have an entry in its lock file.",
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const { root: a, tree, cli } of lockedTrees(ctx)) {
      if (!a.lock.readable) continue;
      const locked = new Set(a.lock.providers.flatMap((e) => (e.source === null ? [] : [e.source])));
      for (const p of requiredProviders(tree)) {
        if (locked.has(p.source)) continue;
        const by = [...new Set(p.contributions.filter((c) => c.remote === undefined).map((c) => c.module))];
        // Remote modules that require it, with or without a constraint (named by key and version).
        const remote = (tree.remoteModules ?? [])
          .filter((r) => r.origin !== null && r.providers.some((rp) => rp.source === p.source))
          .map((r) => `remote module "${r.key}" (${remoteLabel(r)})`);
        const names = [...by.map((m) => `module "${m}"`), ...remote];
        out.push({
          module: a.root,
          file: a.lock.path,
          line: 1,
          message:
            `provider ${shortSource(p.source, a.engine)} is required` +
            (remote.length > 0
              ? ` (by ${names.join(', ')})`
              : by.length > 0
                ? ` (by module${by.length === 1 ? '' : 's'} ${by.map((m) => `"${m}"`).join(', ')})`
                : '') +
            ` but ${a.lock.path} has no entry for it; ${cli} init -lockfile=readonly fails`,
          note:
            `Run "${cli} init", which adds the entry (or "${cli} providers lock -platform=..." to record the ` +
            'checksums of several platforms), and commit the lock file.',
        });
      }
    }
    return out;
  },
};
