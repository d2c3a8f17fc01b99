/**
 * Running one scan and storing its outcome: the three report renderings (JSON last, so its presence
 * means the scan is complete) or an "input rejected" record; reading them back by scan id; and the
 * per-repository `latest` pointer. A scan that runs out of time (`scan-timeout`) stores nothing:
 * it is not a property of the input, and a retry with more time may complete.
 */
import type { InputErrorCode } from '../errors';
import { isInputError } from '../errors';
import { CONTENT_TYPES, renderReport, type RenderOptions } from '../report';
import type { Report, Summary } from '../report/types';
import type { Policy } from '../policy';
import { policyInput, scanBytes } from '../scan';
import { fixBytes, fixPatch } from '../scan/fix';
import type { ScanOptions } from '../scan/types';
import type { ConditionalObjectStore, WriteCondition } from '../storage/ports';
import { PrefixedObjectStore } from '../storage/prefixed';
import type { ObjectStore } from '../storage/types';
import { TOOL_VERSION } from '../version';
import type { ReportKeys, ReportLayout } from './keys';
import { METRIC, type ServiceLogger, type ServiceMetrics } from './observability';

export interface ScanContext {
  reports: ObjectStore;
  layout: ReportLayout;
  /** Base scan options (parser settings, archive limits); `registry` and `store` are set per scan. */
  scanOptions: ScanOptions;
  logger: ServiceLogger;
  metrics: ServiceMetrics;
  /** The invocation's deadline (src/service/deadline.ts): scans still running when it fires stop. */
  signal?: AbortSignal | undefined;
  /** The organisation's policy (`TFGUARD_POLICY_OBJECT`, src/service/policy.ts), asked for before
   * each scan; absent: no policy. A policy that cannot be read or parsed throws (the scan fails,
   * nothing is stored). */
  policy?: { current(): Promise<Policy> } | undefined;
  /** Today, for the policy's exception expiry (default the system clock); tests pass a fixed date. */
  now?: (() => Date) | undefined;
}

/**
 * Where a scanned archive came from. `uploadedBy`: who sent it, as far as the service can tell: the
 * caller's IAM ARN for `POST /scans` and for uploads through `POST /uploads` (bound when the upload
 * was requested), the S3 event's principal id for objects written to the bucket directly; null when
 * unknown (no IAM authorizer in front of the API, an event without one).
 */
export type ScanSource =
  | {
      kind: 'upload';
      bucket: string;
      key: string;
      versionId?: string | undefined;
      etag?: string | undefined;
      size?: number | undefined;
      lastModified?: string | undefined;
      /** When S3 finished writing it (the S3 event's `eventTime`, to the millisecond). */
      eventTime?: string | undefined;
      uploadedBy?: string | null | undefined;
    }
  | { kind: 'api'; name: string; sha256: string; size: number; uploadedBy?: string | null | undefined }
  | { kind: 'local'; name: string };

function uploaderOf(source: ScanSource): string | null {
  return source.kind === 'local' ? null : (source.uploadedBy ?? null);
}

export interface RejectedRecord {
  schemaVersion: 1;
  scanId: string;
  status: 'rejected';
  repository: string | null;
  source: ScanSource;
  tool: { name: 'tfguard'; version: string };
  error: { code: InputErrorCode; message: string; entry: string | null };
}

export type ScanOutcome =
  | {
      status: 'complete';
      scanId: string;
      report: Report;
      keys: ReportKeys;
      /** With `ScanInput.fix`: the fixes as a unified diff ('' when there is nothing to fix). */
      patch?: string;
    }
  | { status: 'rejected'; scanId: string; record: RejectedRecord; key: string };

export interface ScanInput {
  scanId: string;
  /** Display name of the archive (its file name). */
  name: string;
  bytes: Buffer;
  repository: string | null;
  source: ScanSource;
  /** Registry cross-check of lock files. */
  registry: boolean;
  /** Also plan every safe fix and store the patch beside the reports (`tfguard fix --dry-run`). */
  fix?: boolean;
}

