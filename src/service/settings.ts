/**
 * Settings of the deployed service, read from an environment object passed in (src/config.ts hands
 * over `process.env`; tests pass plain objects). Every variable, its default and its validation are
 * here; docs/service.md lists them.
 */
import type { FailOn } from '../report/types';
import { configSetting } from '../scan/settings';
import type { SettingSpec, SettingType } from '../util/settings';
import { bool, defaultText, readEnvSetting, textType } from '../util/settings';
import { AccessPolicyError, parseAccessPolicy, type AccessPolicy } from './access';

export interface BucketLocation {
  bucket: string;
  /** Key prefix, `''` or ending in `/`. */
  prefix: string;
}

export interface ServiceSettings {
  /** `AWS_REGION` (set by Lambda). */
  region: string | undefined;
  /** Where archives are uploaded (`TFGUARD_UPLOADS_BUCKET`, `TFGUARD_UPLOADS_PREFIX`). */
  uploads: BucketLocation;
  /** Where reports, pointers, audit runs and the registry cache go (`TFGUARD_REPORTS_*`). */
  reports: BucketLocation;
  /** `TFGUARD_S3_ENDPOINT`, `TFGUARD_S3_FORCE_PATH_STYLE`: an S3-compatible store instead of AWS. */
  s3: { endpoint: string | undefined; forcePathStyle: boolean };
  /** `TFGUARD_SQS_ENDPOINT`. */
  sqs: { endpoint: string | undefined };
  /** `TFGUARD_AUDIT_QUEUE_URL`: the audit fan-out queue (needed by the audit start function only). */
  auditQueueUrl: string | undefined;
  /** `TFGUARD_FAIL_ON`: default gate for the API's verdict. */
  failOn: FailOn;
  /** `TFGUARD_SCAN_REGISTRY`: registry cross-check in upload and API scans (default on, as in every Lambda scan). */
  scanRegistry: boolean;
  /** `TFGUARD_AUDIT_REGISTRY`: registry cross-check in audit rescans (default on). */
  auditRegistry: boolean;
  /** `TFGUARD_REGISTRY_HOSTS`: JSON object, registry hostname → base URL (private registries and
   * mirrors). The only way to add a registry host: a scanned archive cannot (SSRF). Default `{}`. */
  registryHosts: Record<string, string>;
  /** `TFGUARD_REMOTE_MODULES`: resolve remote modules over the network (registries, and git or HTTP
   * packages on `TFGUARD_MODULE_HOSTS`) in every scan (default on). */
  remoteModules: boolean;
  /** `TFGUARD_MODULE_HOSTS`: JSON object, git / HTTP hostname → base URL (`""` for `https://HOST`):
   * the only hosts remote module packages are downloaded from. Default `{}`. */
  moduleHosts: Record<string, string>;
  /** `TFGUARD_MAX_ARCHIVE_BYTES`: larger uploads are rejected without being downloaded. */
  maxArchiveBytes: number;
  /** `TFGUARD_API_MAX_BODY_BYTES`: largest archive accepted in a `POST /scans` body. */
  apiMaxBodyBytes: number;
  /** `TFGUARD_UPLOAD_URL_TTL_SECONDS`: lifetime of presigned upload URLs. */
  uploadUrlTtlSeconds: number;
  /** `TFGUARD_REPORT_URL_TTL_SECONDS`: lifetime of the presigned report links the API returns. */
  reportUrlTtlSeconds: number;
  /** `TFGUARD_AUDIT_MAX_RECEIVE_COUNT`: must equal the audit queue's redrive `maxReceiveCount`. */
  auditMaxReceiveCount: number;
  /** `TFGUARD_AUDIT_SHARD_SIZE`: repositories per aggregation shard (default ~√N, at least 10). */
  auditShardSize: number | undefined;
  /**
   * `TFGUARD_DEADLINE_MARGIN_MS`: how long before the Lambda timeout scans are stopped, kept for
   * storing the outcome and reporting the failure (at most a quarter of the invocation's time;
   * see src/service/deadline.ts). `0` lets scans run until Lambda ends the invocation.
   */
  deadlineMarginMs: number;
  /**
   * `TFGUARD_ACCESS_POLICY`: which callers may scan, upload and read which repositories (JSON, see
   * src/service/access.ts and docs/service.md "Tenants"); null when unset: a single-tenant install,
   * where every caller may do everything.
   */
  accessPolicy: AccessPolicy | null;
  /**
   * `TFGUARD_POLICY_OBJECT`: the organisation's policy file (docs/policy.md) as an S3 object,
   * `s3://BUCKET/KEY`; null when unset: no policy. Read once per warm Lambda and again whenever its
   * ETag changes (src/service/policy.ts).
   */
  policyObject: { bucket: string; key: string } | null;
}

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

