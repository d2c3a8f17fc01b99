/**
 * The organisation's policy in the service: an S3 object named by `TFGUARD_POLICY_OBJECT`
 * (`s3://bucket/key`), read once per warm Lambda and read again only when it changed: every scan
 * asks S3 for it with `If-None-Match` its last ETag (a 304 costs a request, no body, no parse).
 *
 * A policy that cannot be read (missing object, S3 failure) or parsed fails the scan loudly (the
 * invocation errors and is retried or dead-lettered) instead of scanning without it: a policy is
 * never silently absent or applied in part, and a broken policy is the operator's problem, not an
 * upload to reject.
 */
import type { Policy } from '../policy';
import { readPolicy } from '../scan';
import type { HclParserSettings } from '../scan/types';
import type { ChangedObjectSource } from '../storage/ports';
import type { ObjectStore } from '../storage/types';

/** The policy object could not be read (it is missing, or the store failed). */
export class PolicyUnavailableError extends Error {
  override readonly name = 'PolicyUnavailableError';
}

export interface PolicyObjectOptions {
  store: ObjectStore & Partial<ChangedObjectSource>;
  key: string;
  /** How messages name it (`s3://bucket/key`). */
  name: string;
  parser?: HclParserSettings;
}

export class PolicyObject {
  private cached: { etag: string | undefined; policy: Policy } | null = null;
  /** Reads of the object that returned a body (and so were parsed); tests and logs. */
  reads = 0;

  constructor(private readonly options: PolicyObjectOptions) {}

  /** The current policy: the cached one while the object's ETag is unchanged. */
  async current(): Promise<Policy> {
    const { store, key, name } = this.options;
    const known = this.cached?.etag;
    let body: Buffer;
    let etag: string | undefined;
    try {
      if (store.getIfChanged !== undefined) {
        const got = await store.getIfChanged(key, this.cached === null ? undefined : known);
        if (got.status === 'not-modified' && this.cached !== null) return this.cached.policy;
        if (got.status === 'missing')
          throw new PolicyUnavailableError(`the policy object ${name} does not exist`);
        if (got.status !== 'found')
          throw new PolicyUnavailableError(`the policy object ${name} could not be read`);
        body = got.object.body;
        etag = got.object.etag;
      } else {
        const got = await store.get(key);
        if (got === null) throw new PolicyUnavailableError(`the policy object ${name} does not exist`);
        if (this.cached !== null && got.etag !== undefined && got.etag === known) return this.cached.policy;
        body = got.body;
        etag = got.etag;
      }
    } catch (err) {
      if (err instanceof PolicyUnavailableError) throw err;
      throw new PolicyUnavailableError(
        `the policy object ${name} could not be read: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    this.reads++;
    // A parse error throws InputError('invalid-policy') naming the object and line; nothing is cached,
    // so the next scan reads it again (a corrected policy is picked up at once).
    const policy = await readPolicy(name, body, this.options.parser ?? {});
    this.cached = { etag, policy };
    return policy;
  }
}

/** `s3://bucket/key` of `TFGUARD_POLICY_OBJECT`, split. */
export interface PolicyLocation {
  bucket: string;
  key: string;
}