function rejection(
  input: ScanInput,
  code: InputErrorCode,
  message: string,
  entry: string | null,
): RejectedRecord {
  return {
    schemaVersion: 1,
    scanId: input.scanId,
    status: 'rejected',
    repository: input.repository,
    source: input.source,
    tool: { name: 'tfguard', version: TOOL_VERSION },
    error: { code, message, entry },
  };
}

/** Whose cached mutable remote content a scan may reuse: its repository's, else its uploader's,
 * else its own only. */
function remoteTenant(input: ScanInput): string {
  if (input.repository !== null) return `repository ${input.repository}`;
  const uploader = uploaderOf(input.source);
  return uploader !== null ? `uploader ${uploader}` : `scan ${input.scanId}`;
}

/**
 * Scans an archive; `InputError`s become a stored rejection, except `scan-timeout` which is logged,
 * counted (`ScanTimeouts`) and thrown with nothing stored; anything else is thrown.
 */
export async function scanAndStore(ctx: ScanContext, input: ScanInput): Promise<ScanOutcome> {
  const started = Date.now();
  let report: Report;
  let patch: string | undefined;
  // Outside the try: a broken policy is the operator's, never a rejection of this input.
  const policy = ctx.policy === undefined ? undefined : await ctx.policy.current();
  try {
    const options = {
      ...ctx.scanOptions,
      ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
      registry: input.registry,
      store: new PrefixedObjectStore(ctx.reports, ctx.layout.registryCachePrefix),
      // Remote modules behind a branch, tag or unchecksummed URL are cached for this tenant only.
      remoteModuleTenant: remoteTenant(input),
      ...(policy !== undefined
        ? { policy: policyInput(policy, input.repository, ctx.now?.() ?? new Date()) }
        : {}),
    };
    if (input.fix === true) {
      const fixed = await fixBytes(input.name, input.bytes, options);
      report = fixed.report;
      patch = fixPatch(fixed.changes);
    } else {
      report = await scanBytes(input.name, input.bytes, options);
    }
  } catch (err) {
    if (!isInputError(err)) throw err;
    if (err.code === 'scan-timeout') {
      ctx.metrics.addMetric(METRIC.timeouts, 'Count', 1);
      ctx.logger.warn('scan timed out; nothing stored', {
        scanId: input.scanId,
        repository: input.repository,
        code: err.code,
        reason: err.message,
        elapsedMs: Date.now() - started,
      });
      throw err;
    }
    const record = rejection(input, err.code, err.message, err.entry ?? null);
    const key = await storeRejection(ctx, record);
    ctx.metrics.addMetric(METRIC.rejected, 'Count', 1);
    ctx.logger.warn('archive rejected', {
      scanId: input.scanId,
      repository: input.repository,
      code: err.code,
      reason: err.message,
    });
    return { status: 'rejected', scanId: input.scanId, record, key };
  }
  const keys = await storeReport(
    ctx,
    input.scanId,
    input.repository,
    report,
    uploaderOf(input.source),
    patch,
  );
  ctx.metrics.addMetric(METRIC.scans, 'Count', 1);
  ctx.metrics.addMetric(METRIC.duration, 'Milliseconds', Date.now() - started);
  ctx.metrics.addMetric(METRIC.findings, 'Count', report.summary.total);
  ctx.metrics.addMetric(METRIC.errorFindings, 'Count', report.summary.error);
  ctx.metrics.addMetric(METRIC.warningFindings, 'Count', report.summary.warning);
  ctx.metrics.addMetric(METRIC.noticeFindings, 'Count', report.summary.notice);
  ctx.logger.info('scan complete', {
    scanId: input.scanId,
    repository: input.repository,
    summary: report.summary,
  });
  return {
    status: 'complete',
    scanId: input.scanId,
    report,
    keys,
    ...(patch !== undefined ? { patch } : {}),
  };
}

/** Stores an already rejected input (e.g. an upload too large to download). */
export async function storeRejectionFor(
  ctx: ScanContext,
  input: Omit<ScanInput, 'bytes' | 'name' | 'registry'>,
  code: InputErrorCode,
  message: string,
): Promise<ScanOutcome> {
  const record = rejection(
    { ...input, name: '', bytes: Buffer.alloc(0), registry: false },
    code,
    message,
    null,
  );
  const key = await storeRejection(ctx, record);
  ctx.metrics.addMetric(METRIC.rejected, 'Count', 1);
  ctx.logger.warn('archive rejected', {
    scanId: input.scanId,
    repository: input.repository,
    code,
    reason: message,
  });
  return { status: 'rejected', scanId: input.scanId, record, key };
}

