/**
 * The `requestId` a 500 returns is logged with the error on every
 * error path, and every metric carries a `stage` dimension (`TFGUARD_STAGE`, read through
 * src/config.ts) so that stages never share a series. The real handlers against s3rver, Powertools'
 * own JSON log lines and EMF records captured from stdout.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createScan, getScan } from '../../handlers/api';
import { runtime } from '../../handlers/runtime';
import { handler as scanUpload } from '../../handlers/upload-scan';
import { EnvironmentError } from '../../src/config';
import { makeTarGz } from '../support/archive';
import { type Harness, sampleEvent, startHarness, withEnv } from '../support/lambda';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

type Result = APIGatewayProxyStructuredResultV2 & { statusCode: number; body: string };
type LogRecord = Record<string, unknown>;

const REQUEST_ID = 'EXAMPLE-request-id='; // events/http-post-scans.json

/** Runs `work` with Powertools logging at INFO and metrics on; the JSON records it printed. */
async function captured<T>(
  env: Record<string, string | undefined>,
  work: () => Promise<T>,
): Promise<{ value: T | undefined; error: unknown; records: LogRecord[] }> {
  const chunks: string[] = [];
  // Powertools writes warnings and errors to stderr, the rest (and EMF) to stdout.
  const spies = [process.stdout, process.stderr].map((stream) =>
    jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(chunk.toString());
      return true;
    }),
  );
  let value: T | undefined;
  let error: unknown;
  try {
    value = await withEnv(
      { POWERTOOLS_LOG_LEVEL: 'INFO', POWERTOOLS_METRICS_DISABLED: 'false', ...env },
      work,
    );
  } catch (err) {
    error = err;
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  const records = chunks
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogRecord);
  return { value, error, records };
}

const errors = (records: LogRecord[]) => records.filter((r) => r.level === 'ERROR');

describe('the request id of a 500 is in the log', () => {
  test('an error inside the operation: the 500 names it, the error line carries it', async () => {
    const { value, records } = await captured({ TFGUARD_REPORTS_BUCKET: 'tfguard-no-such-bucket' }, () =>
      createScan(sampleEvent('http-post-scans.json'), h.context('createScan')),
    );
    const result = value as Result;
    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body)).toEqual({
      error: 'internal',
      message: 'internal error',
      requestId: REQUEST_ID,
    });
    const [line, ...more] = errors(records);
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      message: 'request failed',
      requestId: REQUEST_ID,
      function_request_id: expect.stringMatching(/^req-createScan-/),
      error: expect.stringMatching(/^S3StorageError: S3 PutObject s3:\/\/tfguard-no-such-bucket\//),
    });
  });

  test('a GET that fails: the same', async () => {
    const event = sampleEvent<APIGatewayProxyEventV2>('http-get-scan.json');
    const { value, records } = await captured({ TFGUARD_REPORTS_BUCKET: 'tfguard-no-such-bucket' }, () =>
      getScan({ ...event, requestContext: { ...event.requestContext, requestId: 'GET-request-id=' } }),
    );
    expect(JSON.parse((value as Result).body)).toMatchObject({ requestId: 'GET-request-id=' });
    expect(errors(records)).toEqual([
      expect.objectContaining({ message: 'request failed', requestId: 'GET-request-id=' }),
    ]);
  });

  test('a function that cannot be wired (an unusable setting): logged under the request id, then thrown', async () => {
    const { error, records } = await captured({ TFGUARD_UPLOADS_BUCKET: 'Not_A_Bucket' }, () =>
      createScan(sampleEvent('http-post-scans.json'), h.context('createScan')),
    );
    expect(String(error)).toMatch(/TFGUARD_UPLOADS_BUCKET is not a valid bucket name/);
    expect(errors(records)).toEqual([
      expect.objectContaining({
        message: 'request failed',
        requestId: REQUEST_ID,
        function_request_id: expect.stringMatching(/^req-createScan-/),
        error: expect.stringMatching(/^SettingsError: TFGUARD_UPLOADS_BUCKET is not a valid bucket name/),
      }),
    ]);
  });

  test('every line of a request carries it (the scan lines too), no line of a later invocation does', async () => {
    const archive = await makeTarGz({ 'main.tf': 'terraform {\n  required_version = ">= 1.5"\n}\n' });
    const object = await h.upload('uploads/keys/after/a.tar.gz', archive);
    const { records } = await captured({}, async () => {
      await createScan(sampleEvent('http-post-scans.json'), h.context('createScan'));
      await scanUpload(h.s3Event([object]), h.context('scanUpload'));
    });
    const lines = records.filter((r) => r.message === 'scan complete');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ requestId: REQUEST_ID, repository: 'acme/network' });
    expect(lines[1]).toMatchObject({ repository: 'keys/after' });
    expect(lines[1]!.requestId).toBeUndefined();
  });

  test('a refused request (4xx) is logged with it too', async () => {
    const event = sampleEvent<APIGatewayProxyEventV2>('http-post-scans.json');
    const { value, records } = await captured({}, () =>
      createScan({ ...event, queryStringParameters: { failOn: 'critical' } }, h.context('createScan')),
    );
    expect((value as Result).statusCode).toBe(400);
    expect(records.find((r) => r.message === 'request refused')).toMatchObject({ requestId: REQUEST_ID });
  });
});

describe('metrics have a stage dimension', () => {
  interface Emf {
    _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
    [name: string]: unknown;
  }
  const emf = (records: LogRecord[]): Emf[] =>
    records.filter((r) => r._aws !== undefined) as unknown as Emf[];

  test.each([
    ['prod', 'prod'],
    ['staging-eu', 'staging-eu'],
    [undefined, 'unknown'],
  ])('TFGUARD_STAGE=%j: every metric record is in the series of stage %j', async (stage, expected) => {
    const archive = await makeTarGz({ 'main.tf': 'terraform {\n  required_version = ">= 1.5"\n}\n' });
    const object = await h.upload(`uploads/stage/${expected}/a.tar.gz`, archive);
    const { records } = await captured({ TFGUARD_STAGE: stage }, async () => {
      await scanUpload(h.s3Event([object]), h.context('scanUpload'));
      await createScan(sampleEvent('http-post-scans.json'), h.context('createScan'));
    });
    const published = emf(records);
    expect(published).toHaveLength(2); // one per invocation
    for (const record of published) {
      const [metrics] = record._aws.CloudWatchMetrics;
      expect(metrics!.Namespace).toBe('tfguard');
      expect(metrics!.Dimensions).toEqual([['service', 'stage']]);
      expect(metrics!.Metrics.map((m) => m.Name)).toContain('Scans');
      expect(record.service).toBe('tfguard');
      expect(record.stage).toBe(expected);
    }
  });

  test('an unusable TFGUARD_STAGE fails the invocation, naming the variable', async () => {
    await withEnv({ TFGUARD_STAGE: 'prod stage!' }, async () => {
      expect(() => runtime()).toThrow(EnvironmentError);
      expect(() => runtime()).toThrow(
        'environment variable TFGUARD_STAGE must be 1 to 64 letters, digits, ".", "_" or "-" (starting with a letter or digit), got "prod stage!"',
      );
    });
  });
});
