/**
 * The module call graph: module kinds (root or shared), one `RootTree` per root with its combined
 * provider constraints, and the `module-missing` / `module-cycle` diagnostics.
 */
import { normalizeConstraints, validateConstraints } from '../constraints';
import type {
  ConstraintContribution,
  Engine,
  LoadDiagnostic,
  ModuleCall,
  ModuleInfo,
  ModuleKind,
  RootProvider,
  RootTree,
  ScanConfig,
  SourceLocation,
} from '../model';
import { compareUtf8 } from '../archive/paths';
import { matchGlob } from './glob';
import { BUILTIN_TERRAFORM_PROVIDER, impliedProviderSource } from './sources';

/** Path segments that mark the working directory of a deployment. */
export const ROOT_SEGMENTS: readonly string[] = [
  'environments',
  'envs',
  'live',
  'stacks',
  'deployments',
  'examples',
];
export const SHARED_SEGMENT = 'modules';

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
): { sources: string[]; constraints: ModuleConstraint[] } {
  const sources = new Set<string>();
  const constraints: ModuleConstraint[] = [];
  for (const p of m.providers) {
    if (p.source === BUILTIN_TERRAFORM_PROVIDER) continue;
    sources.add(p.source);
    if (p.constraints !== null) {
      constraints.push({ source: p.source, constraints: p.constraints, location: p.constraintLocation });
    }
  }
  for (const c of m.providerConfigs) {
    const source =
      m.providers.find((p) => p.name === c.name)?.source ?? impliedProviderSource(c.name, engine);
    if (source === BUILTIN_TERRAFORM_PROVIDER) continue;
    sources.add(source);
    if (c.version !== undefined) {
      constraints.push({ source, constraints: c.version.value, location: c.version.location });
    }
  }
  return { sources: [...sources].sort(compareUtf8), constraints };
}

/** The AND of constraint strings in Terraform's normalized form; null if any is invalid. */
export function combineConstraints(list: string[]): string | null {
  if (list.length === 0) return '';
  if (list.some((c) => validateConstraints(c) !== null)) return null;
  return normalizeConstraints(list);
}

interface CallerRef {
  caller: string;
  call: string;
}

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

export interface KindDecision {
  kind: ModuleKind;
  reason: string;
}

/**
 * Decides whether a module is a root (where `init`/`apply` run) or shared, in this order:
 * 1. `roots` / `shared` globs of the settings (roots first);
 * 2. called by another module of the archive through a local source → shared;
 * 3. has a lock file, a `backend`/`cloud` block, or a path segment such as `environments`,
 *    `envs`, `live`, `stacks`, `deployments`, `examples` → root;
 * 4. has a path segment `modules` → shared;
 * 5. otherwise (called by nothing) → root.
 */
export function decideKind(
  m: Pick<ModuleInfo, 'path' | 'lockFile' | 'backend'>,
  callers: readonly CallerRef[],
  config: Pick<ScanConfig, 'roots' | 'shared'>,
): KindDecision {
  const rootGlob = config.roots.find((g) => matchGlob(g, m.path));
  if (rootGlob !== undefined)
    return { kind: 'root', reason: `matches the roots pattern "${rootGlob}" of the settings` };
  const sharedGlob = config.shared.find((g) => matchGlob(g, m.path));
  if (sharedGlob !== undefined) {
    return { kind: 'shared', reason: `matches the shared pattern "${sharedGlob}" of the settings` };
  }
  const first = callers[0];
  if (first !== undefined) {
    const more = callers.length > 1 ? ` and ${callers.length - 1} more` : '';
    return { kind: 'shared', reason: `called by module "${first.caller}" (module.${first.call})${more}` };
  }
  if (m.lockFile !== null) return { kind: 'root', reason: `has a dependency lock file (${m.lockFile})` };
  if (m.backend !== null) {
    return {
      kind: 'root',
      reason: m.backend.kind === 'cloud' ? 'has a cloud block' : `has a backend "${m.backend.type}" block`,
    };
  }
  const segs = m.path === '.' ? [] : m.path.split('/');
  const rootSeg = segs.find((s) => ROOT_SEGMENTS.includes(s));
  if (rootSeg !== undefined) return { kind: 'root', reason: `its path has a "${rootSeg}" directory` };
  if (segs.includes(SHARED_SEGMENT))
    return { kind: 'shared', reason: `its path has a "${SHARED_SEGMENT}" directory` };
  return { kind: 'root', reason: 'not called by any module in the archive' };
}

/** `module-missing` for every local call whose directory holds no module of the archive. */
export function missingModules(modules: ReadonlyMap<string, ModuleInfo>): LoadDiagnostic[] {
  const out: LoadDiagnostic[] = [];
  for (const m of modules.values()) {
    for (const call of m.moduleCalls) {
      if (call.sourceKind !== 'local' || call.target === null || modules.has(call.target)) continue;
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
export function buildRootTree(
  root: string,
  modules: ReadonlyMap<string, ModuleInfo>,
  engine: Engine,
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
  enter(root);
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
    const target = localTarget(call, modules);
    if (target === null) continue;
    calls.push({ from: frame.path, to: target, name: call.name });
    if (!seen.has(target)) enter(target);
  }

  const bySource = new Map<string, ConstraintContribution[]>();
  for (const path of order) {
    const req = moduleRequirements(modules.get(path) as ModuleInfo, engine);
    for (const source of req.sources) if (!bySource.has(source)) bySource.set(source, []);
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
    return {
      source,
      constraints: combineConstraints(contributions.map((c) => c.constraints)),
      contributions,
    };
  });
  return { root, modules: order, calls, remoteCalls, providers };
}
