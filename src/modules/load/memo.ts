/**
 * What one load of an archive's modules hands to a later load of the same archive with some
 * files' bytes replaced: `tfguard fix` scans again after editing files in memory
 * (src/scan/fix.ts, src/scan/reuse.ts), and most directories are untouched by the edits.
 *
 * Kept, each used only when everything it was made from is the same:
 * - the file selection of every directory (it reads paths only): same entries, same engine;
 * - the repository signals: same entries, same engine, and every changed file one whose only
 *   readings by the signals give the same answers (`signalsUnchanged`, src/modules/repository.ts);
 * - per directory, the assembled module and what `collectModule` read from it: the same parse
 *   results (the scan hands the same result object for a file whose bytes did not change), the
 *   same engine, and no constants (a module whose `required_providers` reads variables or locals
 *   is read again).
 * So a later load returns what a fresh load of the edited files returns. Results are shared
 * between the loads as they are between the phases of one load: nothing changes them once made,
 * except the tree phase's reading of a module again under another engine, which forgets it here.
 */
import type { ArchiveEntry, LoadedArchive } from '../../archive';
import type { ParseResult } from '../../hcl';
import type { Engine } from '../../model';
import type { AssembledModule, DuplicateRequiredProviders, SrcFile } from '../assemble';
import type { CollectedModule } from '../collect';
import type { FileSelection } from '../files';
import { signalsUnchanged } from '../repository';
import type { RepositorySignals } from '../repository';

interface Assembly {
  module: AssembledModule;
  duplicates: DuplicateRequiredProviders[];
}

interface DirMemo {
  primary: readonly SrcFile[];
  overrides: readonly SrcFile[];
  assembly: Assembly;
  collected?: { engine: Engine; result: CollectedModule };
}

/** The same paths of the same kinds, in the same order, and the same files loaded through links. */
function sameTree(a: LoadedArchive, b: LoadedArchive): boolean {
  if (a === b) return true;
  if (a.entries.length !== b.entries.length || a.files.size !== b.files.size) return false;
  for (let i = 0; i < a.entries.length; i++) {
    const x = a.entries[i] as ArchiveEntry;
    const y = b.entries[i] as ArchiveEntry;
    if (x.path !== y.path || x.type !== y.type || x.linkTarget !== y.linkTarget) return false;
  }
  for (const path of a.files.keys()) if (!b.files.has(path)) return false;
  return true;
}

function sameFiles(a: readonly SrcFile[], b: readonly SrcFile[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as SrcFile;
    const y = b[i] as SrcFile;
    if (x.path !== y.path || x.body !== y.body) return false;
  }
  return true;
}

export class LoadMemo {
  private selection: {
    archive: LoadedArchive;
    engine: Engine;
    selections: Map<string, FileSelection>;
  } | null = null;
  private signals: {
    archive: LoadedArchive;
    engine: Engine;
    results: ReadonlyMap<string, ParseResult>;
    signals: RepositorySignals;
  } | null = null;
  private readonly dirs = new Map<string, DirMemo>();
  /** What was taken over from an earlier load (tests, benchmarks). */
  readonly stats = { selections: 0, signals: 0, assemblies: 0, collected: 0 };

  /** The file selections of `archive` under `engine`, from an earlier load when they are the same. */
  selections(
    archive: LoadedArchive,
    engine: Engine,
    select: () => Map<string, FileSelection>,
  ): Map<string, FileSelection> {
    const known = this.selection;
    if (known !== null && known.engine === engine && sameTree(known.archive, archive)) {
      this.stats.selections++;
      return known.selections;
    }
    const selections = select();
    this.selection = { archive, engine, selections };
    return selections;
  }

  /** The repository signals of `archive`, from an earlier load when no changed file changes them. */
  async repositorySignals(
    archive: LoadedArchive,
    engine: Engine,
    results: ReadonlyMap<string, ParseResult>,
    read: () => Promise<RepositorySignals>,
  ): Promise<RepositorySignals> {
    const known = this.signals;
    if (
      known !== null &&
      known.engine === engine &&
      sameTree(known.archive, archive) &&
      signalsUnchanged(known.archive, archive, known.results, results)
    ) {
      this.signals = { archive, engine, results, signals: known.signals };
      this.stats.signals++;
      return known.signals;
    }
    const signals = await read();
    this.signals = { archive, engine, results, signals };
    return signals;
  }

  /** The assembly of `dir` from these files, from an earlier load when they are the same. */
  assembled(dir: string, primary: SrcFile[], overrides: SrcFile[], assemble: () => Assembly): Assembly {
    const known = this.dirs.get(dir);
    if (known !== undefined && sameFiles(known.primary, primary) && sameFiles(known.overrides, overrides)) {
      this.stats.assemblies++;
      return known.assembly;
    }
    const assembly = assemble();
    this.dirs.set(dir, { primary, overrides, assembly });
    return assembly;
  }

  /** What `collectModule` reads from the assembly of `dir` under `engine` (no constants), from an
   * earlier load when the assembly is the same. */
  collected(
    dir: string,
    module: AssembledModule,
    engine: Engine,
    collect: () => CollectedModule,
  ): CollectedModule {
    const known = this.dirs.get(dir);
    if (known === undefined || known.assembly.module !== module) return collect();
    if (known.collected !== undefined && known.collected.engine === engine) {
      this.stats.collected++;
      return known.collected.result;
    }
    const result = collect();
    known.collected = { engine, result };
    return result;
  }

  /** The module of `dir` was read again under another engine and its calls changed in place:
   * nothing of it is reused. */
  forget(dir: string): void {
    this.dirs.delete(dir);
  }
}
