/**
 * S3 `ObjectStore` (and the S3-only capabilities of `ports.ts`), over `@aws-sdk/client-s3`. The
 * endpoint and path-style addressing are configurable so the same code runs against AWS, s3rver or
 * any S3-compatible store. Only this file and `sqs.ts` import the AWS SDK.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertValidKey, assertValidPrefix } from './keys';
import { decodeMetadata, encodeMetadata } from './metadata';
import {
  normalizeEtag,
  type ChangedGet,
  type ChangedObjectSource,
  type ConditionalObjectStore,
  type DownloadUrlSigner,
  type ObjectVersion,
  type PresignedPost,
  type UploadPostPolicy,
  type UploadUrlSigner,
  type VersionedGet,
  type VersionedHead,
  type VersionedObjectSource,
  type WriteCondition,
} from './ports';
import type { PutOptions, StoredObject } from './types';

export interface S3ClientSettings {
  region?: string | undefined;
  /** A custom endpoint (s3rver, MinIO, LocalStack ...); AWS when absent. */
  endpoint?: string | undefined;
  /** Path-style URLs (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle?: boolean | undefined;
  /** Static credentials (tests, local emulators); the default provider chain when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

export function createS3Client(settings: S3ClientSettings = {}): S3Client {
  return new S3Client({
    ...(settings.region !== undefined ? { region: settings.region } : {}),
    ...(settings.endpoint !== undefined ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle ?? false,
    ...(settings.credentials !== undefined ? { credentials: settings.credentials } : {}),
    // Checksums only where S3 requires them: S3-compatible servers do not all accept the
    // flexible-checksum headers and trailers the SDK sends by default since 3.729.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** What S3 means by a status whose error code a body-less (HEAD) answer cannot carry. */
const STATUS_MEANING: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden: AccessDenied, or a KMS or bucket-policy refusal',
  500: 'InternalError',
  503: 'SlowDown or ServiceUnavailable: S3 is throttling or unavailable',
};

/** An S3 call failed for a reason other than "not found": transient or a misconfiguration. */
export class S3StorageError extends Error {
  override readonly name = 'S3StorageError';
  readonly operation: string;
  readonly bucket: string;
  readonly key: string;
  /** The S3 error code (`AccessDenied`, `SlowDown` ...) when there is one. */
  readonly code: string | undefined;
  readonly httpStatus: number | undefined;

  constructor(operation: string, bucket: string, key: string, cause: unknown) {
    const { code, status } = describe(cause);
    let detail = cause instanceof Error ? cause.message : String(cause);
    if ((code === undefined || code === 'Unknown') && status !== undefined) {
      // A HEAD answer has no body, so the SDK cannot read S3's error code from it: say what the
      // status means.
      detail = `HTTP ${status}${STATUS_MEANING[status] ? ` (${STATUS_MEANING[status]})` : ''}: ${detail}`;
    }
    super(`S3 ${operation} s3://${bucket}/${key} failed${code ? ` (${code})` : ''}: ${detail}`, { cause });
    this.operation = operation;
    this.bucket = bucket;
    this.key = key;
    this.code = code;
    this.httpStatus = status;
  }
}

function describe(err: unknown): { code: string | undefined; status: number | undefined } {
  if (typeof err !== 'object' || err === null) return { code: undefined, status: undefined };
  const e = err as { name?: unknown; Code?: unknown; $metadata?: { httpStatusCode?: unknown } };
  const code = typeof e.Code === 'string' ? e.Code : typeof e.name === 'string' ? e.name : undefined;
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined;
  return { code, status };
}

/** "No such key / version" (but not "no such bucket", which is a misconfiguration). */
function isMissing(err: unknown): boolean {
  const { code, status } = describe(err);
  if (code === 'NoSuchBucket') return false;
  return code === 'NoSuchKey' || code === 'NoSuchVersion' || code === 'NotFound' || status === 404;
}

/** A conditional read's "unchanged" (304 Not Modified; the SDK has no modelled error for it). */
function isNotModified(err: unknown): boolean {
  const { code, status } = describe(err);
  return code === 'NotModified' || status === 304;
}

function isPreconditionFailed(err: unknown): boolean {
  const { code, status } = describe(err);
  return code === 'PreconditionFailed' || status === 412;
}

/** S3's answer to two conditional writes of one key at once: the loser gets 409 and may retry. */
function isConditionalConflict(err: unknown): boolean {
  const { code, status } = describe(err);
  return code === 'ConditionalRequestConflict' || status === 409;
}

export interface S3StoreOptions {
  bucket: string;
  client: S3Client;
  /** ListObjectsV2 page size, 1..1000 (default 1000, S3's maximum). */
  pageSize?: number;
}

