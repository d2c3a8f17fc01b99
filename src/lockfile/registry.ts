/**
 * A client for the provider registry protocol, just enough to authenticate what a lock file records
 * (https://developer.hashicorp.com/terraform/internals/provider-registry-protocol):
 *
 * 1. service discovery `GET https://HOST/.well-known/terraform.json` → `providers.v1`;
 * 2. `GET {providers.v1}NAMESPACE/TYPE/versions` → is the version published, for which platforms;
 * 3. `GET {providers.v1}NAMESPACE/TYPE/VERSION/download/OS/ARCH` → `filename`, `shasum`,
 *    `shasums_url`, `shasums_signature_url`, `signing_keys` (and, from the OpenTofu registry,
 *    `packages` with every platform's hashes);
 * 4. `SHA256SUMS` and its detached signature, authenticated as Terraform does (`signature.ts`).
 *
 * Requests time out, are retried with exponential backoff on network errors, 429 and 5xx, and are
 * capped in size. Verified results are cached in an `ObjectStore` under
 * `registry-sums/v1/HOST/NAMESPACE/TYPE/VERSION.json`, so repeated audits ask the registry once per
 * provider version. Hostnames map to base URLs through `hosts` (`registry_hosts` in `.tfguard.hcl`);
 * any other host is `https://HOST`.
 */
import type { Engine } from '../model';
import type { ObjectStore } from '../storage/types';
import { HASHICORP_PARTNERS_KEY, HASHICORP_PUBLIC_KEY } from './hashicorp-keys';
import { authenticateSums } from './signature';
import type { RegistrySigningKey } from './signature';
import type { RegistryOutcome } from './types';
import {
  describeError,
  HttpClient,
  httpTuning,
  HttpRequestError as RegistryRequestError,
  httpUrl,
  PUBLIC_REGISTRIES,
  RegistryHosts,
  ServiceDiscovery,
} from '../util/http';

export { describeError, PUBLIC_REGISTRIES } from '../util/http';

export interface RegistryClientOptions {
  /** Registry hostname → base URL (e.g. a private mirror, or a local test server). */
  hosts?: Record<string, string>;
  /** Registry hostname → token (`TF_TOKEN_*`, `credentials` blocks of `--config`), sent as
   * `Authorization: Bearer` only to that registry's own host, never to download hosts. */
  credentials?: Record<string, string>;
  /** Where verified checksums are cached; no cache when absent. */
  cache?: ObjectStore;
  /** Key prefix inside the cache (default `registry-sums/v1/`). */
  cachePrefix?: string;
  /** Per-request timeout including the body, in ms (default 10,000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  retries?: number;
  /** First backoff delay in ms, doubled per retry (default 250). */
  backoffMs?: number;
  /** Largest response body accepted, in bytes (default 8 MiB). */
  maxResponseBytes?: number;
  fetch?: typeof fetch;
  /** Armored keys that mark official providers (default: HashiCorp's key). */
  officialKeys?: string[];
  /** Armored keys that sign partner keys (default: HashiCorp's partners key). */
  partnerKeys?: string[];
  /** How long an "unavailable" answer is remembered before the registry is asked again (default
   * 60 s), so one scan does not retry a dead registry once per provider. */
  negativeTtlMs?: number;
  /**
   * The check's time budget (e.g. what a scan's deadline leaves it): when it fires, requests in
   * flight are abandoned, no retry or new request starts, and every release not answered by then
   * is "unavailable" with the signal's reason.
   */
  signal?: AbortSignal;
}

export interface ReleaseQuery {
  /** `HOST/NAMESPACE/TYPE`. */
  source: string;
  version: string;
  engine: Engine;
  /** Platforms of interest (`OS_ARCH`); the first one the release has is used for the download call. */
  platforms?: readonly string[];
}

const CACHE_SCHEMA = 1;

