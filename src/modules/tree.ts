/**
 * The module call graph: module kinds (root or shared), one `RootTree` per root with its combined
 * provider constraints, and the `module-missing` / `module-cycle` diagnostics.
 */
import { normalizeConstraints, validateConstraints } from '../constraints';
import type {
  ConstraintContribution,
  LoadDiagnostic,
  ModuleCall,
  ModuleInfo,
  RemoteModule,
  RootProvider,
  RootTree,
} from './types';
import type { Engine, SourceLocation } from '../model';
import { compareUtf8 } from '../archive';
import { impliedProviderSource, isBuiltinProviderSource } from '../addrs';
import type { CallerRef } from './classification';

/** The module a local call points to, if the archive has it. */
function localTarget(call: ModuleCall, modules: ReadonlyMap<string, ModuleInfo>): string | null {
  if (call.sourceKind !== 'local' || call.target === null) return null;
  return modules.has(call.target) ? call.target : null;
}

/** One provider constraint a module states: a `required_providers` version or a `provider` block's
 * deprecated `version` (Terraform ANDs both into the requirements). */
export interface ModuleConstraint {
  source: string;
  constraints: string;
  location: SourceLocation | null;
}

/**
 * The providers one module requires (every source, constrained or not) and the constraints it
 * states for them, as Terraform's `terraform providers` lists them for that module. The built-in
 * `terraform.io/builtin/terraform` provider is left out: it is never installed nor locked.
 */
export function moduleRequirements(
  m: Pick<ModuleInfo, 'providers' | 'providerConfigs'>,
  engine: Engine,
): { sources: string[]; constraints: ModuleConstraint[]; unknown: string[] } {
  const sources = new Set<string>();
  const constraints: ModuleConstraint[] = [];
  /** Sources whose constraint reads a value tfguard could not evaluate (Terraform 1.17). */
  const unknown: string[] = [];
  for (const p of m.providers) {
    if (isBuiltinProviderSource(p.source)) continue;
    // A source tfguard could not evaluate: which provider this is is unknown, so nothing is claimed.
    if (p.sourceExpression?.status === 'unknown') continue;
    sources.add(p.source);
    if (p.constraints !== null) {
      constraints.push({ source: p.source, constraints: p.constraints, location: p.constraintLocation });
    } else if (p.versionExpression?.status === 'unknown') {
      unknown.push(p.source);
    }
  }
  for (const c of m.providerConfigs) {
    const declared = m.providers.find((p) => p.name === c.name);
    if (declared?.sourceExpression?.status === 'unknown') continue;
    const source = declared?.source ?? impliedProviderSource(c.name, engine);
    if (isBuiltinProviderSource(source)) continue;
    sources.add(source);
    if (c.version !== undefined) {
      constraints.push({ source, constraints: c.version.value, location: c.version.location });
    }
  }
  return { sources: [...sources].sort(compareUtf8), constraints, unknown };
}

/** The AND of constraint strings in Terraform's normalized form; null if any is invalid. */
export function combineConstraints(list: string[]): string | null {
  if (list.length === 0) return '';
  // Every root's tree asks for the same few lists (a monorepo's roots share their modules): each
  // list is combined once (a string or null, nothing a caller could change).
  // The count first: two lists with the same key then differ only where both hold a NUL, which
  // no valid constraint does, so both combine to null.
  const key = `${list.length}\u0000${list.join('\u0000')}`;
  const known = combined.get(key);
  if (known !== undefined) return known;
  const result = list.some((c) => validateConstraints(c) !== null) ? null : normalizeConstraints(list);
  if (combined.size >= MAX_COMBINED) combined.clear();
  combined.set(key, result);
  return result;
}

const MAX_COMBINED = 10_000;
const combined = new Map<string, string | null>();

/** Who calls each module through a local source (self-calls excluded), callers sorted. */
export function localCallers(modules: ReadonlyMap<string, ModuleInfo>): Map<string, CallerRef[]> {
  const out = new Map<string, CallerRef[]>();
  for (const m of modules.values()) {
    for (const call of m.moduleCalls) {
      const target = localTarget(call, modules);
      if (target === null || target === m.path) continue;
      const list = out.get(target) ?? [];
      list.push({ caller: m.path, call: call.name });
      out.set(target, list);
    }
  }
  for (const list of out.values())
    list.sort((a, b) => compareUtf8(a.caller, b.caller) || compareUtf8(a.call, b.call));
  return out;
}

