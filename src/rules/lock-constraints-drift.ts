import {
  constraintPieces,
  liveEntries,
  lockRoots,
  shortSource,
  treeHasRemoteModules,
  treeOf,
} from '../lockfile/checks';
import type { RuleFinding } from '../model';
import type { Rule } from './types';

/**
 * The `constraints` a lock entry records are informative (Terraform rewrites them on the next
 * `init`), but a difference shows the lock file was not refreshed after the configuration changed.
 * When the tree calls remote modules, their constraints are unknown: then only constraints of the
 * archive's own modules that the lock file lacks count as drift.
 */
export const lockConstraintsDrift: Rule = {
  id: 'lock-constraints-drift',
  defaultSeverity: 'warning',
  summary: "A lock entry's recorded constraints must equal the root's normalized combined constraints.",
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const a of lockRoots(ctx)) {
      const tree = treeOf(ctx, a.root);
      if (a.lock === null || tree === undefined) continue;
      const partial = treeHasRemoteModules(tree);
      for (const e of liveEntries(a)) {
        if (e.constraintsInvalid) continue;
        const p = tree.providers.find((rp) => rp.source === e.source);
        if (p === undefined || p.constraints === null) continue;
        const recorded = e.constraints ?? '';
        const current = p.constraints;
        if (recorded === current) continue;
        let missing: string[] = [];
        if (partial) {
          const have = new Set(constraintPieces(recorded));
          missing = constraintPieces(current).filter((c) => !have.has(c));
          if (missing.length === 0) continue;
        }
        out.push({
          module: a.root,
          file: a.lock.path,
          line: e.constraintsLine ?? e.line,
          message: partial
            ? `the lock entry for ${shortSource(p.source, ctx.engine)} records constraints "${recorded}", which lack ` +
              `${missing.map((c) => `"${c}"`).join(', ')} from the configuration; the lock file was not refreshed`
            : `the lock entry for ${shortSource(p.source, ctx.engine)} records constraints "${recorded}" but the configuration ` +
              `now says "${current}"; the lock file was not refreshed after the constraints changed`,
          ...(partial
            ? {}
            : {
                fix: {
                  description:
                    current === ''
                      ? 'remove the constraints argument'
                      : 'record the current normalized constraints',
                  replacement: current,
                },
              }),
          note: 'Run "terraform init" and commit the lock file.',
        });
      }
    }
    return out;
  },
};
