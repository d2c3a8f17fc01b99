/**
 * The HTTP machinery every registry client of tfguard shares (the provider registry's lock-file
 * check in src/lockfile/registry.ts, the module registry and module downloads in
 * src/modules/remote): which hosts may be contacted at all, service discovery, and GET requests
 * with a timeout, retries with exponential backoff (network errors, 429, 5xx), a size cap and an
 * overall budget (an `AbortSignal`, e.g. what the scan's deadline leaves).
 *
 * Hosts: the public Terraform and OpenTofu registries, and hosts whoever runs the scan mapped to a
 * base URL. A hostname written in a scanned configuration is never enough: following it would let
 * an upload aim the scanner at arbitrary (internal) endpoints (SSRF). A leaf: imports nothing else
 * of tfguard.
 */
import { domainToASCII } from 'node:url';

/** Why a request gave no usable answer: `not-found` (404/410) or `unavailable` (anything else). */
export class HttpRequestError extends Error {
  override readonly name = 'HttpRequestError';
  readonly kind: 'unavailable' | 'not-found';

  constructor(kind: 'unavailable' | 'not-found', message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
  }
}

export interface HttpClientOptions {
  /** Per-request timeout including the body, in ms (default 10,000). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2). */
  retries?: number;
  /** First backoff delay in ms, doubled per retry (default 250). */
  backoffMs?: number;
  /** Largest response body accepted, in bytes (default 8 MiB). */
  maxResponseBytes?: number;
  fetch?: typeof fetch;
  /**
   * Registry credentials: the `Authorization` header for a URL, or undefined (e.g.
   * `RegistryHosts`). Asked for every request and every redirect hop, so a token goes only to the
   * host it belongs to; a 401/403 answer names the registry host (`registryHostOf`).
   */
  credentials?: RequestCredentials;
  /**
   * The time budget of everything the client does: when it fires, requests in flight are
   * abandoned, no retry or new request starts, and every request fails as "unavailable" with the
   * signal's reason.
   */
  signal?: AbortSignal;
  /**
   * Asked before every attempt (retries included): may refuse it (throw, e.g. a spent budget) or
   * hold it until a slot is free (a concurrency limit); the function it resolves to is called once
   * the attempt is over.
   */
  gate?: RequestGate;
}

/** What decides whether, and when, a request is sent (see `HttpClientOptions.gate`). */
export interface RequestGate {
  enter(what: string, url: URL): Promise<() => void>;
}

/** The request settings a registry client passes through to its `HttpClient` unchanged. */
export type HttpTuning = Pick<
  HttpClientOptions,
  'timeoutMs' | 'retries' | 'backoffMs' | 'maxResponseBytes' | 'fetch' | 'signal'
>;

/** The `HttpTuning` settings of a client's options, those it leaves unset left out (so the
 * `HttpClient` defaults apply). */
export function httpTuning(options: HttpTuning): HttpTuning {
  const out: HttpTuning = {};
  if (options.timeoutMs !== undefined) out.timeoutMs = options.timeoutMs;
  if (options.retries !== undefined) out.retries = options.retries;
  if (options.backoffMs !== undefined) out.backoffMs = options.backoffMs;
  if (options.maxResponseBytes !== undefined) out.maxResponseBytes = options.maxResponseBytes;
  if (options.fetch !== undefined) out.fetch = options.fetch;
  if (options.signal !== undefined) out.signal = options.signal;
  return out;
}

/** Where credentials come from (see `RegistryHosts`). */
export interface RequestCredentials {
  /** `Bearer TOKEN` when `url` is on a registry host with a token, else undefined. */
  authorization(url: URL): string | undefined;
  /** The registry hostname a request to `url` is for (for 401/403 messages), else undefined. */
  registryHostOf(url: URL): string | undefined;
}

/** Redirects `follow` requests take at most (as fetch does). */
const MAX_FOLLOWED_REDIRECTS = 20;

/** One answer: status, headers and the (bounded) body, and the URL it came from. */
export interface HttpResponse {
  status: number;
  headers: Headers;
  body: Buffer;
  url: URL;
}

export interface RequestOptions {
  /** Overrides the client's `maxResponseBytes` for this request (downloads). */
  maxBytes?: number;
  /** `manual`: a 3xx answer is returned as it is (its `location` header read by the caller, who
   * checks the next host before following it). Default `follow`. */
  redirect?: 'follow' | 'manual';
  /** Statuses returned as answers rather than failures (e.g. 204 and 3xx of a download call). */
  accept?: (status: number) => boolean;
  headers?: Record<string, string>;
  /** Send no registry token with this request, whatever its host (package downloads: Terraform
   * sends tokens only to the registry's API, never to a package URL, even on the same host). */
  anonymous?: boolean;
}