/** `module-missing` for every local call whose directory holds no module of the archive. */
export function missingModules(
  modules: ReadonlyMap<string, ModuleInfo>,
  installed: ReadonlyMap<ModuleCall, string> = new Map(),
): LoadDiagnostic[] {
  const out: LoadDiagnostic[] = [];
  for (const m of modules.values()) {
    for (const call of m.moduleCalls) {
      if (call.sourceKind !== 'local' || call.target === null || modules.has(call.target)) continue;
      if (installed.has(call)) continue;
      out.push({
        kind: 'module-missing',
        module: m.path,
        call: call.name,
        target: call.target,
        location: call.location,
      });
    }
  }
  return out;
}

/**
 * `module-cycle` for every call that closes a loop of local calls, found by one depth-first walk
 * that starts at the roots (sorted) and then at every module not reached yet (sorted). `cycle`
 * lists the modules from the called one back to it: `[a, b, a]`.
 */
export function moduleCycles(
  modules: ReadonlyMap<string, ModuleInfo>,
  roots: readonly string[],
): LoadDiagnostic[] {
  const out: LoadDiagnostic[] = [];
  const state = new Map<string, 'active' | 'done'>();
  const all = [...modules.keys()].sort(compareUtf8);
  for (const start of [...roots, ...all]) {
    if (state.has(start)) continue;
    // Iterative walk: a chain of thousands of modules must not exhaust the call stack.
    const stack: { path: string; calls: ModuleCall[]; next: number }[] = [];
    const enter = (path: string): void => {
      state.set(path, 'active');
      stack.push({ path, calls: (modules.get(path) as ModuleInfo).moduleCalls, next: 0 });
    };
    enter(start);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as (typeof stack)[number];
      const call = frame.calls[frame.next++];
      if (call === undefined) {
        state.set(frame.path, 'done');
        stack.pop();
        continue;
      }
      const target = localTarget(call, modules);
      if (target === null) continue;
      const s = state.get(target);
      if (s === 'active') {
        const from = stack.findIndex((f) => f.path === target);
        const cycle = [...stack.slice(from).map((f) => f.path), target];
        out.push({ kind: 'module-cycle', module: frame.path, cycle, location: call.location });
      } else if (s === undefined) {
        enter(target);
      }
    }
  }
  return out;
}

/**
 * The tree of one root: the modules it reaches through local calls (root first, then depth-first in
 * call order, each once), its local and remote calls, and per provider source the constraints of
 * every module of the tree (a module reached twice contributes once).
 */
export interface TreeOptions {
  kind?: RootTree['kind'];
  /** Local calls into installed copies of remote modules (recorded like remote calls). */
  installed?: ReadonlyMap<ModuleCall, string>;
  /** Modules that `terraform test` run blocks of the root use: `init` installs them and locks their
   * providers with the root's, so they join the tree. */
  testHelpers?: readonly string[];
  /** For a Terragrunt unit: the module its `terraform { source }` runs. Terragrunt writes the
   * unit's generated files into that module's working copy, so the providers the module only
   * implies (`resource "widget_thing"`) resolve against the `required_providers` the unit declares,
   * as within one Terraform module. */
  unitSource?: string;
}

/** The requirements of a unit's source module as Terraform reads them in the unit's working copy:
 * an implied provider whose local name the unit's generated files declare takes that source. */
function asRunByUnit(m: ModuleInfo, unit: ModuleInfo): Pick<ModuleInfo, 'providers' | 'providerConfigs'> {
  const declared = new Map(unit.providers.filter((p) => p.declared !== null).map((p) => [p.name, p.source]));
  return {
    providers: m.providers.map((p) => {
      const source = p.declared === null ? declared.get(p.name) : undefined;
      return source === undefined ? p : { ...p, source };
    }),
    providerConfigs: m.providerConfigs,
  };
}