interface CacheRecord {
  schema: number;
  source: string;
  version: string;
  trust: 'official' | 'partner' | 'community' | 'unsigned';
  keyId: string | null;
  sums: Record<string, string>;
  packages: Record<string, string[]> | null;
  verifiedAt: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `SHA256SUMS` lines are `<hex>  <file name>`; malformed lines are ignored (as Terraform does). */
export function parseSums(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 2) continue;
    const hex = (fields[0] as string).toLowerCase();
    const name = (fields[1] as string).replace(/^\*/, '');
    if (!/^[0-9a-f]{64}$/.test(hex)) continue;
    if (!Object.prototype.hasOwnProperty.call(out, name)) out[name] = hex;
  }
  return out;
}

/** `OS_ARCH` → `zh:` hash, from sums entries named `..._OS_ARCH.zip`. */
export function platformsFromSums(sums: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, hex] of Object.entries(sums)) {
    const m = /_([a-z0-9]+_[a-z0-9]+)\.zip$/.exec(name);
    if (m !== null) out[m[1] as string] = `zh:${hex}`;
  }
  return out;
}

function parsePackages(v: unknown): Record<string, string[]> | null {
  if (!isObject(v)) return null;
  const out: Record<string, string[]> = {};
  for (const [platform, entry] of Object.entries(v)) {
    if (!isObject(entry) || !Array.isArray(entry.hashes)) continue;
    out[platform] = entry.hashes.filter((h): h is string => typeof h === 'string');
  }
  return Object.keys(out).length === 0 ? null : out;
}

export class RegistryClient {
  private readonly hosts: RegistryHosts;
  private readonly cache: ObjectStore | undefined;
  private readonly cachePrefix: string;
  private readonly http: HttpClient;
  private readonly discovery: ServiceDiscovery;
  private readonly officialKeys: string[];
  private readonly partnerKeys: string[];
  private readonly negativeTtlMs: number;
  private readonly releases = new Map<string, { promise: Promise<RegistryOutcome>; expires: number }>();

  constructor(options: RegistryClientOptions = {}) {
    this.hosts = new RegistryHosts(options.hosts ?? {}, options.credentials ?? {});
    this.cache = options.cache;
    this.cachePrefix = options.cachePrefix ?? 'registry-sums/v1/';
    this.http = new HttpClient({
      ...httpTuning(options),
      credentials: this.hosts,
    });
    this.officialKeys = options.officialKeys ?? [HASHICORP_PUBLIC_KEY];
    this.partnerKeys = options.partnerKeys ?? [HASHICORP_PARTNERS_KEY];
    this.negativeTtlMs = options.negativeTtlMs ?? 60_000;
    this.discovery = new ServiceDiscovery(this.http, this.hosts, this.negativeTtlMs);
  }

  /** Requests sent (for diagnostics and tests of the cache). */
  get requestCount(): number {
    return this.http.requestCount;
  }

  /**
   * Whether the client may contact a registry host: the public Terraform and OpenTofu registries,
   * and hosts the operator mapped in `hosts`. Any other hostname comes from the scanned
   * configuration itself, and following it would let an upload aim the scanner at arbitrary
   * (internal) endpoints.
   */
  allowsHost(host: string): boolean {
    return this.hosts.allowsHost(host);
  }

  /** Base URL of a registry host (configured mapping, else `https://HOST`). */
  baseUrl(host: string): string {
    return this.hosts.baseUrl(host);
  }

  /**
   * What the registry publishes for one provider version: its authenticated checksums, or why they
   * are not available. Never throws. Answers are memoized for the client's lifetime, except
   * "unavailable", which is asked again after `negativeTtlMs`.
   */
  checkRelease(query: ReleaseQuery): Promise<RegistryOutcome> {
    const key = `${query.engine} ${query.source} ${query.version}`;
    const hit = this.releases.get(key);
    if (hit !== undefined && hit.expires > Date.now()) return hit.promise;
    const host = query.source.split('/')[0] ?? '';
    if (!this.allowsHost(host)) {
      return Promise.resolve({ status: 'unavailable', reason: this.hosts.refusal(host) });
    }
    const promise = this.load(query).catch((err: unknown) => ({
      status: 'unavailable' as const,
      reason: `internal error while asking the registry: ${describeError(err)}`,
    }));
    const entry = { promise, expires: Number.POSITIVE_INFINITY };
    this.releases.set(key, entry);
    void promise.then((o) => {
      if (o.status === 'unavailable') entry.expires = Date.now() + this.negativeTtlMs;
    });
    return promise;
  }