async function storeRejection(ctx: ScanContext, record: RejectedRecord): Promise<string> {
  const key = ctx.layout.rejected(record.scanId);
  await ctx.reports.put(key, JSON.stringify(record, null, 2) + '\n', {
    contentType: 'application/json',
    metadata: objectMetadata(record.scanId, record.repository, uploaderOf(record.source)),
  });
  return key;
}

function objectMetadata(
  scanId: string,
  repository: string | null,
  uploadedBy: string | null,
): Record<string, string> {
  return {
    'scan-id': scanId,
    ...(repository !== null ? { repository } : {}),
    ...(uploadedBy !== null ? { 'uploaded-by': uploadedBy } : {}),
  };
}

/** How the stored Markdown report (and the API's Markdown answer, which must equal it) names the
 * full report when it has to cut the findings, and its title: the repository, when the scan has
 * one (the archive's name is whatever the CI job called its upload). */
export function storedMarkdownOptions(
  keys: Pick<ReportKeys, 'json'>,
  repository: string | null,
): RenderOptions {
  return {
    markdown: {
      fullReport: `the JSON report stored beside this one, \`${keys.json}\``,
      ...(repository !== null && repository !== '' ? { title: repository } : {}),
    },
  };
}

/** The content type of a stored patch (`fix.patch`). */
export const PATCH_CONTENT_TYPE = 'text/x-diff; charset=utf-8';

/**
 * Writes SARIF, Markdown, the patch (when given), then JSON: a reader that finds `report.json` finds
 * the others (the JSON's `fix` metadata says whether a patch is stored). Each carries the scan id,
 * the repository and who sent the archive as object metadata.
 */
export async function storeReport(
  ctx: Pick<ScanContext, 'reports' | 'layout'>,
  scanId: string,
  repository: string | null,
  report: Report,
  uploadedBy: string | null = null,
  patch?: string,
): Promise<ReportKeys> {
  const keys = ctx.layout.reports(scanId, patch !== undefined);
  const metadata = objectMetadata(scanId, repository, uploadedBy);
  if (patch !== undefined) {
    await ctx.reports.put(keys.patch as string, patch, { contentType: PATCH_CONTENT_TYPE, metadata });
  }
  await ctx.reports.put(keys.sarif, renderReport(report, 'sarif'), {
    contentType: CONTENT_TYPES.sarif,
    metadata,
  });
  const markdown = renderReport(report, 'markdown', storedMarkdownOptions(keys, repository));
  await ctx.reports.put(keys.markdown, markdown, {
    contentType: CONTENT_TYPES.markdown,
    metadata,
  });
  await ctx.reports.put(keys.json, renderReport(report, 'json'), {
    contentType: CONTENT_TYPES.json,
    metadata: patch !== undefined ? { ...metadata, fix: 'patch' } : metadata,
  });
  return keys;
}

export type StoredScan =
  | {
      status: 'complete';
      scanId: string;
      report: Report;
      repository: string | null;
      /** Where its three renderings (and its patch, when it was asked to fix) are stored. */
      keys: ReportKeys;
      /** Size of the stored JSON report. */
      bytes: number;
      /** Who sent the archive (the `uploaded-by` metadata), null when not recorded. */
      uploadedBy: string | null;
    }
  | { status: 'rejected'; scanId: string; record: RejectedRecord };

/** Reads a scan's outcome back; null when there is none (yet). */
export async function loadScan(
  ctx: Pick<ScanContext, 'reports' | 'layout'>,
  scanId: string,
): Promise<StoredScan | null> {
  const json = await ctx.reports.get(ctx.layout.report(scanId, 'json'));
  if (json !== null) {
    return {
      status: 'complete',
      scanId,
      report: JSON.parse(json.body.toString('utf8')) as Report,
      repository: json.metadata.repository ?? null,
      keys: ctx.layout.reports(scanId, json.metadata.fix === 'patch'),
      bytes: json.body.length,
      uploadedBy: json.metadata['uploaded-by'] ?? null,
    };
  }
  const rejected = await ctx.reports.get(ctx.layout.rejected(scanId));
  if (rejected !== null) {
    return {
      status: 'rejected',
      scanId,
      record: JSON.parse(rejected.body.toString('utf8')) as RejectedRecord,
    };
  }
  return null;
}