export function buildRootTree(
  root: string,
  modules: ReadonlyMap<string, ModuleInfo>,
  engine: Engine,
  options: TreeOptions = {},
): RootTree {
  const order: string[] = [];
  const seen = new Set<string>();
  const calls: RootTree['calls'] = [];
  const remoteCalls: RootTree['remoteCalls'] = [];
  const stack: { path: string; calls: ModuleCall[]; next: number }[] = [];
  const enter = (path: string): void => {
    seen.add(path);
    order.push(path);
    stack.push({ path, calls: (modules.get(path) as ModuleInfo).moduleCalls, next: 0 });
  };
  const starts = [root, ...(options.testHelpers ?? []).filter((h) => modules.has(h))];
  for (const start of starts) {
    if (seen.has(start)) continue;
    enter(start);
    walk();
  }
  function walk(): void {
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as (typeof stack)[number];
      const call = frame.calls[frame.next++];
      if (call === undefined) {
        stack.pop();
        continue;
      }
      if (call.sourceKind === 'registry' || call.sourceKind === 'remote') {
        remoteCalls.push({ module: frame.path, name: call.name, source: call.source, version: call.version });
        continue;
      }
      if (options.installed?.has(call) === true) {
        remoteCalls.push({
          module: frame.path,
          name: call.name,
          source: call.source,
          version: call.version,
          installed: true,
        });
        continue;
      }
      const target = localTarget(call, modules);
      if (target === null) continue;
      calls.push({ from: frame.path, to: target, name: call.name });
      if (!seen.has(target)) enter(target);
    }
  }

  const bySource = new Map<string, ConstraintContribution[]>();
  const unknownBySource = new Map<string, string[]>();
  const rootModule = modules.get(root) as ModuleInfo;
  for (const path of order) {
    const m = modules.get(path) as ModuleInfo;
    const req = moduleRequirements(
      path === options.unitSource && path !== root ? asRunByUnit(m, rootModule) : m,
      engine,
    );
    for (const source of req.sources) if (!bySource.has(source)) bySource.set(source, []);
    for (const source of req.unknown)
      unknownBySource.set(source, [...(unknownBySource.get(source) ?? []), path]);
    for (const c of req.constraints) {
      (bySource.get(c.source) as ConstraintContribution[]).push({
        module: path,
        constraints: c.constraints,
        location: c.location,
      });
    }
  }
  const providers: RootProvider[] = [...bySource.keys()].sort(compareUtf8).map((source) => {
    const contributions = bySource.get(source) as ConstraintContribution[];
    const unknownContributions = unknownBySource.get(source);
    return {
      source,
      constraints: combineConstraints(contributions.map((c) => c.constraints)),
      contributions,
      ...(unknownContributions === undefined ? {} : { unknownContributions }),
    };
  });
  return { root, kind: options.kind ?? 'root', engine, modules: order, calls, remoteCalls, providers };
}

/** The display of a remote module in contributions and messages: its address and version. */
export function remoteLabel(r: Pick<RemoteModule, 'address' | 'resolvedVersion'>): string {
  return r.resolvedVersion === null ? r.address : `${r.address} ${r.resolvedVersion}`;
}

/**
 * A tree with its remote modules (src/modules/remote): the providers every resolved one requires
 * join the tree's providers, the constraints it states join their contributions (named by address
 * and version, located at the archive's call that leads to it), and each remote call says what it
 * resolved to.
 */
export function withRemoteModules(tree: RootTree, remote: RemoteModule[]): RootTree {
  const resolved = remote.filter((r) => r.origin !== null);
  const bySource = new Map<string, ConstraintContribution[]>(
    resolved.length === 0 ? [] : tree.providers.map((p) => [p.source, p.contributions]),
  );
  // Only the providers remote modules add to are combined again (it is not free on big trees).
  const changed = new Set<string>();
  for (const r of resolved) {
    for (const p of r.providers) {
      if (isBuiltinProviderSource(p.source)) continue;
      if (!changed.has(p.source)) {
        changed.add(p.source);
        bySource.set(p.source, [...(bySource.get(p.source) ?? [])]);
      }
      const list = bySource.get(p.source) as ConstraintContribution[];
      for (const constraints of p.constraints) {
        list.push({
          module: remoteLabel(r),
          constraints,
          location: r.location,
          remote: { key: r.key, address: r.address, version: r.resolvedVersion },
        });
      }
    }
  }
  const existing = changed.size === 0 ? undefined : new Map(tree.providers.map((p) => [p.source, p]));
  const providers: RootProvider[] =
    existing === undefined
      ? tree.providers
      : [...bySource.keys()].sort(compareUtf8).map((source) => {
          const kept = existing.get(source);
          if (kept !== undefined && !changed.has(source)) return kept;
          const contributions = bySource.get(source) as ConstraintContribution[];
          return {
            source,
            constraints: combineConstraints(contributions.map((c) => c.constraints)),
            contributions,
          };
        });
  // Top-level remote modules by calling module, then call name (no composite string keys: this
  // runs for every tree of a monorepo).
  const top = new Map<string, Map<string, RemoteModule>>();
  for (const r of remote) {
    if (r.parent !== null) continue;
    let byName = top.get(r.module);
    if (byName === undefined) top.set(r.module, (byName = new Map()));
    byName.set(r.name, r);
  }
  const remoteCalls = tree.remoteCalls.map((c) => {
    const r = c.installed === true ? undefined : top.get(c.module)?.get(c.name);
    return r === undefined
      ? c
      : {
          module: c.module,
          name: c.name,
          source: c.source,
          version: c.version,
          key: r.key,
          address: r.address,
          resolvedVersion: r.resolvedVersion,
          origin: r.origin,
        };
  });
  return { ...tree, providers, remoteCalls, remoteModules: remote };
}
