/**
 * Runs the upload-scan handler once in this process, as a Lambda runtime would: the S3 event as the
 * first argument, settings from the environment. Used by the service-fault tests to kill an
 * invocation in the middle of a scan, the way Lambda ends one at its timeout.
 */
import type { S3Event } from 'aws-lambda';
import { handler } from '../../handlers/upload-scan';
import { lambdaContext } from './lambda';

const event = JSON.parse(process.argv[2] ?? '{}') as S3Event;
const context = lambdaContext('scanUpload', Number(process.argv[3] ?? '120000'));

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
