/**
 * Storage-side capabilities the service needs beyond the core `ObjectStore`: reading one exact
 * version of an uploaded object, conditional writes, presigning an upload or a download, and
 * sending queue messages. The S3 and SQS
 * adapters implement them; the service core depends only on these interfaces.
 */
import type { ObjectStore, PutOptions, StoredObject } from './types';

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

/** What a HEAD of one version says, without the body. */
export interface VersionHead {
  size: number;
  metadata: Record<string, string>;
  etag?: string;
  versionId?: string;
  /** ISO 8601 time the version was written. */
  lastModified?: string;
}

export type VersionedHead =
  | { status: 'found'; head: VersionHead }
  | { status: 'missing' }
  | { status: 'superseded'; currentEtag: string };

export interface VersionedObjectSource {
  /** The size and metadata of one exact version (S3 `HeadObject`): nothing of the body is read. */
  headVersion(key: string, version: ObjectVersion): Promise<VersionedHead>;
  getVersion(key: string, version: ObjectVersion, options?: { maxBytes?: number }): Promise<VersionedGet>;
}

/** What a read of an object unless it still has a known ETag returns. */
export type ChangedGet =
  { status: 'not-modified' } | { status: 'found'; object: StoredObject } | { status: 'missing' };

/**
 * Reading an object again only when it changed (S3 `GetObject` with `If-None-Match`: a 304 costs a
 * request but no body): what a warm Lambda uses to keep a settings object current.
 */
export interface ChangedObjectSource {
  /** The object unless its ETag is still `etag` (undefined: read it unconditionally). */
  getIfChanged(key: string, etag: string | undefined): Promise<ChangedGet>;
}

/** The precondition of a conditional write: the object's current ETag, or that it does not exist. */
export type WriteCondition = { ifMatch: string } | { ifNoneMatch: '*' };

/**
 * Compare-and-swap on one object (S3 conditional writes, `If-Match` / `If-None-Match: *` on
 * `PutObject`): the write happens only if the condition holds when the store applies it, atomically
 * with respect to other conditional writes of the key.
 */
export interface ConditionalObjectStore extends ObjectStore {
  /** Writes `body` if `condition` holds; false when it did not (or a concurrent conditional write
   * of the key won): read again and decide again. */
  putIf(
    key: string,
    body: Buffer | string,
    condition: WriteCondition,
    options?: PutOptions,
  ): Promise<boolean>;
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

export interface DownloadUrlSigner {
  /** A URL that answers HTTP GETs of the object `key` (no other credentials needed) until it expires. */
  presignGet(key: string, options: { expiresInSeconds: number }): Promise<string>;
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