type Env = Readonly<Record<string, string | undefined>>;

const FAIL_ON: readonly FailOn[] = ['error', 'warning', 'notice', 'never'];

export function parseFailOn(value: string, what: string): FailOn {
  const v = value.trim().toLowerCase();
  if ((FAIL_ON as readonly string[]).includes(v)) return v as FailOn;
  throw new SettingsError(`${what} must be one of ${FAIL_ON.join(', ')}, got ${JSON.stringify(value)}`);
}

// S3 bucket naming rules (general purpose buckets).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

// ---------------------------------------------------------------------------------------------
// The types of the service's variables (src/util/settings.ts). Messages name the variable alone.
// ---------------------------------------------------------------------------------------------

const bucketName = textType<string>('an S3 bucket name', (value, name) => {
  if (!BUCKET.test(value))
    throw new SettingsError(`${name} is not a valid bucket name: ${JSON.stringify(value)}`);
  return value;
});

const keyPrefix = textType<string>('an S3 key prefix', (raw, name) => {
  let value = raw.trim();
  if (value.startsWith('/'))
    throw new SettingsError(`${name} must not start with "/": ${JSON.stringify(value)}`);
  if (value !== '' && !value.endsWith('/')) value += '/';
  if (
    value
      .split('/')
      .slice(0, -1)
      .some((part) => part === '' || part === '.' || part === '..')
  ) {
    throw new SettingsError(`${name} has an empty, "." or ".." segment: ${JSON.stringify(value)}`);
  }
  return value;
});

const httpUrl = textType<string>('an http(s) URL', (value, name) => {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch (err) {
    throw new SettingsError(`${name} is not a URL: ${JSON.stringify(value)}`, { cause: err });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new SettingsError(`${name} must be an http(s) URL: ${JSON.stringify(value)}`);
  }
  return value;
});

function integerIn(min: number, max: number): SettingType<number> {
  return textType(`an integer from ${min} to ${max}`, (raw, name) => {
    if (!/^\d+$/.test(raw)) throw new SettingsError(`${name} must be an integer, got ${JSON.stringify(raw)}`);
    const n = Number(raw);
    if (n < min || n > max) throw new SettingsError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  });
}

const failOnType = textType<FailOn>(FAIL_ON.join(', '), parseFailOn);

const accessPolicyType = textType<AccessPolicy | null>('JSON (docs/service.md "Tenants")', (value, name) => {
  try {
    return parseAccessPolicy(value, name);
  } catch (err) {
    if (err instanceof AccessPolicyError) throw new SettingsError(err.message, { cause: err });
    throw err;
  }
});

/** `s3://BUCKET/KEY`, or a `KEY` of the reports bucket (bucket null until the reports bucket is
 * known): a valid bucket name and a non-empty key without empty, `.` or `..` segments. */
const policyObjectType = textType<{ bucket: string | null; key: string }>(
  '`s3://BUCKET/KEY` or a key of the reports bucket',
  (raw, name) => {
    const m = raw.startsWith('s3://') ? /^s3:\/\/([^/]+)\/(.+)$/.exec(raw) : ([raw, null, raw] as const);
    const bucketName = m?.[1];
    const key = m?.[2];
    if (
      bucketName === undefined ||
      key === undefined ||
      (bucketName !== null && !BUCKET.test(bucketName)) ||
      key.split('/').some((part) => part === '' || part === '.' || part === '..')
    ) {
      throw new SettingsError(
        `${name} must be s3://BUCKET/KEY or a key of the reports bucket (the policy file's object), got ${JSON.stringify(raw)}`,
      );
    }
    return { bucket: bucketName, key };
  },
);

