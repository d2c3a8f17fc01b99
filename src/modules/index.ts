/**
 * Module loading, as Terraform / OpenTofu do it: which files form each module, override merging,
 * provider requirements (declared and implied), module calls, root/shared classification and
 * one tree per root module with its combined provider constraints.
 */
import type { HclParser } from '../hcl';
import { LOADER_PROJECTION } from './projection';
import type {
  Engine,
  LoadDiagnostic,
  LoadedArchive,
  ModuleInfo,
  ParsedFile,
  ParseResult,
  RootTree,
  ScanConfig,
} from '../model';
import { assembleModule, tagBody } from './assemble';
import type { SrcFile } from './assemble';
import { collectModule } from './collect';
import { basename, compareUtf8, dirname } from '../archive/paths';
import { isIgnoredName, selectConfigFiles } from './files';
import { buildRootTree, decideKind, localCallers, missingModules, moduleCycles } from './tree';

export { matchGlob } from './glob';
export { LOADER_PROJECTION } from './projection';
export { selectConfigFiles } from './files';
export type { FileSelection } from './files';
export {
  BUILTIN_TERRAFORM_PROVIDER,
  classifyModuleSource,
  defaultRegistryHost,
  impliedProviderSource,
  parseProviderSource,
  resolveLocalTarget,
} from './sources';
export type { ProviderSourceResult } from './sources';
export { combineConstraints, moduleRequirements } from './tree';
export type { ModuleConstraint } from './tree';

/** Reads one configuration file: the parse result projected on `LOADER_PROJECTION`. */
export type ConfigFileReader = (path: string, content: Buffer) => Promise<ParseResult>;

export interface LoadModulesInput {
  archive: LoadedArchive;
  config: ScanConfig;
  parser: HclParser;
  /** How configuration files are read; default `parser.extract(path, content, LOADER_PROJECTION)`.
   * The scan layer wraps this with its content-addressed cache. */
  readConfigFile?: ConfigFileReader;
  /** Stops loading when aborted: checked before each file; the reason (or what a reader threw
   * once it fired) is thrown instead of becoming a parse-error diagnostic. */
  signal?: AbortSignal | undefined;
}

export interface LoadedModules {
  /** Every module (directory with at least one loaded configuration file), sorted by path. */
  modules: ModuleInfo[];
  /** One tree per root module, sorted by root path. */
  roots: RootTree[];
  diagnostics: LoadDiagnostic[];
  engine: Engine;
  /** Every configuration file that parsed, by archive path: the part of its body module loading
   * reads (`LOADER_PROJECTION`), not the whole body. */
  parsed: Map<string, ParsedFile>;
}

export const LOCK_FILE_NAME = '.terraform.lock.hcl';

/** How many files are handed to the parser at once (it spreads them over its workers). */
const PARSE_CONCURRENCY = 8;

const OPENTOFU_LOCK_ENTRY = /^\s*provider\s+"registry\.opentofu\.org\//im;

/**
 * The engine the archive is written for: `config.engine` when the settings set it explicitly;
 * otherwise OpenTofu when a lock file records providers from `registry.opentofu.org` or any
 * `.tofu` / `.tofu.json` file exists; otherwise Terraform.
 */
export function detectEngine(archive: LoadedArchive, config: ScanConfig): Engine {
  if (config.engineExplicit === true || config.engine === 'opentofu') return config.engine;
  for (const entry of archive.entries) {
    if (entry.type === 'directory' || inToolDirectory(entry.path)) continue;
    const name = basename(entry.path);
    if (isIgnoredName(name)) continue;
    if (name.endsWith('.tofu') || name.endsWith('.tofu.json')) return 'opentofu';
  }
  for (const [path, content] of archive.files) {
    if (
      basename(path) === LOCK_FILE_NAME &&
      !inToolDirectory(path) &&
      OPENTOFU_LOCK_ENTRY.test(content.toString('utf8'))
    )
      return 'opentofu';
  }
  return 'terraform';
}

/**
 * Directories that hold tool state, not configuration: `.terraform/` (where `init` installs remote
 * modules, which are loaded only through their calls, never as modules of the archive) and `.git/`.
 */
function inToolDirectory(path: string): boolean {
  return path.split('/').some((segment) => segment === '.terraform' || segment === '.git');
}

/** Regular files, and links whose target file the archive reader loaded, grouped by directory. */
function filesByDirectory(archive: LoadedArchive): Map<string, string[]> {
  const dirs = new Map<string, string[]>();
  for (const entry of archive.entries) {
    const isFile = entry.type === 'file' || (entry.type !== 'directory' && archive.files.has(entry.path));
    if (!isFile || inToolDirectory(entry.path)) continue;
    const dir = dirname(entry.path) || '.';
    const list = dirs.get(dir) ?? [];
    list.push(entry.path);
    dirs.set(dir, list);
  }
  return dirs;
}

