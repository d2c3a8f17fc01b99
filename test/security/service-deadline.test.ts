/**
 * Threat model, "Faults in the service" row "a scan that would outlive the Lambda timeout"
 * (docs/security.md §8): the handlers stop their scans a margin before the invocation's deadline
 * (`context.getRemainingTimeInMillis()` minus `TFGUARD_DEADLINE_MARGIN_MS`, at most a quarter of
 * the time). Real s3rver, the real handlers, a fake Lambda context whose clock runs in real time.
 *
 * - upload scan: the timed-out record stores nothing (no report, no rejection, no pointer), records
 *   before it complete, records after it are not started, and the invocation fails at once with
 *   `UploadBatchError` (so Lambda retries, then the DLQ); a retry with enough time completes.
 * - `POST /scans`: 504 `scan-timeout`, nothing stored, never a partial report.
 *
 * What is asserted is the behaviour (the error, what is stored, the retry), not how long anything
 * took: the deadline's timing is tested on a manual clock (test/util/deadline.test.ts), and the
 * slow file takes far longer than these invocations' time, loaded machine or not.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createScan, getScan } from '../../handlers/api';
import { handler } from '../../handlers/upload-scan';
import { InputError } from '../../src/errors';
import { timeLimit } from '../../src/scan';
import { apiScanId } from '../../src/service/keys';
import { METRIC, type LogAttributes } from '../../src/service/observability';
import { loadScan } from '../../src/service/scans';
import { processUploadEvent, UploadBatchError } from '../../src/service/upload-scan';
import { S3ObjectStore } from '../../src/storage/s3';
import { lambdaContext, sampleEvent } from '../support/lambda';
import { slowToParse } from '../support/scan';
import { makeTarGz } from '../support/archive';
import {
  COMPLETE,
  layout,
  MAIN_TF,
  NOTHING,
  UPLOADS_BUCKET,
  startServiceFixture,
  type ServiceFixture,
} from '../support/service-fixture';
import { createHash } from 'node:crypto';

let f: ServiceFixture;
let slow: Buffer;
let plain: Buffer;

beforeAll(async () => {
  // The margin is 1 s, or a quarter of a shorter invocation's time.
  f = await startServiceFixture({ TFGUARD_DEADLINE_MARGIN_MS: '1000' });
  slow = await makeTarGz({ 'main.tf': MAIN_TF, 'slow/main.tf': slowToParse(MAIN_TF) });
  plain = await makeTarGz({ 'main.tf': MAIN_TF });
});
afterAll(async () => {
  await f?.dispose();
});

async function failure(work: Promise<unknown>): Promise<UploadBatchError> {
  const err = await work.then(
    () => {
      throw new Error('the invocation succeeded; a failure was expected');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UploadBatchError);
  return err as UploadBatchError;
}

test('upload scan near the deadline: stops early, stores nothing for the scan, fails the invocation; the retry completes', async () => {
  const first = await f.upload('uploads/deadline/first/a.tar.gz', plain);
  const late = await f.upload('uploads/deadline/slow/a.tar.gz', slow);
  const after = await f.upload('uploads/deadline/after/a.tar.gz', plain);
  const event = f.s3Event([first, late, after]);

  // The first record must complete before the deadline, however busy the machine: time one
  // record like it first (download, scan, store), and give the invocation four times that and a
  // second more, at least 3 s. With 3 s: margin min(1 s, 750 ms) = 750 ms, so scanning stops
  // 2.25 s in, in the middle of the slow file's hcl2json parse (several seconds on any machine,
  // and slower on a busy one just as the first record is).
  const calibration = await f.upload('uploads/deadline/calibration/a.tar.gz', plain);
  const started = performance.now();
  await handler(f.s3Event([calibration]), lambdaContext('scanUpload', 120_000));
  const oneRecordMs = performance.now() - started;
  const timeLeft = Math.max(3000, Math.ceil(4 * oneRecordMs + 1000));
  const batch = await failure(handler(event, lambdaContext('scanUpload', timeLeft)));
  expect(batch.message).toBe(
    `2 uploads failed and will be retried: s3://${UPLOADS_BUCKET}/${late.key}, s3://${UPLOADS_BUCKET}/${after.key}`,
  );
  const [timedOut, notStarted] = batch.failures.map((x) => x.error as InputError);
  expect(timedOut).toBeInstanceOf(InputError);
  expect(timedOut!.code).toBe('scan-timeout');
  expect(timedOut!.message).toMatch(
    /^scan timed out after \d+(\.\d)? m?s while parsing "slow\/main\.tf": the Lambda invocation's deadline was reached \(\d+(\.\d)? m?s before its timeout, kept for storing the outcome\)$/,
  );
  expect(notStarted!.code).toBe('scan-timeout');
  expect(notStarted!.message).toBe(
    `the scan of s3://${UPLOADS_BUCKET}/${after.key} was not started: the Lambda invocation's deadline had already passed (an earlier record used its time)`,
  );

  // The record before the slow one completed; nothing that looks like a result for the others.
  expect(await f.stored(first, 'deadline/first')).toEqual(COMPLETE);
  expect(await f.stored(late, 'deadline/slow')).toEqual(NOTHING);
  expect(await f.stored(after, 'deadline/after')).toEqual(NOTHING);
  expect(await loadScan({ reports: f.reports, layout }, f.scanIdOf(late))).toBeNull();

  // Lambda's retry of the same event, with the function's full time: every record completes (the
  // first one rewrites identical content).
  const firstReport = (await f.reports.get(layout.reports(f.scanIdOf(first)).json))!.body;
  const retried = await handler(event, lambdaContext('scanUpload', 120_000));
  expect(retried.outcomes.map((o) => [o.key, o.status])).toEqual([
    [first.key, 'scanned'],
    [late.key, 'scanned'],
    [after.key, 'scanned'],
  ]);
  expect(await f.stored(late, 'deadline/slow')).toEqual(COMPLETE);
  expect(await f.stored(after, 'deadline/after')).toEqual(COMPLETE);
  const scan = await loadScan({ reports: f.reports, layout }, f.scanIdOf(late));
  expect(scan?.status).toBe('complete');
  expect((await f.reports.get(layout.reports(f.scanIdOf(first)).json))!.body.equals(firstReport)).toBe(true);
}, 90_000);

test('an invocation with less time left than the margin: nothing is downloaded or scanned, the event is retried', async () => {
  const object = await f.upload('uploads/deadline/none/a.tar.gz', plain);
  // No time left: the deadline has passed before the first record.
  const batch = await failure(handler(f.s3Event([object]), lambdaContext('scanUpload', 0)));
  expect(batch.failures.map((x) => (x.error as InputError).code)).toEqual(['scan-timeout']);
  expect(await f.stored(object, 'deadline/none')).toEqual(NOTHING);
});

test('the timed-out scan is logged and counted (ScanTimeouts); a rejection is not stored', async () => {
  const object = await f.upload('uploads/deadline/logged/a.tar.gz', slow);
  const logs: { level: string; message: string; attributes: LogAttributes }[] = [];
  const metrics: { name: string; value: number }[] = [];
  const record =
    (level: string) =>
    (message: string, ...attributes: LogAttributes[]) =>
      logs.push({ level, message, attributes: Object.assign({}, ...attributes) as LogAttributes });
  const limit = timeLimit(1500, 'the test deadline');
  try {
    await failure(
      processUploadEvent(
        {
          uploads: { bucket: UPLOADS_BUCKET, prefix: 'uploads/' },
          source: new S3ObjectStore({ bucket: UPLOADS_BUCKET, client: f.client }),
          reports: f.reports,
          layout,
          scanOptions: {},
          registry: false,
          maxArchiveBytes: 50 * 1024 * 1024,
          logger: {
            debug: record('debug'),
            info: record('info'),
            warn: record('warn'),
            error: record('error'),
          },
          metrics: { addMetric: (name, _unit, value) => metrics.push({ name, value }) },
          signal: limit.signal,
        },
        f.s3Event([object]),
      ),
    );
  } finally {
    limit.dispose();
  }
  expect(metrics).toEqual([{ name: METRIC.timeouts, value: 1 }]);
  const warned = logs.find((l) => l.message === 'scan timed out; nothing stored');
  expect(warned?.level).toBe('warn');
  expect(warned?.attributes).toMatchObject({
    scanId: f.scanIdOf(object),
    repository: 'deadline/logged',
    code: 'scan-timeout',
    reason: expect.stringMatching(/while parsing "slow\/main\.tf": the test deadline$/) as string,
  });
  expect(logs.some((l) => l.message === 'upload scan failed; the event will be retried')).toBe(true);
  expect(logs.some((l) => l.message === 'archive rejected')).toBe(false);
  expect(await f.stored(object, 'deadline/logged')).toEqual(NOTHING);
}, 60_000);

type Result = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
};

test('POST /scans near the deadline: 504 scan-timeout, nothing stored, no report', async () => {
  const template = sampleEvent<APIGatewayProxyEventV2>('http-post-scans.json');
  const event: APIGatewayProxyEventV2 = {
    ...template,
    queryStringParameters: { repository: 'deadline/api' },
    body: slow.toString('base64'),
    isBase64Encoded: true,
  };
  // 2 s left: margin 500 ms, so the scan stops 1.5 s in.
  const result = (await createScan(event, lambdaContext('createScan', 2000))) as Result;
  const scanId = apiScanId('deadline/api', createHash('sha256').update(slow).digest('hex'));
  expect(result.statusCode).toBe(504);
  expect(result.headers['x-tfguard-scan-id']).toBe(scanId);
  const body = JSON.parse(result.body) as Record<string, unknown>;
  expect(body).toEqual({
    scanId,
    status: 'timed-out',
    error: 'scan-timeout',
    message: expect.stringMatching(
      /^scan timed out after \d+(\.\d)? m?s while parsing "slow\/main\.tf": the Lambda invocation's deadline was reached \(\d+ ms before its timeout, kept for storing the outcome\)\. Nothing was stored; retry, or use POST \/uploads, whose scans have more time\.$/,
    ) as string,
  });
  expect(body).not.toHaveProperty('report');
  expect(await loadScan({ reports: f.reports, layout }, scanId)).toBeNull();
  const get = (await getScan(
    {
      ...sampleEvent<APIGatewayProxyEventV2>('http-get-scan.json'),
      rawPath: `/scans/${scanId}`,
      pathParameters: { id: scanId },
    },
    lambdaContext('getScan', 10_000),
  )) as Result;
  expect(get.statusCode).toBe(404);
}, 30_000);
