/**
 * The one module that reads `process.env`. Everything else receives settings as parameters, so the
 * core stays pure and testable. Each function reads the variables it documents, at call time.
 */
import { domainToASCII } from 'node:url';
import { DEFAULT_LIMITS } from './archive/limits';
import { DEFAULT_MAX_PACKAGE_BYTES } from './lockfile/release-hashes';
import type { ArchiveLimits } from './model';
import { DEFAULT_MUTABLE_TTL_MS, DEFAULT_REMOTE_BUDGET } from './modules/remote/budget';
import type { HclParserSettings } from './scan/types';
import { cacheDirectoryFrom } from './util/cache-dir';
import type { SettingSpec, SettingType } from './util/settings';
import { defaultText, positive, readEnvSetting, SettingValueError, textType } from './util/settings';

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

// ---------------------------------------------------------------------------------------------
// Operator settings: every environment variable the CLI and the service read for a scan, declared
// once (src/util/settings.ts). The functions below read them; `--help` and the README's operator
// table are made from the table. The service's own variables are in src/service/settings.ts.
// ---------------------------------------------------------------------------------------------

const MiB = 1024 * 1024;

function operator(
  env: string,
  type: SettingType<number> | SettingType<string>,
  defaultValue: number | string | undefined,
  doc: string,
  extra: Partial<Pick<SettingSpec, 'flag' | 'defaultText' | 'readBy'>> = {},
): SettingSpec {
  return { env, type, default: defaultValue, origins: ['environment'], doc, ...extra } as SettingSpec;
}

const directory: SettingType<string> = {
  describe: 'a directory',
  fromValue: (value) => String(value).trim(),
};

const absoluteUrl = textType<string>('an absolute http(s) URL', (value, variable) => {
  let url: URL | null = null;
  try {
    url = new URL(value.trim());
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new SettingValueError(`${variable} must be an absolute http(s) URL, got ${JSON.stringify(value)}`);
  }
  return value.trim().replace(/\/+$/, '');
});

const onOff = textType<'on' | 'off'>('"on" or "off"', (value, variable) => {
  const v = value.trim().toLowerCase();
  if (v !== 'on' && v !== 'off')
    throw new SettingValueError(`${variable} must be "on" or "off", got ${JSON.stringify(value)}`);
  return v;
});

/** The environment variable of each archive limit (`src/archive/limits.ts`). */
export const ARCHIVE_LIMIT_VARIABLES: Readonly<Record<keyof ArchiveLimits, string>> = Object.freeze({
  maxEntries: 'TFGUARD_MAX_ENTRIES',
  maxTotalBytes: 'TFGUARD_MAX_TOTAL_BYTES',
  maxFileBytes: 'TFGUARD_MAX_FILE_BYTES',
  maxCompressionRatio: 'TFGUARD_MAX_COMPRESSION_RATIO',
  maxPathLength: 'TFGUARD_MAX_PATH_LENGTH',
  maxPathDepth: 'TFGUARD_MAX_PATH_DEPTH',
});

const ARCHIVE_LIMIT_DOCS: Readonly<Record<keyof ArchiveLimits, string>> = {
  maxEntries: 'archive entries',
  maxTotalBytes: 'uncompressed content, all files',
  maxFileBytes: 'one file',
  maxCompressionRatio: 'inflated ÷ compressed size (decompression bombs)',
  maxPathLength: 'path bytes',
  maxPathDepth: 'path segments',
};

function bytesText(n: number): string {
  return n >= MiB && n % MiB === 0 ? `${n} (${n / MiB} MiB)` : String(n);
}

