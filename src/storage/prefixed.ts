/**
 * A view of an `ObjectStore` under a key prefix: keys passed in are relative to the prefix, keys
 * listed come back relative to it. Used to hand the registry cache its own corner of the reports
 * store.
 */
import { assertValidPrefix } from './keys';
import type { ObjectStore, PutOptions, StoredObject } from './types';

export class PrefixedObjectStore implements ObjectStore {
  constructor(
    private readonly inner: ObjectStore,
    readonly prefix: string,
  ) {
    assertValidPrefix(prefix);
    if (prefix !== '' && !prefix.endsWith('/'))
      throw new Error(`store prefix must end with "/": ${JSON.stringify(prefix)}`);
  }

  put(key: string, body: Buffer | string, options?: PutOptions): Promise<void> {
    return this.inner.put(this.prefix + key, body, options);
  }

  get(key: string): Promise<StoredObject | null> {
    return this.inner.get(this.prefix + key);
  }

  async *list(prefix: string): AsyncIterable<string> {
    for await (const key of this.inner.list(this.prefix + prefix)) yield key.slice(this.prefix.length);
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(this.prefix + key);
  }
}