  /** The release a query names, split into host, namespace and type, or why it cannot be asked. */
  private target(source: string): { host: string; namespace: string; type: string } | { reason: string } {
    const parts = source.split('/');
    if (parts.length !== 3) return { reason: `"${source}" is not a registry provider address` };
    const [host, namespace, type] = parts as [string, string, string];
    if (!this.allowsHost(host)) {
      return {
        reason:
          `registry host ${host} is not contacted: only ${[...PUBLIC_REGISTRIES].join(' and ')} and hosts ` +
          'mapped with registry_hosts by whoever runs the scan are',
      };
    }
    return { host, namespace, type };
  }

  /**
   * Every version the registry publishes for a provider, with the platforms of each (what
   * `terraform init` selects from). Never throws.
   */
  async availableVersions(
    source: string,
  ): Promise<
    | { status: 'ok'; versions: { version: string; platforms: string[] }[] }
    | { status: 'not-found' | 'unavailable'; reason: string }
  > {
    const t = this.target(source);
    if ('reason' in t) return { status: 'unavailable', reason: t.reason };
    try {
      const v1 = await this.discovery.discover(t.host, 'providers.v1', 'provider registry');
      const url = new URL(`${encodeURIComponent(t.namespace)}/${encodeURIComponent(t.type)}/versions`, v1);
      const doc = await this.http.getJson(url, `the version list of ${t.namespace}/${t.type}`);
      if (!isObject(doc) || !Array.isArray(doc.versions)) {
        return { status: 'unavailable', reason: `${url.href} returned no "versions" list` };
      }
      const versions = doc.versions.filter(isObject).flatMap((v) =>
        typeof v.version !== 'string'
          ? []
          : [
              {
                version: v.version,
                platforms: (Array.isArray(v.platforms) ? v.platforms : [])
                  .filter(isObject)
                  .map((p) => `${String(p.os)}_${String(p.arch)}`)
                  .filter((p) => /^[a-z0-9]+_[a-z0-9]+$/.test(p)),
              },
            ],
      );
      return { status: 'ok', versions };
    } catch (err) {
      if (err instanceof RegistryRequestError) return { status: err.kind, reason: err.message };
      return {
        status: 'unavailable',
        reason: `internal error while asking the registry: ${describeError(err)}`,
      };
    }
  }

  /**
   * Where the registry serves the package of one platform of a release: its file name, download
   * URL (resolved, http(s) only) and the `shasum` the registry announces. Never throws.
   */
  async packageLocation(
    source: string,
    version: string,
    platform: string,
  ): Promise<
    | { status: 'ok'; filename: string; url: URL; shasum: string }
    | { status: 'not-found' | 'unavailable'; reason: string }
  > {
    const t = this.target(source);
    if ('reason' in t) return { status: 'unavailable', reason: t.reason };
    const [os, arch] = platform.split('_') as [string, string];
    try {
      const v1 = await this.discovery.discover(t.host, 'providers.v1', 'provider registry');
      const providerUrl = new URL(`${encodeURIComponent(t.namespace)}/${encodeURIComponent(t.type)}/`, v1);
      const url = new URL(`${encodeURIComponent(version)}/download/${os}/${arch}`, providerUrl);
      const dl = await this.http.getJson(
        url,
        `the download data of ${t.namespace}/${t.type} ${version} ${platform}`,
      );
      if (
        !isObject(dl) ||
        typeof dl.download_url !== 'string' ||
        typeof dl.filename !== 'string' ||
        typeof dl.shasum !== 'string'
      ) {
        return { status: 'unavailable', reason: `${url.href} returned no download_url, filename or shasum` };
      }
      return {
        status: 'ok',
        filename: dl.filename,
        url: httpUrl(dl.download_url, url, 'download_url'),
        shasum: dl.shasum.toLowerCase(),
      };
    } catch (err) {
      if (err instanceof RegistryRequestError) return { status: err.kind, reason: err.message };
      return {
        status: 'unavailable',
        reason: `internal error while asking the registry: ${describeError(err)}`,
      };
    }
  }