export class S3ObjectStore
  implements
    ConditionalObjectStore,
    VersionedObjectSource,
    ChangedObjectSource,
    UploadUrlSigner,
    DownloadUrlSigner
{
  readonly bucket: string;
  readonly client: S3Client;
  private readonly pageSize: number;

  constructor(options: S3StoreOptions) {
    if (options.bucket === '') throw new Error('S3ObjectStore: bucket name is empty');
    const pageSize = options.pageSize ?? 1000;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
      throw new Error(`S3ObjectStore: pageSize must be an integer in 1..1000, got ${pageSize}`);
    }
    this.bucket = options.bucket;
    this.client = options.client;
    this.pageSize = pageSize;
  }

  async put(key: string, body: Buffer | string, options: PutOptions = {}): Promise<void> {
    assertValidKey(key);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
          ...(options.contentType !== undefined ? { ContentType: options.contentType } : {}),
          ...(options.metadata !== undefined ? { Metadata: encodeMetadata(options.metadata) } : {}),
        }),
      );
    } catch (err) {
      throw new S3StorageError('PutObject', this.bucket, key, err);
    }
  }

  /**
   * A conditional `PutObject` (S3 conditional writes: `If-Match: "<etag>"` or `If-None-Match: *`).
   * False when the condition did not hold (412), the object was deleted since (404 for `If-Match`)
   * or another conditional write of the key was in progress (409). Stores that ignore the headers
   * (s3rver does) write unconditionally.
   */
  async putIf(
    key: string,
    body: Buffer | string,
    condition: WriteCondition,
    options: PutOptions = {},
  ): Promise<boolean> {
    assertValidKey(key);
    const ifMatch = 'ifMatch' in condition ? normalizeEtag(condition.ifMatch) : undefined;
    if ('ifMatch' in condition && !ifMatch) throw new Error(`putIf ${key}: empty ETag in If-Match`);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
          ...(ifMatch !== undefined ? { IfMatch: `"${ifMatch}"` } : { IfNoneMatch: '*' }),
          ...(options.contentType !== undefined ? { ContentType: options.contentType } : {}),
          ...(options.metadata !== undefined ? { Metadata: encodeMetadata(options.metadata) } : {}),
        }),
      );
      return true;
    } catch (err) {
      if (isPreconditionFailed(err) || isConditionalConflict(err)) return false;
      if (ifMatch !== undefined && isMissing(err)) return false;
      throw new S3StorageError('PutObject', this.bucket, key, err);
    }
  }

  private async readBody(response: GetObjectCommandOutput): Promise<Buffer> {
    if (response.Body === undefined) return Buffer.alloc(0);
    return Buffer.from(await response.Body.transformToByteArray());
  }

  private toStored(response: GetObjectCommandOutput, body: Buffer): StoredObject {
    const etag = normalizeEtag(response.ETag);
    return {
      body,
      ...(response.ContentType !== undefined ? { contentType: response.ContentType } : {}),
      metadata: decodeMetadata(response.Metadata),
      ...(etag !== undefined ? { etag } : {}),
    };
  }

  async get(key: string): Promise<StoredObject | null> {
    assertValidKey(key);
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return this.toStored(response, await this.readBody(response));
    } catch (err) {
      if (isMissing(err)) return null;
      throw new S3StorageError('GetObject', this.bucket, key, err);
    }
  }

  /**
   * The object unless its ETag is still `etag` (`GetObject` with `If-None-Match`, answered 304 Not
   * Modified without a body; the ETag is also compared after a full answer, for servers that ignore
   * the header).
   */
  async getIfChanged(key: string, etag: string | undefined): Promise<ChangedGet> {
    assertValidKey(key);
    const known = normalizeEtag(etag);
    try {
      const response = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(known !== undefined ? { IfNoneMatch: `"${known}"` } : {}),
        }),
      );
      if (known !== undefined && normalizeEtag(response.ETag) === known) {
        await this.readBody(response); // drain the connection
        return { status: 'not-modified' };
      }
      return { status: 'found', object: this.toStored(response, await this.readBody(response)) };
    } catch (err) {
      if (isMissing(err)) return { status: 'missing' };
      if (isNotModified(err)) return { status: 'not-modified' };
      throw new S3StorageError('GetObject', this.bucket, key, err);
    }
  }

  /**
   * The size and metadata of one exact version (`HeadObject`, by version id, else `If-Match` the
   * ETag, also compared after the answer for servers that ignore the header): the body is not read.
   */
  async headVersion(key: string, version: ObjectVersion): Promise<VersionedHead> {
    assertValidKey(key);
    const wanted = normalizeEtag(version.etag);
    try {
      const response = await this.client.send(
        new HeadObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(version.versionId ? { VersionId: version.versionId } : {}),
          ...(wanted !== undefined && !version.versionId ? { IfMatch: `"${wanted}"` } : {}),
        }),
      );
      const etag = normalizeEtag(response.ETag);
      if (wanted !== undefined && !version.versionId && etag !== undefined && etag !== wanted) {
        return { status: 'superseded', currentEtag: etag };
      }
      return {
        status: 'found',
        head: {
          size: response.ContentLength ?? 0,
          metadata: decodeMetadata(response.Metadata),
          ...(etag !== undefined ? { etag } : {}),
          ...(response.VersionId ? { versionId: response.VersionId } : {}),
          ...(response.LastModified ? { lastModified: response.LastModified.toISOString() } : {}),
        },
      };
    } catch (err) {
      if (isMissing(err)) return { status: 'missing' };
      if (isPreconditionFailed(err)) return { status: 'superseded', currentEtag: '' };
      throw new S3StorageError('HeadObject', this.bucket, key, err);
    }
  }

  /**
   * Reads one exact version: by version id when given (versioned buckets), else the current object
   * provided its ETag still matches (`If-Match`; also compared after the read, for servers that
   * ignore the header). Objects larger than `maxBytes` are not downloaded.
   */
  async getVersion(
    key: string,
    version: ObjectVersion,
    options: { maxBytes?: number } = {},
  ): Promise<VersionedGet> {
    assertValidKey(key);
    const wanted = normalizeEtag(version.etag);
    let response: GetObjectCommandOutput;
    try {
      response = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(version.versionId ? { VersionId: version.versionId } : {}),
          ...(wanted !== undefined && !version.versionId ? { IfMatch: `"${wanted}"` } : {}),
        }),
      );
    } catch (err) {
      if (isMissing(err)) return { status: 'missing' };
      if (isPreconditionFailed(err)) return { status: 'superseded', currentEtag: '' };
      throw new S3StorageError('GetObject', this.bucket, key, err);
    }
    const etag = normalizeEtag(response.ETag);
    const size = response.ContentLength ?? 0;
    const discard = () => {
      const body = response.Body as { destroy?: () => void } | undefined;
      body?.destroy?.();
    };
    if (wanted !== undefined && etag !== undefined && etag !== wanted) {
      discard();
      return { status: 'superseded', currentEtag: etag };
    }
    if (options.maxBytes !== undefined && size > options.maxBytes) {
      discard();
      return {
        status: 'too-large',
        size,
        ...(response.LastModified ? { lastModified: response.LastModified.toISOString() } : {}),
      };
    }
    let body: Buffer;
    try {
      body = await this.readBody(response);
    } catch (err) {
      throw new S3StorageError('GetObject', this.bucket, key, err);
    }
    return {
      status: 'found',
      object: {
        ...this.toStored(response, body),
        size: body.length,
        ...(response.VersionId ? { versionId: response.VersionId } : {}),
        ...(response.LastModified ? { lastModified: response.LastModified.toISOString() } : {}),
      },
    };
  }

  async *list(prefix: string): AsyncIterable<string> {
    assertValidPrefix(prefix);
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix,
            MaxKeys: this.pageSize,
            ...(token !== undefined ? { ContinuationToken: token } : {}),
          }),
        );
      } catch (err) {
        throw new S3StorageError('ListObjectsV2', this.bucket, prefix, err);
      }
      for (const item of page.Contents ?? []) {
        if (item.Key !== undefined) yield item.Key;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (isMissing(err)) return;
      throw new S3StorageError('DeleteObject', this.bucket, key, err);
    }
  }

  async presignPut(key: string, options: { expiresInSeconds: number }): Promise<string> {
    assertValidKey(key);
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: options.expiresInSeconds,
    });
  }

  async presignGet(key: string, options: { expiresInSeconds: number }): Promise<string> {
    assertValidKey(key);
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: options.expiresInSeconds,
    });
  }

  /**
   * A presigned POST (SigV4 policy) for exactly `key`: S3 refuses the upload unless its size is in
   * 1..`maxBytes` (`content-length-range`) and its `Content-Type` and `x-amz-meta-*` fields are
   * exactly the ones given (every field of the form must match a policy condition). Metadata values
   * are RFC 2047-encoded like `put`'s, so the fields are ASCII and read back decoded.
   */
  async presignPost(key: string, policy: UploadPostPolicy): Promise<PresignedPost> {
    assertValidKey(key);
    if (!Number.isSafeInteger(policy.maxBytes) || policy.maxBytes < 1)
      throw new Error(`presignPost: maxBytes must be a positive integer, got ${policy.maxBytes}`);
    const fields: Record<string, string> = { 'Content-Type': policy.contentType };
    for (const [name, value] of Object.entries(encodeMetadata(policy.metadata)))
      fields[`x-amz-meta-${name}`] = value;
    const post = await createPresignedPost(this.client, {
      Bucket: this.bucket,
      Key: key,
      // Every entry of `Fields` also becomes an exact-match condition.
      Fields: fields,
      Conditions: [['content-length-range', 1, policy.maxBytes]],
      Expires: policy.expiresInSeconds,
    });
    return { url: post.url, fields: post.fields };
  }
}
