/**
 * Threat model, "Faults in the service" rows for the audit worker near its deadline
 * (docs/security.md §8): a rescan still running a margin before the invocation's timeout stops
 * (`scan-timeout`), the repositories after it in the batch are not started, and all of them go to
 * `batchItemFailures` (SQS redelivers them; a redelivery with enough time completes the run). On
 * the last delivery they are recorded `failed` with the scan-timeout reason instead, so the run
 * still gets its summary. Real s3rver and handlers; SQS sends are captured in-process, as in
 * test/handlers/audit.test.ts.
 */
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as auditStart } from '../../handlers/audit-start';
import { handler as auditWorker } from '../../handlers/audit-worker';
import { handler as scanUpload } from '../../handlers/upload-scan';
import type { AuditSummary } from '../../src/service/summary';
import { auditSqsEvent, lambdaContext, sampleEvent, withEnv } from '../support/lambda';
import { slowToParse } from '../support/scan';
import { makeTarGz } from '../support/archive';
import { layout, MAIN_TF, startServiceFixture, type ServiceFixture } from '../support/service-fixture';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/tfguard-test-AuditQueue';
const sqs = mockClient(SQSClient);
let captured: SendMessageBatchRequestEntry[] = [];
let f: ServiceFixture;

beforeAll(async () => {
  f = await startServiceFixture({
    TFGUARD_AUDIT_QUEUE_URL: QUEUE_URL,
    TFGUARD_AUDIT_REGISTRY: 'false',
    TFGUARD_DEADLINE_MARGIN_MS: '1000',
  });
  sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: SendMessageBatchRequestEntry[] }) => {
    captured.push(...input.Entries);
    return {
      Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: '' })),
      Failed: [],
    };
  });
  const uploads = [
    await f.upload(
      'uploads/dl/slow/build.tar.gz',
      await makeTarGz({ 'main.tf': MAIN_TF, 'slow/main.tf': slowToParse(MAIN_TF) }),
    ),
    await f.upload('uploads/dl/plain/build.tar.gz', await makeTarGz({ 'main.tf': MAIN_TF })),
  ];
  // The uploads' own scans, quickly: a short parse budget turns the slow file into a finding.
  await withEnv({ TFGUARD_PARSER_TIMEOUT_MS: '200' }, () => scanUpload(f.s3Event(uploads)));
}, 60_000);
afterAll(async () => {
  sqs.restore();
  await f?.dispose();
});

const repositoryOf = (e: SendMessageBatchRequestEntry): string =>
  (JSON.parse(e.MessageBody!) as { repository: string }).repository;

/** The run's messages, the slow repository first (the worker takes a batch in order). */
async function startRun(
  time: string,
  id: string,
): Promise<{ runId: string; messages: SendMessageBatchRequestEntry[] }> {
  captured = [];
  const started = await auditStart(
    { ...sampleEvent<ScheduledEvent>('audit-schedule.json'), time, id },
    lambdaContext('auditStart', 60_000),
  );
  expect(started).toMatchObject({ repositories: 2, completed: false });
  const messages = [...captured].sort((a, b) =>
    repositoryOf(a) === 'dl/slow' ? -1 : repositoryOf(b) === 'dl/slow' ? 1 : 0,
  );
  expect(messages.map(repositoryOf)).toEqual(['dl/slow', 'dl/plain']);
  return { runId: started.runId, messages };
}

/** Delivers the messages as one batch; returns the repositories whose messages failed. */
async function deliver(
  entries: SendMessageBatchRequestEntry[],
  receiveCount: number,
  context: Context,
): Promise<string[]> {
  const event = auditSqsEvent(entries, receiveCount);
  const response = await auditWorker(event, context);
  const failed = new Set(response.batchItemFailures.map((x) => x.itemIdentifier));
  return event.Records.flatMap((r, i) => (failed.has(r.messageId) ? [repositoryOf(entries[i]!)] : []));
}

async function summaryOf(runId: string): Promise<AuditSummary | null> {
  const got = await f.reports.get(layout.auditRun(runId).summaryJson);
  return got === null ? null : (JSON.parse(got.body.toString('utf8')) as AuditSummary);
}

test('a rescan near the deadline: it and the rest of the batch are redelivered; the redelivery with time completes the run', async () => {
  const { runId, messages } = await startRun('2025-03-01T03:00:00Z', 'run-deadline');
  // 3 s left: margin min(1 s, 750 ms), so the slow rescan stops ~2.25 s in.
  expect(await deliver(messages, 1, lambdaContext('auditWorker', 3000))).toEqual(['dl/slow', 'dl/plain']);
  expect(await summaryOf(runId)).toBeNull();
  expect(await f.reports.get(layout.auditRun(runId).result('dl/slow'))).toBeNull();
  expect(await f.reports.get(layout.auditRun(runId).result('dl/plain'))).toBeNull();

  expect(await deliver(messages, 2, lambdaContext('auditWorker', 180_000))).toEqual([]);
  const summary = await summaryOf(runId);
  expect(summary?.repositories.map((r) => [r.repository, r.status])).toEqual([
    ['dl/plain', 'scanned'],
    ['dl/slow', 'scanned'],
  ]);
}, 90_000);

test('the same on the last delivery: both recorded failed with the scan-timeout reason, and the run completes', async () => {
  const { runId, messages } = await startRun('2025-03-02T03:00:00Z', 'run-deadline-last');
  // maxReceiveCount (TFGUARD_AUDIT_MAX_RECEIVE_COUNT) is 3: this is the last delivery.
  expect(await deliver(messages, 3, lambdaContext('auditWorker', 3000))).toEqual([]);
  const summary = await summaryOf(runId);
  expect(
    summary?.repositories.map((r) => ({ repository: r.repository, status: r.status, reason: r.reason })),
  ).toEqual([
    {
      repository: 'dl/plain',
      status: 'failed',
      reason:
        "scan-timeout: the rescan of dl/plain was not started: the Lambda invocation's deadline had already passed (an earlier record used its time)",
    },
    {
      repository: 'dl/slow',
      status: 'failed',
      reason: expect.stringMatching(
        /^scan-timeout: scan timed out after \d+(\.\d)? m?s while parsing "slow\/main\.tf": the Lambda invocation's deadline was reached \(\d+ ms before its timeout, kept for storing the outcome\)$/,
      ) as string,
    },
  ]);
  expect(summary?.totals.failed).toBe(2);
}, 60_000);
