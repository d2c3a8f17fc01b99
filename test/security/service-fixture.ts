/**
 * Shared set-up of the service-fault tests: a stoppable s3rver with the service's two buckets, the
 * handlers' environment, uploads, S3 events for them, and a view of everything the service stored
 * about one upload.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import { handler } from '../../handlers/upload-scan';
import { ReportLayout, uploadScanId } from '../../src/service/keys';
import { UploadBatchError } from '../../src/service/upload-scan';
import { S3ObjectStore } from '../../src/storage/s3';
import { REPORTS_BUCKET, s3EncodeKey, sampleEvent, setEnv, UPLOADS_BUCKET } from '../handlers/harness';
import { startStoppableS3rver, type StoppableS3rver } from './fault-servers';

export { REPORTS_BUCKET, UPLOADS_BUCKET };

export const ROOT = path.resolve(__dirname, '../..');
export const layout = new ReportLayout('reports/');

/** The handlers' environment (read through src/config.ts), without the S3 endpoint. */
export const SERVICE_ENV: Record<string, string> = {
  TFGUARD_UPLOADS_BUCKET: UPLOADS_BUCKET,
  TFGUARD_REPORTS_BUCKET: REPORTS_BUCKET,
  TFGUARD_SCAN_REGISTRY: 'false',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
};

export const MAIN_TF = `terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 5.0" }
  }
}
`;

export interface Uploaded {
  key: string;
  etag: string;
  size: number;
}

export const NOTHING = { sarif: false, markdown: false, json: false, rejected: false, latest: false };
export const COMPLETE = { sarif: true, markdown: true, json: true, rejected: false, latest: true };

export interface ServiceFixture {
  s3: StoppableS3rver;
  client: S3Client;
  reports: S3ObjectStore;
  upload(key: string, body: Buffer): Promise<Uploaded>;
  s3Event(objects: Uploaded[]): S3Event;
  scanIdOf(object: Uploaded): string;
  /** Which of the upload's scan objects and its repository pointer exist. */
  stored(object: Uploaded, repository: string): Promise<Record<string, boolean>>;
  /** Invokes the handler, which must fail with `UploadBatchError` naming `keys` (a retry). */
  expectRetry(event: S3Event, keys: string[]): Promise<UploadBatchError>;
  dispose(): Promise<void>;
}

export async function startServiceFixture(extraEnv: Record<string, string> = {}): Promise<ServiceFixture> {
  const s3 = await startStoppableS3rver([UPLOADS_BUCKET, REPORTS_BUCKET]);
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  const reports = new S3ObjectStore({ bucket: REPORTS_BUCKET, client });
  const env = { ...SERVICE_ENV, TFGUARD_S3_ENDPOINT: s3.endpoint, ...extraEnv };
  setEnv(env);
  const scanIdOf = (o: Uploaded): string =>
    uploadScanId({ bucket: UPLOADS_BUCKET, key: o.key, etag: o.etag });
  return {
    s3,
    client,
    reports,
    async upload(key, body) {
      const put = await client.send(new PutObjectCommand({ Bucket: UPLOADS_BUCKET, Key: key, Body: body }));
      return { key, etag: (put.ETag ?? '').replace(/"/g, ''), size: body.length };
    },
    s3Event(objects) {
      const template = sampleEvent<S3Event>('s3-upload.json').Records[0]!;
      return {
        Records: objects.map((o, i) => ({
          ...template,
          s3: {
            ...template.s3,
            bucket: { ...template.s3.bucket, name: UPLOADS_BUCKET },
            object: { key: s3EncodeKey(o.key), size: o.size, eTag: o.etag, sequencer: `00${i}` },
          },
        })),
      };
    },
    scanIdOf,
    async stored(object, repository) {
      const scanId = scanIdOf(object);
      const keys = layout.reports(scanId);
      const out: Record<string, boolean> = {};
      for (const [name, key] of Object.entries({
        sarif: keys.sarif,
        markdown: keys.markdown,
        json: keys.json,
        rejected: layout.rejected(scanId),
        latest: layout.latest(repository),
      })) {
        out[name] = (await reports.get(key)) !== null;
      }
      return out;
    },
    async expectRetry(event, keys) {
      const error = await handler(event).then(
        () => {
          throw new Error('the invocation succeeded; a failure was expected');
        },
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(UploadBatchError);
      const batch = error as UploadBatchError;
      expect(batch.failures.map((f) => f.key)).toEqual(keys);
      expect(batch.message).toBe(
        `${keys.length} upload(s) failed and will be retried: ${keys.map((k) => `s3://${UPLOADS_BUCKET}/${k}`).join(', ')}`,
      );
      return batch;
    },
    async dispose() {
      client.destroy();
      await s3.dispose();
      setEnv(Object.fromEntries(Object.keys(env).map((k) => [k, undefined])));
    },
  };
}

/** serverless.yml sends the function's failed async invocations, after 2 retries, to `queue`. */
export function expectOnFailureQueue(functionName: string, queue: string): void {
  const yml = readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8');
  const logicalId = `${functionName[0]!.toUpperCase()}${functionName.slice(1)}LambdaFunction`;
  expect(yml).toMatch(
    new RegExp(
      `FunctionName: !Ref ${logicalId}[\\s\\S]*?MaximumRetryAttempts: 2[\\s\\S]*?OnFailure:\\s*\\n\\s*Destination: !GetAtt ${queue}\\.Arn`,
    ),
  );
}
