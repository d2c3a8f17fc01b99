import { satisfies } from '../constraints';
import { shortSource } from '../addrs';
import { liveEntries, lockedTrees } from './lock-helpers';
import type { RuleFinding } from './types';
import type { Rule } from './types';

/**
 * `terraform init` fails when the locked version does not satisfy the current constraints ("locked
 * provider ... does not match configured version constraint"). It also fails when the root's own
 * filesystem mirror (`terraform.d/plugins/`, or a `plugin_dirs` mirror) holds the provider but not
 * the locked version: providers found in a local mirror are installed only from it.
 */
export const lockVersionMismatch: Rule = {
  id: 'lock-version-mismatch',
  defaultSeverity: 'error',
  summary:
    "A locked provider version must satisfy the root's combined version constraints (and be present in the root's own provider mirror, when it keeps one).",
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const { root: a, tree, cli } of lockedTrees(ctx)) {
      for (const e of liveEntries(a)) {
        if (e.version === null) continue;
        const p = tree.providers.find((rp) => rp.source === e.source);
        const where = {
          module: a.root,
          file: a.lock.path,
          line: e.versionLine ?? e.line,
          range: e.versionRange ?? e.range,
        };
        if (p !== undefined && p.constraints !== null && p.constraints !== '') {
          let ok = true;
          try {
            ok = satisfies(e.version, p.constraints);
          } catch {
            ok = true; // an invalid constraint is reported by invalid-version-constraint
          }
          if (!ok) {
            const by = p.contributions.map((c) =>
              c.remote === undefined
                ? `"${c.constraints}" in module "${c.module}"`
                : `"${c.constraints}" in remote module "${c.remote.key}" (${c.module})`,
            );
            out.push({
              ...where,
              message:
                `locked version ${e.version} of ${shortSource(p.source, a.engine)} does not satisfy the configuration's ` +
                `constraints "${p.constraints}"${by.length > 0 ? ` (${by.join(', ')})` : ''}; ${cli} init fails`,
              note:
                `Run "${cli} init -upgrade", which selects the newest version the constraints allow (plain ` +
                `"${cli} init" and "${cli} providers lock" keep the locked version and fail), or change the ` +
                'constraints to allow the locked version; then commit the lock file.',
            });
            continue;
          }
        }
        const mirrored = a.packages.filter(
          (pkg) =>
            pkg.source === e.source &&
            (pkg.location === 'plugin-dir' || (pkg.location === 'plugins' && pkg.owner === a.root)),
        );
        if (mirrored.length > 0 && !mirrored.some((pkg) => pkg.version === e.version)) {
          const versions = [...new Set(mirrored.map((pkg) => pkg.version))].sort();
          const dirs = [...new Set(mirrored.map((pkg) => pkg.mirror))].sort();
          out.push({
            ...where,
            message:
              `locked version ${e.version} of ${shortSource(e.source as string, a.engine)} is not in the provider mirror ` +
              `${dirs.join(', ')}, which only has ${versions.join(', ')}; ${cli} init cannot install it`,
            note: 'Add the locked version to the mirror, or lock a version the mirror provides.',
          });
        }
      }
    }
    return out;
  },
};
