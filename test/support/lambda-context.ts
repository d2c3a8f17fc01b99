/**
 * A Lambda context for invoking the handlers in-process, as the Lambda runtime would: its
 * `getRemainingTimeInMillis` counts down from `remainingMs` in real time.
 */
import type { Context } from 'aws-lambda';

let invocations = 0;

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

/**
 * `bytes` (default 4.5 MB) of resources ending in an unterminated string: the parser's fast path
 * gives up and hcl2json parses the whole file in a worker. That takes about 1 s per MB in a warm
 * worker and twice that in a new one on a 2-core machine, so a deadline a second or two into the
 * scan reliably falls inside the parse.
 */
export function slowToParse(head: string, bytes = 4_500_000): string {
  const pieces = [head];
  for (let i = 0, size = 0; size < bytes; i++) {
    const block = `resource "aws_s3_bucket" "b${i}" {\n  bucket = "bucket-${i}"\n}\n\n`;
    pieces.push(block);
    size += block.length;
  }
  pieces.push('locals {\n  x = "unterminated\n}\n');
  return pieces.join('');
}