/** Every operator setting of a scan, in the order the documentation lists them. */
export const OPERATOR_SETTINGS: readonly SettingSpec[] = [
  operator(
    'TFGUARD_SCAN_TIMEOUT_MS',
    positive(),
    undefined,
    'time limit of one whole scan in ms (CLI and service); over it: `scan timed out after … while parsing "x.tf"`, exit 2 (an audit lists that archive as `failed`)',
    { flag: '--timeout SECONDS' },
  ),
  ...(Object.keys(ARCHIVE_LIMIT_VARIABLES) as (keyof ArchiveLimits)[]).map((key) =>
    operator(
      ARCHIVE_LIMIT_VARIABLES[key],
      positive(key !== 'maxCompressionRatio'),
      DEFAULT_LIMITS[key],
      ARCHIVE_LIMIT_DOCS[key],
      { defaultText: bytesText(DEFAULT_LIMITS[key]) },
    ),
  ),
  operator(
    'TFGUARD_REMOTE_MAX_REQUESTS',
    positive(),
    DEFAULT_REMOTE_BUDGET.maxRequests,
    "requests one scan's remote module resolution may send; once spent, the modules left say so in `module-unresolved` notices ([budgets](docs/remote-modules.md#budgets))",
  ),
  operator(
    'TFGUARD_REMOTE_MAX_DOWNLOADS',
    positive(),
    DEFAULT_REMOTE_BUDGET.maxDownloads,
    "module packages one scan's remote module resolution may download",
  ),
  operator(
    'TFGUARD_REMOTE_MAX_CONCURRENCY',
    positive(),
    DEFAULT_REMOTE_BUDGET.maxConcurrent,
    'remote module requests in flight at once, over the whole process',
  ),
  operator(
    'TFGUARD_REMOTE_MUTABLE_TTL_SECONDS',
    positive(),
    DEFAULT_MUTABLE_TTL_MS / 1000,
    'how long a module behind a branch, tag or unchecksummed URL is reused from the cache, per repository ([the cache](docs/remote-modules.md#the-cache))',
  ),
  operator('TFGUARD_PARSER_WORKERS', positive(), undefined, 'HCL parser worker threads', {
    defaultText: 'min(2, cores)',
  }),
  operator(
    'TFGUARD_PARSER_TIMEOUT_MS',
    positive(),
    undefined,
    'time limit of one file in the full HCL parser',
    { defaultText: 'grows with the file size' },
  ),
  operator(
    'TFGUARD_CACHE_DIR',
    directory,
    undefined,
    "the CLI's cache: remote module answers, what `fix --registry` learnt from the registry, extraction results (`extract/`) and the V8 code cache of the CLI (`v8/`)",
    {
      flag: '--cache-dir DIR',
      defaultText: '`$XDG_CACHE_HOME/tfguard` or `~/.cache/tfguard`',
      readBy: 'cli',
    },
  ),
  operator(
    'TFGUARD_CODE_CACHE',
    onOff,
    'on',
    "`off`: the CLI keeps no V8 code cache of its bundle in the cache directory's `v8/` ([performance](docs/performance.md#a-cold-cli-run-against-its-floor-issue-24))",
    { readBy: 'cli' },
  ),
  operator(
    'TFGUARD_EXTRACT_CACHE',
    onOff,
    'on',
    "`off` (or `--no-cache`): `scan` and `fix` keep no extraction cache (what they parsed, per file content, in the cache directory's `extract/`, so unchanged files are not parsed again: [the extraction cache](docs/performance.md#the-clis-extraction-cache))",
    { flag: '--no-cache', readBy: 'cli' },
  ),
  operator(
    'TFGUARD_MAX_PACKAGE_BYTES',
    positive(),
    DEFAULT_MAX_PACKAGE_BYTES,
    'the largest provider package `fix --registry` downloads to hash it',
    { defaultText: bytesText(DEFAULT_MAX_PACKAGE_BYTES), readBy: 'cli' },
  ),
  operator(
    'TFGUARD_DOCS_URL',
    absoluteUrl,
    undefined,
    'base URL of the rule pages report links point to (`<url>/rules/<id>.md`)',
    { defaultText: "the project's own", readBy: 'cli' },
  ),
];

const OPERATOR_BY_ENV = new Map(OPERATOR_SETTINGS.map((spec) => [spec.env as string, spec]));

/** One operator setting from the environment: unset or blank = undefined (the lower layer's
 * default applies); an unusable value is an `EnvironmentError` naming the variable. */
function operatorValue<T>(name: string): T | undefined {
  const spec = OPERATOR_BY_ENV.get(name);
  if (spec === undefined) throw new Error(`no operator setting ${name}`);
  return readEnvSetting(spec, process.env, {
    fallback: undefined,
    error: (message) => new EnvironmentError(message),
  }) as T | undefined;
}

/** The CLI's "Environment:" lines of `--help`, from the table. */
export function operatorHelp(): string {
  return OPERATOR_SETTINGS.map((s) => s.env as string).join(', ');
}