async function parseAll(
  paths: string[],
  archive: LoadedArchive,
  read: ConfigFileReader,
  signal: AbortSignal | undefined,
): Promise<Map<string, ParseResult>> {
  const results = new Map<string, ParseResult>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < paths.length) {
      signal?.throwIfAborted();
      const path = paths[next++] as string;
      const content = archive.files.get(path);
      if (content === undefined) {
        results.set(path, {
          ok: false,
          error: { path, message: 'the file content was not loaded from the archive', line: 1, column: 1 },
        });
        continue;
      }
      try {
        results.set(path, await read(path, content));
      } catch (err) {
        if (signal?.aborted) throw err;
        // The parser reports syntax errors as results; anything thrown is still confined to this file.
        const message = err instanceof Error ? err.message : String(err);
        results.set(path, {
          ok: false,
          error: { path, message: `could not be parsed: ${message}`, line: 1, column: 1 },
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARSE_CONCURRENCY, paths.length) }, () => worker()));
  return results;
}

function compareDiagnostics(a: LoadDiagnostic, b: LoadDiagnostic): number {
  const where = (d: LoadDiagnostic): { file: string; line: number } =>
    d.kind === 'parse-error' ? { file: d.file, line: d.line } : d.location;
  const wa = where(a);
  const wb = where(b);
  return (
    compareUtf8(a.module, b.module) ||
    compareUtf8(wa.file, wb.file) ||
    wa.line - wb.line ||
    compareUtf8(a.kind, b.kind) ||
    compareUtf8(JSON.stringify(a), JSON.stringify(b))
  );
}

export async function loadModules(input: LoadModulesInput): Promise<LoadedModules> {
  const { archive, config, parser } = input;
  const engine = detectEngine(archive, config);
  const entryPaths = new Set(archive.entries.map((e) => e.path));

  const selections = new Map<string, ReturnType<typeof selectConfigFiles>>();
  for (const [dir, files] of filesByDirectory(archive)) {
    const selection = selectConfigFiles(files, engine);
    if (selection.selected.length > 0) selections.set(dir, selection);
  }
  const toParse = [...selections.values()].flatMap((s) => s.selected);
  const read: ConfigFileReader =
    input.readConfigFile ??
    ((path, content) => parser.extract(path, content, LOADER_PROJECTION, { signal: input.signal }));
  const results = await parseAll(toParse, archive, read, input.signal);

  const parsed = new Map<string, ParsedFile>();
  const diagnostics: LoadDiagnostic[] = [];
  const textCache = new Map<string, string[]>();
  const lines = (file: string): string[] | undefined => {
    let text = textCache.get(file);
    if (text === undefined) {
      const content = archive.files.get(file);
      if (content === undefined) return undefined;
      text = content.toString('utf8').split(/\r?\n/);
      textCache.set(file, text);
    }
    return text;
  };

  const modules = new Map<string, ModuleInfo>();
  for (const dir of [...selections.keys()].sort(compareUtf8)) {
    const selection = selections.get(dir) as ReturnType<typeof selectConfigFiles>;
    const overrideSet = new Set(selection.overrides);
    const primary: SrcFile[] = [];
    const overrides: SrcFile[] = [];
    for (const path of selection.selected) {
      const result = results.get(path) as ParseResult;
      if (!result.ok) {
        const e = result.error;
        diagnostics.push({
          kind: 'parse-error',
          module: dir,
          file: path,
          line: e.line,
          column: e.column,
          message: e.message,
        });
        continue;
      }
      parsed.set(path, result.file);
      const file: SrcFile = { path, ...tagBody(result.file.body, path) };
      (overrideSet.has(path) ? overrides : primary).push(file);
    }
    const { module: assembled, duplicates } = assembleModule(primary, overrides);
    for (const d of duplicates) {
      diagnostics.push({
        kind: 'duplicate-required-providers',
        module: dir,
        location: d.location,
        first: d.first,
      });
    }
    const collected = collectModule(dir, assembled, engine, lines);
    const lockPath = dir === '.' ? LOCK_FILE_NAME : `${dir}/${LOCK_FILE_NAME}`;
    modules.set(dir, {
      path: dir,
      files: selection.selected,
      ignoredFiles: selection.ignored,
      kind: 'root',
      kindReason: '',
      providers: collected.providers,
      providerUses: collected.providerUses,
      providerConfigs: collected.providerConfigs,
      moduleCalls: collected.moduleCalls,
      backend: assembled.backend,
      requiredVersions: collected.requiredVersions,
      requiredProvidersBlocks: assembled.requiredProvidersBlocks,
      lockFile: entryPaths.has(lockPath) ? lockPath : null,
    });
  }

  const callers = localCallers(modules);
  for (const m of modules.values()) {
    const decision = decideKind(m, callers.get(m.path) ?? [], config);
    m.kind = decision.kind;
    m.kindReason = decision.reason;
  }
  const rootPaths = [...modules.values()].filter((m) => m.kind === 'root').map((m) => m.path);
  const roots = rootPaths.map((r) => buildRootTree(r, modules, engine));
  diagnostics.push(...missingModules(modules), ...moduleCycles(modules, rootPaths));
  diagnostics.sort(compareDiagnostics);

  return { modules: [...modules.values()], roots, diagnostics, engine, parsed };
}
