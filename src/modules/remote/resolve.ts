/**
 * Remote module resolution: the modules of a root's tree that the archive does not hold, found the
 * way `terraform init` finds them, so that every rule sees the whole tree.
 *
 * For each remote call (and, recursively, the calls of what it resolves to), in this order:
 *
 * 1. the root's `.terraform/modules/modules.json` and the installed copy it names, when the archive
 *    carries them and the recorded source (and version) still match the call: no network;
 * 2. with network resolution on (CLI `--remote-modules`, Lambda by default):
 *    - a registry address: service discovery, the version list, and the version Terraform selects
 *      (the newest one the `version` constraint allows, with go-version's module semantics: `~> 5`
 *      admits 6.x; pre-releases only when named exactly). Its
 *      provider metadata (`root`, `submodules[]`: `providers[]`, `dependencies[]`) when the registry
 *      gives it; otherwise (OpenTofu's registry, private registries) the package itself, from the
 *      version's download location;
 *    - a git source on an allowed GitHub or GitLab host, or an HTTP(S) archive on an allowed host:
 *      the package, downloaded as an archive;
 *    - a downloaded package goes through the safe archive reader under the scan's archive limits and
 *      is loaded like the archive's own modules;
 * 3. otherwise the module stays unresolved, with the reason; the loader turns that into one
 *    `module-unresolved` notice per call site.
 *
 * Local calls inside a remote package resolve inside the same package (`//modules/x`, `../y`).
 */
import { createHash } from 'node:crypto';
import { defaultShouldLoad, inputKind, readArchiveBytes } from '../../archive';
import { posix } from 'node:path';
import {
  classifyModuleSource,
  cleanRelativePath,
  defaultRegistryHost,
  parseProviderSource,
} from '../../addrs';
import {
  compareModuleVersions,
  moduleVersionAllowed,
  parseModuleVersion,
  selectModuleRelease,
  validateModuleConstraints,
} from '../../constraints';
import type { ArchiveLimits, Engine, InputKind, SourceLocation } from '../../model';
import type { LoadedArchive } from '../../archive';
import type { ModuleCall, ModuleInfo, RemoteModule, RemoteOrigin, RootTree } from '../types';
import { describeError, httpUrl } from '../../util/http';
import { installedPackage, readModulesManifest, sameSource } from './manifest';
import type { ManifestEntry } from './manifest';
import type { RegistryModuleVersion, RemoteNetwork } from './network';
import {
  archiveUrl,
  parseRegistrySource,
  parseRemotePackage,
  registryAddress,
  packageAndDir,
} from './source';
import type { ArchivePackage, RegistryModuleAddress } from './source';

/** What resolution needs of one module of a package (cacheable, engine-specific). */
export interface PackageModule {
  /** Every provider it requires, with the constraints it states (`terraform providers`). */
  providers: { source: string; constraints: string[] }[];
  /** Its module calls; `local` is the package directory a local call points to, null for remote
   * calls and for local calls that leave the package (`leaves`). */
  calls: { name: string; source: string; version: string | null; local: string | null; leaves?: boolean }[];
  /** Why its requirements are incomplete (files that do not parse). */
  errors?: string[];
}

/** The modules of a package by directory (`.` is the package root). */
export type PackageSummary = Record<string, PackageModule>;

/** Loads a package's modules as the archive's own are loaded (injected by the loader). */
export type PackageLoader = (pkg: LoadedArchive, engine: Engine) => Promise<PackageSummary>;

export interface ResolveRemoteInput {
  archive: LoadedArchive;
  modules: ReadonlyMap<string, ModuleInfo>;
  loadPackage: PackageLoader;
  /** Null: installed copies in the archive only, no network. */
  network: RemoteNetwork | null;
  /** Why there is no network resolution (for the notices), when `network` is null. */
  offlineReason?: string;
  limits?: Partial<ArchiveLimits>;
}