/** The README's operator table, from the table. */
export function operatorTable(): string {
  const rows = OPERATOR_SETTINGS.map((s) => {
    const names = [s.flag, s.env].filter((x): x is string => x !== undefined).map((x) => `\`${x}\``);
    return `| ${names.join(', ')} | ${defaultText(s).replace(/\|/g, '\\|')} | ${s.doc.replace(/\|/g, '\\|')} |`;
  });
  return ['| Setting | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** Parser tuning: `TFGUARD_PARSER_WORKERS`, `TFGUARD_PARSER_TIMEOUT_MS`. */
export function parserSettings(): HclParserSettings {
  return {
    workers: operatorValue<number>('TFGUARD_PARSER_WORKERS'),
    timeoutMs: operatorValue<number>('TFGUARD_PARSER_TIMEOUT_MS'),
  };
}

/** `TFGUARD_SCAN_TIMEOUT_MS`: time limit of one whole scan (CLI and service); unset = none. */
export function scanTimeoutMs(): number | undefined {
  return operatorValue<number>('TFGUARD_SCAN_TIMEOUT_MS');
}

/**
 * `TFGUARD_CACHE_DIR`: where `tfguard fix` keeps what it learnt from the registry between runs
 * (verified SHA256SUMS, and the `h1:` of downloaded provider packages by their SHA-256); unset or
 * blank = nothing is kept beyond one run.
 */
export function cacheDir(): string | undefined {
  return operatorValue<string>('TFGUARD_CACHE_DIR');
}

/**
 * `TFGUARD_CODE_CACHE`: `off` runs the CLI bundle without its V8 code cache. The launcher
 * (src/cli/launch.ts) reads it before this module is loaded; this reader rejects an unusable value.
 */
export function codeCache(): 'on' | 'off' {
  return operatorValue<'on' | 'off'>('TFGUARD_CODE_CACHE') ?? 'on';
}

/** `TFGUARD_EXTRACT_CACHE`: whether the CLI keeps its extraction cache (default `on`; `off` turns
 * it off, as `--no-cache` does). */
export function extractCacheEnabled(): boolean {
  return operatorValue<'on' | 'off'>('TFGUARD_EXTRACT_CACHE') !== 'off';
}

/** `TFGUARD_MAX_PACKAGE_BYTES`: the largest provider package `tfguard fix` downloads to hash it. */
export function maxPackageBytes(): number | undefined {
  return operatorValue<number>('TFGUARD_MAX_PACKAGE_BYTES');
}

/** Bounds of remote module resolution (src/modules/remote/budget.ts), for the CLI and the service;
 * only the variables that are set (the defaults apply to the rest). */
export function remoteModuleLimits(): {
  maxRequests?: number;
  maxDownloads?: number;
  maxConcurrent?: number;
  mutableTtlMs?: number;
} {
  const out: { maxRequests?: number; maxDownloads?: number; maxConcurrent?: number; mutableTtlMs?: number } =
    {};
  const requests = operatorValue<number>('TFGUARD_REMOTE_MAX_REQUESTS');
  const downloads = operatorValue<number>('TFGUARD_REMOTE_MAX_DOWNLOADS');
  const concurrent = operatorValue<number>('TFGUARD_REMOTE_MAX_CONCURRENCY');
  const ttl = operatorValue<number>('TFGUARD_REMOTE_MUTABLE_TTL_SECONDS');
  if (requests !== undefined) out.maxRequests = requests;
  if (downloads !== undefined) out.maxDownloads = downloads;
  if (concurrent !== undefined) out.maxConcurrent = concurrent;
  if (ttl !== undefined) out.mutableTtlMs = ttl * 1000;
  return out;
}

/**
 * The archive limits an operator set (CLI and service): only the variables that are set, so the
 * defaults of `src/archive/limits.ts` apply to the rest. Nothing in a scanned archive can change these.
 */
export function archiveLimits(): Partial<ArchiveLimits> {
  const limits: Partial<ArchiveLimits> = {};
  for (const [key, name] of Object.entries(ARCHIVE_LIMIT_VARIABLES) as [keyof ArchiveLimits, string][]) {
    const value = operatorValue<number>(name);
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

/** The stage when `TFGUARD_STAGE` is not set (serverless.yml sets it to the deployment's stage). */
export const DEFAULT_STAGE = 'unknown';

// A CloudWatch dimension value, and what Serverless allows in a stage name.
const STAGE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `TFGUARD_STAGE` (the service only; read here with the other metrics settings). */
export const STAGE_SETTING: SettingSpec<string> = {
  env: 'TFGUARD_STAGE',
  type: textType<string>('a stage name', (value, variable) => {
    if (!STAGE.test(value)) {
      throw new SettingValueError(
        `${variable} must be 1 to 64 letters, digits, ".", "_" or "-" (starting ` +
          `with a letter or digit), got ${JSON.stringify(value)}`,
      );
    }
    return value;
  }),
  default: DEFAULT_STAGE,
  origins: ['environment'],
  readBy: 'service',
  doc: "the deployment's stage: the `stage` dimension of every metric (1 to 64 letters, digits, `.`, `_`, `-`)",
};

/**
 * `TFGUARD_STAGE`: the deployment's stage (`dev`, `prod` ...), a dimension of every metric so that
 * stages never share a series. Unset or blank: `unknown`.
 */
export function serviceStage(): string {
  try {
    return readEnvSetting(STAGE_SETTING, { TFGUARD_STAGE: process.env.TFGUARD_STAGE }) ?? DEFAULT_STAGE;
  } catch (err) {
    if (err instanceof SettingValueError) throw new EnvironmentError(err.message);
    throw err;
  }
}

/**
 * `TFGUARD_DOCS_URL`: base URL of the documentation that report links point to (rule pages are
 * `<url>/rules/<rule-id>.md`); unset or blank = the project's own (`DOCS_URL`). Must be an absolute
 * http(s) URL: a relative link breaks wherever the report is shown.
 */
export function docsUrl(): string | undefined {
  return operatorValue<string>('TFGUARD_DOCS_URL');
}

/**
 * The CLI's cache directory (remote module answers): `TFGUARD_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/tfguard`, else `~/.cache/tfguard`; undefined when none can be derived.
 */
export function cacheDirectory(): string | undefined {
  return cacheDirectoryFrom(cacheDir(), process.env.XDG_CACHE_HOME, process.env.HOME);
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
