import { shortSource } from '../addrs';
import {
  constraintPieces,
  liveEntries,
  lockedTrees,
  treeCallsModules,
  treeHasRemoteModules,
  treeHasUnresolvedTerragrunt,
} from './lock-helpers';
import { inputNoun } from './helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

const quoted = (pieces: string[]): string => pieces.map((c) => `"${c}"`).join(', ');

/** What differs, worded as a comparison (the finding may come from either side changing). */
function difference(
  name: string,
  recorded: string,
  current: string,
  missing: string[] | null,
  unseen: string,
  input: string,
): string {
  const entry = `the lock entry for ${name}`;
  if (missing !== null) {
    return recorded === ''
      ? `${entry} records no constraints, but the ${input}'s modules declare ${quoted(missing)} ${unseen}`
      : `${entry} records constraints "${recorded}", which lack ${quoted(missing)} from the ${input}'s modules ${unseen}`;
  }
  if (current === '') {
    return `${entry} records constraints "${recorded}", but the configuration sets no version constraint for it`;
  }
  if (recorded === '') return `${entry} records no constraints, but the configuration's are "${current}"`;
  return `${entry} records constraints "${recorded}", which differ from the configuration's "${current}"`;
}

/**
 * The `constraints` a lock entry records are informative: Terraform does not select versions by
 * them, and `init -lockfile=readonly` accepts a difference. Plain `terraform init` does not rewrite
 * them either while the locked version still satisfies the configuration (it writes the lock file
 * only when a version or a hash changes; `depsfile.Locks.Equal` ignores constraints), and neither
 * does `init -upgrade` when it keeps the same version; `terraform providers lock` always does.
 * Checked with terraform 1.11 in test/rules/lock-constraints-drift.test.ts.
 * When the tree calls remote modules, their constraints are unknown: then only constraints of the
 * archive's own modules that the lock file lacks count as drift.
 */
export const lockConstraintsDrift: Rule = {
  id: 'lock-constraints-drift',
  defaultSeverity: 'warning',
  summary: "A lock entry's recorded constraints must equal the root's normalized combined constraints.",
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const { root: a, tree, cli } of lockedTrees(ctx, { withStacks: false })) {
      const partial = treeHasRemoteModules(tree) || treeHasUnresolvedTerragrunt(ctx, tree);
      const install = treeCallsModules(tree) ? `; it needs the modules installed by "${cli} init" first` : '';
      for (const e of liveEntries(a)) {
        if (e.constraintsInvalid) continue;
        const p = tree.providers.find((rp) => rp.source === e.source);
        if (p === undefined || p.constraints === null) continue;
        const recorded = e.constraints ?? '';
        const current = p.constraints;
        if (recorded === current) continue;
        let missing: string[] = [];
        // A module's constraint tfguard could not evaluate (Terraform 1.17 variables) is in the
        // recorded string but not in `current`: judge only what is known, as for remote modules.
        const unknown = p.unknownContributions !== undefined;
        const incomplete = partial || unknown;
        const unseen = partial
          ? '(remote modules may add constraints of their own)'
          : `(the constraint of ${quoted(p.unknownContributions ?? [])} reads a value tfguard could not evaluate)`;
        if (incomplete) {
          const have = new Set(constraintPieces(recorded));
          missing = constraintPieces(current).filter((c) => !have.has(c));
          if (missing.length === 0) continue;
        }
        const name = shortSource(p.source, a.engine);
        out.push({
          module: a.root,
          file: a.lock.path,
          line: e.constraintsLine ?? e.line,
          range: e.constraintsRange ?? e.range,
          message: difference(name, recorded, current, incomplete ? missing : null, unseen, inputNoun(ctx)),
          ...(incomplete
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
          note:
            `Run "${cli} providers lock" to rewrite the line (it keeps the locked version and hashes${install}) ` +
            `and commit the lock file; plain "${cli} init" leaves the line unchanged while the locked version ` +
            'satisfies the configuration.',
        });
      }
    }
    return out;
  },
};
