/**
 * The remote pass after module loading: resolves the remote modules of every tree
 * (src/modules/remote): installed copies the archive carries first, then, with a network, the
 * registries and allowed hosts.
 */
import type { LoadedArchive } from '../archive';
import type { HclParser } from '../hcl';
import type { ArchiveLimits, Engine, ScanConfig } from '../model';
import { compareDiagnostics } from './load/diagnostics';
import { loadModules } from './load/load-modules';
import type { LoadedModules } from './load/load-modules';
import type { ConfigFileReader } from './load/read';
import { localCall, RemoteResolver } from './remote';
import type { PackageModule, PackageSummary, RemoteNetwork } from './remote';
import { moduleRequirements, withRemoteModules } from './tree';
import type { LoadDiagnostic, RemoteModule, RootTree } from './types';

/** What remote resolution needs besides the loaded modules. */
export interface ResolveRemoteModulesInput {
  archive: LoadedArchive;
  config: ScanConfig;
  parser: Pick<HclParser, 'extract' | 'parse'>;
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

function keysOf(remote: readonly RemoteModule[]): Map<string, RemoteModule> {
  return new Map(remote.map((r) => [r.key, r]));
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
    // Only nested modules need their parents (offline, every unresolved module is a top one).
    let byKey: Map<string, RemoteModule> | undefined;
    for (const r of remote) {
      if (r.origin !== null) continue;
      const call = r.parent === null ? r.name : keyFromCallSite(r, (byKey ??= keysOf(remote)));
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
