/**
 * The one storage interface of the core. The S3 adapter serves Lambda, the filesystem adapter serves
 * the CLI; both pass the same contract tests. Keys are `/`-separated and never start with `/`.
 */
export interface PutOptions {
  contentType?: string;
  /** User metadata (S3: `x-amz-meta-*`). */
  metadata?: Record<string, string>;
}

export interface StoredObject {
  body: Buffer;
  contentType?: string;
  metadata: Record<string, string>;
  /** Opaque version tag (S3 ETag / version id, filesystem content hash). */
  etag?: string;
}

export interface ObjectStore {
  /** Writes (or overwrites) an object. */
  put(key: string, body: Buffer | string, options?: PutOptions): Promise<void>;
  /** Reads an object; `null` when it does not exist. */
  get(key: string): Promise<StoredObject | null>;
  /** Lists keys under a prefix, in lexicographic order, across all pages. */
  list(prefix: string): AsyncIterable<string>;
  /** Deletes an object; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
}