/** How deep remote modules may nest, and how many one root may have. */
export const MAX_REMOTE_DEPTH = 16;
export const MAX_REMOTE_MODULES = 2000;

/** Why remote modules stay unresolved offline, naming the input as the user gave it. */
export function offlineReason(input: InputKind): string {
  return `remote modules are fetched only with --remote-modules, and the ${input} has no installed copy (.terraform/modules)`;
}

interface Node {
  key: string;
  parent: string | null;
  name: string;
  source: string;
  version: string | null;
  /** Why an expression in the call's `source` / `version` has no value tfguard could evaluate
   * (constants.ts), for calls of the archive's own modules. */
  sourceUnknown?: string;
  versionUnknown?: string;
  module: string;
  location: SourceLocation;
  depth: number;
  /** Package directories on the way here (cycle guard). */
  chain: ReadonlySet<string>;
}

interface PackageHandle {
  identity: string;
  origin: RemoteOrigin;
  /** The package address as messages show it (no `//subdir`). */
  display: string;
  version: string | null;
  summary: PackageSummary;
  /** The package's top directory inside `summary` (installed copies: `vpc` of `vpc/modules/x`). */
  root: string;
  /** Fetched through a mutable reference (branch, tag, no ref, archive without checksum): what the
   * tree resolved to is kept only briefly, and only for the scan's tenant. */
  mutable: boolean;
  /** For metadata: the downloaded package, when a directory the metadata lacks is needed. */
  fallback?: () => Promise<PackageHandle>;
}

class Unresolved extends Error {}

/** The packages above a top-level call: none (shared; chains are extended by copy). */
const NO_CHAIN: ReadonlySet<string> = new Set<string>();

/** The registry or remote `module` call of `caller` named `name`. */
function remoteCallNamed(caller: ModuleInfo, name: string): ModuleCall | undefined {
  for (const c of caller.moduleCalls) {
    if (c.name === name && (c.sourceKind === 'registry' || c.sourceKind === 'remote')) return c;
  }
  return undefined;
}

/** A source or version expression whose value is unknown, as notices name it. */
function unknownExpression(e: ModuleCall['sourceExpression']): string | undefined {
  return e === undefined || e.status === 'known' ? undefined : `${e.text} (${e.detail})`;
}

function grouped(list: { source: string; constraints: string | null }[]): PackageModule['providers'] {
  const by = new Map<string, string[]>();
  for (const p of list) {
    const c = by.get(p.source) ?? [];
    if (p.constraints !== null && p.constraints.trim() !== '' && !c.includes(p.constraints))
      c.push(p.constraints);
    by.set(p.source, c);
  }
  return [...by]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([source, constraints]) => ({ source, constraints }));
}

/** A registry version's metadata as a package summary (root and listed submodules). */
export function metadataSummary(v: RegistryModuleVersion, engine: Engine): PackageSummary | null {
  if (v.root === null) return null;
  const out: PackageSummary = {};
  for (const sub of [v.root, ...v.submodules]) {
    const dir = sub === v.root ? '.' : cleanDir(sub.path);
    if (dir === null) continue;
    const providers: { source: string; constraints: string | null }[] = [];
    for (const p of sub.providers) {
      const raw = p.source !== '' ? p.source : p.namespace !== '' ? `${p.namespace}/${p.name}` : p.name;
      const source = providerSource(raw, engine);
      if (source === null) continue;
      providers.push({ source, constraints: p.version === '' ? null : p.version });
    }
    out[dir] = {
      providers: grouped(providers),
      calls: sub.dependencies.map((d) =>
        localCall(dir, d.name, d.source, d.version === '' ? null : d.version),
      ),
    };
  }
  return out;
}

function cleanDir(path: string): string | null {
  const segments: string[] = [];
  for (const s of path.replace(/\\/g, '/').split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (segments.length === 0) return null;
      segments.pop();
    } else segments.push(s);
  }
  return segments.length === 0 ? '.' : segments.join('/');
}

