/**
 * What remote resolution asks the network, through the shared HTTP client (src/util/http.ts):
 *
 * - the module registry protocol (https://developer.hashicorp.com/terraform/internals/module-registry-protocol):
 *   service discovery (`modules.v1`), `GET {modules.v1}NS/NAME/SYSTEM/versions` (with the provider
 *   metadata registry.terraform.io and HCP Terraform add per version: `root` and `submodules[]`
 *   with `providers[]` and `dependencies[]`), and `GET .../VERSION/download` (204 with
 *   `X-Terraform-Get`, or 200 with `{"location": ...}` as the OpenTofu registry answers);
 * - package downloads: an archive over HTTP(S) from a host the operator allows, every redirect
 *   checked against the same list, the size bounded.
 *
 * Registry hosts are those of the provider check (the public registries and `registry_hosts`);
 * download hosts are `module_hosts`, plus the registry's own host for a location on it. Nothing a
 * scanned archive says adds a host.
 *
 * Answers are cached in an `ObjectStore` under `remote-modules/v1/` (a local directory for the CLI,
 * S3 in Lambda), under the SHA-256 of what they are the answer to:
 *
 * - content with an immutable identity (a registry module version, a git commit SHA, an archive
 *   whose `checksum` was verified) is shared by every scan: a fleet audit resolves it once;
 * - content behind a mutable reference (a git branch or tag, no ref, an archive URL without
 *   checksum) is kept for `mutableTtlMs` and only for the scan's `tenant` (the repository): whoever
 *   scans first can never pin what another repository's scan sees;
 * - version lists for `versionsTtlMs`;
 * - a failure is never kept (what threw, and what a caller's `keep` refuses, e.g. a package with
 *   files that did not parse).
 *
 * Every request goes through the scan's budget (requests, downloads) and the process's concurrency
 * limit (budget.ts).
 */
import { createHash } from 'node:crypto';
import type { ObjectStore } from '../../storage/types';
import { DEFAULT_MUTABLE_TTL_MS, DEFAULT_REMOTE_BUDGET, RemoteBudget } from './budget';
import type { RemoteBudgetLimits } from './budget';
import {
  HttpClient,
  HttpRequestError,
  httpTuning,
  httpUrl,
  RegistryHosts,
  ServiceDiscovery,
} from '../../util/http';
import type { RegistryModuleAddress } from './source';

export interface RemoteNetworkOptions {
  /** Registry hostname → base URL (`registry_hosts`): the registries contacted besides the public ones. */
  registryHosts?: Record<string, string>;
  /** Registry hostname → token (`TF_TOKEN_*`, `credentials` blocks of `--config`), sent only to
   * that registry's own host. */
  credentials?: Record<string, string>;
  /** Git / HTTP hostname → base URL (`module_hosts`): the only hosts packages are downloaded from. */
  moduleHosts?: Record<string, string>;
  cache?: ObjectStore;
  /** Key prefix inside the cache (default `remote-modules/v1/`). */
  cachePrefix?: string;
  /** How long a cached version list is used before the registry is asked again (default 1 h). */
  versionsTtlMs?: number;
  /** How long content behind a mutable reference (branch, tag, no ref, archive without checksum) is
   * reused (default 10 min), and only by scans of the same `tenant`. */
  mutableTtlMs?: number;
  /** Who the scan is for (the service: the repository): the owner of cached mutable content.
   * Unset: the cache has one owner (the CLI's own directory). */
  tenant?: string;
  /** Requests one scan may send (default 1,000), packages it may download (default 200), requests
   * in flight over the process (default 8). */
  maxRequests?: number;
  maxDownloads?: number;
  maxConcurrent?: number;
  /** Largest registry answer (default 8 MiB). */
  maxResponseBytes?: number;
  /** Largest package download (default 32 MiB; the archive limits apply to its content too). */
  maxDownloadBytes?: number;
  timeoutMs?: number;
  retries?: number;
  backoffMs?: number;
  /** Redirects followed per download (default 5), each to an allowed host. */
  maxRedirects?: number;
  fetch?: typeof fetch;
  /** The resolution's time budget (what the scan's deadline leaves it). */
  signal?: AbortSignal;
}

