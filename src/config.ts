/**
 * The one module that reads `process.env`. Everything else receives settings as parameters, so the
 * core stays pure and testable. Each function reads the variables it documents, at call time.
 */
import { domainToASCII } from 'node:url';
import type { ArchiveLimits } from './model';
import type { HclParserSettings } from './scan/types';

/** An environment variable with an unusable value; the message names the variable. */
export class EnvironmentError extends Error {
  override readonly name = 'EnvironmentError';
}

export type ColorMode = 'always' | 'never' | 'auto';

/** `NO_COLOR` (https://no-color.org) disables colour, `FORCE_COLOR` forces it; otherwise colour is
 * used only on a TTY. */
export function colorMode(): ColorMode {
  const env = process.env;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 'never';
  // FORCE_COLOR as Node.js and the chalk/supports-color family read it: 0 or false turns colour
  // off even on a terminal, any other value turns it on.
  const force = env.FORCE_COLOR;
  if (force === '0' || force === 'false') return 'never';
  if (force !== undefined && force !== '') return 'always';
  return 'auto';
}

/** A positive number from an environment variable (an integer unless `integer` is false); unset or
 * blank is undefined, anything else an `EnvironmentError` naming the variable. */
function positive(name: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (integer ? !Number.isSafeInteger(n) || n <= 0 : !Number.isFinite(n) || n <= 0) {
    throw new EnvironmentError(
      `environment variable ${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

function positiveInt(name: string, value: string | undefined): number | undefined {
  return positive(name, value, true);
}

/** Parser tuning: `TFGUARD_PARSER_WORKERS`, `TFGUARD_PARSER_TIMEOUT_MS`. */
export function parserSettings(): HclParserSettings {
  const env = process.env;
  return {
    workers: positiveInt('TFGUARD_PARSER_WORKERS', env.TFGUARD_PARSER_WORKERS),
    timeoutMs: positiveInt('TFGUARD_PARSER_TIMEOUT_MS', env.TFGUARD_PARSER_TIMEOUT_MS),
  };
}

/** `TFGUARD_SCAN_TIMEOUT_MS`: time limit of one whole scan (CLI and service); unset = none. */
export function scanTimeoutMs(): number | undefined {
  return positiveInt('TFGUARD_SCAN_TIMEOUT_MS', process.env.TFGUARD_SCAN_TIMEOUT_MS);
}

/**
 * `TFGUARD_CACHE_DIR`: where `tfguard fix` keeps what it learnt from the registry between runs
 * (verified SHA256SUMS, and the `h1:` of downloaded provider packages by their SHA-256); unset or
 * blank = nothing is kept beyond one run.
 */
export function cacheDir(): string | undefined {
  const value = process.env.TFGUARD_CACHE_DIR;
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** `TFGUARD_MAX_PACKAGE_BYTES`: the largest provider package `tfguard fix` downloads to hash it
 * (default 1 GiB). */
export function maxPackageBytes(): number | undefined {
  return positiveInt('TFGUARD_MAX_PACKAGE_BYTES', process.env.TFGUARD_MAX_PACKAGE_BYTES);
}

/**
 * Bounds of remote module resolution (src/modules/remote/budget.ts), for the CLI and the service:
 * `TFGUARD_REMOTE_MAX_REQUESTS` (requests one scan may send, default 1000),
 * `TFGUARD_REMOTE_MAX_DOWNLOADS` (packages one scan may download, default 200),
 * `TFGUARD_REMOTE_MAX_CONCURRENCY` (requests in flight in the process, default 8) and
 * `TFGUARD_REMOTE_MUTABLE_TTL_SECONDS` (how long a package behind a branch, tag or unchecksummed URL
 * is reused from the cache, default 600). Unset: the default.
 */
export function remoteModuleLimits(): {
  maxRequests?: number;
  maxDownloads?: number;
  maxConcurrent?: number;
  mutableTtlMs?: number;
} {
  const env = process.env;
  const out: { maxRequests?: number; maxDownloads?: number; maxConcurrent?: number; mutableTtlMs?: number } =
    {};
  const requests = positiveInt('TFGUARD_REMOTE_MAX_REQUESTS', env.TFGUARD_REMOTE_MAX_REQUESTS);
  const downloads = positiveInt('TFGUARD_REMOTE_MAX_DOWNLOADS', env.TFGUARD_REMOTE_MAX_DOWNLOADS);
  const concurrent = positiveInt('TFGUARD_REMOTE_MAX_CONCURRENCY', env.TFGUARD_REMOTE_MAX_CONCURRENCY);
  const ttl = positiveInt('TFGUARD_REMOTE_MUTABLE_TTL_SECONDS', env.TFGUARD_REMOTE_MUTABLE_TTL_SECONDS);
  if (requests !== undefined) out.maxRequests = requests;
  if (downloads !== undefined) out.maxDownloads = downloads;
  if (concurrent !== undefined) out.maxConcurrent = concurrent;
  if (ttl !== undefined) out.mutableTtlMs = ttl * 1000;
  return out;
}

/** The environment variable of each archive limit (`src/archive/limits.ts`). */
export const ARCHIVE_LIMIT_VARIABLES: Readonly<Record<keyof ArchiveLimits, string>> = Object.freeze({
  maxEntries: 'TFGUARD_MAX_ENTRIES',
  maxTotalBytes: 'TFGUARD_MAX_TOTAL_BYTES',
  maxFileBytes: 'TFGUARD_MAX_FILE_BYTES',
  maxCompressionRatio: 'TFGUARD_MAX_COMPRESSION_RATIO',
  maxPathLength: 'TFGUARD_MAX_PATH_LENGTH',
  maxPathDepth: 'TFGUARD_MAX_PATH_DEPTH',
});

/**
 * The archive limits an operator set (CLI and service): only the variables that are set, so the
 * defaults of `src/archive/limits.ts` apply to the rest. Positive integers, the compression ratio
 * a positive number. Nothing in a scanned archive can change these.
 */
export function archiveLimits(): Partial<ArchiveLimits> {
  const env = process.env;
  const limits: Partial<ArchiveLimits> = {};
  for (const [key, name] of Object.entries(ARCHIVE_LIMIT_VARIABLES) as [keyof ArchiveLimits, string][]) {
    const value = positive(name, env[name], key !== 'maxCompressionRatio');
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

/** The stage when `TFGUARD_STAGE` is not set (serverless.yml sets it to the deployment's stage). */
export const DEFAULT_STAGE = 'unknown';

// A CloudWatch dimension value, and what Serverless allows in a stage name.
const STAGE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * `TFGUARD_STAGE`: the deployment's stage (`dev`, `prod` ...), a dimension of every metric so that
 * stages never share a series. Unset or blank: `unknown`.
 */
export function serviceStage(): string {
  const raw = process.env.TFGUARD_STAGE;
  if (raw === undefined || raw.trim() === '') return DEFAULT_STAGE;
  const stage = raw.trim();
  if (!STAGE.test(stage)) {
    throw new EnvironmentError(
      `environment variable TFGUARD_STAGE must be 1 to 64 letters, digits, ".", "_" or "-" (starting ` +
        `with a letter or digit), got ${JSON.stringify(raw)}`,
    );
  }
  return stage;
}

/**
 * `TFGUARD_DOCS_URL`: base URL of the documentation that report links point to (rule pages are
 * `<url>/rules/<rule-id>.md`); unset or blank = the project's own (`DOCS_URL`). Must be an absolute
 * http(s) URL: a relative link breaks wherever the report is shown.
 */
export function docsUrl(): string | undefined {
  const value = process.env.TFGUARD_DOCS_URL;
  if (value === undefined || value.trim() === '') return undefined;
  let url: URL | null = null;
  try {
    url = new URL(value.trim());
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new EnvironmentError(
      `environment variable TFGUARD_DOCS_URL must be an absolute http(s) URL, got ${JSON.stringify(value)}`,
    );
  }
  return value.trim().replace(/\/+$/, '');
}

/**
 * The CLI's cache directory (remote module answers): `TFGUARD_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/tfguard`, else `~/.cache/tfguard`; undefined when none can be derived.
 */
export function cacheDirectory(): string | undefined {
  const own = cacheDir();
  if (own !== undefined) return own;
  const env = process.env;
  const xdg = env.XDG_CACHE_HOME?.trim();
  if (xdg !== undefined && xdg !== '') return `${xdg.replace(/\/+$/, '')}/tfguard`;
  const home = env.HOME?.trim();
  if (home !== undefined && home !== '') return `${home.replace(/\/+$/, '')}/.cache/tfguard`;
  return undefined;
}

/**
 * The registry host an environment variable `TF_TOKEN_<host>` is for, as Terraform reads them
 * (internal/command/cliconfig/credentials.go): `__` stands for a hyphen, `_` for a dot, and the
 * hostname may be an IDN in UTF-8 or punycode (normalized to lower-case punycode). Null when the
 * name is not such a variable or names no valid hostname.
 */
export function tokenVariableHost(name: string): string | null {
  const prefix = 'TF_TOKEN_';
  if (!name.startsWith(prefix) || name.length === prefix.length) return null;
  const raw = name.slice(prefix.length).replaceAll('__', '-').replaceAll('_', '.');
  const host = domainToASCII(raw);
  return host === '' ? null : host;
}

/** The environment variable Terraform reads the token of registry `host` from (punycode, dots as
 * `_`; hyphens may also be written `__`, which this spelling uses). */
export function tokenVariableName(host: string): string {
  const ascii = domainToASCII(host.trim().toLowerCase()) || host.trim().toLowerCase();
  return `TF_TOKEN_${ascii.replaceAll('-', '__').replaceAll('.', '_')}`;
}

/**
 * `TF_TOKEN_<host>`: the operator's registry tokens (CLI and service), hostname → token, as
 * Terraform reads them. Sent only to that registry's own host; never logged or reported.
 */
export function registryTokens(): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || value === '') continue;
    const host = tokenVariableHost(name);
    if (host !== null) tokens[host] = value;
  }
  return tokens;
}

/** A snapshot of the environment for settings loaders that take it as a parameter. */
export function environment(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
