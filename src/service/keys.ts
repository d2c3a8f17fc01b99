/**
 * Where the service stores everything, relative to the reports prefix, and the identifiers that
 * name it. All keys are deterministic functions of their inputs: the same upload (bucket, key,
 * version id or ETag) always maps to the same scan id and the same report keys, so a redelivered
 * event overwrites identical content.
 *
 *   scans/<scanId>/report.sarif|report.md|report.json   one scan (report.json written last)
 *   scans/<scanId>/fix.patch                             its fixes as a unified diff (`POST /scans?fix=true`)
 *   scans/<scanId>/rejected.json                         an archive the scanner rejected
 *   repos/<repoKey>/@latest.json                         per-repository pointer to the newest upload's scan
 *   requests/<uploadId>.json                             a `POST /uploads` request and its outcome
 *   audits/latest.json                                   the newest complete audit run
 *   audits/runs/<runId>/...                              one audit run (see audit.ts)
 *   fleet/index.html|index.json                          the newest audit's fleet page and its data
 *   cache/registry/...                                   verified registry SHA256SUMS
 *
 * `repoKey` is the repository name with every `/`-separated segment percent-encoded
 * (`encodeURIComponent`, plus `.`-only segments): injective, always a valid key, and never equal to
 * the `@`-prefixed file names placed next to it (`@` is always encoded), so a repository named
 * `org` and one named `org/@latest.json` cannot collide, on S3 or on a filesystem.
 */
import { createHash } from 'node:crypto';
import type { ReportFormat } from '../report/types';

export const SCAN_ID_PATTERN = /^[0-9a-f]{32}$/;
export const UPLOAD_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const RUN_ID_PATTERN = /^\d{8}T\d{9}Z-[0-9a-f]{8}$/;

/** One uploaded object, as an S3 event names it. */
export interface UploadRef {
  bucket: string;
  key: string;
  versionId?: string | undefined;
  etag?: string | undefined;
}