/** `registry_hosts` / `module_hosts` of the settings table, read from their variables. */
function hostsOf(key: 'registry_hosts' | 'module_hosts'): SettingType<Record<string, string>> {
  const setting = configSetting(key);
  if (setting === undefined) throw new Error(`no setting ${key}`);
  return setting.type as SettingType<Record<string, string>>;
}

function service<T>(
  env: string,
  type: SettingType<T>,
  defaultValue: T | undefined,
  doc: string,
  defaultText?: string,
): SettingSpec<T> {
  return {
    env,
    type,
    default: defaultValue,
    origins: ['environment'],
    doc,
    ...(defaultText ? { defaultText } : {}),
  };
}

/**
 * Every variable of the deployed service, declared once: `loadServiceSettings` reads them, and
 * docs/service.md's table is made from this list (scripts/readme-sections.ts). The scan's operator
 * settings (limits, budgets, time limits) are `OPERATOR_SETTINGS` in src/config.ts.
 */
export const SERVICE_SETTINGS = {
  uploadsBucket: service('TFGUARD_UPLOADS_BUCKET', bucketName, undefined, 'uploads bucket', '(required)'),
  uploadsPrefix: service('TFGUARD_UPLOADS_PREFIX', keyPrefix, 'uploads/', 'uploads prefix'),
  reportsBucket: service(
    'TFGUARD_REPORTS_BUCKET',
    bucketName,
    undefined,
    'reports bucket',
    'the uploads bucket',
  ),
  reportsPrefix: service(
    'TFGUARD_REPORTS_PREFIX',
    keyPrefix,
    'reports/',
    'reports prefix (must not overlap the uploads prefix in one bucket)',
  ),
  s3Endpoint: service(
    'TFGUARD_S3_ENDPOINT',
    httpUrl,
    undefined,
    'S3-compatible endpoint (s3rver, MinIO …)',
    'AWS',
  ),
  s3ForcePathStyle: service(
    'TFGUARD_S3_FORCE_PATH_STYLE',
    bool,
    undefined,
    'path-style URLs',
    '`true` with an endpoint, else `false`',
  ),
  sqsEndpoint: service(
    'TFGUARD_SQS_ENDPOINT',
    httpUrl,
    undefined,
    'SQS-compatible endpoint (ElasticMQ …)',
    'AWS',
  ),
  auditQueueUrl: service(
    'TFGUARD_AUDIT_QUEUE_URL',
    httpUrl,
    undefined,
    'audit queue',
    '(required by `auditStart`)',
  ),
  failOn: service('TFGUARD_FAIL_ON', failOnType, 'error' as FailOn, 'default API gate'),
  accessPolicy: service(
    'TFGUARD_ACCESS_POLICY',
    accessPolicyType,
    null,
    'JSON: which IAM principals may scan, upload and read which repositories, and the auditors ([Tenants](#tenants-who-may-scan-and-read-which-repository))',
    'none (single-tenant)',
  ),
  policyObject: service(
    'TFGUARD_POLICY_OBJECT',
    policyObjectType,
    undefined,
    "the organisation's policy file ([policy.md](policy.md)) as an S3 object, `s3://BUCKET/KEY` or a key of the reports bucket; read once per warm container and again when its ETag changes (serverless parameter `policyObject`)",
    'none (no policy)',
  ),
  scanRegistry: service('TFGUARD_SCAN_REGISTRY', bool, true, 'registry check in upload and API scans'),
  auditRegistry: service('TFGUARD_AUDIT_REGISTRY', bool, true, 'registry check in audit rescans'),
  registryHosts: service(
    'TFGUARD_REGISTRY_HOSTS',
    hostsOf('registry_hosts'),
    {},
    'JSON object, registry hostname → base URL (private registries, mirrors); the only way to add a registry host (`registry_hosts` of `--config`)',
  ),
  remoteModules: service(
    'TFGUARD_REMOTE_MODULES',
    bool,
    true,
    "resolve remote modules over the network in every scan ([remote-modules.md](remote-modules.md)); answers are cached in the reports bucket under the registry cache prefix (`…cache/registry/remote-modules/v1/`, expired `remoteModuleCacheDays` after each write; content behind a branch, tag or unchecksummed URL only for the scan's repository: [the cache](remote-modules.md#the-cache))",
  ),
  moduleHosts: service(
    'TFGUARD_MODULE_HOSTS',
    hostsOf('module_hosts'),
    {},
    'JSON object, git / HTTP hostname → base URL (`""` for `https://HOST`): the only hosts remote module packages are downloaded from (e.g. `{"github.com": ""}`; `module_hosts` of `--config`)',
  ),
  maxArchiveBytes: service(
    'TFGUARD_MAX_ARCHIVE_BYTES',
    integerIn(1, 2 ** 40),
    50 * 1024 * 1024,
    "larger uploads are rejected without download; the presigned POST's `content-length-range`",
  ),
  apiMaxBodyBytes: service(
    'TFGUARD_API_MAX_BODY_BYTES',
    integerIn(1, 6 * 1024 * 1024),
    // 4.5 MB of archive is 6 MB once API Gateway base64-encodes it: Lambda's synchronous payload limit.
    4_500_000,
    'largest `POST /scans` body',
  ),
  uploadUrlTtlSeconds: service(
    'TFGUARD_UPLOAD_URL_TTL_SECONDS',
    integerIn(1, 604_800),
    900,
    'presigned PUT URL and POST policy lifetime',
  ),
  reportUrlTtlSeconds: service(
    'TFGUARD_REPORT_URL_TTL_SECONDS',
    integerIn(1, 604_800),
    900,
    'lifetime of the presigned report links the API returns',
  ),
  auditMaxReceiveCount: service(
    'TFGUARD_AUDIT_MAX_RECEIVE_COUNT',
    integerIn(1, 1000),
    3,
    "must equal the audit queue's `maxReceiveCount`",
  ),
  auditShardSize: service(
    'TFGUARD_AUDIT_SHARD_SIZE',
    integerIn(1, 1000),
    undefined,
    'repositories per audit shard',
    '~√N, ≥ 10',
  ),
  deadlineMarginMs: service(
    'TFGUARD_DEADLINE_MARGIN_MS',
    integerIn(0, 900_000),
    10_000,
    "scans stop this long before the Lambda timeout (at most a quarter of the invocation's time; `0`: no early stop)",
  ),
} as const;

