/**
 * Module libraries: a directory whose modules call each other. Computed once per archive as
 * aggregates per directory (how many modules sit below it, how many of those are called by a module
 * below it), so that asking for one module walks only its ancestors: O(n · depth) in all, where a
 * scan of all modules per module took 31 s on an archive of 12,000 stacks (issue 20).
 */
import type { ModuleInfo } from '../types';
import type { CallerRef } from './types';
import { parentDir, segments } from './paths';

interface DirCounts {
  /** Modules strictly below the directory. */
  members: number;
  /** Of those, modules called by a module strictly below the directory. */
  calledWithin: number;
}

/**
 * The depth of the deepest directory that holds both `a` and `b` strictly below it (-1 when none:
 * one of them is the top directory). The top directory `.` has depth 0, `a/b` depth 2.
 */
function deepestCommonDepth(a: readonly string[], b: readonly string[]): number {
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return Math.min(common, a.length - 1, b.length - 1);
}

export interface LibraryIndex {
  /** Why the module at `path` sits in a module library, or null. */
  evidence(path: string): string | null;
}

/**
 * A module sits in a module library when an ancestor directory holds at least two other modules
 * that are called by modules of that directory. `enabled` is false when the repository deploys
 * something itself (a backend, a lock file or a Terragrunt unit): then nothing is a library guess.
 */
export function libraryIndex(
  modules: ReadonlyMap<string, ModuleInfo>,
  callers: ReadonlyMap<string, readonly CallerRef[]>,
  enabled: boolean,
): LibraryIndex {
  const counts = new Map<string, DirCounts>();
  /** Per module: the depth of the deepest ancestor that also holds one of its callers. */
  const calledUpTo = new Map<string, number>();
  if (enabled) {
    for (const m of modules.values()) {
      const segs = segments(m.path);
      let deepest = -1;
      for (const c of callers.get(m.path) ?? []) {
        deepest = Math.max(deepest, deepestCommonDepth(segs, segments(c.caller)));
      }
      calledUpTo.set(m.path, deepest);
      for (
        let dir = parentDir(m.path), depth = segs.length - 1;
        dir !== undefined;
        dir = parentDir(dir), depth--
      ) {
        let c = counts.get(dir);
        if (c === undefined) {
          c = { members: 0, calledWithin: 0 };
          counts.set(dir, c);
        }
        c.members++;
        if (depth <= deepest) c.calledWithin++;
      }
    }
  }
  return {
    evidence(path: string): string | null {
      if (!enabled || path === '.') return null;
      const own = calledUpTo.get(path) ?? -1;
      let depth = segments(path).length - 1;
      for (let dir = parentDir(path); dir !== undefined; dir = parentDir(dir), depth--) {
        const c = counts.get(dir) ?? { members: 0, calledWithin: 0 };
        // The module itself does not count.
        const members = c.members - 1;
        const calledWithin = c.calledWithin - (depth <= own ? 1 : 0);
        if (members >= 2 && calledWithin >= 2) {
          return `it sits in the module library "${dir}" (${calledWithin} of its ${members} other modules are called by modules of it) and the repository has no backend or lock file`;
        }
      }
      return null;
    },
  };
}
