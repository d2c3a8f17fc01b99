/**
 * What the phases of module loading share: the input, the engine, the parse results and the
 * modules made so far. Each phase (src/modules/load.ts) reads what earlier phases put here and adds
 * its own product; nothing else keeps state between phases.
 */
import type { LoadedArchive } from '../../archive';
import { compareUtf8 } from '../../archive';
import type { HclParser, ParsedFile, ParseResult } from '../../hcl';
import type { Engine, ScanConfig } from '../../model';
import { assembleModule } from '../assemble';
import type { AssembledModule, SrcFile } from '../assemble';
import { collectModule } from '../collect';
import type { CollectedModule } from '../collect';
import { assembleConstants, readsConstants } from '../constants';
import type { ConstantScope } from '../constants';
import type { FileSelection } from '../files';
import { CONSTANT_PROJECTION, LOADER_PROJECTION } from '../projection';
import type { LoadDiagnostic, ModuleInfo } from '../types';
import { LOCK_FILE_NAME } from './engine';
import { parseAll } from './read';
import type { ConfigFileReader } from './read';
import type { LoadMemo } from './memo';

/** A file that failed to parse and looks like a template (`{% … %}`, `{{ … }}`). */
const TEMPLATE_MARKERS = /\{%-?\s|\{\{\s*[\w.]+\s*\}\}/;

export interface LoadStateInput {
  archive: LoadedArchive;
  config: ScanConfig;
  parser: Pick<HclParser, 'extract' | 'parse'>;
  readConfigFile?: ConfigFileReader;
  signal?: AbortSignal | undefined;
  /** What an earlier load of this archive (other bytes in some files) made that this one may
   * take over (memo.ts). */
  memo?: LoadMemo | undefined;
}

export class LoadState {
  readonly archive: LoadedArchive;
  readonly config: ScanConfig;
  readonly parser: Pick<HclParser, 'extract' | 'parse'>;
  readonly signal: AbortSignal | undefined;
  readonly engine: Engine;
  /** How configuration files are read (the scan layer's cache wraps the parser). */
  readonly read: ConfigFileReader;
  readonly entryPaths: ReadonlySet<string>;
  readonly memo: LoadMemo | undefined;

  /** Parse results by path (`LOADER_PROJECTION`), and those of the constants pass. */
  readonly results = new Map<string, ParseResult>();
  readonly constantResults = new Map<string, ParseResult>();
  /** Every file that parsed. */
  readonly parsed = new Map<string, ParsedFile>();
  readonly diagnostics: LoadDiagnostic[] = [];
  readonly templateFiles = new Set<string>();
  /** The modules made so far, by directory, and what each was assembled from. */
  readonly modules = new Map<string, ModuleInfo>();
  readonly assembledByDir = new Map<string, AssembledModule>();
  readonly constantsByDir = new Map<string, ConstantScope>();
  private readonly textCache = new Map<string, string[]>();

  constructor(input: LoadStateInput, engine: Engine) {
    this.archive = input.archive;
    this.config = input.config;
    this.parser = input.parser;
    this.signal = input.signal;
    this.engine = engine;
    this.memo = input.memo;
    this.entryPaths = new Set(input.archive.entries.map((e) => e.path));
    this.read =
      input.readConfigFile ??
      ((path, content) => input.parser.extract(path, content, LOADER_PROJECTION, { signal: input.signal }));
  }

  /** A file's lines (for the ranges of what collectModule reports). */
  readonly lines = (file: string): string[] | undefined => {
    let text = this.textCache.get(file);
    if (text === undefined) {
      const content = this.archive.files.get(file);
      if (content === undefined) return undefined;
      text = content.toString('utf8').split(/\r?\n/);
      this.textCache.set(file, text);
    }
    return text;
  };

  /** Parses `paths` into `results`. */
  async parse(paths: string[]): Promise<void> {
    for (const [path, result] of await parseAll(paths, this.archive, this.read, this.signal))
      this.results.set(path, result);
  }

  lockOf(dir: string): string | null {
    const lockPath = dir === '.' ? LOCK_FILE_NAME : `${dir}/${LOCK_FILE_NAME}`;
    return this.entryPaths.has(lockPath) ? lockPath : null;
  }

  /** A module made of `assembled`, under engine `e` (kind decided later). */
  moduleFrom(
    dir: string,
    files: string[],
    ignored: string[],
    assembled: AssembledModule,
    e: Engine,
    collected: CollectedModule = collectModule(dir, assembled, e, this.lines, this.constantsByDir.get(dir)),
  ): ModuleInfo {
    return {
      path: dir,
      files,
      ignoredFiles: ignored,
      kind: 'root',
      kindReason: '',
      kindEvidence: 'weak',
      providers: collected.providers,
      providerUses: collected.providerUses,
      providerConfigs: collected.providerConfigs,
      moduleCalls: collected.moduleCalls,
      backend: assembled.backend,
      requiredVersions: collected.requiredVersions,
      requiredProvidersBlocks: assembled.requiredProvidersBlocks,
      lockFile: this.lockOf(dir),
      ...(collected.languageBlocks.length > 0 ? { languageBlocks: collected.languageBlocks } : {}),
    };
  }

  /** Reads a directory's parse results into one module (`assembledByDir`); parse errors and
   * duplicate `required_providers` blocks become diagnostics. */
  assembleDir(dir: string, selection: FileSelection): void {
    const overrideSet = new Set(selection.overrides);
    const primary: SrcFile[] = [];
    const overrides: SrcFile[] = [];
    for (const path of selection.selected) {
      const result = this.results.get(path) as ParseResult;
      if (!result.ok) {
        const e = result.error;
        const text = this.archive.files.get(path)?.toString('utf8') ?? '';
        const template = TEMPLATE_MARKERS.test(text);
        if (template) this.templateFiles.add(path);
        this.diagnostics.push({
          kind: 'parse-error',
          module: dir,
          file: path,
          line: e.line,
          column: e.column,
          message: e.message,
          ...(template ? { template: true } : {}),
        });
        continue;
      }
      this.parsed.set(path, result.file);
      (overrideSet.has(path) ? overrides : primary).push({ path, body: result.file.body });
    }
    this.assembled(dir, primary, overrides);
  }

  /** Assembles files into the module of `dir`, reporting duplicate `required_providers` blocks;
   * `record`: kept as the directory's assembly (re-read under another engine by the tree phase). */
  assembled(dir: string, primary: SrcFile[], overrides: SrcFile[], record = true): AssembledModule {
    const { module: assembled, duplicates } =
      record && this.memo !== undefined
        ? this.memo.assembled(dir, primary, overrides, () => assembleModule(primary, overrides))
        : assembleModule(primary, overrides);
    for (const d of duplicates) {
      this.diagnostics.push({
        kind: 'duplicate-required-providers',
        module: dir,
        location: d.location,
        first: d.first,
      });
    }
    if (record) this.assembledByDir.set(dir, assembled);
    return assembled;
  }

  /** Modules whose required_providers read variables or locals (Terraform 1.17): their variables
   * and locals are read in a second, narrower pass, so other modules never evaluate them. */
  async readConstantsOf(dirs: Iterable<[string, FileSelection]>): Promise<void> {
    const paths: string[] = [];
    for (const [dir, sel] of dirs) {
      const assembled = this.assembledByDir.get(dir);
      if (assembled === undefined || !readsConstants(assembled)) continue;
      paths.push(...sel.selected.filter((p) => !this.constantResults.has(p)));
    }
    const readConstants: ConfigFileReader = (path, content) =>
      this.parser.extract(path, content, CONSTANT_PROJECTION, { signal: this.signal });
    for (const [path, r] of await parseAll(paths, this.archive, readConstants, this.signal))
      this.constantResults.set(path, r);
  }

  /** Makes the `ModuleInfo` of an assembled directory, once the constants it may need are read. */
  finishDir(dir: string, selection: FileSelection): ModuleInfo {
    const assembled = this.assembledByDir.get(dir) as AssembledModule;
    const overrideSet = new Set(selection.overrides);
    const constants = selection.selected.filter((p) => this.constantResults.get(p)?.ok === true);
    if (constants.length > 0) {
      const files = (paths: string[]): SrcFile[] =>
        paths.map((p) => ({
          path: p,
          body: (this.constantResults.get(p) as Extract<ParseResult, { ok: true }>).file.body,
        }));
      this.constantsByDir.set(
        dir,
        assembleConstants(
          files(constants.filter((p) => !overrideSet.has(p))),
          files(constants.filter((p) => overrideSet.has(p))),
        ),
      );
    }
    // A module without constants is what its assembly says under the engine: an earlier load's
    // reading of the same assembly stands.
    const collected =
      this.memo === undefined || this.constantsByDir.has(dir)
        ? undefined
        : this.memo.collected(dir, assembled, this.engine, () =>
            collectModule(dir, assembled, this.engine, this.lines, undefined),
          );
    const m = this.moduleFrom(dir, selection.selected, selection.ignored, assembled, this.engine, collected);
    this.modules.set(dir, m);
    return m;
  }

  /** Assembles, reads the constants of and finishes the modules of `selections`, in path order. */
  async addDirectories(selections: Iterable<[string, FileSelection]>): Promise<ModuleInfo[]> {
    const dirs = [...selections].sort(([a], [b]) => compareUtf8(a, b));
    for (const [dir, sel] of dirs) this.assembleDir(dir, sel);
    await this.readConstantsOf(dirs);
    return dirs.map(([dir, sel]) => this.finishDir(dir, sel));
  }
}