/** A call of the module in `dir`: local sources resolved inside the package. */
export function localCall(
  dir: string,
  name: string,
  source: string,
  version: string | null,
): PackageModule['calls'][number] {
  if (classifyModuleSource(source) !== 'local') return { name, source, version, local: null };
  const target = cleanDir(dir === '.' ? source : `${dir}/${source}`);
  return target === null
    ? { name, source, version, local: null, leaves: true }
    : { name, source, version, local: target };
}

/**
 * The registry module version `terraform init` selects: the newest published release the call's
 * `version` allows, read with Terraform's *module* semantics (hashicorp/go-version, where `~> 5`
 * is `>= 5` and admits 6.x; src/constraints/module.ts), not the provider semantics.
 */
export function selectModuleVersion(
  versions: readonly string[],
  constraint: string | null,
): { version: string } | { error: string } {
  const c = constraint === null ? '' : constraint.trim();
  if (c !== '') {
    const invalid = validateModuleConstraints(c);
    if (invalid !== null) return { error: `its version constraint "${c}" is invalid: ${invalid}` };
  }
  const valid = versions.filter((v) => {
    try {
      parseModuleVersion(v);
      return true;
    } catch {
      return false;
    }
  });
  const best = selectModuleRelease(valid, c);
  if (best !== null) return { version: best };
  if (valid.length === 0) return { error: 'the registry publishes no valid version of it' };
  return {
    error: `no published version matches "${c}" (newest: ${[...valid]
      .sort((a, b) => compareModuleVersions(parseModuleVersion(b), parseModuleVersion(a)))
      .slice(0, 3)
      .join(', ')})`,
  };
}

/** The resolver of one scan (shared by its roots: network answers and packages are memoized). */
export class RemoteResolver {
  private readonly installed = new Map<string, Promise<PackageSummary | null>>();
  private readonly packages = new Map<string, Promise<PackageHandle>>();
  private readonly summaries = new Map<string, Promise<PackageSummary>>();

  constructor(private readonly input: ResolveRemoteInput) {}

  /** What was scanned, as messages name it: "directory" or "archive". */
  private inputWord(): InputKind {
    return inputKind(this.input.archive);
  }

  /** The remote modules of one tree, in call order (each followed by what it calls). */
  async resolveTree(tree: RootTree): Promise<RemoteModule[]> {
    const keys = new Map<string, string>([[tree.root, '']]);
    for (const c of tree.calls) {
      const from = keys.get(c.from);
      if (from !== undefined && !keys.has(c.to)) keys.set(c.to, from === '' ? c.name : `${from}.${c.name}`);
    }
    const manifest = readModulesManifest(this.input.archive, tree.root);
    const ctx: TreeContext = { tree, manifest, count: 0, mutable: false };
    const tops: Node[] = [];
    for (const rc of tree.remoteCalls) {
      if (rc.installed === true || rc.source === null) continue;
      const caller = this.input.modules.get(rc.module);
      const call = caller === undefined ? undefined : remoteCallNamed(caller, rc.name);
      const base = keys.get(rc.module) ?? '';
      const sourceUnknown = unknownExpression(call?.sourceExpression);
      const versionUnknown = unknownExpression(call?.versionExpression);
      tops.push({
        key: base === '' ? rc.name : `${base}.${rc.name}`,
        parent: null,
        name: rc.name,
        source: rc.source as string,
        version: rc.version,
        ...(sourceUnknown === undefined ? {} : { sourceUnknown }),
        ...(versionUnknown === undefined ? {} : { versionUnknown }),
        module: rc.module,
        location: call?.location ?? { file: caller?.files[0] ?? rc.module, line: 1 },
        depth: 1,
        chain: NO_CHAIN,
      });
    }
    // A rescan asks the cache once per tree: the whole resolution, keyed by the remote calls and
    // the hosts, for as long as the version lists it was selected from are trusted.
    const network = this.input.network;
    const identity =
      network === null || manifest !== null
        ? null
        : JSON.stringify({
            engine: tree.engine,
            hosts: network.hostsFingerprint(),
            calls: tops.map((t) => [t.key, t.source, t.version]),
          });
    if (identity !== null && network !== null) {
      const cached = restoreTree(await network.getFresh('tree', identity), tops);
      if (cached !== null) return cached;
    }
    const out: RemoteModule[] = [];
    if (network === null && manifest === null) {
      // Nothing can resolve (no network, no installed copies): every call says why, at once.
      const reason = this.input.offlineReason ?? offlineReason(this.inputWord());
      for (const n of tops) out.push(...(this.settled(ctx, n) ?? this.unresolved(ctx, n, reason)));
    } else {
      for (const list of await Promise.all(tops.map((n) => this.node(ctx, n)))) out.push(...list);
    }
    if (identity !== null && network !== null && out.every((r) => r.origin !== null)) {
      await network.putFresh(
        'tree',
        identity,
        out.map(({ module: _m, location: _l, ...rest }) => rest),
        ctx.mutable,
      );
    }
    return out;
  }

