/**
 * Settings of the deployed service, read from an environment object passed in (src/config.ts hands
 * over `process.env`; tests pass plain objects). Every variable, its default and its validation are
 * here; docs/service.md lists them.
 */
import type { FailOn } from '../report/types';
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

export const DEFAULTS = {
  uploadsPrefix: 'uploads/',
  reportsPrefix: 'reports/',
  failOn: 'error' as FailOn,
  maxArchiveBytes: 50 * 1024 * 1024,
  // 4.5 MB of archive is 6 MB once API Gateway base64-encodes it: Lambda's synchronous payload limit.
  apiMaxBodyBytes: 4_500_000,
  uploadUrlTtlSeconds: 900,
  reportUrlTtlSeconds: 900,
  auditMaxReceiveCount: 3,
  deadlineMarginMs: 10_000,
};

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new SettingsError(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (n < min || n > max) throw new SettingsError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new SettingsError(`${name} must be true or false, got ${JSON.stringify(env[name])}`);
}

const FAIL_ON: readonly FailOn[] = ['error', 'warning', 'notice', 'never'];

export function parseFailOn(value: string, what: string): FailOn {
  const v = value.trim().toLowerCase();
  if ((FAIL_ON as readonly string[]).includes(v)) return v as FailOn;
  throw new SettingsError(`${what} must be one of ${FAIL_ON.join(', ')}, got ${JSON.stringify(value)}`);
}

// S3 bucket naming rules (general purpose buckets).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function bucket(env: Env, name: string, fallback?: string): string {
  const value = text(env, name) ?? fallback;
  if (value === undefined) throw new SettingsError(`${name} is required`);
  if (!BUCKET.test(value))
    throw new SettingsError(`${name} is not a valid bucket name: ${JSON.stringify(value)}`);
  return value;
}

function prefix(env: Env, name: string, fallback: string): string {
  let value = env[name] === undefined ? fallback : (env[name] ?? '').trim();
  if (value.startsWith('/'))
    throw new SettingsError(`${name} must not start with "/": ${JSON.stringify(value)}`);
  if (value !== '' && !value.endsWith('/')) value += '/';
  if (
    value
      .split('/')
      .slice(0, -1)
      .some((s) => s === '' || s === '.' || s === '..')
  ) {
    throw new SettingsError(`${name} has an empty, "." or ".." segment: ${JSON.stringify(value)}`);
  }
  return value;
}

function registryHosts(env: Env, name: string, allowEmpty = false): Record<string, string> {
  const raw = text(env, name);
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new SettingsError(`${name} must be a JSON object of hostname to URL: ${JSON.stringify(raw)}`, {
      cause: err,
    });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SettingsError(`${name} must be a JSON object of hostname to URL, got ${JSON.stringify(raw)}`);
  }
  const out: Record<string, string> = {};
  for (const [host, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof value !== 'string' || !(/^https?:\/\/\S+$/.test(value) || (allowEmpty && value === ''))) {
      throw new SettingsError(
        `${name}: the URL for ${JSON.stringify(host)} must be an http(s) URL${allowEmpty ? ' (or "" for https://HOST)' : ''}`,
      );
    }
    out[host.toLowerCase()] = value.replace(/\/+$/, '');
  }
  return out;
}

function url(env: Env, name: string): string | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
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
}

function accessPolicy(env: Env, name: string): AccessPolicy | null {
  try {
    return parseAccessPolicy(env[name], name);
  } catch (err) {
    if (err instanceof AccessPolicyError) throw new SettingsError(err.message, { cause: err });
    throw err;
  }
}

/** Reads and validates the service settings. Throws `SettingsError` naming the variable at fault. */
/** `s3://BUCKET/KEY`, or a `KEY` of the reports bucket: a valid bucket name and a non-empty key
 * without empty, `.` or `..` segments. */