/** The defaults, from the table (tests and docs). */
export const DEFAULTS = {
  uploadsPrefix: SERVICE_SETTINGS.uploadsPrefix.default as string,
  reportsPrefix: SERVICE_SETTINGS.reportsPrefix.default as string,
  failOn: SERVICE_SETTINGS.failOn.default as FailOn,
  maxArchiveBytes: SERVICE_SETTINGS.maxArchiveBytes.default as number,
  apiMaxBodyBytes: SERVICE_SETTINGS.apiMaxBodyBytes.default as number,
  uploadUrlTtlSeconds: SERVICE_SETTINGS.uploadUrlTtlSeconds.default as number,
  reportUrlTtlSeconds: SERVICE_SETTINGS.reportUrlTtlSeconds.default as number,
  auditMaxReceiveCount: SERVICE_SETTINGS.auditMaxReceiveCount.default as number,
  deadlineMarginMs: SERVICE_SETTINGS.deadlineMarginMs.default as number,
};

/** One variable: unset or blank is `fallback` (the default unless given); else read by its type,
 * any failure a `SettingsError` naming the variable. */
function read<T>(env: Env, spec: SettingSpec<T>, fallback: T | undefined = spec.default): T | undefined {
  return readEnvSetting(spec, env, {
    fallback,
    label: spec.env as string,
    error: (message, cause) => new SettingsError(message, { cause }),
  });
}

