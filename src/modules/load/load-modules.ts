/**
 * Module loading, as Terraform / OpenTofu do it, as a list of named phases: which files form each
 * module, parsing, the repository's signals, modules from directories (override merging, provider
 * requirements declared and implied, module calls), Terraform Stacks, Terragrunt units, installed
 * copies of remote modules, kinds (root, shared …), one tree per root with its combined provider
 * constraints, and the diagnostics. `loadModules` runs them in order; each phase is a function that
 * takes what it needs and returns what it made (the shared `LoadState` holds the modules so far).
 */
import type { LoadedArchive } from '../../archive';
import { compareUtf8, inputKind } from '../../archive';
import type { HclParser, ParsedFile } from '../../hcl';
import type { Engine, ScanConfig } from '../../model';
import { classifyModules } from '../classification';
import type { KindDecision } from '../classification';
import { collectModule } from '../collect';
import { stackModuleBody } from '../declarations';
import { selectConfigFiles } from '../files';
import type { FileSelection } from '../files';
import { readRepositorySignals } from '../repository';
import type { RepositorySignals } from '../repository';
import { notCheckedDiagnostics } from '../not-checked';
import { stackNotices } from '../terragrunt/notices';
import { buildRootTree, localCallers, missingModules, moduleCycles } from '../tree';
import type { LoadDiagnostic, ModuleCall, ModuleInfo, RootTree } from '../types';
import { compareDiagnostics, declarationDiagnostics } from './diagnostics';
import { detectEngine, treeEngine } from './engine';
import { installedCopyReason, installedTargets } from './installed';
import { filesByDirectory } from './read';
import type { ConfigFileReader } from './read';
import { LoadState } from './state';
import type { LoadMemo } from './memo';
import { addTerragruntUnits } from './terragrunt';

