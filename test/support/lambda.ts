/**
 * The Lambda test environment, shared by the handler suites (test/handlers/), the service-fault
 * suites (test/security/service-*.test.ts, including the child process of test/support/lambda-child.ts) and
 * scripts/soak: the environment the handlers read (through src/config.ts), Lambda contexts, the
 * sample events in events/ adjusted to uploaded objects, and `startHarness`, a real s3rver with the
 * two buckets and that environment set.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import type { Context, S3Event, SQSEvent, SQSRecord } from 'aws-lambda';
import { resetRuntime } from '../../handlers/runtime';
import { closeSharedParser } from '../../src/scan';
import { S3ObjectStore } from '../../src/storage/s3';
import { S3RVER_CREDENTIALS, S3RVER_REGION, startS3rver, type RunningS3rver } from './s3rver';

export const UPLOADS_BUCKET = 'tfguard-uploads-local';
export const REPORTS_BUCKET = 'tfguard-reports-local';
export const EVENTS_DIR = join(__dirname, '..', '..', 'events');

export function sampleEvent<T>(name: string): T {
  return JSON.parse(readFileSync(join(EVENTS_DIR, name), 'utf8')) as T;
}

export const SAMPLE_ARCHIVE = readFileSync(join(EVENTS_DIR, 'archives', 'acme-network.tar.gz'));

// ---------------------------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------------------------

/** The handlers' environment for a local S3-compatible server at `s3Endpoint` (s3rver's keys). */
export function lambdaEnv(s3Endpoint: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TFGUARD_UPLOADS_BUCKET: UPLOADS_BUCKET,
    TFGUARD_REPORTS_BUCKET: REPORTS_BUCKET,
    TFGUARD_S3_ENDPOINT: s3Endpoint,
    // The registry cross-check is on by default in Lambda; these tests have no registry to reach
    // (it is exercised against a local signed registry in test/service/audit.test.ts).
    TFGUARD_SCAN_REGISTRY: 'false',
    // On by default in Lambda; tests that resolve remote modules map a fake registry and turn it on.
    TFGUARD_REMOTE_MODULES: 'false',
    AWS_REGION: S3RVER_REGION,
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
    ...extra,
  };
}

/** Sets the handlers' environment (and forgets their cached wiring). */
export function setEnv(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetRuntime();
}

/** Runs `work` with some variables changed, then restores them exactly. */
export async function withEnv<T>(
  overrides: Record<string, string | undefined>,
  work: () => Promise<T>,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(overrides).map((name) => [name, process.env[name]]));
  setEnv(overrides);
  try {
    return await work();
  } finally {
    setEnv(saved);
  }
}

// ---------------------------------------------------------------------------------------------
// Contexts and events
// ---------------------------------------------------------------------------------------------

let invocations = 0;

/**
 * A Lambda context for invoking a handler as the Lambda runtime would: its
 * `getRemainingTimeInMillis` counts down from `remainingMs` in real time.
 */
export function lambdaContext(functionName: string, remainingMs: number): Context {
  const end = Date.now() + remainingMs;
  invocations++;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `tfguard-test-${functionName}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:tfguard-test-${functionName}`,
    memoryLimitInMB: '2048',
    awsRequestId: `req-${functionName}-${invocations}`,
    logGroupName: `/aws/lambda/tfguard-test-${functionName}`,
    logStreamName: '2025/01/01/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => Math.max(0, end - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** S3 event notifications URL-encode keys the way HTML forms do (space → `+`). */
export function s3EncodeKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

export interface UploadedObject {
  key: string;
  etag: string;
  size: number;
}

/** Puts `body` into the uploads bucket under `key`, as a client's upload would. */
export async function putUpload(
  client: S3Client,
  key: string,
  body: Buffer | string,
  metadata?: Record<string, string>,
): Promise<UploadedObject> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const put = await client.send(
    new PutObjectCommand({
      Bucket: UPLOADS_BUCKET,
      Key: key,
      Body: bytes,
      ...(metadata ? { Metadata: metadata } : {}),
    }),
  );
  return { key, etag: (put.ETag ?? '').replace(/"/g, ''), size: bytes.length };
}

/** An S3 event like events/s3-upload.json, one record per object. */
export function s3UploadEvent(
  objects: UploadedObject[],
  overrides: { bucket?: string; eventName?: string } = {},
): S3Event {
  const template = sampleEvent<S3Event>('s3-upload.json').Records[0]!;
  return {
    Records: objects.map((o, i) => ({
      ...template,
      eventName: overrides.eventName ?? template.eventName,
      s3: {
        ...template.s3,
        bucket: { ...template.s3.bucket, name: overrides.bucket ?? UPLOADS_BUCKET },
        object: { key: s3EncodeKey(o.key), size: o.size, eTag: o.etag, sequencer: `00${i}` },
      },
    })),
  } as S3Event;
}

/** An SQS event delivering audit messages (as the start handler sent them) for the `receiveCount`th
 * time, built on the sample `events/audit-message.json`. */
export function auditSqsEvent(entries: SendMessageBatchRequestEntry[], receiveCount: number): SQSEvent {
  const template = sampleEvent<SQSEvent>('audit-message.json').Records[0]!;
  return {
    Records: entries.map((e, i): SQSRecord => ({
      ...template,
      messageId: `msg-${receiveCount}-${i}-${e.Id}`,
      body: e.MessageBody!,
      attributes: { ...template.attributes, ApproximateReceiveCount: String(receiveCount) },
    })),
  };
}

export async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of iterable) out.push(key);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The harness: s3rver plus the environment
// ---------------------------------------------------------------------------------------------

export interface Harness {
  server: RunningS3rver;
  client: S3Client;
  reports: S3ObjectStore;
  uploads: S3ObjectStore;
  env: Record<string, string>;
  upload(key: string, body: Buffer | string, metadata?: Record<string, string>): Promise<UploadedObject>;
  /** An S3 event like events/s3-upload.json, one record per object. */
  s3Event(objects: UploadedObject[], overrides?: { bucket?: string; eventName?: string }): S3Event;
  context(functionName: string): Context;
  stop(): Promise<void>;
}

export async function startHarness(extraEnv: Record<string, string> = {}): Promise<Harness> {
  const server = await startS3rver([UPLOADS_BUCKET, REPORTS_BUCKET]);
  const client = server.client();
  const env = lambdaEnv(server.endpoint, extraEnv);
  setEnv(env);
  return {
    server,
    client,
    env,
    reports: new S3ObjectStore({ bucket: REPORTS_BUCKET, client }),
    uploads: new S3ObjectStore({ bucket: UPLOADS_BUCKET, client }),
    upload: (key, body, metadata) => putUpload(client, key, body, metadata),
    s3Event: s3UploadEvent,
    context(functionName) {
      // The handlers read the time left once, when the invocation starts.
      return lambdaContext(functionName, 60_000);
    },
    async stop() {
      await closeSharedParser();
      await server.stop();
    },
  };
}