/** The per-repository pointer to the scan of its newest upload. */
export interface LatestPointer {
  schemaVersion: 1;
  repository: string;
  scanId: string;
  status: 'complete' | 'rejected';
  upload: Extract<ScanSource, { kind: 'upload' }>;
  reports: ReportKeys | null;
  rejected: string | null;
  summary: Summary | null;
}

/**
 * The order of uploads for the pointer: S3's `LastModified` (whole seconds on S3), then the event
 * time (when S3 finished the write, to the millisecond), then the key and the scan id, so that any
 * two uploads compare the same way wherever they are compared (a total order: the pointer ends on
 * the same upload whatever order the events arrive in). Pointers written before the event time was
 * recorded compare as having none.
 */
export function compareUploads(a: LatestPointer, b: LatestPointer): number {
  const keyOf = (p: LatestPointer): string[] => [
    p.upload.lastModified ?? '',
    p.upload.eventTime ?? '',
    p.upload.key,
    p.scanId,
  ];
  const [x, y] = [keyOf(a), keyOf(b)];
  for (let i = 0; i < x.length; i++) {
    if (x[i]! !== y[i]!) return x[i]! < y[i]! ? -1 : 1;
  }
  return 0;
}

/** Conditional writes of one pointer that may lose to concurrent ones before the update fails. */
export const LATEST_WRITE_ATTEMPTS = 10;

/** The pointer kept losing to concurrent writers: a transient failure (the event is retried). */
export class LatestPointerConflict extends Error {
  override readonly name = 'LatestPointerConflict';
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Points the repository's `latest` at this scan unless it already points at a newer upload (a
 * redelivered or late event must not move it back). Returns whether it was written.
 *
 * Compare-and-swap: the pointer is read, compared, and written only if it is still the version
 * read (`If-Match` its ETag, or `If-None-Match: *` when there was none); a concurrent update in
 * between makes the write fail, and the update reads and decides again. So with any number of
 * uploads of one repository in flight, the pointer ends on the newest of them.
 */
export async function updateLatest(
  ctx: { reports: ConditionalObjectStore; layout: ReportLayout },
  pointer: LatestPointer,
): Promise<boolean> {
  const key = ctx.layout.latest(pointer.repository);
  const body = JSON.stringify(pointer, null, 2) + '\n';
  const options = {
    contentType: 'application/json',
    metadata: { repository: pointer.repository, 'scan-id': pointer.scanId },
  };
  for (let attempt = 1; ; attempt++) {
    const stored = await ctx.reports.get(key);
    let condition: WriteCondition;
    if (stored === null) {
      condition = { ifNoneMatch: '*' };
    } else {
      const existing = JSON.parse(stored.body.toString('utf8')) as LatestPointer;
      if (compareUploads(pointer, existing) < 0) return false;
      if (stored.etag === undefined) throw new Error(`the store returned ${key} without an ETag`);
      condition = { ifMatch: stored.etag };
    }
    if (await ctx.reports.putIf(key, body, condition, options)) return true;
    if (attempt >= LATEST_WRITE_ATTEMPTS) {
      throw new LatestPointerConflict(
        `${key} changed under ${attempt} conditional writes in a row; the event will be retried`,
      );
    }
    // Concurrent writers of one pointer: back off a little, with jitter, then read again.
    await pause(Math.round((10 + Math.random() * 40) * attempt));
  }
}

export async function readLatest(
  ctx: Pick<ScanContext, 'reports' | 'layout'>,
  repository: string,
): Promise<LatestPointer | null> {
  const stored = await ctx.reports.get(ctx.layout.latest(repository));
  if (stored === null) return null;
  return JSON.parse(stored.body.toString('utf8')) as LatestPointer;
}