/** One version of a registry module, with its provider metadata when the registry gives it. */
export interface RegistryModuleVersion {
  version: string;
  /** Null when the registry gives no metadata for the version (OpenTofu's registry). */
  root: RegistrySubmodule | null;
  submodules: RegistrySubmodule[];
}

export interface RegistrySubmodule {
  path: string;
  providers: { name: string; namespace: string; source: string; version: string }[];
  dependencies: { name: string; source: string; version: string }[];
}

// 2: failures and mutable references are no longer kept in the shared space (schema 1 entries may
// hold both, and are ignored).
const CACHE_SCHEMA = 2;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function submodule(v: unknown, path: string): RegistrySubmodule | null {
  if (!isObject(v) || !Array.isArray(v.providers)) return null;
  return {
    path: typeof v.path === 'string' && v.path !== '' ? v.path : path,
    providers: v.providers
      .filter(isObject)
      .map((p) => ({
        name: str(p.name),
        namespace: str(p.namespace),
        source: str(p.source),
        version: str(p.version),
      }))
      .filter((p) => p.name !== '' || p.source !== ''),
    dependencies: (Array.isArray(v.dependencies) ? v.dependencies : [])
      .filter(isObject)
      .map((d) => ({ name: str(d.name), source: str(d.source), version: str(d.version) }))
      .filter((d) => d.name !== '' && d.source !== ''),
  };
}

