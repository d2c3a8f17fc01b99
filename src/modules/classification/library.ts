/**
 * Module libraries: a directory whose modules call each other (cds-snc/terraform-modules' top-level
 * directories, uktrade/platform-tools' `terraform/<name>`). Computed once per archive as counts per
 * directory (how many modules sit directly in it, how many of those are called by a module below
 * it), so that asking for one module is a lookup: O(n · depth) in all, where a scan of all modules
 * per module took 31 s on an archive of 12,000 stacks.
 *
 * Only the modules directly in a directory are its members, called from below that directory: a
 * directory of deployable stages that call modules kept elsewhere (`0-bootstrap/`, `1-org/` beside
 * `modules/`) is not a library, even though the repository as a whole holds modules that are called
 * (an earlier form of this test counted every module below any ancestor, so the top
 * directory of almost any repository was a "library", and it made such stages shared modules). A
 * module nested in a library module's directory (`terraform/vpc-peering/requester`) is in the
 * library of an ancestor.
 */
import type { ModuleInfo } from '../types';
import type { CallerRef } from './types';
import { parentDir, segments } from './paths';

interface DirCounts {
  /** Modules directly in the directory. */
  members: number;
  /** Of those, modules called by a module below the directory. */
  calledWithin: number;
}

/** True when one of the callers sits below the module's parent directory. */
function calledFromParent(path: string, callers: readonly CallerRef[]): boolean {
  const segs = segments(path);
  return callers.some((c) => {
    const other = segments(c.caller);
    if (other.length < segs.length) return false;
    for (let i = 0; i < segs.length - 1; i++) if (segs[i] !== other[i]) return false;
    return true;
  });
}

export interface LibraryIndex {
  /** Why the module at `path` sits in a module library, or null. */
  evidence(path: string): string | null;
}

/**
 * A module sits in a module library when its parent directory, or an ancestor, holds directly at
 * least two other modules that are called by modules below that directory. `enabled` is false when the repository deploys
 * something itself (a backend, a lock file or a Terragrunt unit): then nothing is a library guess.
 */
export function libraryIndex(
  modules: ReadonlyMap<string, ModuleInfo>,
  callers: ReadonlyMap<string, readonly CallerRef[]>,
  enabled: boolean,
): LibraryIndex {
  const counts = new Map<string, DirCounts>();
  const calledWithin = new Set<string>();
  if (enabled) {
    for (const m of modules.values()) {
      const dir = parentDir(m.path);
      if (dir === undefined) continue;
      let c = counts.get(dir);
      if (c === undefined) {
        c = { members: 0, calledWithin: 0 };
        counts.set(dir, c);
      }
      c.members++;
      if (calledFromParent(m.path, callers.get(m.path) ?? [])) {
        c.calledWithin++;
        calledWithin.add(m.path);
      }
    }
  }
  return {
    evidence(path: string): string | null {
      if (!enabled) return null;
      for (let dir = parentDir(path), own = true; dir !== undefined; dir = parentDir(dir), own = false) {
        const c = counts.get(dir);
        if (c === undefined) continue;
        // The module itself does not count.
        const members = c.members - (own ? 1 : 0);
        const called = c.calledWithin - (own && calledWithin.has(path) ? 1 : 0);
        if (members >= 2 && called >= 2) {
          return `it sits in the module library "${dir}" (${called} of its ${members} other modules are called by modules of it) and the repository has no backend or lock file`;
        }
      }
      return null;
    },
  };
}