function hash32(parts: readonly (string | null)[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

/** Scan id of an uploaded object: the version id when the bucket is versioned, else the ETag. */
export function uploadScanId(ref: UploadRef): string {
  const version = ref.versionId ? `v:${ref.versionId}` : ref.etag ? `e:${ref.etag}` : null;
  return hash32(['s3', ref.bucket, ref.key, version]);
}

/** Scan id of an archive posted to the API: the repository (if named) and the archive's SHA-256. */
export function apiScanId(repository: string | null, archiveSha256: string): string {
  return hash32(['api', repository, archiveSha256]);
}

const MAX_REPOSITORY_BYTES = 256;
// eslint-disable-next-line no-control-regex
const BAD_REPOSITORY_CHARS = /[\u0000-\u001f\u007f-\u009f\\]/;

/**
 * Canonical repository name, or null when unusable: `/`-separated, no empty, `.` or `..`
 * segments (they are dropped / refused), no control characters or backslashes, at most 256 bytes.
 * Such a name is also usable as a directory under the uploads prefix.
 */
export function normalizeRepository(raw: string): string | null {
  const segments = raw
    .trim()
    .split('/')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (segments.length === 0) return null;
  if (segments.some((s) => s === '.' || s === '..')) return null;
  const name = segments.join('/');
  if (BAD_REPOSITORY_CHARS.test(name)) return null;
  if (Buffer.byteLength(name, 'utf8') > MAX_REPOSITORY_BYTES) return null;
  return name;
}

/** The key path for a repository (see the file comment). */
export function repositoryKey(repository: string): string {
  return repository
    .split('/')
    .map((segment) => (/^\.+$/.test(segment) ? segment.replace(/\./g, '%2E') : encodeURIComponent(segment)))
    .join('/');
}

/** Inverse of `repositoryKey`. */
export function repositoryFromKey(repoKey: string): string {
  return repoKey
    .split('/')
    .map((segment) => decodeURIComponent(segment))
    .join('/');
}

/** The formats the service stores and serves (GitLab Code Quality is a CLI format). */
export type StoredFormat = Exclude<ReportFormat, 'text' | 'codequality'>;

const REPORT_FILES: Record<StoredFormat, string> = {
  json: 'report.json',
  sarif: 'report.sarif',
  markdown: 'report.md',
};

export const LATEST_FILE = '@latest.json';

export interface ReportKeys {
  json: string;
  sarif: string;
  markdown: string;
  /** The fixes as a unified diff (`tfguard fix --dry-run`), stored when the scan was asked to fix. */
  patch?: string;
}

/** Key builder for everything under the reports prefix. */
export class ReportLayout {
  constructor(readonly prefix: string) {}

  scanPrefix(scanId: string): string {
    return `${this.prefix}scans/${scanId}/`;
  }

  report(scanId: string, format: StoredFormat): string {
    return this.scanPrefix(scanId) + REPORT_FILES[format];
  }

  /** The keys of a scan's renderings; with `patch`, of its stored fixes too. */
  reports(scanId: string, patch = false): ReportKeys {
    return {
      json: this.report(scanId, 'json'),
      sarif: this.report(scanId, 'sarif'),
      markdown: this.report(scanId, 'markdown'),
      ...(patch ? { patch: this.patch(scanId) } : {}),
    };
  }

  /** The fixes of a scan, as a unified diff. */
  patch(scanId: string): string {
    return this.scanPrefix(scanId) + 'fix.patch';
  }

  rejected(scanId: string): string {
    return this.scanPrefix(scanId) + 'rejected.json';
  }

  get repositoriesPrefix(): string {
    return `${this.prefix}repos/`;
  }

  latest(repository: string): string {
    return `${this.repositoriesPrefix}${repositoryKey(repository)}/${LATEST_FILE}`;
  }

  /** The repository a `latest` key belongs to, or null for any other key. */
  repositoryOfLatest(key: string): string | null {
    const suffix = `/${LATEST_FILE}`;
    if (!key.startsWith(this.repositoriesPrefix) || !key.endsWith(suffix)) return null;
    const repoKey = key.slice(this.repositoriesPrefix.length, -suffix.length);
    try {
      return repoKey === '' ? null : repositoryFromKey(repoKey);
    } catch {
      return null;
    }
  }

  uploadRequest(uploadId: string): string {
    return `${this.prefix}requests/${uploadId}.json`;
  }

  get registryCachePrefix(): string {
    return `${this.prefix}cache/registry/`;
  }

  get auditLatest(): string {
    return `${this.prefix}audits/latest.json`;
  }

  /** The fleet page of the newest complete audit (src/service/fleet-html.ts). */
  get fleetHtml(): string {
    return `${this.prefix}fleet/index.html`;
  }

  /** The fleet page's data, also what the next audit compares with (docs/fleet.schema.json). */
  get fleetJson(): string {
    return `${this.prefix}fleet/index.json`;
  }

  auditRun(runId: string): AuditRunLayout {
    return new AuditRunLayout(`${this.prefix}audits/runs/${runId}/`);
  }
}

/** Keys of one audit run. */
export class AuditRunLayout {
  constructor(readonly prefix: string) {}

  get manifest(): string {
    return `${this.prefix}manifest.json`;
  }

  members(shard: number): string {
    return `${this.prefix}members/${shardName(shard)}.json`;
  }

  result(repository: string): string {
    return `${this.prefix}results/${repositoryKey(repository)}/@result.json`;
  }

  donePrefix(shard: number): string {
    return `${this.prefix}done/${shardName(shard)}/`;
  }

  done(shard: number, repository: string): string {
    return `${this.donePrefix(shard)}${repositoryKey(repository)}/@done`;
  }

  /** The repository a `done` marker key stands for. */
  repositoryOfDone(shard: number, key: string): string | null {
    const prefix = this.donePrefix(shard);
    if (!key.startsWith(prefix) || !key.endsWith('/@done')) return null;
    try {
      return repositoryFromKey(key.slice(prefix.length, -'/@done'.length));
    } catch {
      return null;
    }
  }

  get partialsPrefix(): string {
    return `${this.prefix}partials/`;
  }

  partial(shard: number): string {
    return `${this.partialsPrefix}${shardName(shard)}.json`;
  }

  get summaryJson(): string {
    return `${this.prefix}summary.json`;
  }

  get summaryMarkdown(): string {
    return `${this.prefix}summary.md`;
  }
}

function shardName(shard: number): string {
  return String(shard).padStart(5, '0');
}

/** Run ids sort by start time: `20250102T030000000Z-<8 hex>` (UTC, to the millisecond). */
export function auditRunId(startedAt: Date, eventId: string): string {
  // Fixed width, to the millisecond, so ids sort by start time even for runs within one second.
  const stamp = startedAt.toISOString().replace(/[-:.]/g, '');
  return `${stamp}-${createHash('sha256').update(eventId).digest('hex').slice(0, 8)}`;
}