function policyObject(env: Env, name: string, reportsBucket: string): ServiceSettings['policyObject'] {
  const raw = text(env, name);
  if (raw === undefined) return null;
  const m = raw.startsWith('s3://')
    ? /^s3:\/\/([^/]+)\/(.+)$/.exec(raw)
    : ([raw, reportsBucket, raw] as const);
  const bucketName = m?.[1];
  const key = m?.[2];
  if (
    bucketName === undefined ||
    key === undefined ||
    !BUCKET.test(bucketName) ||
    key.split('/').some((s) => s === '' || s === '.' || s === '..')
  ) {
    throw new SettingsError(
      `${name} must be s3://BUCKET/KEY or a key of the reports bucket (the policy file's object), got ${JSON.stringify(raw)}`,
    );
  }
  return { bucket: bucketName, key };
}

export function loadServiceSettings(env: Env): ServiceSettings {
  const uploadsBucket = bucket(env, 'TFGUARD_UPLOADS_BUCKET');
  const uploads = {
    bucket: uploadsBucket,
    prefix: prefix(env, 'TFGUARD_UPLOADS_PREFIX', DEFAULTS.uploadsPrefix),
  };
  const reports = {
    bucket: bucket(env, 'TFGUARD_REPORTS_BUCKET', uploadsBucket),
    prefix: prefix(env, 'TFGUARD_REPORTS_PREFIX', DEFAULTS.reportsPrefix),
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
  const endpoint = url(env, 'TFGUARD_S3_ENDPOINT');
  const failOnRaw = text(env, 'TFGUARD_FAIL_ON');
  const shard = text(env, 'TFGUARD_AUDIT_SHARD_SIZE');
  return {
    region: text(env, 'AWS_REGION') ?? text(env, 'AWS_DEFAULT_REGION'),
    uploads,
    reports,
    s3: { endpoint, forcePathStyle: boolean(env, 'TFGUARD_S3_FORCE_PATH_STYLE', endpoint !== undefined) },
    sqs: { endpoint: url(env, 'TFGUARD_SQS_ENDPOINT') },
    auditQueueUrl: url(env, 'TFGUARD_AUDIT_QUEUE_URL'),
    failOn: failOnRaw === undefined ? DEFAULTS.failOn : parseFailOn(failOnRaw, 'TFGUARD_FAIL_ON'),
    scanRegistry: boolean(env, 'TFGUARD_SCAN_REGISTRY', true),
    auditRegistry: boolean(env, 'TFGUARD_AUDIT_REGISTRY', true),
    registryHosts: registryHosts(env, 'TFGUARD_REGISTRY_HOSTS'),
    remoteModules: boolean(env, 'TFGUARD_REMOTE_MODULES', true),
    moduleHosts: registryHosts(env, 'TFGUARD_MODULE_HOSTS', true),
    maxArchiveBytes: integer(env, 'TFGUARD_MAX_ARCHIVE_BYTES', DEFAULTS.maxArchiveBytes, 1, 2 ** 40),
    apiMaxBodyBytes: integer(env, 'TFGUARD_API_MAX_BODY_BYTES', DEFAULTS.apiMaxBodyBytes, 1, 6 * 1024 * 1024),
    uploadUrlTtlSeconds: integer(
      env,
      'TFGUARD_UPLOAD_URL_TTL_SECONDS',
      DEFAULTS.uploadUrlTtlSeconds,
      1,
      604_800,
    ),
    reportUrlTtlSeconds: integer(
      env,
      'TFGUARD_REPORT_URL_TTL_SECONDS',
      DEFAULTS.reportUrlTtlSeconds,
      1,
      604_800,
    ),
    auditMaxReceiveCount: integer(
      env,
      'TFGUARD_AUDIT_MAX_RECEIVE_COUNT',
      DEFAULTS.auditMaxReceiveCount,
      1,
      1000,
    ),
    auditShardSize: shard === undefined ? undefined : integer(env, 'TFGUARD_AUDIT_SHARD_SIZE', 0, 1, 1000),
    deadlineMarginMs: integer(env, 'TFGUARD_DEADLINE_MARGIN_MS', DEFAULTS.deadlineMarginMs, 0, 900_000),
    accessPolicy: accessPolicy(env, 'TFGUARD_ACCESS_POLICY'),
    policyObject: policyObject(env, 'TFGUARD_POLICY_OBJECT', reports.bucket),
  };
}