/** Reads a versions answer (`{"modules": [{"versions": [...]}]}`); garbage is an error. */
export function parseModuleVersions(doc: unknown, what: string): RegistryModuleVersion[] {
  const modules = isObject(doc) ? doc.modules : undefined;
  const first = Array.isArray(modules) ? modules[0] : undefined;
  if (!isObject(first) || !Array.isArray(first.versions)) {
    throw new HttpRequestError('unavailable', `${what} has no "modules[0].versions" list`);
  }
  const out: RegistryModuleVersion[] = [];
  for (const v of first.versions) {
    if (!isObject(v) || typeof v.version !== 'string') continue;
    // A root with a providers list is metadata; an empty or missing root is not (OpenTofu).
    const root = submodule(v.root, '.');
    const submodules = (Array.isArray(v.submodules) ? v.submodules : [])
      .map((s) => (isObject(s) ? submodule(s, str(s.path)) : null))
      .filter((s): s is RegistrySubmodule => s !== null && s.path !== '');
    out.push({ version: v.version, root, submodules });
  }
  return out;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The registry and download client of one resolution. */
export class RemoteNetwork {
  readonly registryHosts: RegistryHosts;
  readonly moduleHosts: Readonly<Record<string, string>>;
  private readonly http: HttpClient;
  private readonly discovery: ServiceDiscovery;
  private readonly cache: ObjectStore | undefined;
  private readonly cachePrefix: string;
  private readonly versionsTtlMs: number;
  private readonly mutableTtlMs: number;
  private readonly tenant: string;
  readonly budget: RemoteBudget;
  private readonly maxDownloadBytes: number;
  private readonly maxRedirects: number;
  private readonly memo = new Map<string, Promise<unknown>>();

  constructor(options: RemoteNetworkOptions = {}) {
    this.registryHosts = new RegistryHosts(options.registryHosts ?? {}, options.credentials ?? {});
    this.moduleHosts = Object.fromEntries(
      Object.entries(options.moduleHosts ?? {}).map(([h, u]) => [h.toLowerCase(), u.replace(/\/+$/, '')]),
    );
    const limits: RemoteBudgetLimits = {
      maxRequests: options.maxRequests ?? DEFAULT_REMOTE_BUDGET.maxRequests,
      maxDownloads: options.maxDownloads ?? DEFAULT_REMOTE_BUDGET.maxDownloads,
      maxConcurrent: options.maxConcurrent ?? DEFAULT_REMOTE_BUDGET.maxConcurrent,
    };
    this.budget = new RemoteBudget(limits, undefined, options.signal);
    this.http = new HttpClient({
      ...httpTuning(options),
      credentials: this.registryHosts,
      gate: this.budget,
    });
    this.discovery = new ServiceDiscovery(this.http, this.registryHosts);
    this.cache = options.cache;
    this.cachePrefix = options.cachePrefix ?? 'remote-modules/v1/';
    this.versionsTtlMs = options.versionsTtlMs ?? 60 * 60 * 1000;
    this.mutableTtlMs = options.mutableTtlMs ?? DEFAULT_MUTABLE_TTL_MS;
    this.tenant = options.tenant ?? '';
    this.maxDownloadBytes = options.maxDownloadBytes ?? 32 * 1024 * 1024;
    this.maxRedirects = options.maxRedirects ?? 5;
  }

  /** Requests sent (tests of the cache, the benchmark). */
  get requestCount(): number {
    return this.http.requestCount;
  }

  /** Packages downloaded (or attempted). */
  get downloadCount(): number {
    return this.budget.downloads;
  }

  /** The operator's host settings, as part of cache keys (another mapping may resolve otherwise). */
  hostsFingerprint(): string {
    return JSON.stringify([this.registryHosts.mapping(), Object.entries(this.moduleHosts).sort()]);
  }

  /** Whether packages may be downloaded from `host` (`module_hosts`). */
  allowsDownloadHost(host: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.moduleHosts, host.toLowerCase());
  }

  /** The operator's base URL of a download host (`module_hosts`), if it maps one. */
  downloadBase(host: string): string | undefined {
    const v = this.moduleHosts[host.toLowerCase()];
    return v === undefined || v === '' ? undefined : v;
  }

  /** Memoized for the resolution's lifetime: one request per question, even when asked at once. */
  private once<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (p === undefined) {
      p = make();
      this.memo.set(key, p);
    }
    return p;
  }

  private async cacheGet(key: string): Promise<Record<string, unknown> | null> {
    if (this.cache === undefined) return null;
    try {
      const hit = await this.cache.get(`${this.cachePrefix}${key}`);
      if (hit === null) return null;
      const doc = JSON.parse(hit.body.toString('utf8')) as unknown;
      return isObject(doc) && doc.schema === CACHE_SCHEMA ? doc : null;
    } catch {
      return null; // the cache is an optimisation: a failing store means asking again
    }
  }

  private async cachePut(key: string, doc: Record<string, unknown>): Promise<void> {
    if (this.cache === undefined) return;
    try {
      await this.cache.put(`${this.cachePrefix}${key}`, JSON.stringify({ schema: CACHE_SCHEMA, ...doc }), {
        contentType: 'application/json',
      });
    } catch {
      // Best effort.
    }
  }

  /** The identity under which content is kept: shared when immutable, the tenant's otherwise. */
  private scoped(identity: string, mutable: boolean): string {
    return mutable ? `${identity}\ntenant ${JSON.stringify(this.tenant)}` : identity;
  }

  /**
   * A value cached under the SHA-256 of `identity`, else made and stored. Immutable content is
   * shared and kept until the cache prefix expires; `mutable` content is kept `mutableTtlMs` for the
   * tenant only. A value `keep` refuses (a failure the caller got as a value) is not stored.
   */
  cached<T>(
    kind: string,
    identity: string,
    make: () => Promise<T>,
    options: { mutable: boolean; keep?: (value: T) => boolean },
  ): Promise<T> {
    const scoped = this.scoped(identity, options.mutable);
    const key = `${kind}/${sha256(scoped)}.json`;
    return this.once(key, async () => {
      const hit = await this.cacheGet(key);
      if (
        hit !== null &&
        hit.identity === scoped &&
        'value' in hit &&
        (!options.mutable ||
          (typeof hit.fetchedAt === 'number' && Date.now() - hit.fetchedAt < this.mutableTtlMs))
      ) {
        return hit.value as T;
      }
      const value = await make();
      if (options.keep === undefined || options.keep(value)) {
        await this.cachePut(key, { identity: scoped, fetchedAt: Date.now(), value });
      }
      return value;
    });
  }

  /** A value stored with `putFresh` less than `versionsTtlMs` ago (version lists it depends on may
   * have changed since; `mutableTtlMs` for one that used mutable content, the tenant's own), else
   * null. */
  async getFresh(kind: string, identity: string): Promise<unknown> {
    for (const mutable of [false, true]) {
      const scoped = this.scoped(identity, mutable);
      const ttl = mutable ? Math.min(this.versionsTtlMs, this.mutableTtlMs) : this.versionsTtlMs;
      const hit = await this.cacheGet(`${kind}/${sha256(scoped)}.json`);
      if (
        hit !== null &&
        hit.identity === scoped &&
        typeof hit.fetchedAt === 'number' &&
        Date.now() - hit.fetchedAt < ttl
      ) {
        return hit.value ?? null;
      }
    }
    return null;
  }

  async putFresh(kind: string, identity: string, value: unknown, mutable = false): Promise<void> {
    const scoped = this.scoped(identity, mutable);
    await this.cachePut(`${kind}/${sha256(scoped)}.json`, { identity: scoped, fetchedAt: Date.now(), value });
  }

  private async modulesBase(a: RegistryModuleAddress): Promise<URL> {
    const v1 = await this.discovery.discover(a.host, 'modules.v1', 'module registry');
    return new URL(
      `${encodeURIComponent(a.namespace)}/${encodeURIComponent(a.name)}/${encodeURIComponent(a.system)}/`,
      v1,
    );
  }

  /** Every version the registry publishes of a module, with its metadata. Throws `HttpRequestError`. */
  moduleVersions(a: RegistryModuleAddress): Promise<RegistryModuleVersion[]> {
    const identity = `${a.host}/${a.namespace}/${a.name}/${a.system}`;
    const key = `versions/${sha256(identity)}.json`;
    return this.once(key, async () => {
      const hit = await this.cacheGet(key);
      if (
        hit !== null &&
        hit.identity === identity &&
        typeof hit.fetchedAt === 'number' &&
        Date.now() - hit.fetchedAt < this.versionsTtlMs &&
        Array.isArray(hit.versions)
      ) {
        return hit.versions as RegistryModuleVersion[];
      }
      const url = new URL('versions', await this.modulesBase(a));
      const what = `the version list of ${identity}`;
      const versions = parseModuleVersions(await this.http.getJson(url, what), `${what} (${url.href})`);
      await this.cachePut(key, { identity, fetchedAt: Date.now(), versions });
      return versions;
    });
  }

  /** The download location of one version (`X-Terraform-Get` or `location`), as given, and the URL
   * it is relative to. */
  async downloadLocation(
    a: RegistryModuleAddress,
    version: string,
  ): Promise<{ location: string; base: URL }> {
    const url = new URL(`${encodeURIComponent(version)}/download`, await this.modulesBase(a));
    const what = `the download location of ${a.host}/${a.namespace}/${a.name}/${a.system} ${version}`;
    const res = await this.http.request(url, what, { accept: (s) => s === 204 });
    const header = res.headers.get('x-terraform-get');
    if (header !== null && header !== '') return { location: header, base: url };
    let doc: unknown = null;
    try {
      doc = res.body.length === 0 ? null : (JSON.parse(res.body.toString('utf8')) as unknown);
    } catch {
      doc = null;
    }
    if (isObject(doc) && typeof doc.location === 'string' && doc.location !== '') {
      return { location: doc.location, base: url };
    }
    throw new HttpRequestError(
      'unavailable',
      `${what}: ${url.href} answered ${res.status} without X-Terraform-Get or a "location"`,
    );
  }

  /**
   * Downloads an archive from `url`, following at most `maxRedirects` redirects, each of which must
   * stay on the same host or go to an allowed one (`allowed`). Bounded by `maxDownloadBytes`.
   */
  async download(url: URL, what: string, allowed: (next: URL) => boolean): Promise<Buffer> {
    this.budget.download(what);
    let current = url;
    for (let hop = 0; hop <= this.maxRedirects; hop++) {
      const res = await this.http.request(current, what, {
        redirect: 'manual',
        maxBytes: this.maxDownloadBytes,
        accept: (s) => s >= 300 && s < 400,
        headers: { accept: '*/*' },
        // Like Terraform: the registry token goes to the registry's API, never to a package.
        anonymous: true,
      });
      if (res.status < 300 || res.status >= 400) return res.body;
      const location = res.headers.get('location');
      if (location === null)
        throw new HttpRequestError('unavailable', `${what}: ${current.href} redirected nowhere`);
      const next = httpUrl(location, current, 'redirect');
      if (next.host.toLowerCase() !== current.host.toLowerCase() && !allowed(next)) {
        throw new HttpRequestError(
          'unavailable',
          `${what}: ${current.href} redirected to ${next.host}, which is not an allowed module host`,
        );
      }
      current = next;
    }
    throw new HttpRequestError('unavailable', `${what}: more than ${this.maxRedirects} redirects`);
  }
}
