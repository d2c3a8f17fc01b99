/**
 * Runs the upload-scan handler once in this process, as a Lambda runtime would: the S3 event as the
 * first argument, settings from the environment. Used by the service-fault tests to kill an
 * invocation in the middle of a scan, the way Lambda ends one at its timeout.
 */
import type { Context, S3Event } from 'aws-lambda';
import { handler } from '../../handlers/upload-scan';

const event = JSON.parse(process.argv[2] ?? '{}') as S3Event;
const deadline = Date.now() + Number(process.argv[3] ?? '120000');
const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'tfguard-test-scanUpload',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:tfguard-test-scanUpload',
  memoryLimitInMB: '2048',
  awsRequestId: 'req-timeout',
  logGroupName: '/aws/lambda/tfguard-test-scanUpload',
  logStreamName: '2025/01/01/[$LATEST]0123456789abcdef',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} as Context;

process.stdout.write('started\n');
handler(event, context).then(
  (result) => {
    process.stdout.write(`${JSON.stringify({ result })}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stdout.write(`${JSON.stringify({ error: String((err as Error)?.message ?? err) })}\n`);
    process.exit(1);
  },
);
