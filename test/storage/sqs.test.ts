/** The SQS sender (SQS is the one AWS service faked in-process, with aws-sdk-client-mock). */
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { QueueSendError, SqsMessageQueue } from '../../src/storage/sqs';

const sqs = mockClient(SQSClient);
afterEach(() => sqs.reset());
afterAll(() => sqs.restore());

const client = new SQSClient({
  region: 'us-east-1',
  credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
});
const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/q';
const ok = (entries: SendMessageBatchRequestEntry[]) => ({
  Successful: entries.map((e) => ({ Id: e.Id!, MessageId: `m${e.Id}`, MD5OfMessageBody: '' })),
  Failed: [],
});

test('sends every message in batches of at most ten, to the queue it was given', async () => {
  const seen: string[] = [];
  sqs
    .on(SendMessageBatchCommand)
    .callsFake((input: { QueueUrl: string; Entries: SendMessageBatchRequestEntry[] }) => {
      expect(input.QueueUrl).toBe(queueUrl);
      expect(input.Entries.length).toBeLessThanOrEqual(10);
      seen.push(...input.Entries.map((e) => e.MessageBody!));
      return ok(input.Entries);
    });
  const bodies = Array.from({ length: 43 }, (_, i) => `message ${i}`);
  await new SqsMessageQueue({ queueUrl, client, concurrency: 3 }).sendAll(bodies);
  expect(seen.sort()).toEqual([...bodies].sort());
  expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(5);
  await new SqsMessageQueue({ queueUrl, client }).sendAll([]);
  expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(5);
});

test('entries SQS reports as failed are resent; persistent failures throw', async () => {
  let calls = 0;
  sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: SendMessageBatchRequestEntry[] }) => {
    calls++;
    const [first, ...rest] = input.Entries;
    return {
      ...ok(rest),
      Failed: [{ Id: first!.Id!, Code: 'InternalError', SenderFault: false, Message: 'try again' }],
    };
  });
  const error = await new SqsMessageQueue({ queueUrl, client, attempts: 3 })
    .sendAll(['a', 'b', 'c'])
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(QueueSendError);
  expect((error as Error).message).toBe(
    `could not send 1 message(s) to ${queueUrl}: InternalError: try again`,
  );
  expect(calls).toBe(3); // a,b,c → a → a (the last attempt still fails)
});

test('a sender fault is not retried', async () => {
  sqs.on(SendMessageBatchCommand).resolves({
    Successful: [],
    Failed: [{ Id: '0', Code: 'InvalidParameterValue', SenderFault: true, Message: 'too big' }],
  });
  await expect(new SqsMessageQueue({ queueUrl, client }).sendAll(['x'])).rejects.toThrow(
    `could not send 1 message(s) to ${queueUrl}: InvalidParameterValue: too big`,
  );
  expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(1);
});

test('a failing call is wrapped with its cause', async () => {
  const cause = new Error('connect ECONNREFUSED');
  sqs.on(SendMessageBatchCommand).rejects(cause);
  const error = (await new SqsMessageQueue({ queueUrl, client })
    .sendAll(['x'])
    .catch((e: unknown) => e)) as QueueSendError;
  expect(error.message).toBe(`could not send 1 message(s) to ${queueUrl}: connect ECONNREFUSED`);
  expect(error.cause).toBe(cause);
});
