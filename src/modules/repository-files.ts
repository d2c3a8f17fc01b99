/**
 * The archive's files as the readers of the repository signals (repository.ts) and of deployment
 * declarations (declarations/) ask about them. Each of them used to ask every entry its own
 * questions (tool directory, name, directory) in loops of its own, while most files (the `.tf`
 * files of a monorepo) concern none of them. Here one pass over the entries and one over the loaded
 * files answer what every scan needs (names, links, a scanner's expected results); the sets that
 * only some layouts need (Terragrunt, Terraform tests, Atmos, Digger, Terramate) are built on first
 * use, in one more pass.
 */
import type { ArchiveEntry, LoadedArchive } from '../archive';
import { compareUtf8 } from '../archive';
import { inToolDirectory } from './files';

/** A scanner's expected-results file (KICS: `test/positive_expected_result.json`). */
export const EXPECTED_RESULT_FILE = /(^|[_-])expected[_-]results?\.json$/i;
/** The shortest name EXPECTED_RESULT_FILE matches (`expected_result.json`). */
const EXPECTED_RESULT_MIN = 'expected_result.json'.length;

/** A Terraform / OpenTofu configuration file by its name. */
export const CONFIG_FILE = /\.(tf|tofu)(\.json)?$/;

/** A loaded file outside tool directories, with its name (the last path segment). */
export interface NamedFile {
  path: string;
  name: string;
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The directory of an archive path (`"."` for the top directory). */
function dirOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '.' : path.slice(0, slash);
}

interface Listing {
  files: Set<string>;
  dirs: Set<string>;
  terraformDirs: Set<string>;
  terragruntDirs: Set<string>;
}

export class RepositoryFiles {
  /** Archive paths that a symbolic or hard link points to. */
  readonly linkTargets = new Set<string>();
  /** Directories holding a scanner's expected results, mapped to the first such file (byte order). */
  readonly expectedResults = new Map<string, string>();
  /** Loaded files outside tool directories, in the order of `archive.files`. */
  readonly loaded: readonly NamedFile[];
  /** The same files in the byte order of their paths. */
  readonly sorted: readonly NamedFile[];
  private readonly entries: readonly ArchiveEntry[];
  private entrySet: Set<string> | undefined;
  private listing: Listing | undefined;

  constructor(archive: Pick<LoadedArchive, 'entries' | 'files'>) {
    this.entries = archive.entries;
    const expected: string[] = [];
    for (const e of archive.entries) {
      if (e.type === 'file') {
        if (e.path.length >= EXPECTED_RESULT_MIN && EXPECTED_RESULT_FILE.test(nameOf(e.path)))
          expected.push(e.path);
      } else if ((e.type === 'symlink' || e.type === 'hardlink') && e.linkTarget !== undefined) {
        this.linkTargets.add(e.linkTarget);
      }
    }
    for (const path of expected.sort(compareUtf8)) {
      const dir = dirOf(path);
      if (!this.expectedResults.has(dir)) this.expectedResults.set(dir, path);
    }
    const loaded: NamedFile[] = [];
    for (const path of archive.files.keys()) {
      if (!inToolDirectory(path)) loaded.push({ path, name: nameOf(path) });
    }
    this.loaded = loaded;
    this.sorted = [...loaded].sort((a, b) => compareUtf8(a.path, b.path));
  }

  /** Whether `path` is an entry that is not a directory (in tool directories too). */
  isEntryFile(path: string): boolean {
    if (this.entrySet === undefined) {
      this.entrySet = new Set();
      for (const e of this.entries) if (e.type !== 'directory') this.entrySet.add(e.path);
    }
    return this.entrySet.has(path);
  }

  /** Whether `path` is an entry that is not a directory, outside tool directories. */
  isFile(path: string): boolean {
    return this.list().files.has(path);
  }

  /** Whether `dir` is a directory outside tool directories: `.`, a directory entry, or a directory
   * above a file. */
  isDir(dir: string): boolean {
    return this.list().dirs.has(dir);
  }

  /** Directories holding Terraform / OpenTofu configuration files (outside tool directories). */
  get terraformDirs(): ReadonlySet<string> {
    return this.list().terraformDirs;
  }

  /** Directories holding `terragrunt.hcl` (outside tool directories). */
  get terragruntDirs(): ReadonlySet<string> {
    return this.list().terragruntDirs;
  }

  private list(): Listing {
    if (this.listing !== undefined) return this.listing;
    const l: Listing = {
      files: new Set(),
      dirs: new Set(['.']),
      terraformDirs: new Set(),
      terragruntDirs: new Set(),
    };
    // Directories above a file: when one is known, so are all above it.
    const above = new Set<string>();
    for (const e of this.entries) {
      const path = e.path;
      if (inToolDirectory(path)) continue;
      if (e.type === 'directory') {
        l.dirs.add(path);
        continue;
      }
      l.files.add(path);
      for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) {
        const d = path.slice(0, slash);
        if (above.has(d)) break;
        above.add(d);
        l.dirs.add(d);
      }
      const name = nameOf(path);
      if (CONFIG_FILE.test(name)) l.terraformDirs.add(dirOf(path));
      if (name === 'terragrunt.hcl') l.terragruntDirs.add(dirOf(path));
    }
    this.listing = l;
    return l;
  }
}
