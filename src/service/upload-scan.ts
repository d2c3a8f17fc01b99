/**
 * Entry point 1, the upload-triggered scan: every record of an S3 `ObjectCreated` event is read at
 * the exact version the event names, scanned, and stored under deterministic keys.
 *
 * Deadline (`signal`, the invocation's, src/service/deadline.ts): a scan still running when it
 * fires stops with `scan-timeout` and stores nothing; records not started by then are not even
 * downloaded. Both are failures like the transient ones below: the event is retried, then goes to
 * the on-failure destination, each attempt ending a margin before the Lambda timeout.
 *
 * An upload made through `POST /uploads` (key `<repository>/<uploadId>.<ext>` with a request record
 * naming that key) is checked against what the request bound before anything is read: larger than
 * the request's limit, or with metadata claiming another repository or uploader, it is rejected
 * (`total-too-large`, `upload-mismatch`) under the bound repository, whose pointer alone it may
 * move. Its uploader is the caller recorded at `POST /uploads`; any other upload's is the S3 event's
 * principal id.
 *
 * Outcomes per record: `scanned`, `rejected` (an unusable archive: stored as an "input rejected"
 * record, never retried), `skipped` (not an upload this service handles), `missing` (deleted
 * since) or `superseded` (overwritten since: the newer object's own event scans it). Any other
 * failure (S3 unavailable, throttling ...) is transient: the remaining records are still processed,
 * then `UploadBatchError` is thrown so Lambda retries the event, and after its retries the event
 * goes to the on-failure destination. Retries are safe because every write is deterministic.
 */
import { StorageKeyError, assertValidKey } from '../storage/keys';
import { count } from '../util/words';
import { callerName, mayWrite, type AccessPolicy, type Caller } from './access';
import type { ConditionalObjectStore, VersionedObjectSource } from '../storage/ports';
import { deadlinePassed } from './deadline';
import { UPLOAD_ID_PATTERN, normalizeRepository, uploadScanId, type ReportLayout } from './keys';
import { METRIC, errorAttributes, type ServiceLogger, type ServiceMetrics } from './observability';
import type { UploadRequestRecord } from './requests';
import { scanAndStore, storeRejectionFor, updateLatest, type ScanContext, type ScanOutcome } from './scans';
import type { BucketLocation } from './settings';
import { archiveSuffix, parseS3Event, repositoryForUpload, type UploadEventRecord } from './uploads';

export interface UploadScanDeps {
  uploads: BucketLocation;
  /** Reads the uploaded objects (the uploads bucket). */
  source: VersionedObjectSource;
  /** The reports bucket (conditional writes keep the `latest` pointers from going backwards). */
  reports: ConditionalObjectStore;
  layout: ReportLayout;
  scanOptions: ScanContext['scanOptions'];
  registry: boolean;
  maxArchiveBytes: number;
  logger: ServiceLogger;
  metrics: ServiceMetrics;
  /** The invocation's deadline. */
  signal?: AbortSignal | undefined;
  /** `TFGUARD_ACCESS_POLICY`: whose uploads of which repositories are scanned; none (single-tenant):
   * everyone's. */
  accessPolicy?: AccessPolicy | null | undefined;
  /** The organisation's policy (`TFGUARD_POLICY_OBJECT`), asked for before each scan. */
  policy?: ScanContext['policy'];
}

export type UploadOutcome =
  | {
      /** `refused`: the uploader may not upload archives of the repository (access policy). */
      status: 'scanned' | 'rejected' | 'refused';
      bucket: string;
      key: string;
      scanId: string;
      repository: string;
      latestUpdated: boolean;
    }
  | { status: 'skipped' | 'missing' | 'superseded'; bucket: string; key: string; reason: string };

export class UploadBatchError extends Error {
  override readonly name = 'UploadBatchError';
  readonly failures: { bucket: string; key: string; error: unknown }[];

  constructor(failures: { bucket: string; key: string; error: unknown }[]) {
    super(
      `${count(failures.length, 'upload')} failed and will be retried: ` +
        failures.map((f) => `s3://${f.bucket}/${f.key}`).join(', '),
      { cause: failures[0]?.error },
    );
    this.failures = failures;
  }
}

function tooLarge(size: number, maxBytes: number, byRequest: boolean): string {
  return (
    `the upload is ${size} bytes, more than the ${maxBytes} bytes ` +
    (byRequest ? 'its POST /uploads request allowed' : 'this service accepts')
  );
}

function gone(
  deps: UploadScanDeps,
  bucket: string,
  key: string,
  status: 'missing' | 'superseded',
): UploadOutcome {
  const reason = status === 'missing' ? 'the object no longer exists' : 'the object was overwritten since';
  deps.logger.info(`upload ${status}`, { bucket, key, reason });
  return { status, bucket, key, reason };
}

