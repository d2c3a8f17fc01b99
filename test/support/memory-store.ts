/**
 * A complete in-memory ObjectStore for tests (the registry cache, the extraction cache, lock
 * scenarios). It passes the same contract as the S3 and filesystem adapters
 * (test/storage/memory.test.ts runs `objectStoreContract` on it): keys are checked as theirs are,
 * listing is in UTF-8 byte order, every object has an etag that changes with its content, and
 * bodies are copied in and out so a caller cannot change a stored object.
 */
import { createHash } from 'node:crypto';
import { assertValidKey, assertValidPrefix, compareKeys } from '../../src/storage/keys';
import type { ObjectStore, PutOptions, StoredObject } from '../../src/storage/types';

export class MemoryStore implements ObjectStore {
  readonly objects = new Map<string, StoredObject>();
  async put(key: string, body: Buffer | string, options: PutOptions = {}): Promise<void> {
    assertValidKey(key);
    const bytes = Buffer.isBuffer(body) ? Buffer.from(body) : Buffer.from(body, 'utf8');
    this.objects.set(key, {
      body: bytes,
      metadata: { ...(options.metadata ?? {}) },
      ...(options.contentType === undefined ? {} : { contentType: options.contentType }),
      etag: createHash('sha256').update(bytes).digest('hex'),
    });
  }
  async get(key: string): Promise<StoredObject | null> {
    assertValidKey(key);
    const o = this.objects.get(key);
    return o === undefined ? null : { ...o, body: Buffer.from(o.body), metadata: { ...o.metadata } };
  }
  async *list(prefix: string): AsyncIterable<string> {
    assertValidPrefix(prefix);
    for (const k of [...this.objects.keys()].sort(compareKeys)) if (k.startsWith(prefix)) yield k;
  }
  async delete(key: string): Promise<void> {
    assertValidKey(key);
    this.objects.delete(key);
  }
}