  private cacheKey(source: string, version: string): string {
    return `${this.cachePrefix}${source}/${version}.json`;
  }

  private async readCache(query: ReleaseQuery): Promise<RegistryOutcome | null> {
    if (this.cache === undefined) return null;
    let stored;
    try {
      stored = await this.cache.get(this.cacheKey(query.source, query.version));
    } catch {
      return null; // the cache is an optimisation; a failing store means asking the registry
    }
    if (stored === null) return null;
    let rec: CacheRecord;
    try {
      rec = JSON.parse(stored.body.toString('utf8')) as CacheRecord;
    } catch {
      return null;
    }
    if (rec.schema !== CACHE_SCHEMA || rec.source !== query.source || rec.version !== query.version)
      return null;
    if (!isObject(rec.sums)) return null;
    if (rec.trust === 'unsigned' && query.engine !== 'opentofu') return null;
    return {
      status: 'verified',
      trust: rec.trust,
      keyId: rec.keyId,
      sums: rec.sums,
      platforms: platformsFromSums(rec.sums),
      packages: rec.packages,
      cached: true,
    };
  }

  private async writeCache(
    query: ReleaseQuery,
    outcome: Extract<RegistryOutcome, { status: 'verified' }>,
  ): Promise<void> {
    if (this.cache === undefined) return;
    const rec: CacheRecord = {
      schema: CACHE_SCHEMA,
      source: query.source,
      version: query.version,
      trust: outcome.trust,
      keyId: outcome.keyId,
      sums: outcome.sums,
      packages: outcome.packages,
      verifiedAt: new Date().toISOString(),
    };
    try {
      await this.cache.put(this.cacheKey(query.source, query.version), JSON.stringify(rec), {
        contentType: 'application/json',
      });
    } catch {
      // Best effort: the next scan verifies again.
    }
  }

  private async load(query: ReleaseQuery): Promise<RegistryOutcome> {
    const parts = query.source.split('/');
    if (parts.length !== 3)
      return { status: 'not-found', reason: `"${query.source}" is not a registry provider address` };
    const [host, namespace, type] = parts as [string, string, string];
    const cached = await this.readCache(query);
    if (cached !== null) return cached;
    try {
      const outcome = await this.fetchRelease(query, host, namespace, type);
      if (outcome.status === 'verified') await this.writeCache(query, outcome);
      return outcome;
    } catch (err) {
      if (err instanceof RegistryRequestError) return { status: err.kind, reason: err.message };
      throw err;
    }
  }