function fileName(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/** Processes one record. Throws only for transient failures. */
export async function processUploadRecord(
  deps: UploadScanDeps,
  record: UploadEventRecord,
): Promise<UploadOutcome> {
  const { bucket, key } = record;
  const skip = (reason: string): UploadOutcome => {
    deps.metrics.addMetric(METRIC.skipped, 'Count', 1);
    deps.logger.warn('upload skipped', { bucket, key, reason });
    return { status: 'skipped', bucket, key, reason };
  };
  if (!record.eventName.startsWith('ObjectCreated:'))
    return skip(`event ${record.eventName} is not an object creation`);
  if (bucket !== deps.uploads.bucket) return skip(`bucket ${bucket} is not the uploads bucket`);
  if (!key.startsWith(deps.uploads.prefix))
    return skip(`key is not under the uploads prefix ${deps.uploads.prefix}`);
  if (archiveSuffix(key) === null) return skip('not an archive name (.tar.gz, .tgz, .tar, .zip)');
  try {
    assertValidKey(key);
  } catch (err) {
    if (err instanceof StorageKeyError) return skip(err.message);
    throw err;
  }
  if (deps.signal?.aborted) throw deadlinePassed(`the scan of s3://${bucket}/${key}`);

  const bound = await boundUploadRequest(deps, key);
  // Everything that can refuse an upload is decided from the object's HEAD (size and metadata):
  // a refused, oversize or mismatched object is never downloaded.
  const version = { versionId: record.versionId, etag: record.etag };
  const head = await deps.source.headVersion(key, version);
  if (head.status === 'missing' || head.status === 'superseded') return gone(deps, bucket, key, head.status);
  const { size, metadata } = head.head;
  const lastModified = head.head.lastModified;
  const uploader: Caller =
    bound !== null
      ? { arn: bound.record.uploadedBy ?? null, principalId: bound.record.uploaderPrincipalId ?? null }
      : { arn: null, principalId: record.principalId ?? null };
  const uploadedBy = bound !== null ? (bound.record.uploadedBy ?? null) : (record.principalId ?? null);
  const maxBytes = Math.min(deps.maxArchiveBytes, bound?.record.maxBytes ?? Number.POSITIVE_INFINITY);
  const repository =
    bound?.record.repository ?? repositoryForUpload(key, metadata, deps.uploads.prefix).repository;
  deps.logger.appendKeys?.({ repository });
  const scanId = uploadScanId({ bucket, key, versionId: record.versionId, etag: record.etag });
  const ctx: ScanContext = { ...deps };
  const source = {
    kind: 'upload' as const,
    bucket,
    key,
    versionId: head.head.versionId ?? record.versionId,
    etag: head.head.etag ?? record.etag,
    size,
    ...(lastModified !== undefined ? { lastModified } : {}),
    ...(record.eventTime !== undefined ? { eventTime: record.eventTime } : {}),
    uploadedBy,
  };

  if (!mayWrite(deps.accessPolicy, uploader, repository)) {
    // Not this uploader's repository: recorded (its owners and auditors can read why), but its
    // `latest` pointer does not move and nothing is scanned.
    const outcome = await storeRejectionFor(
      ctx,
      { scanId, repository, source },
      'repository-not-allowed',
      `uploader ${JSON.stringify(callerName(uploader))} may not upload archives of repository ` +
        `${JSON.stringify(repository)} (the access policy, TFGUARD_ACCESS_POLICY)`,
    );
    if (bound !== null) await completeUploadRequest(deps, bound, scanId, outcome.status);
    return { status: 'refused', bucket, key, scanId, repository, latestUpdated: false };
  }

  let outcome: ScanOutcome;
  const mismatch = bound === null ? null : boundMismatch(bound.record, metadata);
  if (size > maxBytes) {
    outcome = await storeRejectionFor(
      ctx,
      { scanId, repository, source },
      'total-too-large',
      tooLarge(size, maxBytes, bound !== null && maxBytes < deps.maxArchiveBytes),
    );
  } else if (mismatch !== null) {
    outcome = await storeRejectionFor(ctx, { scanId, repository, source }, 'upload-mismatch', mismatch);
  } else {
    const got = await deps.source.getVersion(key, version, { maxBytes });
    if (got.status === 'missing' || got.status === 'superseded') return gone(deps, bucket, key, got.status);
    if (got.status === 'too-large') {
      // Replaced by a larger object under the same version between the HEAD and the GET (a store
      // without versions or ETags); as large as it is, it is not read.
      outcome = await storeRejectionFor(
        ctx,
        { scanId, repository, source: { ...source, size: got.size } },
        'total-too-large',
        tooLarge(got.size, maxBytes, bound !== null && maxBytes < deps.maxArchiveBytes),
      );
    } else {
      outcome = await scanAndStore(ctx, {
        scanId,
        name: fileName(key),
        bytes: got.object.body,
        repository,
        registry: deps.registry,
        source: { ...source, size: got.object.size },
      });
    }
  }
  const latestUpdated = await updateLatest(deps, {
    schemaVersion: 1,
    repository,
    scanId,
    status: outcome.status,
    upload: {
      kind: 'upload',
      bucket,
      key,
      versionId: record.versionId,
      etag: record.etag,
      ...(lastModified !== undefined ? { lastModified } : {}),
      ...(record.eventTime !== undefined ? { eventTime: record.eventTime } : {}),
      uploadedBy,
    },
    reports: outcome.status === 'complete' ? outcome.keys : null,
    rejected: outcome.status === 'rejected' ? outcome.key : null,
    summary: outcome.status === 'complete' ? outcome.report.summary : null,
  });
  if (bound !== null) await completeUploadRequest(deps, bound, scanId, outcome.status);
  return {
    status: outcome.status === 'complete' ? 'scanned' : 'rejected',
    bucket,
    key,
    scanId,
    repository,
    latestUpdated,
  };
}

interface BoundUpload {
  requestKey: string;
  record: UploadRequestRecord;
}

/**
 * The `POST /uploads` request that issued this key, if any: uploads made through it are named
 * `<repository>/<uploadId>.<ext>`, and the request record names the exact bucket and key.
 */
async function boundUploadRequest(deps: UploadScanDeps, key: string): Promise<BoundUpload | null> {
  const file = fileName(key);
  const suffix = archiveSuffix(file);
  const stem = suffix === null ? file : file.slice(0, -suffix.length);
  if (!UPLOAD_ID_PATTERN.test(stem)) return null;
  const requestKey = deps.layout.uploadRequest(stem);
  const stored = await deps.reports.get(requestKey);
  if (stored === null) return null;
  const record = JSON.parse(stored.body.toString('utf8')) as UploadRequestRecord;
  if (record.key !== key || record.bucket !== deps.uploads.bucket) return null;
  return { requestKey, record };
}

/**
 * Why an object does not match its request, or null: its metadata names another repository or
 * another uploader than the ones `POST /uploads` bound to its key. (Metadata it lacks is not a
 * mismatch: an upload through the presigned PUT carries none.)
 */
function boundMismatch(request: UploadRequestRecord, metadata: Record<string, string>): string | null {
  const claimed = metadata.repository;
  if (claimed !== undefined && normalizeRepository(claimed) !== request.repository) {
    return (
      `the upload's metadata names repository ${JSON.stringify(claimed)}, but its POST /uploads ` +
      `request ${request.id} was for ${JSON.stringify(request.repository)}`
    );
  }
  const uploader = metadata['uploaded-by'];
  if (uploader !== undefined && uploader !== (request.uploadedBy ?? null)) {
    return (
      `the upload's metadata names uploader ${JSON.stringify(uploader)}, but its POST /uploads ` +
      `request ${request.id} was made by ${JSON.stringify(request.uploadedBy ?? null)}`
    );
  }
  return null;
}

/** Records which scan answered a `POST /uploads` request, so `GET /scans/<uploadId>` finds it. */
async function completeUploadRequest(
  deps: UploadScanDeps,
  bound: BoundUpload,
  scanId: string,
  status: ScanOutcome['status'],
): Promise<void> {
  const updated: UploadRequestRecord = {
    ...bound.record,
    status: status === 'complete' ? 'complete' : 'rejected',
    scanId,
  };
  await deps.reports.put(bound.requestKey, JSON.stringify(updated, null, 2) + '\n', {
    contentType: 'application/json',
  });
}

/** Processes every record of an S3 event; throws `UploadBatchError` afterwards if any failed. */
export async function processUploadEvent(deps: UploadScanDeps, event: unknown): Promise<UploadOutcome[]> {
  const parsed = parseS3Event(event);
  for (const bad of parsed.invalid) deps.logger.error('unusable S3 event record', bad);
  const outcomes: UploadOutcome[] = [];
  const failures: { bucket: string; key: string; error: unknown }[] = [];
  for (const record of parsed.records) {
    try {
      outcomes.push(await processUploadRecord(deps, record));
    } catch (err) {
      deps.logger.error('upload scan failed; the event will be retried', {
        bucket: record.bucket,
        key: record.key,
        ...errorAttributes(err),
      });
      failures.push({ bucket: record.bucket, key: record.key, error: err });
    } finally {
      deps.logger.removeKeys?.(['repository']);
    }
  }
  if (failures.length > 0) throw new UploadBatchError(failures);
  return outcomes;
}