  private unresolved(ctx: TreeContext, n: Node, reason: string, address?: string): RemoteModule[] {
    return [
      {
        key: n.key,
        parent: n.parent,
        name: n.name,
        source: n.source,
        version: n.version,
        address: address ?? n.source,
        resolvedVersion: null,
        origin: null,
        unresolved: reason,
        providers: [],
        module: n.module,
        location: n.location,
      },
    ];
  }

  /** What stops a module before anything is looked up (depth, count, an expression as source), or
   * null. Counts the module. */
  private settled(ctx: TreeContext, n: Node): RemoteModule[] | null {
    if (n.depth > MAX_REMOTE_DEPTH) {
      return this.unresolved(ctx, n, `remote modules nest deeper than ${MAX_REMOTE_DEPTH} levels here`);
    }
    if (++ctx.count > MAX_REMOTE_MODULES) {
      return this.unresolved(ctx, n, `the tree has more than ${MAX_REMOTE_MODULES} remote modules`);
    }
    if (n.sourceUnknown !== undefined) {
      return this.unresolved(
        ctx,
        n,
        `its source is an expression that tfguard could not evaluate: ${n.sourceUnknown}`,
      );
    }
    if (n.source.includes('${')) {
      return this.unresolved(ctx, n, 'its source is an expression (${...}) that tfguard does not evaluate');
    }
    return null;
  }

