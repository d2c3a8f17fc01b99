/**
 * Storage-side capabilities the service needs beyond the core `ObjectStore`: reading one exact
 * version of an uploaded object, presigning an upload, and sending queue messages. The S3 and SQS
 * adapters implement them; the service core depends only on these interfaces.
 */
import type { StoredObject } from './types';

/** Which version of an object to read: S3 version id (versioned buckets) and/or ETag. */
export interface ObjectVersion {
  versionId?: string | undefined;
  etag?: string | undefined;
}

export interface VersionedObject extends StoredObject {
  size: number;
  versionId?: string;
  /** ISO 8601 time the version was written. */
  lastModified?: string;
}

export type VersionedGet =
  | { status: 'found'; object: VersionedObject }
  /** The object (or that version of it) does not exist (deleted since the event). */
  | { status: 'missing' }
  /** The object was overwritten since: its current ETag differs from the one asked for. */
  | { status: 'superseded'; currentEtag: string }
  /** Larger than `maxBytes`: not downloaded. */
  | { status: 'too-large'; size: number; lastModified?: string };

export interface VersionedObjectSource {
  getVersion(key: string, version: ObjectVersion, options?: { maxBytes?: number }): Promise<VersionedGet>;
}

/** What a presigned POST lets its holder write: one object, within these bounds. */
export interface UploadPostPolicy {
  expiresInSeconds: number;
  /** Largest object accepted (the policy's `content-length-range`, from 1 byte). */
  maxBytes: number;
  /** The only `Content-Type` accepted. */
  contentType: string;
  /** User metadata the object must carry, exactly (`x-amz-meta-<name>` fields). */
  metadata: Record<string, string>;
}

/** An HTML-form upload: POST `fields` (as given), then the file as the last field, to `url`. */
export interface PresignedPost {
  url: string;
  fields: Record<string, string>;
}

export interface UploadUrlSigner {
  /** A URL that accepts one HTTP PUT of the object `key` until it expires. Unconstrained in size,
   * type and metadata: the upload scan checks what arrives. */
  presignPut(key: string, options: { expiresInSeconds: number }): Promise<string>;
  /** A form upload of the object `key` that the store itself refuses outside `policy`. */
  presignPost(key: string, policy: UploadPostPolicy): Promise<PresignedPost>;
}

export interface MessageQueue {
  /** Sends every message (in batches); throws when some could not be sent. */
  sendAll(bodies: readonly string[]): Promise<void>;
}

/** ETags are compared without the quotes S3 puts around them in HTTP responses. */
export function normalizeEtag(etag: string | undefined): string | undefined {
  if (etag === undefined) return undefined;
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}
