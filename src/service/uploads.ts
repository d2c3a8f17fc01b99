/**
 * Reading S3 `ObjectCreated` events and deciding which repository an upload belongs to.
 */
import { normalizeRepository } from './keys';

/** Archive name suffixes the upload trigger is configured for (serverless.yml lists the same). */
export const ARCHIVE_SUFFIXES = ['.tar.gz', '.tgz', '.tar', '.zip'] as const;

export function archiveSuffix(key: string): string | null {
  const lower = key.toLowerCase();
  return ARCHIVE_SUFFIXES.find((s) => lower.endsWith(s)) ?? null;
}

export class EventKeyError extends Error {
  override readonly name = 'EventKeyError';
}

/**
 * S3 event notifications carry the object key URL-encoded the way HTML forms are: a space is `+`,
 * everything else non-alphanumeric is `%XX` (so a literal `+` arrives as `%2B`).
 */
export function decodeS3EventKey(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch (err) {
    throw new EventKeyError(`malformed URL-encoded object key ${JSON.stringify(raw)}`, { cause: err });
  }
}

/** The inverse, for building events in tests and samples: what S3 puts in `s3.object.key`. */
export function encodeS3EventKey(key: string): string {
  return encodeURIComponent(key)
    .replace(/%20/g, '+')
    .replace(/%2F/g, '/')
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export interface UploadEventRecord {
  eventName: string;
  bucket: string;
  /** Decoded object key. */
  key: string;
  size: number | undefined;
  etag: string | undefined;
  versionId: string | undefined;
  sequencer: string | undefined;
  /** When S3 finished writing the object (the record's `eventTime`, to the millisecond), ISO 8601. */
  eventTime: string | undefined;
  /** `userIdentity.principalId`: who wrote the object (for a presigned upload, the presigner). */
  principalId: string | undefined;
}

export interface ParsedS3Event {
  records: UploadEventRecord[];
  /** Records that are not S3 records or whose key cannot be decoded, with the reason. */
  invalid: { index: number; reason: string }[];
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A timestamp as ISO 8601 UTC to the millisecond (so timestamps compare as strings), or undefined. */
function isoTime(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Reads every record of an S3 notification event (a malformed record does not hide the others). */
export function parseS3Event(event: unknown): ParsedS3Event {
  const out: ParsedS3Event = { records: [], invalid: [] };
  const records = (event as { Records?: unknown } | null)?.Records;
  if (!Array.isArray(records)) {
    out.invalid.push({ index: -1, reason: 'the event has no Records array' });
    return out;
  }
  records.forEach((record: unknown, index) => {
    const r = record as {
      eventSource?: unknown;
      eventName?: unknown;
      eventTime?: unknown;
      userIdentity?: { principalId?: unknown };
      s3?: { bucket?: { name?: unknown }; object?: Record<string, unknown> };
    } | null;
    const bucket = str(r?.s3?.bucket?.name);
    const rawKey = str(r?.s3?.object?.key);
    const eventName = str(r?.eventName);
    if (
      r?.eventSource !== 'aws:s3' ||
      bucket === undefined ||
      rawKey === undefined ||
      eventName === undefined
    ) {
      out.invalid.push({
        index,
        reason: 'not an S3 notification record (eventSource, eventName, bucket or key missing)',
      });
      return;
    }
    let key: string;
    try {
      key = decodeS3EventKey(rawKey);
    } catch (err) {
      out.invalid.push({ index, reason: (err as Error).message });
      return;
    }
    const object = r.s3!.object!;
    const size = typeof object.size === 'number' ? object.size : undefined;
    out.records.push({
      eventName,
      bucket,
      key,
      size,
      etag: str(object.eTag),
      versionId: str(object.versionId),
      sequencer: str(object.sequencer),
      eventTime: isoTime(r.eventTime),
      principalId: str(r.userIdentity?.principalId),
    });
  });
  return out;
}

export type RepositorySource = 'metadata' | 'directory' | 'file-name';

/**
 * The repository an upload belongs to: the `repository` user metadata (`x-amz-meta-repository`)
 * when it is a usable name, else the key's directory under the uploads prefix, else (an archive
 * directly under the prefix) its file name without the archive suffix.
 */
export function repositoryForUpload(
  key: string,
  metadata: Record<string, string>,
  uploadsPrefix: string,
): { repository: string; source: RepositorySource } {
  const fromMetadata = metadata.repository === undefined ? null : normalizeRepository(metadata.repository);
  if (fromMetadata !== null) return { repository: fromMetadata, source: 'metadata' };
  const relative = key.startsWith(uploadsPrefix) ? key.slice(uploadsPrefix.length) : key;
  const slash = relative.lastIndexOf('/');
  if (slash > 0) {
    const fromDirectory = normalizeRepository(relative.slice(0, slash));
    if (fromDirectory !== null) return { repository: fromDirectory, source: 'directory' };
  }
  const file = relative.slice(slash + 1);
  const suffix = archiveSuffix(file);
  const stem = suffix === null ? file : file.slice(0, -suffix.length);
  return {
    repository: normalizeRepository(stem) ?? normalizeRepository(file) ?? 'unnamed',
    source: 'file-name',
  };
}