  private async node(ctx: TreeContext, n: Node): Promise<RemoteModule[]> {
    const early = this.settled(ctx, n);
    if (early !== null) return early;
    const engine = ctx.tree.engine;
    const entry = ctx.manifest?.get(n.key);
    let stale: string | null = null;
    if (entry !== undefined && entry.dir !== null) {
      stale = this.staleReason(entry, n, engine);
      if (stale === null) {
        const summary = await this.installedSummary(ctx.tree.root, engine);
        if (summary !== null && summary[entry.dir] !== undefined) {
          const registry = parseRegistrySource(n.source, engine);
          const subdir = registry !== null ? registry.subdir : parseSubdir(n.source);
          const handle: PackageHandle = {
            identity: `archive ${ctx.tree.root}`,
            origin: 'archive',
            display: registry !== null ? this.registryDisplay(registry, engine) : packageOf(n.source),
            version: entry.version ?? parseRemoteRef(n.source),
            summary,
            root: packageRoot(entry.dir, subdir),
            mutable: false,
          };
          return this.inPackage(ctx, handle, entry.dir, n);
        }
        stale = `its installed copy (${entry.dir}) is not in the ${this.inputWord()}`;
      }
    }
    const network = this.input.network;
    if (network === null) {
      return this.unresolved(ctx, n, stale ?? this.input.offlineReason ?? offlineReason(this.inputWord()));
    }
    const registry = parseRegistrySource(n.source, engine);
    try {
      if (registry !== null) {
        // An installed copy (above) is what init chose with the real value; without one, the
        // version cannot be selected.
        if (n.versionUnknown !== undefined) {
          return this.unresolved(
            ctx,
            n,
            `its version is an expression that tfguard could not evaluate: ${n.versionUnknown}`,
          );
        }
        const handle = await this.registryPackage(network, registry, n, engine);
        return await this.inPackage(ctx, handle, joinDir(handle.root, registry.subdir), n);
      }
      if (classifyModuleSource(n.source) === 'local') {
        return this.unresolved(
          ctx,
          n,
          `a local path of the ${this.inputWord()} that the loader could not read`,
        );
      }
      const p = parseRemotePackage(n.source);
      if (p.kind === 'unsupported') return this.unresolved(ctx, n, p.reason);
      const handle = await this.archivePackage(network, p, engine, null, '.');
      return await this.inPackage(ctx, handle, p.subdir, n);
    } catch (err) {
      if (err instanceof Unresolved) return this.unresolved(ctx, n, err.message);
      return this.unresolved(ctx, n, describeError(err));
    }
  }

  /** Why the manifest's entry is not the module the call asks for (changed source or version). */
  private staleReason(entry: ManifestEntry, n: Node, engine: Engine): string | null {
    if (!sameSource(entry.source, n.source, engine)) {
      return `its installed copy is of another source ("${entry.source}"): terraform init has not run since the source changed`;
    }
    const c = n.version?.trim() ?? '';
    if (entry.version !== null && c !== '' && validateModuleConstraints(c) === null) {
      // Module semantics: an installed 6.x copy is what `~> 5` asks for, not a stale one.
      if (!moduleVersionAllowed(entry.version, c)) {
        return `its installed copy is version ${entry.version}, which "${c}" does not allow: terraform init has not run since the constraint changed`;
      }
    }
    return null;
  }

  private installedSummary(root: string, engine: Engine): Promise<PackageSummary | null> {
    const key = `${engine} ${root}`;
    let p = this.installed.get(key);
    if (p === undefined) {
      const pkg = installedPackage(this.input.archive, root);
      p = pkg === null ? Promise.resolve(null) : this.input.loadPackage(pkg, engine);
      this.installed.set(key, p);
    }
    return p;
  }

  /** `ns/name/system` on the engine's registry, `host/ns/name/system` elsewhere (as Terraform's
   * `ModuleSourceRegistry.ForDisplay`). */
  private registryDisplay(a: RegistryModuleAddress, engine: Engine): string {
    const full = registryAddress(a, false);
    return a.host === defaultRegistryHost(engine) ? full.slice(a.host.length + 1) : full;
  }

  private async registryPackage(
    network: RemoteNetwork,
    a: RegistryModuleAddress,
    n: Node,
    engine: Engine,
  ): Promise<PackageHandle> {
    if (!network.registryHosts.allowsHost(a.host)) {
      throw new Unresolved(network.registryHosts.refusal(a.host));
    }
    const versions = await network.moduleVersions(a);
    const selected = selectModuleVersion(
      versions.map((v) => v.version),
      n.version,
    );
    if ('error' in selected) throw new Unresolved(selected.error);
    const version = selected.version;
    const display = this.registryDisplay(a, engine);
    const download = (): Promise<PackageHandle> =>
      this.memo(
        this.packages,
        `registry-download ${engine} ${registryAddress(a, false)} ${version}`,
        async () => {
          const { location, base } = await network.downloadLocation(a, version);
          const handle = await this.locationPackage(network, location, base, engine, {
            address: registryAddress(a, false),
            version,
          });
          return { ...handle, display, version, origin: 'download' as const };
        },
      );
    const meta = versions.find((v) => v.version === version) as RegistryModuleVersion;
    const summary = metadataSummary(meta, engine);
    if (summary === null) return download();
    return {
      identity: `registry ${registryAddress(a, false)} ${version}`,
      origin: 'metadata',
      display,
      version,
      summary,
      root: '.',
      mutable: false,
      fallback: download,
    };
  }