/** Waits `ms`, or less when `signal` fires first. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The message of an abort reason, for "unavailable" outcomes. */
export function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.message !== '') return reason.message;
  return "the registry check's time budget ran out";
}

/** `fetch failed: connect ECONNREFUSED ...` (duck-typed: errors may come from another realm). */
export function describeError(err: unknown): string {
  const msg = (e: unknown): string | null =>
    typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string'
      ? (e as { message: string }).message
      : null;
  const own = msg(err) ?? String(err);
  const cause = msg((err as { cause?: unknown } | null)?.cause);
  return cause !== null && cause !== own ? `${own}: ${cause}` : own;
}

/** Resolves a URL from a response; only http(s) is followed, and never one carrying credentials. */
export function httpUrl(raw: string, base: URL, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch (err) {
    throw new HttpRequestError('unavailable', `${base.href} gave an invalid ${what} ${JSON.stringify(raw)}`, {
      cause: err,
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new HttpRequestError(
      'unavailable',
      `${base.href} gave a ${what} that is not http(s): ${JSON.stringify(raw)}`,
    );
  }
  return url;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** GET with timeout, size cap, retries and a budget. */
export class HttpClient {
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;
  readonly maxBytes: number;
  readonly signal: AbortSignal | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly credentials: RequestCredentials | undefined;
  private readonly gate: RequestGate | undefined;
  /** Requests sent (for diagnostics and tests of caches). */
  requestCount = 0;

  constructor(options: HttpClientOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retries = Math.max(0, options.retries ?? 2);
    this.backoffMs = options.backoffMs ?? 250;
    this.maxBytes = options.maxResponseBytes ?? 8 * 1024 * 1024;
    this.fetchImpl = options.fetch ?? fetch;
    this.signal = options.signal;
    this.credentials = options.credentials;
    this.gate = options.gate;
  }

  /** Throws "unavailable" once the budget ran out. */
  checkBudget(what: string, url: URL): void {
    if (this.signal?.aborted) {
      throw new HttpRequestError('unavailable', `${what}: ${url.href}: ${abortReason(this.signal)}`);
    }
  }

  async getJson(url: URL, what: string): Promise<unknown> {
    const body = await this.getBytes(url, what);
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch (err) {
      throw new HttpRequestError('unavailable', `${what}: ${url.href} did not return JSON`, { cause: err });
    }
  }

  /** The body of a 2xx answer. 404/410 → not-found; other failures → unavailable. */
  async getBytes(url: URL, what: string, options: RequestOptions = {}): Promise<Buffer> {
    return (await this.request(url, what, options)).body;
  }

  /** GET with retries: a 2xx answer (or one `accept` allows), else `HttpRequestError`. */
  async request(url: URL, what: string, options: RequestOptions = {}): Promise<HttpResponse> {
    let lastError: HttpRequestError | null = null;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      if (attempt > 0) await delay(this.backoffMs * 2 ** (attempt - 1), this.signal);
      this.checkBudget(what, url);
      const leave = this.gate === undefined ? undefined : await this.gate.enter(what, url);
      let result: Awaited<ReturnType<HttpClient['attempt']>>;
      try {
        this.checkBudget(what, url);
        result = await this.attempt(url, what, options);
      } finally {
        leave?.();
      }
      if (!('error' in result)) return result;
      if (!result.retry) throw result.error;
      lastError = result.error;
    }
    throw new HttpRequestError(
      'unavailable',
      `${lastError?.message ?? `${what}: request failed`} (after ${this.retries + 1} attempts)`,
      { cause: lastError },
    );
  }

  private async attempt(
    url: URL,
    what: string,
    options: RequestOptions,
  ): Promise<HttpResponse | { retry: boolean; error: HttpRequestError }> {
    const maxBytes = options.maxBytes ?? this.maxBytes;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    const signal = this.signal ? AbortSignal.any([controller.signal, this.signal]) : controller.signal;
    this.requestCount++;
    try {
      // Redirects are followed here, not by fetch: the credentials are worked out again for every
      // hop, so a token never travels to another host a registry redirects to.
      let res: Response;
      let current = url;
      for (let hop = 0; ; hop++) {
        const authorization =
          options.anonymous === true ? undefined : this.credentials?.authorization(current);
        res = await this.fetchImpl(current, {
          signal,
          headers: {
            accept: 'application/json, text/plain, */*',
            ...(options.headers ?? {}),
            ...(authorization !== undefined ? { authorization } : {}),
          },
          redirect: 'manual',
        });
        const location = res.headers.get('location');
        if (
          (options.redirect ?? 'follow') !== 'follow' ||
          ![301, 302, 303, 307, 308].includes(res.status) ||
          location === null
        ) {
          break;
        }
        await res.body?.cancel().catch(() => undefined);
        if (hop >= MAX_FOLLOWED_REDIRECTS) {
          return {
            retry: false,
            error: new HttpRequestError(
              'unavailable',
              `${what}: ${url.href}: more than ${MAX_FOLLOWED_REDIRECTS} redirects`,
            ),
          };
        }
        current = httpUrl(location, current, 'redirect');
      }
      const accepted = options.accept?.(res.status) === true;
      const registryHost =
        res.status === 401 || res.status === 403 ? this.credentials?.registryHostOf(current) : undefined;
      if (!accepted && registryHost !== undefined) {
        await res.body?.cancel().catch(() => undefined);
        return {
          retry: false,
          error: new HttpRequestError(
            'unavailable',
            `${what}: ${current.href} answered ${res.status}: the registry refused the request: no or invalid token for ${registryHost}`,
          ),
        };
      }
      if (!accepted && (res.status === 404 || res.status === 410)) {
        await res.body?.cancel().catch(() => undefined);
        return {
          retry: false,
          error: new HttpRequestError('not-found', `${what}: ${url.href} answered ${res.status}`),
        };
      }
      if (!accepted && !res.ok) {
        await res.body?.cancel().catch(() => undefined);
        const retry = res.status === 429 || res.status >= 500;
        return {
          retry,
          error: new HttpRequestError('unavailable', `${what}: ${url.href} answered ${res.status}`),
        };
      }
      const tooLarge = (): { retry: boolean; error: HttpRequestError } => ({
        retry: false,
        error: new HttpRequestError('unavailable', `${what}: ${url.href} is larger than ${maxBytes} bytes`),
      });
      const declared = Number(res.headers.get('content-length') ?? '0');
      if (declared > maxBytes) {
        await res.body?.cancel().catch(() => undefined);
        return tooLarge();
      }
      const chunks: Buffer[] = [];
      let size = 0;
      if (res.body !== null) {
        const reader = res.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > maxBytes) {
            await reader.cancel().catch(() => undefined);
            return tooLarge();
          }
          chunks.push(Buffer.from(value));
        }
      }
      return { status: res.status, headers: res.headers, body: Buffer.concat(chunks), url };
    } catch (err) {
      if (this.signal?.aborted) {
        return {
          retry: false,
          error: new HttpRequestError('unavailable', `${what}: ${url.href}: ${abortReason(this.signal)}`, {
            cause: err,
          }),
        };
      }
      const reason = controller.signal.aborted ? `no answer within ${this.timeoutMs} ms` : describeError(err);
      return {
        retry: true,
        error: new HttpRequestError('unavailable', `${what}: ${url.href}: ${reason}`, { cause: err }),
      };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A registry hostname as credentials are keyed: lower case, IDNs in punycode (as Terraform's
 * `svchost.ForComparison`); the port, if any, kept. */
export function normalizeRegistryHost(host: string): string {
  const h = host.trim().toLowerCase();
  const m = /^(.*?)(:\d+)?$/.exec(h);
  const name = m?.[1] ?? h;
  const ascii = domainToASCII(name);
  return `${ascii === '' ? name : ascii}${m?.[2] ?? ''}`;
}

/** Registries contacted without configuration. */
export const PUBLIC_REGISTRIES: ReadonlySet<string> = new Set([
  'registry.terraform.io',
  'registry.opentofu.org',
]);

/**
 * Which registry hosts may be contacted and where: the public registries (at `https://HOST`) and
 * the hosts the operator mapped to a base URL (`registry_hosts`, `TFGUARD_REGISTRY_HOSTS`).
 */
export class RegistryHosts implements RequestCredentials {
  private readonly hosts: Record<string, string>;
  /** Registry hostname (lower case, punycode) → token. Never logged or put in a message. */
  private readonly tokens: Map<string, string>;

  /**
   * `credentials`: the operator's token per registry hostname (`TF_TOKEN_*`, `credentials` blocks
   * of `--config`), sent as `Authorization: Bearer TOKEN` only to that registry's own host (its
   * base URL's scheme, host and port): service discovery, version lists and download endpoints there.
   */
  constructor(hosts: Record<string, string> = {}, credentials: Record<string, string> = {}) {
    this.hosts = Object.fromEntries(Object.entries(hosts).map(([h, u]) => [h.toLowerCase(), u]));
    this.tokens = new Map(
      Object.entries(credentials)
        .filter(([, t]) => t !== '')
        .map(([h, t]) => [normalizeRegistryHost(h), t]),
    );
  }

  /** Where requests for registry `host` go (the origin, `scheme://host[:port]`, of its base URL),
   * or null. The scheme counts: a redirect from https to http on the same host gets no token. */
  private connectionHost(host: string): string | null {
    try {
      return new URL(this.baseUrl(host)).origin.toLowerCase();
    } catch {
      return null;
    }
  }

  /** The registry with a token whose base URL is on the host of `url`. */
  private tokenHostOf(url: URL): string | undefined {
    const target = url.origin.toLowerCase();
    for (const host of this.tokens.keys()) {
      if (this.allowsHost(host) && this.connectionHost(host) === target) return host;
    }
    return undefined;
  }

  authorization(url: URL): string | undefined {
    const host = this.tokenHostOf(url);
    return host === undefined ? undefined : `Bearer ${this.tokens.get(host) ?? ''}`;
  }

  registryHostOf(url: URL): string | undefined {
    const target = url.origin.toLowerCase();
    const withToken = this.tokenHostOf(url);
    if (withToken !== undefined) return withToken;
    const known = [...PUBLIC_REGISTRIES, ...Object.keys(this.hosts)];
    return known.find((h) => this.connectionHost(h) === target);
  }

  allowsHost(host: string): boolean {
    const h = host.toLowerCase();
    return PUBLIC_REGISTRIES.has(h) || Object.prototype.hasOwnProperty.call(this.hosts, h);
  }

  /** Base URL of a registry host (configured mapping, else `https://HOST`). */
  baseUrl(host: string): string {
    return this.hosts[host.toLowerCase()] ?? `https://${host}`;
  }

  /** The operator's mapping, sorted by host. */
  mapping(): [string, string][] {
    return Object.entries(this.hosts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Why `host` is not contacted, for messages. */
  refusal(host: string): string {
    return (
      `registry host ${host} is not contacted: only ${[...PUBLIC_REGISTRIES].join(' and ')} and hosts ` +
      'mapped with registry_hosts by whoever runs the scan are'
    );
  }
}

/**
 * Service discovery (`GET https://HOST/.well-known/terraform.json`), one request per host for every
 * service (`providers.v1`, `modules.v1`). A failed discovery is remembered for `negativeTtlMs`.
 */
export class ServiceDiscovery {
  private readonly docs = new Map<
    string,
    { promise: Promise<{ doc: unknown; url: URL }>; expires: number }
  >();

  constructor(
    private readonly http: HttpClient,
    private readonly hosts: RegistryHosts,
    private readonly negativeTtlMs = 60_000,
  ) {}

  /** The URL of `service` at `host` (ending in `/`). Throws `HttpRequestError`. */
  async discover(host: string, service: string, label: string): Promise<URL> {
    const { doc, url } = await this.document(host);
    const value = isObject(doc) ? doc[service] : undefined;
    if (typeof value !== 'string') {
      throw new HttpRequestError(
        'unavailable',
        `${host} does not offer a ${label} (no "${service}" in ${url.href})`,
      );
    }
    return httpUrl(value.endsWith('/') ? value : `${value}/`, url, service);
  }

  private document(host: string): Promise<{ doc: unknown; url: URL }> {
    const key = host.toLowerCase();
    const hit = this.docs.get(key);
    if (hit !== undefined && hit.expires > Date.now()) return hit.promise;
    const promise = (async () => {
      const base = this.hosts.baseUrl(host);
      let baseUrl: URL;
      try {
        baseUrl = new URL(base.endsWith('/') ? base : `${base}/`);
      } catch (err) {
        throw new HttpRequestError('unavailable', `invalid registry base URL "${base}" for ${host}`, {
          cause: err,
        });
      }
      const url = new URL('.well-known/terraform.json', baseUrl);
      try {
        return { doc: await this.http.getJson(url, `service discovery of ${host}`), url };
      } catch (err) {
        if (err instanceof HttpRequestError && err.kind === 'not-found') {
          throw new HttpRequestError('unavailable', `${host} offers no service discovery (${err.message})`, {
            cause: err,
          });
        }
        throw err;
      }
    })();
    const entry = { promise, expires: Number.POSITIVE_INFINITY };
    this.docs.set(key, entry);
    promise.catch(() => {
      entry.expires = Date.now() + this.negativeTtlMs;
    });
    return promise;
  }
}