export interface LoadModulesInput {
  archive: LoadedArchive;
  config: ScanConfig;
  parser: Pick<HclParser, 'extract' | 'parse'>;
  /** How configuration files are read; default `parser.extract(path, content, LOADER_PROJECTION)`.
   * The scan layer wraps this with its content-addressed cache. */
  readConfigFile?: ConfigFileReader;
  /** Stops loading when aborted: checked before each file; the reason (or what a reader threw
   * once it fired) is thrown instead of becoming a parse-error diagnostic. */
  signal?: AbortSignal | undefined;
  /** What an earlier load of this archive with other bytes in some files made that this one may
   * take over (memo.ts: `tfguard fix` between its passes). */
  memo?: LoadMemo | undefined;
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

export async function loadModules(input: LoadModulesInput): Promise<LoadedModules> {
  const state = new LoadState(input, detectEngine(input.archive, input.config));
  const selections =
    input.memo === undefined
      ? selectFiles(input.archive, state.engine)
      : input.memo.selections(input.archive, state.engine, () => selectFiles(input.archive, state.engine));
  await state.parse([...selections.values()].flatMap((s) => s.selected));
  const readSignals = (): Promise<RepositorySignals> =>
    readRepositorySignals(input.archive, input.parser, input.signal, state.engine, state.results);
  const signals =
    input.memo === undefined
      ? await readSignals()
      : await input.memo.repositorySignals(input.archive, state.engine, state.results, readSignals);
  await state.addDirectories(selections);
  addStacks(state, signals);
  await addTerragruntUnits(state, signals);
  const installedCopies = await addInstalledCopies(state);
  state.diagnostics.push(...stackNotices(signals, inputKind(input.archive)));
  const callers = decideKinds(state, signals, installedCopies);
  markUnitSources(state, signals, callers);
  const installed = installedCalls(state.modules);
  const roots = buildTrees(state, signals, callers, installed);
  const diagnostics = [...state.diagnostics, ...finalDiagnostics(state, signals, roots, installed)].sort(
    compareDiagnostics,
  );
  // The archive is OpenTofu's when every tree it deploys is (e.g. all sources name
  // registry.opentofu.org): its report and rules then speak of OpenTofu.
  const overall: Engine =
    input.config.engineExplicit !== true && roots.length > 0 && roots.every((r) => r.engine === 'opentofu')
      ? 'opentofu'
      : state.engine;
  return {
    modules: [...state.modules.values()],
    roots,
    diagnostics,
    engine: overall,
    parsed: state.parsed,
    signals,
    templateFiles: state.templateFiles,
  };
}

/** Phase 1: which files of each directory form its module, under the archive's engine. */
export function selectFiles(archive: LoadedArchive, engine: Engine): Map<string, FileSelection> {
  const selections = new Map<string, FileSelection>();
  for (const [dir, files] of filesByDirectory(archive)) {
    const selection = selectConfigFiles(files, engine);
    if (selection.selected.length > 0) selections.set(dir, selection);
  }
  return selections;
}

/** Terraform Stacks: the component configuration is the Stack's root module (declarations/stacks.ts). */
export function addStacks(state: LoadState, signals: RepositorySignals): ModuleInfo[] {
  const out: ModuleInfo[] = [];
  for (const stack of signals.declarations.stacks) {
    for (const e of stack.errors) {
      state.diagnostics.push({
        kind: 'parse-error',
        module: stack.dir,
        file: e.path,
        line: e.line,
        column: e.column,
        message: e.message,
      });
    }
    const files = stack.files.map((f) => ({ path: f.path, body: stackModuleBody(f.body) }));
    const assembled = state.assembled(stack.dir, files, [], false);
    const paths = [...stack.files.map((f) => f.path), ...stack.errors.map((e) => e.path)].sort(compareUtf8);
    const m = state.moduleFrom(stack.dir, paths, [], assembled, state.engine);
    m.terraformStack = true;
    state.modules.set(stack.dir, m);
    out.push(m);
  }
  return out;
}

/**
 * Installed copies of remote modules that the archive carries (`.terraform/modules/…`, uploaded
 * after `terraform init`): read them, and the local calls they make, as Terraform would. Returns
 * each copy's directory with the remote module it is a copy of.
 */
export async function addInstalledCopies(state: LoadState): Promise<Map<string, string>> {
  const { modules } = state;
  const installedDirs = filesByDirectory(state.archive, true);
  const copies = new Map<string, string>();
  for (let pending = installedTargets(modules, copies); pending.length > 0;) {
    const batch = pending.filter((t) => installedDirs.has(t.dir) && !modules.has(t.dir));
    const wanted = new Map(
      batch.map((t) => [t.dir, selectConfigFiles(installedDirs.get(t.dir) as string[], state.engine)]),
    );
    await state.parse([...wanted.values()].flatMap((sel) => sel.selected));
    const loading = batch.filter((t) => (wanted.get(t.dir)?.selected.length ?? 0) > 0);
    for (const t of loading) state.assembleDir(t.dir, wanted.get(t.dir) as FileSelection);
    await state.readConstantsOf(wanted);
    for (const t of loading) {
      state.finishDir(t.dir, wanted.get(t.dir) as FileSelection);
      copies.set(t.dir, t.from);
    }
    pending = installedTargets(modules, copies).filter((t) => !modules.has(t.dir));
    if (batch.length === 0) break;
  }
  return copies;
}

/** Every module's kind (docs/classification.md); installed copies are shared. Returns the local
 * callers of each module, which the later phases read. */
export function decideKinds(
  state: LoadState,
  signals: RepositorySignals,
  installedCopies: ReadonlyMap<string, string>,
): ReturnType<typeof localCallers> {
  const { modules } = state;
  const callers = localCallers(modules);
  const decisions = classifyModules({
    modules,
    callers,
    signals,
    config: state.config,
    templateFiles: state.templateFiles,
    input: inputKind(state.archive),
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
  return callers;
}

/** A module that only Terragrunt units run is those roots' configuration (docs/classification.md,
 * "Terragrunt"); one that a `module` block calls is shared, whoever else runs it. */
export function markUnitSources(
  state: LoadState,
  signals: RepositorySignals,
  callers: ReturnType<typeof localCallers>,
): void {
  const { modules } = state;
  const unitDirs = new Set(signals.units.map((u) => u.dir));
  for (const [target, list] of callers) {
    const m = modules.get(target);
    if (m === undefined || m.kindSignal !== 'terragrunt-source') continue;
    const byUnits = list.filter((c) => unitDirs.has(c.caller) && c.call === 'terragrunt');
    const byModules = list.filter((c) => !byUnits.includes(c) && modules.get(c.caller)?.kind !== 'fragment');
    if (byUnits.length > 0 && byModules.length === 0)
      m.unitSourceOf = [...new Set(byUnits.map((c) => c.caller))].sort(compareUtf8);
  }
}

/** Local calls into installed copies of remote modules the archive does not hold: not missing
 * modules of the archive. The reason each is one. */
export function installedCalls(modules: ReadonlyMap<string, ModuleInfo>): Map<ModuleCall, string> {
  const installed = new Map<ModuleCall, string>();
  for (const m of modules.values()) {
    for (const call of m.moduleCalls) {
      if (call.sourceKind !== 'local' || call.target === null || modules.has(call.target)) continue;
      const reason = call.source === null ? null : installedCopyReason(call.source, m);
      if (reason !== null) installed.set(call, reason);
    }
  }
  return installed;
}

/**
 * One tree per root (and per example or test nothing calls), each under its own engine: modules
 * read under another engine's defaults are read again (implied provider sources carry the
 * engine's registry host).
 */
export function buildTrees(
  state: LoadState,
  signals: RepositorySignals,
  callers: ReturnType<typeof localCallers>,
  installed: ReadonlyMap<ModuleCall, string>,
): RootTree[] {
  const { modules, engine } = state;
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
  const declaredEngines = new Map<string, Engine>();
  for (const r of signals.declarations.roots) {
    if (r.engine !== undefined && !declaredEngines.has(r.dir)) declaredEngines.set(r.dir, r.engine);
  }
  const moduleEngine = new Map<string, Engine>();
  let changed = false;
  roots = roots.map((t) => {
    const e = treeEngine(t, declaredEngines, modules, state.archive, state.config, engine);
    if (e === engine) return { ...t, engine: e };
    for (const path of t.modules) {
      if (moduleEngine.has(path)) continue;
      moduleEngine.set(path, e);
      // Its calls change in place below: a later load reads the module afresh.
      state.memo?.forget(path);
      const m = modules.get(path) as ModuleInfo;
      const assembled = state.assembledByDir.get(path);
      if (assembled === undefined || m.terragrunt !== undefined) continue;
      const again = collectModule(path, assembled, e, state.lines, state.constantsByDir.get(path));
      m.providers = again.providers;
      m.providerUses = again.providerUses;
      m.providerConfigs = again.providerConfigs;
      m.requiredVersions = again.requiredVersions;
      // A `source` / `version` expression is evaluated by the engine's rules (Terraform: const
      // variables; OpenTofu: any variable but `const = false`). The call objects stay the same
      // (other maps refer to them).
      again.moduleCalls.forEach((c, i) => {
        const old = m.moduleCalls[i];
        if (old !== undefined && (c.sourceExpression !== undefined || c.versionExpression !== undefined))
          Object.assign(old, c);
      });
      changed = true;
    }
    return { ...t, engine: e };
  });
  if (changed) roots = roots.map((t) => ({ ...build(t.root, t.engine), engine: t.engine }));
  return roots;
}

/** The diagnostics of the whole configuration: calls into installed copies, what declarations say
 * that the archive contradicts, missing modules and cycles. */
export function finalDiagnostics(
  state: LoadState,
  signals: RepositorySignals,
  roots: readonly RootTree[],
  installed: ReadonlyMap<ModuleCall, string>,
): LoadDiagnostic[] {
  const { modules } = state;
  const out: LoadDiagnostic[] = [];
  for (const [call, reason] of installed) {
    const caller = [...modules.values()].find((m) => m.moduleCalls.includes(call)) as ModuleInfo;
    out.push({
      kind: 'module-unresolved',
      module: caller.path,
      call: call.name,
      source: call.source ?? '',
      reason,
      location: call.location,
    });
  }
  out.push(...declarationDiagnostics(signals.declarations, modules, state.entryPaths));
  out.push(...notCheckedDiagnostics(modules, signals));
  out.push(
    ...missingModules(modules, installed),
    ...moduleCycles(
      modules,
      roots.map((r) => r.root),
    ),
  );
  return out;
}