  /** The package a registry's download location names: an archive (possibly relative to the
   * registry, and then on its host) or a git source. */
  private async locationPackage(
    network: RemoteNetwork,
    location: string,
    base: URL,
    engine: Engine,
    pinned: { address: string; version: string },
  ): Promise<PackageHandle> {
    const relative = /^(\.{1,2}\/|\/[^/])/.test(location);
    let p;
    if (relative) {
      const url = httpUrl(location, base, 'download location');
      p = parseRemotePackage(url.href);
    } else {
      p = parseRemotePackage(location);
    }
    if (p.kind === 'unsupported')
      throw new Unresolved(`its download location "${location}" is not fetched: ${p.reason}`);
    const registryHost = base.host.toLowerCase();
    // The location's own `//subdir` is where the registry module's package starts.
    return this.archivePackage(network, p, engine, registryHost, p.subdir, pinned);
  }

  private memo<T>(map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
    let p = map.get(key);
    if (p === undefined) {
      p = make();
      map.set(key, p);
    }
    return p;
  }

  /**
   * Downloads and loads an archive package (memoized per scan). Cached across scans by what it is:
   * shared when its identity is immutable (`pinned`: a registry module version; a git commit SHA;
   * an archive whose checksum matched), else briefly and per tenant (network.ts). A package with
   * files that do not parse is not kept (the failure may be transient).
   */
  private archivePackage(
    network: RemoteNetwork,
    p: ArchivePackage,
    engine: Engine,
    registryHost: string | null,
    root: string,
    pinned?: { address: string; version: string },
  ): Promise<PackageHandle> {
    const onRegistry = registryHost !== null && p.host === registryHost;
    if (!onRegistry && !network.allowsDownloadHost(p.host)) {
      return Promise.reject(
        new Unresolved(
          `${p.host} is not an allowed module host (module_hosts in --config, or TFGUARD_MODULE_HOSTS), so ${p.address} is not downloaded`,
        ),
      );
    }
    const url = onRegistry ? new URL(p.url) : archiveUrl(p, network.downloadBase(p.host));
    // Redirects may lead to another allowed host, back to the registry, or from GitHub to the host
    // that serves its archives.
    const allowed = (next: URL): boolean =>
      network.allowsDownloadHost(next.hostname) ||
      network.allowsDownloadHost(next.host) ||
      next.host.toLowerCase() === registryHost ||
      (p.host === 'github.com' && next.hostname.toLowerCase() === 'codeload.github.com');
    const identity =
      pinned !== undefined
        ? `${engine} ${pinned.address} ${pinned.version} ${p.address}`
        : `${engine} ${p.address}`;
    const mutable = pinned === undefined && !immutableSource(p);
    const summary = this.memo(this.summaries, identity, async () => {
      const load = async (): Promise<PackageSummary> => {
        const bytes = await network.download(url, `the package ${p.address}`, allowed);
        if (p.checksum !== null) {
          const actual = createHash(p.checksum.type).update(bytes).digest('hex');
          if (actual !== p.checksum.hex) {
            throw new Unresolved(
              `the package ${p.address} does not match its checksum: ${p.checksum.type} ${actual} was downloaded (terraform init refuses it too)`,
            );
          }
        }
        let archive = await readArchiveBytes(p.address, bytes, {
          ...(this.input.limits !== undefined ? { limits: this.input.limits } : {}),
          shouldLoad: defaultShouldLoad,
        });
        if (p.stripTopDirectory) archive = stripTopDirectory(archive);
        return this.input.loadPackage(archive, engine);
      };
      return network.cached('package', identity, load, {
        mutable,
        keep: (s) => Object.values(s).every((m) => m.errors === undefined || m.errors.length === 0),
      });
    });
    return summary.then((s) => ({
      identity,
      origin: 'download' as const,
      display: p.ref !== null ? p.address.replace(/\?ref=[^&]*$/, '') : p.address,
      version: pinned?.version ?? p.ref,
      summary: s,
      root,
      mutable,
    }));
  }