function required<T>(value: T | undefined, spec: SettingSpec<T>): T {
  if (value === undefined) throw new SettingsError(`${spec.env as string} is required`);
  return value;
}

/** Reads and validates the service settings. Throws `SettingsError` naming the variable at fault. */
export function loadServiceSettings(env: Env): ServiceSettings {
  const S = SERVICE_SETTINGS;
  const uploadsBucket = required(read(env, S.uploadsBucket), S.uploadsBucket);
  // A prefix set to '' is the bucket's top, not the default.
  const prefixOf = (spec: SettingSpec<string>): string =>
    env[spec.env as string] === undefined ? (spec.default as string) : (read(env, spec, '') as string);
  const uploads = { bucket: uploadsBucket, prefix: prefixOf(S.uploadsPrefix) };
  const reports = {
    bucket: read(env, S.reportsBucket, uploadsBucket) as string,
    prefix: prefixOf(S.reportsPrefix),
  };
  if (
    uploads.bucket === reports.bucket &&
    (reports.prefix.startsWith(uploads.prefix) || uploads.prefix.startsWith(reports.prefix))
  ) {
    // Reports written under the uploads prefix would trigger scans of the reports.
    throw new SettingsError(
      `TFGUARD_REPORTS_PREFIX (${JSON.stringify(reports.prefix)}) and TFGUARD_UPLOADS_PREFIX ` +
        `(${JSON.stringify(uploads.prefix)}) overlap in bucket ${uploads.bucket}`,
    );
  }
  const endpoint = read(env, S.s3Endpoint);
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || undefined;
  return {
    region,
    uploads,
    reports,
    s3: { endpoint, forcePathStyle: read(env, S.s3ForcePathStyle, endpoint !== undefined) as boolean },
    sqs: { endpoint: read(env, S.sqsEndpoint) },
    auditQueueUrl: read(env, S.auditQueueUrl),
    failOn: read(env, S.failOn) as FailOn,
    scanRegistry: read(env, S.scanRegistry) as boolean,
    auditRegistry: read(env, S.auditRegistry) as boolean,
    registryHosts: read(env, S.registryHosts) as Record<string, string>,
    remoteModules: read(env, S.remoteModules) as boolean,
    moduleHosts: read(env, S.moduleHosts) as Record<string, string>,
    maxArchiveBytes: read(env, S.maxArchiveBytes) as number,
    apiMaxBodyBytes: read(env, S.apiMaxBodyBytes) as number,
    uploadUrlTtlSeconds: read(env, S.uploadUrlTtlSeconds) as number,
    reportUrlTtlSeconds: read(env, S.reportUrlTtlSeconds) as number,
    auditMaxReceiveCount: read(env, S.auditMaxReceiveCount) as number,
    auditShardSize: read(env, S.auditShardSize),
    deadlineMarginMs: read(env, S.deadlineMarginMs) as number,
    accessPolicy: read(env, S.accessPolicy) as AccessPolicy | null,
    policyObject: policyObjectOf(read(env, S.policyObject), reports.bucket),
  };
}

function policyObjectOf(
  value: { bucket: string | null; key: string } | undefined,
  reportsBucket: string,
): ServiceSettings['policyObject'] {
  return value === undefined ? null : { bucket: value.bucket ?? reportsBucket, key: value.key };
}

/** docs/service.md's table of variables, from `SERVICE_SETTINGS` and the operator settings the
 * service reads (links written from the README's place made relative to docs/). */
export function serviceSettingsTable(operator: readonly SettingSpec[]): string {
  const row = (spec: SettingSpec): string =>
    `| \`${spec.env as string}\` | ${defaultText(spec).replace(/\|/g, '\\|')} | ${spec.doc.replace(/\|/g, '\\|').replace(/\]\(docs\//g, '](')} |`;
  return [
    '| Variable | Default | Meaning |',
    '|---|---|---|',
    ...Object.values(SERVICE_SETTINGS).map((spec) => row(spec as SettingSpec)),
    ...operator.filter((spec) => spec.readBy !== 'cli').map(row),
  ].join('\n');
}
