/**
 * Module loading, as Terraform / OpenTofu do it: which files form each module, override merging,
 * provider requirements (declared and implied), module calls, root/shared classification and
 * one tree per root module with its combined provider constraints.
 */
import type { HclParser } from '../hcl';
import { CONSTANT_PROJECTION, LOADER_PROJECTION } from './projection';
import type { Engine, ScanConfig } from '../model';
import type { LoadDiagnostic, ModuleCall, ModuleInfo, RemoteModule, RootTree } from './types';
import type { LoadedArchive } from '../archive';
import type { ParsedFile, ParseResult } from '../hcl';
import { assembleModule } from './assemble';
import type { AssembledModule, SrcFile } from './assemble';
import { classifyModules } from './classification';
import { matchGlob } from './glob';
import type { KindDecision } from './classification';
import { readRepositorySignals } from './repository';
import type { GeneratedFile } from './repository';
import { relocateGenerated, stackNotices } from './terragrunt/notices';
import type { RepositorySignals } from './repository';
import { collectModule } from './collect';
import { assembleConstants, readsConstants } from './constants';
import type { ConstantScope } from './constants';
import { basename, compareUtf8, dirname, inputKind } from '../archive';
import { inToolDirectory, isIgnoredName, selectConfigFiles } from './files';
import {
  buildRootTree,
  localCallers,
  missingModules,
  moduleCycles,
  moduleRequirements,
  withRemoteModules,
} from './tree';
import { localCall, RemoteResolver } from './remote';
import { stackModuleBody } from './declarations';
import type { ReadDeclarations } from './declarations';
import type { PackageModule, PackageSummary, RemoteNetwork } from './remote';
import type { ArchiveLimits } from '../model';

export { matchGlob } from './glob';
export { CONSTANT_PROJECTION, LOADER_PROJECTION } from './projection';
export { selectConfigFiles } from './files';
export type { FileSelection } from './files';
export {
  BUILTIN_TERRAFORM_PROVIDER,
  classifyModuleSource,
  defaultRegistryHost,
  impliedProviderSource,
  parseProviderSource,
  resolveLocalTarget,
} from '../addrs';
export type { ProviderSourceResult } from '../addrs';
export { combineConstraints, moduleRequirements } from './tree';
export { classifyModules, kindLabel, SIGNALS, buildContext, subjectOf } from './classification';
export type { KindDecision, Signal, Subject, ClassificationContext, ClassifyInput } from './classification';
export { readRepositorySignals } from './repository';
export type { RepositorySignals, TerragruntUnit, TestRun } from './repository';
export type { ModuleConstraint } from './tree';
export { remoteLabel, withRemoteModules } from './tree';
export {
  isModulesManifest,
  MAX_REMOTE_DEPTH,
  offlineReason,
  parseModuleVersions,
  parseRegistrySource,
  parseRemotePackage,
  RemoteNetwork,
  selectModuleVersion,
} from './remote';
export type { RemoteNetworkOptions, PackageSummary } from './remote';

/** Terraform's override file names (`override.tf`, `*_override.tf`, and the JSON and `.tofu` forms). */
function isOverrideName(name: string): boolean {
  return /(^|_)override\.(tf|tofu)(\.json)?$/.test(name);
}

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
  /** What the repository around the modules says (Terragrunt units, test files, README sources). */
  signals: RepositorySignals;
  /** Files that failed to parse and look like templates (`{% … %}`, `{{ … }}`). */
  templateFiles: ReadonlySet<string>;
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

/** Regular files, and links whose target file the archive reader loaded, grouped by directory:
 * outside tool directories, or (`installed`) only those under `.terraform/modules/`. */