  /** The module in `dir` of a package, then the modules it calls. */
  private async inPackage(
    ctx: TreeContext,
    handle: PackageHandle,
    dir: string,
    n: Node,
  ): Promise<RemoteModule[]> {
    let h = handle;
    let m = h.summary[dir];
    if (m === undefined && h.fallback !== undefined) {
      try {
        const rel = relativeDir(h.root, dir);
        h = await h.fallback();
        dir = joinDir(h.root, rel);
        m = h.summary[dir];
      } catch (err) {
        return this.unresolved(
          ctx,
          n,
          `the registry's metadata does not list "${dir}" and the package could not be downloaded: ${err instanceof Unresolved ? err.message : describeError(err)}`,
        );
      }
    }
    if (h.mutable) ctx.mutable = true;
    const shown = relativeDir(h.root, dir);
    const address = shown === '.' ? h.display : `${h.display}//${shown}`;
    if (m === undefined) {
      return this.unresolved(
        ctx,
        n,
        `the package ${h.display} ${h.version ?? ''} has no module in "${dir}"`.replace('  ', ' '),
        address,
      );
    }
    if (m.errors !== undefined && m.errors.length > 0) {
      return this.unresolved(ctx, n, `its files do not parse: ${m.errors.join('; ')}`, address);
    }
    const self: RemoteModule = {
      key: n.key,
      parent: n.parent,
      name: n.name,
      source: n.source,
      version: n.version,
      address,
      resolvedVersion: h.version,
      origin: h.origin,
      providers: m.providers.map((p) => ({ source: p.source, constraints: [...p.constraints] })),
      module: n.module,
      location: n.location,
    };
    const chain = new Set(n.chain).add(`${h.identity}//${dir}`);
    const children = await Promise.all(
      m.calls.map((c) => {
        const child: Node = {
          key: `${n.key}.${c.name}`,
          parent: n.key,
          name: c.name,
          source: c.source,
          version: c.version,
          module: n.module,
          location: n.location,
          depth: n.depth + 1,
          chain,
        };
        if (c.leaves === true) {
          return Promise.resolve(
            this.unresolved(ctx, child, `its source "${c.source}" leaves the package ${h.display}`),
          );
        }
        if (c.local !== null) {
          if (chain.has(`${h.identity}//${c.local}`)) {
            return Promise.resolve(
              this.unresolved(ctx, child, `it calls itself through "${c.source}" (a module cycle)`),
            );
          }
          if (++ctx.count > MAX_REMOTE_MODULES) {
            return Promise.resolve(
              this.unresolved(ctx, child, `the tree has more than ${MAX_REMOTE_MODULES} remote modules`),
            );
          }
          return this.inPackage(ctx, h, c.local, child);
        }
        return this.node(ctx, child);
      }),
    );
    return [self, ...children.flat()];
  }
}

interface TreeContext {
  tree: RootTree;
  manifest: Map<string, ManifestEntry> | null;
  count: number;
  /** Some module of the tree came through a mutable reference. */
  mutable: boolean;
}

/** Whether a package's address names one content forever: a git commit SHA (a branch, a tag, which
 * can be moved, or no ref is not), an HTTP archive with a checksum (one without may change). */
export function immutableSource(p: ArchivePackage): boolean {
  if (p.address.startsWith('git::')) return p.ref !== null && /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(p.ref);
  return p.checksum !== null;
}

