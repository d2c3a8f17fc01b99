/**
 * Shared set-up of the service-fault tests: the Lambda test environment (test/support/lambda.ts)
 * on a stoppable s3rver with the service's two buckets, and a view of everything the service stored
 * about one upload.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import { handler } from '../../handlers/upload-scan';
import { ReportLayout, uploadScanId } from '../../src/service/keys';
import { UploadBatchError } from '../../src/service/upload-scan';
import { S3ObjectStore } from '../../src/storage/s3';
import {
  lambdaEnv,
  putUpload,
  REPORTS_BUCKET,
  s3UploadEvent,
  setEnv,
  UPLOADS_BUCKET,
  type UploadedObject,
} from './lambda';
import { s3rverClient } from './s3rver';
import { startStoppableS3rver, type StoppableS3rver } from './fault-servers';

export { REPORTS_BUCKET, UPLOADS_BUCKET };

export const ROOT = path.resolve(__dirname, '../..');
export const layout = new ReportLayout('reports/');

export const MAIN_TF = `terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = { source = "hashicorp/aws", version = "~> 5.0" }
  }
}
`;

export const NOTHING = { sarif: false, markdown: false, json: false, rejected: false, latest: false };
export const COMPLETE = { sarif: true, markdown: true, json: true, rejected: false, latest: true };

export interface ServiceFixture {
  s3: StoppableS3rver;
  client: S3Client;
  reports: S3ObjectStore;
  /** The handlers' environment, as set in this process (a child process is given it too). */
  env: Record<string, string>;
  upload(key: string, body: Buffer): Promise<UploadedObject>;
  s3Event(objects: UploadedObject[]): S3Event;
  scanIdOf(object: UploadedObject): string;
  /** Which of the upload's scan objects and its repository pointer exist. */
  stored(object: UploadedObject, repository: string): Promise<Record<string, boolean>>;
  /** Invokes the handler, which must fail with `UploadBatchError` naming `keys` (a retry). */
  expectRetry(event: S3Event, keys: string[]): Promise<UploadBatchError>;
  dispose(): Promise<void>;
}

export async function startServiceFixture(extraEnv: Record<string, string> = {}): Promise<ServiceFixture> {
  const s3 = await startStoppableS3rver([UPLOADS_BUCKET, REPORTS_BUCKET]);
  const client = s3rverClient(s3.endpoint);
  const reports = new S3ObjectStore({ bucket: REPORTS_BUCKET, client });
  const env = lambdaEnv(s3.endpoint, extraEnv);
  setEnv(env);
  const scanIdOf = (o: UploadedObject): string =>
    uploadScanId({ bucket: UPLOADS_BUCKET, key: o.key, etag: o.etag });
  return {
    s3,
    client,
    reports,
    env,
    upload: (key, body) => putUpload(client, key, body),
    s3Event: (objects) => s3UploadEvent(objects),
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
        `${keys.length} upload${keys.length === 1 ? '' : 's'} failed and will be retried: ${keys.map((k) => `s3://${UPLOADS_BUCKET}/${k}`).join(', ')}`,
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