  private async fetchRelease(
    query: ReleaseQuery,
    host: string,
    namespace: string,
    type: string,
  ): Promise<RegistryOutcome> {
    const v1 = await this.discovery.discover(host, 'providers.v1', 'provider registry');
    const providerUrl = new URL(`${encodeURIComponent(namespace)}/${encodeURIComponent(type)}/`, v1);
    const versionsUrl = new URL('versions', providerUrl);
    const versions = await this.http.getJson(versionsUrl, `the version list of ${namespace}/${type}`);
    if (!isObject(versions) || !Array.isArray(versions.versions)) {
      throw new RegistryRequestError('unavailable', `${versionsUrl.href} returned no "versions" list`);
    }
    const release = versions.versions.find((v) => isObject(v) && v.version === query.version);
    if (!isObject(release)) {
      return {
        status: 'not-found',
        reason: `the registry at ${host} does not publish version ${query.version} of ${namespace}/${type}`,
      };
    }
    const platforms = (Array.isArray(release.platforms) ? release.platforms : [])
      .filter(isObject)
      .map((p) => `${String(p.os)}_${String(p.arch)}`)
      .filter((p) => /^[a-z0-9]+_[a-z0-9]+$/.test(p));
    const preferred = (query.platforms ?? []).find((p) => platforms.includes(p)) ?? platforms[0];
    if (preferred === undefined) {
      return {
        status: 'not-found',
        reason: `${namespace}/${type} ${query.version} lists no platforms at ${host}`,
      };
    }
    const [os, arch] = preferred.split('_') as [string, string];
    const downloadUrl = new URL(`${encodeURIComponent(query.version)}/download/${os}/${arch}`, providerUrl);
    const dl = await this.http.getJson(
      downloadUrl,
      `the download data of ${namespace}/${type} ${query.version}`,
    );
    if (!isObject(dl) || typeof dl.shasums_url !== 'string' || typeof dl.shasums_signature_url !== 'string') {
      throw new RegistryRequestError(
        'unavailable',
        `${downloadUrl.href} returned no shasums_url / shasums_signature_url`,
      );
    }
    const sumsUrl = httpUrl(dl.shasums_url, downloadUrl, 'shasums_url');
    const sigUrl = httpUrl(dl.shasums_signature_url, downloadUrl, 'shasums_signature_url');
    let sumsBytes: Buffer;
    let sigBytes: Buffer;
    try {
      [sumsBytes, sigBytes] = await Promise.all([
        this.http.getBytes(sumsUrl, 'the SHA256SUMS file'),
        this.http.getBytes(sigUrl, 'the SHA256SUMS signature'),
      ]);
    } catch (err) {
      // A registry that names checksum files it does not serve cannot be authenticated (Terraform
      // fails the installation); an outage stays "unavailable".
      if (err instanceof RegistryRequestError && err.kind === 'not-found') {
        return { status: 'signature-invalid', reason: err.message };
      }
      throw err;
    }
    const keys: RegistrySigningKey[] = [];
    const signing = isObject(dl.signing_keys) ? dl.signing_keys.gpg_public_keys : undefined;
    if (Array.isArray(signing)) {
      for (const k of signing) {
        if (!isObject(k) || typeof k.ascii_armor !== 'string') continue;
        keys.push({
          asciiArmor: k.ascii_armor,
          ...(typeof k.key_id === 'string' ? { keyId: k.key_id } : {}),
          ...(typeof k.trust_signature === 'string' ? { trustSignature: k.trust_signature } : {}),
        });
      }
    }
    let trust: 'official' | 'partner' | 'community' | 'unsigned';
    let keyId: string | null = null;
    if (keys.length === 0 && query.engine === 'opentofu') {
      trust = 'unsigned';
    } else {
      const auth = await authenticateSums(sumsBytes, sigBytes, keys, {
        official: this.officialKeys,
        partners: this.partnerKeys,
      });
      if (!auth.ok) return { status: 'signature-invalid', reason: `${auth.reason} (${sumsUrl.href})` };
      trust = auth.trust;
      keyId = auth.keyId;
    }
    const sums = parseSums(sumsBytes.toString('utf8'));
    if (typeof dl.filename === 'string' && typeof dl.shasum === 'string') {
      const listed = sums[dl.filename];
      if (listed === undefined) {
        return {
          status: 'signature-invalid',
          reason: `the signed SHA256SUMS has no entry for ${dl.filename}, the file the registry offers for ${preferred}`,
        };
      }
      if (listed !== dl.shasum.toLowerCase()) {
        return {
          status: 'signature-invalid',
          reason: `the registry's shasum for ${dl.filename} (${dl.shasum}) differs from the signed SHA256SUMS (${listed})`,
        };
      }
    }
    return {
      status: 'verified',
      trust,
      keyId,
      sums,
      platforms: platformsFromSums(sums),
      packages: parsePackages(dl.packages),
      cached: false,
    };
  }
}
