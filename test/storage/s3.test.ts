import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore, S3StorageError, createS3Client } from '../../src/storage/s3';
import { startConditionalS3 } from '../support/conditional-s3';
import { startS3rver, S3RVER_CREDENTIALS, S3RVER_REGION, type RunningS3rver } from '../support/s3rver';
import { encodeMetadataValue } from '../../src/storage/metadata';
import {
  contentLengthRange,
  decodePolicy,
  exactConditions,
  expectedPostSignature,
  fieldsOutsidePolicy,
  postForm,
} from '../support/presigned-post';
import { objectStoreContract } from '../support/storage-contract';

let server: RunningS3rver;
let client: S3Client;
let bucketCounter = 0;
const BUCKETS = Array.from({ length: 40 }, (_, i) => `contract-${i}`);

beforeAll(async () => {
  server = await startS3rver([...BUCKETS, 'versions', 'conditional']);
  client = createS3Client({
    endpoint: server.endpoint,
    region: S3RVER_REGION,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
  });
});
afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

function nextBucket(): string {
  const bucket = BUCKETS[bucketCounter++];
  if (bucket === undefined) throw new Error('test needs more buckets');
  return bucket;
}

objectStoreContract('S3ObjectStore on s3rver', {
  store: async () => new S3ObjectStore({ bucket: nextBucket(), client }),
  pagedStore: async (pageSize) => new S3ObjectStore({ bucket: nextBucket(), client, pageSize }),
  byteOrderAcrossDepths: false,
});