function filesByDirectory(archive: LoadedArchive, installed = false): Map<string, string[]> {
  const dirs = new Map<string, string[]>();
  for (const entry of archive.entries) {
    const isFile = entry.type === 'file' || (entry.type !== 'directory' && archive.files.has(entry.path));
    if (!isFile) continue;
    if (installed ? !INSTALLED_MODULES.test(entry.path) : inToolDirectory(entry.path)) continue;
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
          error: {
            path,
            message: `the file content was not loaded from the ${inputKind(archive)}`,
            line: 1,
            column: 1,
          },
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
  return (
    compareUtf8(a.module, b.module) ||
    compareUtf8(
      a.kind === 'parse-error' ? a.file : a.location.file,
      b.kind === 'parse-error' ? b.file : b.location.file,
    ) ||
    (a.kind === 'parse-error' ? a.line : a.location.line) -
      (b.kind === 'parse-error' ? b.line : b.location.line) ||
    compareUtf8(a.kind, b.kind) ||
    // One call reached through several trees has a notice per call path (`x.vpc`, `vpc`).
    (a.kind === 'module-unresolved' && b.kind === 'module-unresolved'
      ? compareUtf8(a.call, b.call) || compareUtf8(a.source, b.source) || compareUtf8(a.reason, b.reason)
      : 0) ||
    compareUtf8(JSON.stringify(a), JSON.stringify(b))
  );
}

const INSTALLED_MODULES = /(^|\/)\.terraform\/modules\//;
/** The remote module a path under `.terraform/modules/<name>/…` belongs to. */
const INSTALLED_MODULE_NAME = /(?:^|\/)\.terraform\/modules\/([^/]+)/;

/** Local calls into `.terraform/modules/…` from loaded modules, with the remote module each
 * belongs to (for an installed module's own calls: the module it was installed for). */
function installedTargets(
  modules: ReadonlyMap<string, ModuleInfo>,
  copies: ReadonlyMap<string, string>,
): { dir: string; from: string }[] {
  const out: { dir: string; from: string }[] = [];
  for (const m of modules.values()) {
    for (const call of m.moduleCalls) {
      if (call.sourceKind !== 'local' || call.target === null || !INSTALLED_MODULES.test(`${call.target}/`))
        continue;
      const inherited = copies.get(m.path);
      const name = INSTALLED_MODULE_NAME.exec(call.target)?.[1] ?? call.name;
      const remote = m.moduleCalls.find((c) => c.name === name && c.sourceKind !== 'local');
      const from = inherited ?? `"${name}"${remote?.source ? ` (${remote.source})` : ''}`;
      out.push({ dir: call.target, from });
    }
  }
  return out.sort((a, b) => compareUtf8(a.dir, b.dir));
}

/** Why a local call that points at a directory the archive does not hold is an installed copy of
 * a remote module (created by `terraform init` or a vendoring script), or null. */
export function installedCopyReason(source: string, caller: ModuleInfo): string | null {
  const m = INSTALLED_MODULE_NAME.exec(source);
  if (m !== null) {
    const name = m[1] as string;
    const remote = caller.moduleCalls.find((c) => c.name === name && c.sourceKind !== 'local');
    return remote !== undefined
      ? `it is part of the remote module "${name}" (${remote.source ?? 'no source'}) that terraform init installs under .terraform/modules`
      : `it points into .terraform/modules, where terraform init installs remote modules`;
  }
  const path = source.replace(/^\.\//, '');
  if (path.includes('//')) {
    return 'its "//" marks a subdirectory of a package copied in before init (a vendored copy of a remote module)';
  }
  if (/(^|\/)vendor(\/|$)/.test(path)) return 'it points into a vendor directory filled before init';
  return null;
}

/** The engine that runs a tree: the settings (`engine`, then `engines` globs), else its lock file's
 * registry host, else `.tofu` files in the tree, else the archive's engine. */
function treeEngine(
  tree: RootTree,
  modules: ReadonlyMap<string, ModuleInfo>,
  archive: LoadedArchive,
  config: ScanConfig,
  fallback: Engine,
): Engine {
  if (config.engineExplicit === true) return config.engine;
  const glob = Object.keys(config.engines ?? {}).find((g) => matchGlob(g, tree.root));
  if (glob !== undefined) return (config.engines as Record<string, Engine>)[glob] as Engine;
  const lock = modules.get(tree.root)?.lockFile ?? null;
  const text = lock === null ? undefined : archive.files.get(lock)?.toString('utf8');
  if (text !== undefined) {
    if (OPENTOFU_LOCK_ENTRY.test(text)) return 'opentofu';
    if (/^\s*provider\s+"registry\.terraform\.io\//im.test(text)) return 'terraform';
  }
  for (const path of tree.modules) {
    const m = modules.get(path);
    if (m?.files.some((f) => f.endsWith('.tofu') || f.endsWith('.tofu.json'))) return 'opentofu';
  }
  return fallback;
}

/** What the declarations say that the archive contradicts or that could not be read: declared
 * directories without configuration (once per directory), unreadable declaration files, and
 * Terraform Stacks beta files. */
function declarationDiagnostics(
  declarations: ReadDeclarations,
  modules: ReadonlyMap<string, ModuleInfo>,
  entryPaths: ReadonlySet<string>,
): LoadDiagnostic[] {
  const out: LoadDiagnostic[] = [];
  const moduleOf = (file: string): string => dirname(file) || '.';
  let dirs: Set<string> | null = null;
  const exists = (dir: string): boolean => {
    if (dirs === null) {
      dirs = new Set(['.']);
      for (const p of entryPaths)
        for (let d = dirname(p); d !== '' && !dirs.has(d); d = dirname(d)) dirs.add(d);
      for (const p of entryPaths) dirs.add(p);
    }
    return dirs.has(dir);
  };
  const missing = new Map<string, { first: ReadDeclarations['roots'][number]; more: number }>();
  for (const r of declarations.roots) {
    // A Terramate stack's directory exists (its stack block is in it), and a stack may run other
    // commands than terraform, or have its code generated by `terramate generate` before a run.
    if (modules.has(r.dir) || r.tool === 'Terramate') continue;
    const seen = missing.get(r.dir);
    if (seen === undefined) missing.set(r.dir, { first: r, more: 0 });
    else seen.more++;
  }
  for (const [dir, { first, more }] of missing) {
    out.push({
      kind: 'declared-root-missing',
      module: moduleOf(first.location.file),
      tool: first.tool,
      label: first.label,
      dir,
      written: first.written,
      exists: exists(dir),
      uncertain: first.uncertain ?? null,
      glob: false,
      more,
      location: first.location,
    });
  }
  for (const g of declarations.emptyGlobs) {
    out.push({
      kind: 'declared-root-missing',
      module: moduleOf(g.location.file),
      tool: g.tool,
      label: g.label,
      dir: null,
      written: g.written,
      exists: false,
      uncertain: null,
      glob: true,
      more: 0,
      location: g.location,
    });
  }
  for (const p of declarations.problems) {
    out.push({
      kind: 'declaration-invalid',
      module: moduleOf(p.location.file),
      tool: p.tool,
      message: p.message,
      location: p.location,
    });
  }
  const stackDirs = new Map(declarations.stacks.map((s) => [s.dir, s]));
  for (const loc of declarations.legacyStackFiles) {
    const dir = moduleOf(loc.file);
    const stack = stackDirs.get(dir);
    out.push({
      kind: 'stack-legacy-file',
      module: dir,
      components:
        stack === undefined ? [] : [...stack.files.map((f) => f.path), ...stack.errors.map((e) => e.path)],
      location: loc,
    });
  }
  return out;
}

const TEMPLATE_MARKERS = /\{%-?\s|\{\{\s*[\w.]+\s*\}\}/;

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
  // Modules whose required_providers read variables or locals (Terraform 1.17): their variables
  // and locals are read in a second, narrower pass, so other modules never evaluate them.
  const constantResults = new Map<string, ParseResult>();
  const readConstants: ConfigFileReader = (path, content) =>
    parser.extract(path, content, CONSTANT_PROJECTION, { signal: input.signal });
  /** Reads the constants of the modules (assembled already) whose required providers need them. */
  const readConstantsOf = async (
    dirs: Iterable<[string, ReturnType<typeof selectConfigFiles>]>,
  ): Promise<void> => {
    const paths: string[] = [];
    for (const [dir, sel] of dirs) {
      const assembled = assembledByDir.get(dir);
      if (assembled === undefined || !readsConstants(assembled)) continue;
      paths.push(...sel.selected.filter((p) => !constantResults.has(p)));
    }
    for (const [path, r] of await parseAll(paths, archive, readConstants, input.signal))
      constantResults.set(path, r);
  };
  const signals = await readRepositorySignals(archive, parser, input.signal);

  const parsed = new Map<string, ParsedFile>();
  const diagnostics: LoadDiagnostic[] = [];
  const templateFiles = new Set<string>();
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
  const assembledByDir = new Map<string, AssembledModule>();
  const constantsByDir = new Map<string, ConstantScope>();
  const lockOf = (dir: string): string | null => {
    const lockPath = dir === '.' ? LOCK_FILE_NAME : `${dir}/${LOCK_FILE_NAME}`;
    return entryPaths.has(lockPath) ? lockPath : null;
  };
  const moduleFrom = (
    dir: string,
    files: string[],
    ignored: string[],
    assembled: AssembledModule,
    e: Engine,
  ): ModuleInfo => {
    const collected = collectModule(dir, assembled, e, lines, constantsByDir.get(dir));
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
      lockFile: lockOf(dir),
    };
  };
  const srcFile = (path: string, body: ParsedFile['body']): SrcFile => ({ path, body });

  /** Reads a directory's parse results into one module (`assembledByDir`); `finishDir` makes its
   * `ModuleInfo` once the constants it may need are read. */
  const assembleDir = (dir: string, selection: ReturnType<typeof selectConfigFiles>): void => {
    const overrideSet = new Set(selection.overrides);
    const primary: SrcFile[] = [];
    const overrides: SrcFile[] = [];
    for (const path of selection.selected) {
      const result = results.get(path) as ParseResult;
      if (!result.ok) {
        const e = result.error;
        const text = archive.files.get(path)?.toString('utf8') ?? '';
        const template = TEMPLATE_MARKERS.test(text);
        if (template) templateFiles.add(path);
        diagnostics.push({
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
      parsed.set(path, result.file);
      (overrideSet.has(path) ? overrides : primary).push(srcFile(path, result.file.body));
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
    assembledByDir.set(dir, assembled);
  };
  const finishDir = (dir: string, selection: ReturnType<typeof selectConfigFiles>): ModuleInfo => {
    const assembled = assembledByDir.get(dir) as AssembledModule;
    const overrideSet = new Set(selection.overrides);
    const constants = selection.selected.filter((p) => constantResults.get(p)?.ok === true);
    if (constants.length > 0) {
      const files = (paths: string[]): SrcFile[] =>
        paths.map((p) =>
          srcFile(p, (constantResults.get(p) as Extract<ParseResult, { ok: true }>).file.body),
        );
      constantsByDir.set(
        dir,
        assembleConstants(
          files(constants.filter((p) => !overrideSet.has(p))),
          files(constants.filter((p) => overrideSet.has(p))),
        ),
      );
    }
    const m = moduleFrom(dir, selection.selected, selection.ignored, assembled, engine);
    modules.set(dir, m);
    return m;
  };
  const dirs = [...selections].sort(([a], [b]) => compareUtf8(a, b));
  for (const [dir, sel] of dirs) assembleDir(dir, sel);
  await readConstantsOf(dirs);
  for (const [dir, sel] of dirs) finishDir(dir, sel);

  // Terraform Stacks: the component configuration is the Stack's root module (declarations/stacks.ts).
  for (const stack of signals.declarations.stacks) {
    for (const e of stack.errors) {
      diagnostics.push({
        kind: 'parse-error',
        module: stack.dir,
        file: e.path,
        line: e.line,
        column: e.column,
        message: e.message,
      });
    }
    const files = stack.files.map((f) => srcFile(f.path, stackModuleBody(f.body)));
    const { module: assembled, duplicates } = assembleModule(files, []);
    for (const d of duplicates) {
      diagnostics.push({
        kind: 'duplicate-required-providers',
        module: stack.dir,
        location: d.location,
        first: d.first,
      });
    }
    const paths = [...stack.files.map((f) => f.path), ...stack.errors.map((e) => e.path)].sort(compareUtf8);
    const m = moduleFrom(stack.dir, paths, [], assembled, engine);
    m.terraformStack = true;
    modules.set(stack.dir, m);
  }

  // Terragrunt units: the unit's own files and the files its generate blocks write form the root
  // of the configuration; the source module is called from it.
  for (const unit of signals.units) {
    input.signal?.throwIfAborted();
    const own = modules.get(unit.dir);
    const files: SrcFile[] = [];
    for (const path of own?.files ?? []) {
      const f = parsed.get(path);
      if (f !== undefined && !unit.generated.some((g) => basename(path) === g.name))
        files.push(srcFile(path, f.body));
    }
    const virtualFiles = new Map<string, GeneratedFile>();
    for (const g of unit.generated) {
      if (g.from !== null) {
        const f = parsed.get(g.from);
        if (f !== undefined) files.push(srcFile(g.from, f.body));
      } else if (g.inline !== null && (g.name.endsWith('.tf') || g.name.endsWith('.tofu'))) {
        // Parsed under a name no archive file has; every location in it is moved to the
        // `generate` block afterwards (relocateGenerated), so no finding names a missing file.
        const virtual = `${g.location.file}#generate:${g.name}`;
        virtualFiles.set(virtual, g);
        try {
          const r = await parser.extract(virtual, Buffer.from(g.inline, 'utf8'), LOADER_PROJECTION, {
            signal: input.signal,
          });
          if (r.ok) files.push(srcFile(g.location.file, r.file.body));
          else
            diagnostics.push({
              kind: 'terragrunt-unresolved',
              module: unit.dir,
              what: `generate (${g.name})`,
              reasons: [
                g.unknown.length > 0
                  ? `its contents, built from values tfguard could not evaluate (${g.unknown.join('; ')}), do not parse as HCL`
                  : `its contents do not parse: ${r.error.message} (line ${r.error.line} of the generated file)`,
              ],
              location: g.location,
              partial: true,
            });
        } catch (err) {
          if (input.signal?.aborted) throw err;
        }
      }
    }
    for (const u of unit.unresolved) {
      diagnostics.push({ kind: 'terragrunt-unresolved', module: unit.dir, ...u });
    }
    const { module: assembled } = assembleModule(files, []);
    const m = moduleFrom(
      unit.dir,
      [unit.file, ...(own?.files ?? [])],
      own?.ignoredFiles ?? [],
      assembled,
      engine,
    );
    if (unit.target !== unit.dir) {
      m.moduleCalls.push({
        name: 'terragrunt',
        source: unit.source,
        sourceKind: unit.sourceKind,
        version: null,
        providers: {},
        target: unit.target,
        location: unit.location,
      });
    }
    if (m.backend === null && unit.backend !== null) {
      m.backend = { kind: 'backend', type: unit.backend.type, location: unit.backend.location };
    }
    m.terragrunt = { file: unit.file, source: unit.source, generated: unit.generated.map((g) => g.name) };
    relocateGenerated(m, virtualFiles);
    modules.set(unit.dir, m);
    const source = unit.target === null ? undefined : modules.get(unit.target);
    if (source !== undefined && source !== m) {
      const names = new Set(source.generatedDeclarations ?? []);
      for (const p of m.providers) if (p.declared !== null) names.add(p.name);
      source.generatedDeclarations = [...names].sort(compareUtf8);
      // Terragrunt writes the generated files into the source module's directory: a
      // required_providers block there and one in the source module is one module with two, which
      // Terraform refuses ("Duplicate required providers configuration"; checked with terraform
      // 1.11 in test/modules/terragrunt-oracle.test.ts). Override files merge instead.
      const generatedBlock = m.requiredProvidersBlocks.find((loc) =>
        unit.generated.some((g) => (g.from ?? g.location.file) === loc.file && !isOverrideName(g.name)),
      );
      const first = source.requiredProvidersBlocks[0];
      if (generatedBlock !== undefined && first !== undefined) {
        diagnostics.push({
          kind: 'duplicate-required-providers',
          module: unit.dir,
          location: generatedBlock,
          first,
        });
      }
    }
  }

  // Installed copies of remote modules that the archive carries (`.terraform/modules/…`, uploaded
  // after `terraform init`): read them, and the local calls they make, as Terraform would.
  const installedDirs = filesByDirectory(archive, true);
  const installedCopies = new Map<string, string>();
  for (let pending = installedTargets(modules, installedCopies); pending.length > 0;) {
    const batch = pending.filter((t) => installedDirs.has(t.dir) && !modules.has(t.dir));
    const wanted = new Map(
      batch.map((t) => [t.dir, selectConfigFiles(installedDirs.get(t.dir) as string[], engine)]),
    );
    const more = await parseAll(
      [...wanted.values()].flatMap((sel) => sel.selected),
      archive,
      read,
      input.signal,
    );
    for (const [path, result] of more) results.set(path, result);
    const loading = batch.filter((t) => (wanted.get(t.dir)?.selected.length ?? 0) > 0);
    for (const t of loading) assembleDir(t.dir, wanted.get(t.dir) as ReturnType<typeof selectConfigFiles>);
    await readConstantsOf(wanted);
    for (const t of loading) {
      finishDir(t.dir, wanted.get(t.dir) as ReturnType<typeof selectConfigFiles>);
      installedCopies.set(t.dir, t.from);
    }
    pending = installedTargets(modules, installedCopies).filter((t) => !modules.has(t.dir));
    if (batch.length === 0) break;
  }

  diagnostics.push(...stackNotices(signals, inputKind(archive)));

  const callers = localCallers(modules);
  const decisions = classifyModules({
    modules,
    callers,
    signals,
    config,
    templateFiles,
    input: inputKind(archive),
  });
  for (const m of modules.values()) {
    const from = installedCopies.get(m.path);
    const d: KindDecision =
      from === undefined
        ? (decisions.get(m.path) as KindDecision)
        : { kind: 'shared', reason: `installed copy of the remote module ${from}`, evidence: 'strong' };
    m.kind = d.kind;
    m.kindReason = d.reason;
    m.kindEvidence = d.evidence;
    if (d.signal !== undefined) m.kindSignal = d.signal;
    if (from !== undefined) m.installedCopy = from;
  }

  // A module that only Terragrunt units run is those roots' configuration (docs/classification.md,
  // "Terragrunt"); one that a `module` block calls is shared, whoever else runs it.
  const unitDirs = new Set(signals.units.map((u) => u.dir));
  for (const [target, list] of callers) {
    const m = modules.get(target);
    if (m === undefined || m.kindSignal !== 'terragrunt-source') continue;
    const byUnits = list.filter((c) => unitDirs.has(c.caller) && c.call === 'terragrunt');
    const byModules = list.filter((c) => !byUnits.includes(c) && modules.get(c.caller)?.kind !== 'fragment');
    if (byUnits.length > 0 && byModules.length === 0)
      m.unitSourceOf = [...new Set(byUnits.map((c) => c.caller))].sort(compareUtf8);
  }

  // Local calls into installed copies of remote modules are not missing modules of the archive.
  const installed = new Map<ModuleCall, string>();
  for (const m of modules.values()) {
    for (const call of m.moduleCalls) {
      if (call.sourceKind !== 'local' || call.target === null || modules.has(call.target)) continue;
      const reason = call.source === null ? null : installedCopyReason(call.source, m);
      if (reason !== null) installed.set(call, reason);
    }
  }

  const entryPoints = [...modules.values()]
    .filter(
      (m) =>
        m.kind === 'root' ||
        ((m.kind === 'example' || m.kind === 'test') && (callers.get(m.path) ?? []).length === 0),
    )
    .map((m) => m.path);
  // `terraform init` installs the modules of run blocks in test files and locks their providers.
  const testHelpers = new Map<string, string[]>();
  for (const r of signals.testRuns) {
    if (!modules.has(r.target) || r.target === r.module) continue;
    const list = testHelpers.get(r.module) ?? [];
    if (!list.includes(r.target)) list.push(r.target);
    testHelpers.set(r.module, list);
  }
  const unitSources = new Map<string, string>();
  for (const u of signals.units)
    if (u.target !== null && u.target !== u.dir) unitSources.set(u.dir, u.target);
  const build = (path: string, e: Engine): RootTree => {
    const kind = (modules.get(path) as ModuleInfo).kind;
    const unitSource = unitSources.get(path);
    return buildRootTree(path, modules, e, {
      kind: kind === 'example' || kind === 'test' ? kind : 'root',
      installed,
      testHelpers: testHelpers.get(path) ?? [],
      ...(unitSource === undefined ? {} : { unitSource }),
    });
  };
  let roots = entryPoints.map((r) => build(r, engine));
  // Each tree runs under its own engine; modules read under another engine's defaults are read
  // again (implied provider sources carry the engine's registry host).
  const moduleEngine = new Map<string, Engine>();
  let changed = false;
  roots = roots.map((t) => {
    const e = treeEngine(t, modules, archive, config, engine);
    if (e === engine) return { ...t, engine: e };
    for (const path of t.modules) {
      if (moduleEngine.has(path)) continue;
      moduleEngine.set(path, e);
      const m = modules.get(path) as ModuleInfo;
      const assembled = assembledByDir.get(path);
      if (assembled === undefined || m.terragrunt !== undefined) continue;
      const again = collectModule(path, assembled, e, lines, constantsByDir.get(path));
      m.providers = again.providers;
      m.providerUses = again.providerUses;
      m.providerConfigs = again.providerConfigs;
      changed = true;
    }
    return { ...t, engine: e };
  });
  if (changed) roots = roots.map((t) => ({ ...build(t.root, t.engine), engine: t.engine }));

  for (const [call, reason] of installed) {
    const caller = [...modules.values()].find((m) => m.moduleCalls.includes(call)) as ModuleInfo;
    diagnostics.push({
      kind: 'module-unresolved',
      module: caller.path,
      call: call.name,
      source: call.source ?? '',
      reason,
      location: call.location,
    });
  }
  diagnostics.push(...declarationDiagnostics(signals.declarations, modules, entryPaths));
  diagnostics.push(
    ...missingModules(modules, installed),
    ...moduleCycles(
      modules,
      roots.map((r) => r.root),
    ),
  );
  diagnostics.sort(compareDiagnostics);

  return { modules: [...modules.values()], roots, diagnostics, engine, parsed, signals, templateFiles };
}
export type * from './types';
export { MODULE_KINDS, REMOTE_ORIGINS } from './types';

/** What remote resolution needs besides the loaded modules. */
export interface ResolveRemoteModulesInput {
  archive: LoadedArchive;
  config: ScanConfig;
  parser: HclParser;
  readConfigFile?: ConfigFileReader;
  signal?: AbortSignal | undefined;
  /** Null: only installed copies the archive carries (`.terraform/modules`), no network. */
  network: RemoteNetwork | null;
  /** Why network resolution is off, for the notices (default: how to turn it on in the CLI). */
  offlineReason?: string;
  /** Archive limits for downloaded packages (the scan's). */
  limits?: Partial<ArchiveLimits>;
}

function packageConfig(config: ScanConfig, engine: Engine): ScanConfig {
  return {
    ...config,
    engine,
    engineExplicit: true,
    roots: [],
    shared: [],
    examples: [],
    tests: [],
    fragments: [],
    engines: {},
    configFiles: [],
  };
}

/** Every module of a package (a download, or the installed modules of a root), as resolution
 * needs it: requirements as `terraform providers` lists them, calls, parse errors. */
export async function summarizePackage(
  pkg: LoadedArchive,
  engine: Engine,
  input: Pick<ResolveRemoteModulesInput, 'config' | 'parser' | 'readConfigFile' | 'signal'>,
): Promise<PackageSummary> {
  const loaded = await loadModules({
    archive: pkg,
    config: packageConfig(input.config, engine),
    parser: input.parser,
    ...(input.readConfigFile !== undefined ? { readConfigFile: input.readConfigFile } : {}),
    signal: input.signal,
  });
  const errors = new Map<string, string[]>();
  for (const d of loaded.diagnostics) {
    if (d.kind !== 'parse-error') continue;
    const list = errors.get(d.module) ?? [];
    list.push(`${d.file}:${d.line}: ${d.message}`);
    errors.set(d.module, list);
  }
  const summary: PackageSummary = {};
  for (const m of loaded.modules) {
    const req = moduleRequirements(m, engine);
    const providers: PackageModule['providers'] = req.sources.map((source) => ({
      source,
      constraints: [
        ...new Set(
          req.constraints
            .filter((c) => c.source === source && c.constraints.trim() !== '')
            .map((c) => c.constraints),
        ),
      ],
    }));
    const calls = m.moduleCalls
      .filter((c) => c.source !== null && c.source !== '')
      .map((c) => localCall(m.path, c.name, c.source as string, c.version));
    summary[m.path] = { providers, calls, ...(errors.has(m.path) ? { errors: errors.get(m.path) } : {}) };
  }
  return summary;
}

/**
 * A remote module's key as seen from the archive call that leads to it: the call's own name, then
 * the names inside remote packages (`this`, `eks.kms`), the same whichever root and call path reach
 * that call (Terraform's full key, `iam_roles.this`, differs from one root to the next).
 */
function keyFromCallSite(r: RemoteModule, byKey: ReadonlyMap<string, RemoteModule>): string {
  let top = r;
  for (let up = r.parent; up !== null;) {
    const parent = byKey.get(up);
    if (parent === undefined) break;
    top = parent;
    up = parent.parent;
  }
  return top.name + r.key.slice(top.key.length);
}

/**
 * Resolves the remote modules of every tree (src/modules/remote): installed copies the archive
 * carries first, then, with `network`, the registries and allowed hosts. Each tree gets its remote
 * modules and their requirements; each module that stays unresolved gets one `module-unresolved`
 * diagnostic. Trees without remote calls are returned as they are.
 */
export async function resolveRemoteModules(
  loaded: LoadedModules,
  input: ResolveRemoteModulesInput,
): Promise<LoadedModules> {
  const byPath = new Map(loaded.modules.map((m) => [m.path, m]));
  const resolver = new RemoteResolver({
    archive: input.archive,
    modules: byPath,
    loadPackage: (pkg, engine) => summarizePackage(pkg, engine, input),
    network: input.network,
    ...(input.offlineReason !== undefined ? { offlineReason: input.offlineReason } : {}),
    ...(input.limits !== undefined ? { limits: input.limits } : {}),
  });
  const roots: RootTree[] = [];
  const added: LoadDiagnostic[] = [];
  // One notice per call site (file and line) and unresolved module, however many call paths reach
  // it: a shared module that 40 roots call under 40 names has one call site, and one notice.
  const seen = new Set<string>();
  for (const tree of loaded.roots) {
    input.signal?.throwIfAborted();
    if (!tree.remoteCalls.some((c) => c.installed !== true && c.source !== null)) {
      roots.push(tree);
      continue;
    }
    const remote = await resolver.resolveTree(tree);
    input.signal?.throwIfAborted();
    roots.push(withRemoteModules(tree, remote));
    const byKey = new Map(remote.map((r) => [r.key, r]));
    for (const r of remote) {
      if (r.origin !== null) continue;
      const call = keyFromCallSite(r, byKey);
      const id = `${r.location.file}:${r.location.line}\0${call}\0${r.source}\0${r.version ?? ''}`;
      if (seen.has(id)) continue;
      seen.add(id);
      added.push({
        kind: 'module-unresolved',
        module: r.module,
        call,
        source: r.source,
        reason: r.unresolved ?? 'it was not resolved',
        location: r.location,
        remote: { key: call, version: r.version },
      });
    }
  }
  // The loader's diagnostics are sorted already: merge the new ones in.
  added.sort(compareDiagnostics);
  const diagnostics: LoadDiagnostic[] = [];
  let i = 0;
  for (const d of loaded.diagnostics) {
    while (i < added.length && compareDiagnostics(added[i] as LoadDiagnostic, d) < 0)
      diagnostics.push(added[i++] as LoadDiagnostic);
    diagnostics.push(d);
  }
  while (i < added.length) diagnostics.push(added[i++] as LoadDiagnostic);
  return { ...loaded, roots, diagnostics };
}
