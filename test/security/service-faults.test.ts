/**
 * Threat model, "Faults in the service" rows (docs/security.md §8), S3 faults of the upload-triggered
 * scan: a real s3rver stopped, killed in the middle of a sequence of writes and restarted, a real
 * throttling proxy in front of it, a real deleted object. Each ends in a clean retry (nothing stored
 * that looks complete; the retry rewrites identical content) or, once Lambda's retries are spent,
 * the function's on-failure queue; a deleted object is not retried at all.
 */
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { handler } from '../../handlers/upload-scan';
import { loadScan } from '../../src/service/scans';
import { setEnv } from '../support/lambda';
import { makeTarGz } from '../support/archive';
import { startThrottlingProxy } from '../support/fault-servers';
import {
  COMPLETE,
  expectOnFailureQueue,
  layout,
  MAIN_TF,
  NOTHING,
  startServiceFixture,
  UPLOADS_BUCKET,
  type ServiceFixture,
} from '../support/service-fixture';

let f: ServiceFixture;

beforeAll(async () => {
  f = await startServiceFixture();
});
afterAll(async () => {
  await f?.dispose();
});

const archive = (): Promise<Buffer> => makeTarGz({ 'main.tf': MAIN_TF });

test('S3 unavailable (s3rver stopped): the invocation fails for a clean retry; the retry scans', async () => {
  const object = await f.upload('uploads/faults/down/a.tar.gz', await archive());
  await f.s3.stop();
  try {
    await f.expectRetry(f.s3Event([object]), [object.key]);
  } finally {
    await f.s3.start();
  }
  expect(await f.stored(object, 'faults/down')).toEqual(NOTHING);
  const retried = await handler(f.s3Event([object]));
  expect(retried.outcomes.map((o) => o.status)).toEqual(['scanned']);
  expect(await f.stored(object, 'faults/down')).toEqual(COMPLETE);
});

test('S3 failing mid-write (dies after storing report.sarif): no report.json, no pointer; the retry completes it identically', async () => {
  const object = await f.upload('uploads/faults/midwrite/a.tar.gz', await archive());
  await f.s3.stop();
  await f.s3.start({ dieOn: /\/report\.sarif$/ });
  try {
    await f.expectRetry(f.s3Event([object]), [object.key]);
    await f.s3.exited();
  } finally {
    await f.s3.start();
  }
  // The one object written before the failure is not a result: report.json (written last) marks a
  // scan complete, and neither it nor the repository's pointer exists.
  expect(await f.stored(object, 'faults/midwrite')).toEqual({ ...NOTHING, sarif: true });
  const scanId = f.scanIdOf(object);
  expect(await loadScan({ reports: f.reports, layout }, scanId)).toBeNull();
  const partialSarif = (await f.reports.get(layout.reports(scanId).sarif))?.body;

  const retried = await handler(f.s3Event([object]));
  expect(retried.outcomes.map((o) => o.status)).toEqual(['scanned']);
  expect(await f.stored(object, 'faults/midwrite')).toEqual(COMPLETE);
  expect((await f.reports.get(layout.reports(scanId).sarif))?.body.equals(partialSarif as Buffer)).toBe(true);
  expect((await loadScan({ reports: f.reports, layout }, scanId))?.status).toBe('complete');
});

test('throttling (503 SlowDown) for a while: the SDK retries within the invocation and the scan completes', async () => {
  const object = await f.upload('uploads/faults/slow/a.tar.gz', await archive());
  const proxy = await startThrottlingProxy(f.s3.endpoint);
  try {
    setEnv({ TFGUARD_S3_ENDPOINT: proxy.endpoint });
    proxy.throttle(2);
    const result = await handler(f.s3Event([object]));
    expect(result.outcomes.map((o) => o.status)).toEqual(['scanned']);
    expect(proxy.throttled).toBe(2);
  } finally {
    setEnv({ TFGUARD_S3_ENDPOINT: f.s3.endpoint });
    await proxy.close();
  }
  expect(await f.stored(object, 'faults/slow')).toEqual(COMPLETE);
});

test('persistent throttling: the invocation fails for a retry, nothing looks complete; then the DLQ', async () => {
  const object = await f.upload('uploads/faults/throttled/a.tar.gz', await archive());
  const proxy = await startThrottlingProxy(f.s3.endpoint);
  try {
    setEnv({ TFGUARD_S3_ENDPOINT: proxy.endpoint });
    proxy.throttle(Infinity);
    const error = await f.expectRetry(f.s3Event([object]), [object.key]);
    expect(String((error.cause as Error)?.message)).toContain('SlowDown');
    expect(proxy.forwarded).toBe(0);
    expect(proxy.throttled).toBeGreaterThanOrEqual(3); // the SDK's own attempts
  } finally {
    setEnv({ TFGUARD_S3_ENDPOINT: f.s3.endpoint });
    await proxy.close();
  }
  expect(await f.stored(object, 'faults/throttled')).toEqual(NOTHING);
  expectOnFailureQueue('scanUpload', 'ScanUploadDeadLetterQueue');
});

test('an object deleted between the event and the read: "missing", nothing stored, not retried', async () => {
  const object = await f.upload('uploads/faults/deleted/a.tar.gz', await archive());
  await f.client.send(new DeleteObjectCommand({ Bucket: UPLOADS_BUCKET, Key: object.key }));
  const result = await handler(f.s3Event([object]));
  expect(result.outcomes).toEqual([
    { status: 'missing', bucket: UPLOADS_BUCKET, key: object.key, reason: 'the object no longer exists' },
  ]);
  expect(await f.stored(object, 'faults/deleted')).toEqual(NOTHING);
});