/** A cached tree resolution with the current calls' locations, or null when it does not fit. */
function restoreTree(value: unknown, tops: readonly Node[]): RemoteModule[] | null {
  if (!Array.isArray(value)) return null;
  const out: RemoteModule[] = [];
  for (const v of value as unknown[]) {
    if (typeof v !== 'object' || v === null) return null;
    const r = v as Omit<RemoteModule, 'module' | 'location'>;
    if (typeof r.key !== 'string' || !Array.isArray(r.providers) || typeof r.address !== 'string')
      return null;
    // The top call it descends from: the longest key that is it or a prefix of it.
    let top: Node | undefined;
    for (const t of tops) {
      if (
        (r.key === t.key || r.key.startsWith(`${t.key}.`)) &&
        (top === undefined || t.key.length > top.key.length)
      )
        top = t;
    }
    if (top === undefined) return null;
    out.push({ ...r, module: top.module, location: top.location });
  }
  return out;
}

/** A directory of a package as messages show it: relative to the package's top directory. */
function relativeDir(root: string, dir: string): string {
  return posix.relative(root === '.' ? '' : root, dir === '.' ? '' : dir) || '.';
}

/** `rel` inside `root`, cleaned. */
function joinDir(root: string, rel: string): string {
  return cleanRelativePath(root === '.' ? rel : `${root}/${rel}`);
}

/** The installed package's top directory, from the installed module's directory and the subdirectory
 * its source names (`vpc/modules/x` with `modules/x` → `vpc`). */
function packageRoot(dir: string, subdir: string): string {
  if (subdir === '.') return dir;
  if (dir === subdir) return '.';
  return dir.endsWith(`/${subdir}`) ? dir.slice(0, dir.length - subdir.length - 1) : dir;
}

function parseSubdir(source: string): string {
  return packageAndDir(source).subdir;
}

/** A package as messages show it: registry-less sources without `//subdir` and without `?ref=`
 * (the ref is shown as the version); GitHub shorthand expanded (`git::https://github.com/o/r.git`). */
function packageOf(source: string): string {
  const p = parseRemotePackage(source);
  if (p.kind === 'archive') return p.ref !== null ? p.address.replace(/\?ref=[^&]*$/, '') : p.address;
  return packageAndDir(source)
    .pkg.replace(/([?&])ref=[^&]*&?/, '$1')
    .replace(/[?&]$/, '');
}

/** `?ref=` of a git source, for the version column of installed copies. */
function parseRemoteRef(source: string): string | null {
  const m = /[?&]ref=([^&]+)/.exec(packageAndDir(source).pkg);
  return m === null ? null : decodeURIComponent(m[1] as string);
}

/** A provider source from registry metadata, normalized; null when it is not one. */
function providerSource(raw: string, engine: Engine): string | null {
  const r = parseProviderSource(raw.trim(), engine);
  return r.ok ? r.source : null;
}

/** An archive whose entries all sit in one top directory (a git host's archive), re-rooted there. */
export function stripTopDirectory(archive: LoadedArchive): LoadedArchive {
  const tops = new Set(archive.entries.map((e) => e.path.split('/')[0] as string));
  if (tops.size !== 1) return archive;
  const top = [...tops][0] as string;
  const prefix = `${top}/`;
  if (!archive.entries.some((e) => e.path.startsWith(prefix))) return archive;
  const entries = archive.entries
    .filter((e) => e.path.startsWith(prefix))
    .map((e) => ({
      ...e,
      path: e.path.slice(prefix.length),
      ...(e.linkTarget !== undefined && e.linkTarget.startsWith(prefix)
        ? { linkTarget: e.linkTarget.slice(prefix.length) }
        : {}),
    }));
  const files = new Map<string, Buffer>();
  for (const [p, c] of archive.files) if (p.startsWith(prefix)) files.set(p.slice(prefix.length), c);
  return { ...archive, entries, files };
}
