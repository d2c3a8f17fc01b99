/**
 * A complete in-memory ObjectStore: the interface's contract without a backing service, for tests
 * of the registry cache (the S3 and filesystem adapters pass the same contract elsewhere).
 */
import type { ObjectStore, PutOptions, StoredObject } from '../../src/storage/types';

export class MemoryStore implements ObjectStore {
  readonly objects = new Map<string, StoredObject>();
  async put(key: string, body: Buffer | string, options: PutOptions = {}): Promise<void> {
    this.objects.set(key, {
      body: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
      metadata: options.metadata ?? {},
      ...(options.contentType === undefined ? {} : { contentType: options.contentType }),
    });
  }
  async get(key: string): Promise<StoredObject | null> {
    return this.objects.get(key) ?? null;
  }
  async *list(prefix: string): AsyncIterable<string> {
    for (const k of [...this.objects.keys()].sort()) if (k.startsWith(prefix)) yield k;
  }
  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
}