describe('S3ObjectStore specifics', () => {
  test('getVersion reads the version asked for, reports superseded, missing and too large', async () => {
    const store = new S3ObjectStore({ bucket: 'versions', client });
    await store.put('u/a.tar.gz', 'first', { metadata: { repository: 'org/a' } });
    const first = (await store.get('u/a.tar.gz'))!.etag!;
    const found = await store.getVersion('u/a.tar.gz', { etag: first });
    expect(found.status).toBe('found');
    if (found.status !== 'found') throw new Error('unreachable');
    expect(found.object.body.toString()).toBe('first');
    expect(found.object.metadata).toEqual({ repository: 'org/a' });
    expect(found.object.size).toBe(5);
    expect(found.object.lastModified).toMatch(/^\d{4}-\d\d-\d\dT/);
    // The event's ETag comes without quotes, the HTTP header with them: both compare equal.
    expect((await store.getVersion('u/a.tar.gz', { etag: `"${first}"` })).status).toBe('found');

    await store.put('u/a.tar.gz', 'second, longer');
    const stale = await store.getVersion('u/a.tar.gz', { etag: first });
    expect(stale.status).toBe('superseded');
    expect(await store.getVersion('u/none.tar.gz', { etag: first })).toEqual({ status: 'missing' });
    expect(await store.getVersion('u/a.tar.gz', {}, { maxBytes: 5 })).toMatchObject({
      status: 'too-large',
      size: 14,
    });
    const current = await store.getVersion('u/a.tar.gz', {}, { maxBytes: 14 });
    expect(current.status === 'found' && current.object.body.toString()).toBe('second, longer');
  });

  test('headVersion: the size and metadata of the version asked for, superseded and missing, no body', async () => {
    const store = new S3ObjectStore({ bucket: 'versions', client });
    await store.put('h/a.tar.gz', 'first', { metadata: { repository: 'org/ä', 'uploaded-by': 'AWS:X' } });
    const first = (await store.get('h/a.tar.gz'))!.etag!;
    const head = await store.headVersion('h/a.tar.gz', { etag: first });
    expect(head).toEqual({
      status: 'found',
      head: {
        size: 5,
        metadata: { repository: 'org/ä', 'uploaded-by': 'AWS:X' },
        etag: first,
        lastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
    expect((await store.headVersion('h/a.tar.gz', { etag: `"${first}"` })).status).toBe('found');
    await store.put('h/a.tar.gz', 'second, longer');
    expect((await store.headVersion('h/a.tar.gz', { etag: first })).status).toBe('superseded');
    expect(await store.headVersion('h/none.tar.gz', { etag: first })).toEqual({ status: 'missing' });
    const current = await store.headVersion('h/a.tar.gz', {});
    expect(current.status === 'found' && current.head.size).toBe(14);
  });

  test('metadata written by another client in raw UTF-8 or RFC 2047 form reads back decoded', async () => {
    const store = new S3ObjectStore({ bucket: 'versions', client });
    await client.send(
      new PutObjectCommand({
        Bucket: 'versions',
        Key: 'raw/rfc2047',
        Body: 'x',
        Metadata: { repository: '=?UTF-8?B?w6lxdWlwZS9kw6lww7R0?=', q: '=?utf-8?Q?caf=C3=A9_bar?=' },
      }),
    );
    expect((await store.get('raw/rfc2047'))!.metadata).toEqual({ repository: 'équipe/dépôt', q: 'café bar' });
  });

  test('a presigned PUT URL accepts a real upload for an awkward key', async () => {
    const store = new S3ObjectStore({ bucket: 'versions', client });
    const key = 'uploads/my repo+x/100% é.tar.gz';
    const url = await store.presignPut(key, { expiresInSeconds: 60 });
    expect(url).toContain('X-Amz-Signature=');
    const response = await fetch(url, { method: 'PUT', body: new Uint8Array([1, 2, 3]) });
    expect(response.status).toBe(200);
    expect([...(await store.get(key))!.body]).toEqual([1, 2, 3]);
  });

  test('s3rver itself ignores conditional PUTs (hence test/support/conditional-s3.ts)', async () => {
    const store = new S3ObjectStore({ bucket: 'conditional', client });
    await store.put('plain/exists', 'first');
    // On S3 this is a 412; s3rver writes anyway.
    expect(await store.putIf('plain/exists', 'second', { ifNoneMatch: '*' })).toBe(true);
    expect((await store.get('plain/exists'))!.body.toString()).toBe('second');
  });

  test('putIf: If-None-Match / If-Match as S3 applies them; exactly one of concurrent writers wins', async () => {
    const proxy = await startConditionalS3(server.endpoint, client);
    const proxied = createS3Client({
      endpoint: proxy.endpoint,
      region: S3RVER_REGION,
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
    });
    try {
      const store = new S3ObjectStore({ bucket: 'conditional', client: proxied });
      const key = 'cas/my repo+x/@latest.json';
      expect(await store.putIf(key, 'v1', { ifNoneMatch: '*' }, { metadata: { n: '1' } })).toBe(true);
      expect(await store.putIf(key, 'v1 again', { ifNoneMatch: '*' })).toBe(false);
      const v1 = (await store.get(key))!;
      expect([v1.body.toString(), v1.metadata.n]).toEqual(['v1', '1']);
      expect(await store.putIf(key, 'v2', { ifMatch: v1.etag! }, { contentType: 'application/json' })).toBe(
        true,
      );
      // The ETag read before v2: stale now.
      expect(await store.putIf(key, 'v3', { ifMatch: v1.etag! })).toBe(false);
      const v2 = (await store.get(key))!;
      expect([v2.body.toString(), v2.contentType]).toEqual(['v2', 'application/json']);
      // Quoted as in an HTTP header, the same ETag.
      expect(await store.putIf(key, 'v3', { ifMatch: `"${v2.etag!}"` })).toBe(true);
      // If-Match on an object that does not exist (deleted since it was read).
      expect(await store.putIf('cas/gone', 'x', { ifMatch: v2.etag! })).toBe(false);
      expect(await store.get('cas/gone')).toBeNull();

      // Eight writers read the same version and all try to replace it: one wins.
      const base = (await store.get(key))!.etag!;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.putIf(key, `w${i}`, { ifMatch: base })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect((await store.get(key))!.body.toString()).toBe(`w${winner}`);
      expect(proxy.counts.conflict + proxy.counts.preconditionFailed).toBeGreaterThanOrEqual(7);
    } finally {
      proxied.destroy();
      await proxy.close();
    }
  });

  test('a presigned POST uploads a real multipart form within a policy that bounds it', async () => {
    const store = new S3ObjectStore({ bucket: 'versions', client });
    const key = 'uploads/équipe/dépôt/6f1c2b9e-1d2a-4c3b-8e4f-5a6b7c8d9e0f.tar.gz';
    const metadata = {
      repository: 'équipe/dépôt',
      'uploaded-by': 'arn:aws:sts::123456789012:assumed-role/ci/s',
    };
    const before = Date.now();
    const post = await store.presignPost(key, {
      expiresInSeconds: 60,
      maxBytes: 1000,
      contentType: 'application/gzip',
      metadata,
    });
    expect(post.url).toBe(`${server.endpoint}/versions`);

    const policy = decodePolicy(post.fields);
    expect(contentLengthRange(policy)).toEqual([1, 1000]);
    expect(exactConditions(policy)).toMatchObject({
      key,
      bucket: 'versions',
      'content-type': 'application/gzip',
      'x-amz-meta-repository': encodeMetadataValue('équipe/dépôt'),
      'x-amz-meta-uploaded-by': metadata['uploaded-by'],
    });
    const expires = Date.parse(policy.expiration);
    // The SDK dates the policy with its skew-corrected clock, which it sets from the server's
    // Date header (whole seconds): it may run up to a second behind this process's clock.
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 60_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 60_000);
    // Real S3 refuses a form with a field no condition names: every field is covered, and a
    // changed repository, content type or an extra field is not.
    expect(fieldsOutsidePolicy(policy, post.fields)).toEqual([]);
    expect(
      fieldsOutsidePolicy(policy, {
        ...post.fields,
        'x-amz-meta-repository': 'victim/prod',
        'Content-Type': 'text/html',
        'x-amz-meta-other': 'x',
      }),
    ).toEqual(['Content-Type', 'x-amz-meta-other', 'x-amz-meta-repository']);
    // The signature is what the SDK's own SigV4 signer computes for the policy.
    expect(post.fields['X-Amz-Signature']).toBe(
      await expectedPostSignature(post.fields, S3RVER_CREDENTIALS, client.config.sha256),
    );
    expect(post.fields['X-Amz-Credential']).toMatch(
      new RegExp(`^S3RVER/\\d{8}/${S3RVER_REGION}/s3/aws4_request$`),
    );

    const response = await postForm(post, Buffer.from([1, 2, 3]));
    expect(response.status).toBe(204);
    const stored = (await store.get(key))!;
    expect([...stored.body]).toEqual([1, 2, 3]);
    expect(stored.contentType).toBe('application/gzip');
    expect(stored.metadata).toEqual(metadata);
  });

  test('presignPost refuses an unusable size bound or key', async () => {
    const store = new S3ObjectStore({ bucket: 'versions', client });
    const policy = { expiresInSeconds: 60, maxBytes: 0, contentType: 'application/zip', metadata: {} };
    await expect(store.presignPost('u/a.zip', policy)).rejects.toThrow(/maxBytes must be a positive integer/);
    await expect(store.presignPost('../a.zip', { ...policy, maxBytes: 1 })).rejects.toThrow(
      /invalid storage key/,
    );
  });

  test('a missing bucket and an unreachable endpoint are errors, not "missing"', async () => {
    const noBucket = new S3ObjectStore({ bucket: 'no-such-bucket', client });
    await expect(noBucket.get('x')).rejects.toBeInstanceOf(S3StorageError);
    await expect(noBucket.get('x')).rejects.toThrow(/NoSuchBucket/);
    const down = new S3Client({
      endpoint: 'http://127.0.0.1:9',
      region: S3RVER_REGION,
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
      maxAttempts: 1,
    });
    const store = new S3ObjectStore({ bucket: 'versions', client: down });
    await expect(store.get('x')).rejects.toThrow(/S3 GetObject s3:\/\/versions\/x failed/);
    await expect(store.getVersion('x', {})).rejects.toBeInstanceOf(S3StorageError);
    await expect(store.put('x', 'y')).rejects.toBeInstanceOf(S3StorageError);
    await expect(store.putIf('x', 'y', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(S3StorageError);
    down.destroy();
  });

  test('rejects an invalid page size', () => {
    expect(() => new S3ObjectStore({ bucket: 'b', client, pageSize: 0 })).toThrow(/pageSize/);
    expect(() => new S3ObjectStore({ bucket: 'b', client, pageSize: 1001 })).toThrow(/pageSize/);
  });
});
