/**
 * Threat model, "Faults in the service" rows for the fleet audit (docs/security.md §8): S3 becomes
 * unavailable while the audit worker rescans a repository. Real s3rver (stopped and restarted), the
 * real start and worker handlers; only SQS is captured in-process (there is no local SQS), as in
 * test/handlers/audit.test.ts. A failed message is reported in `batchItemFailures`, so SQS redelivers
 * it alone (a clean retry); if it still fails on its last delivery and its failure cannot even be
 * recorded, SQS's redrive policy moves it to the audit dead-letter queue and the run has no summary.
 */
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { handler as auditStart } from '../../handlers/audit-start';
import { handler as auditWorker } from '../../handlers/audit-worker';
import { handler as scanUpload } from '../../handlers/upload-scan';
import { auditSqsEvent, sampleEvent } from '../support/lambda';
import { makeTarGz } from '../support/archive';
import { layout, MAIN_TF, ROOT, startServiceFixture, type ServiceFixture } from '../support/service-fixture';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/tfguard-test-AuditQueue';
const sqs = mockClient(SQSClient);
let captured: SendMessageBatchRequestEntry[] = [];
let f: ServiceFixture;

const context = { awsRequestId: 'req-audit', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

beforeAll(async () => {
  f = await startServiceFixture({ TFGUARD_AUDIT_QUEUE_URL: QUEUE_URL, TFGUARD_AUDIT_REGISTRY: 'false' });
  sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: SendMessageBatchRequestEntry[] }) => {
    captured.push(...input.Entries);
    return {
      Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: '' })),
      Failed: [],
    };
  });
  for (const repository of ['audit/one', 'audit/two']) {
    const object = await f.upload(
      `uploads/${repository}/build.tar.gz`,
      await makeTarGz({ 'main.tf': MAIN_TF }),
    );
    await scanUpload(f.s3Event([object]));
  }
});
afterAll(async () => {
  sqs.restore();
  await f?.dispose();
});

const repositoryOf = (e: SendMessageBatchRequestEntry): string =>
  (JSON.parse(e.MessageBody!) as { repository: string }).repository;

/** Delivers the messages as one batch; returns the repositories whose messages failed. */
async function deliver(entries: SendMessageBatchRequestEntry[], receiveCount: number): Promise<string[]> {
  const event = auditSqsEvent(entries, receiveCount);
  const response = await auditWorker(event, context);
  const failed = new Set(response.batchItemFailures.map((x) => x.itemIdentifier));
  return event.Records.flatMap((r, i) => (failed.has(r.messageId) ? [repositoryOf(entries[i]!)] : []));
}

async function startRun(time: string, id: string): Promise<string> {
  captured = [];
  const started = await auditStart(
    { ...sampleEvent<ScheduledEvent>('audit-schedule.json'), time, id },
    context,
  );
  expect(started).toMatchObject({ repositories: 2, completed: false });
  expect(captured.map(repositoryOf).sort()).toEqual(['audit/one', 'audit/two']);
  return started.runId;
}

test('S3 unavailable during an audit rescan: reported for redelivery (clean retry); the redelivery completes the run', async () => {
  const runId = await startRun('2025-02-01T03:00:00Z', 'run-s3-down');
  await f.s3.stop();
  let failed: string[];
  try {
    failed = await deliver(captured, 1);
  } finally {
    await f.s3.start();
  }
  expect(failed.sort()).toEqual(['audit/one', 'audit/two']);
  expect(await f.reports.get(layout.auditRun(runId).summaryJson)).toBeNull();
  expect(await deliver(captured, 2)).toEqual([]);
  const summary = JSON.parse(
    (await f.reports.get(layout.auditRun(runId).summaryJson))!.body.toString('utf8'),
  ) as {
    repositories: { repository: string; status: string }[];
  };
  expect(summary.repositories.map((r) => [r.repository, r.status])).toEqual([
    ['audit/one', 'scanned'],
    ['audit/two', 'scanned'],
  ]);
});

test('S3 still unavailable on the last delivery: the message fails again, SQS moves it to the audit DLQ, no summary', async () => {
  const runId = await startRun('2025-02-02T03:00:00Z', 'run-s3-gone');
  await f.s3.stop();
  let failed: string[];
  try {
    failed = await deliver(captured, 3); // maxReceiveCount (TFGUARD_AUDIT_MAX_RECEIVE_COUNT) is 3
  } finally {
    await f.s3.start();
  }
  // Not even the "failed" result could be written: the messages fail, and after their third
  // delivery the queue's redrive policy sends them to the dead-letter queue.
  expect(failed.sort()).toEqual(['audit/one', 'audit/two']);
  expect(await f.reports.get(layout.auditRun(runId).summaryJson)).toBeNull();
  const yml = readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8');
  expect(yml).toMatch(
    /RedrivePolicy:\s*\n\s*deadLetterTargetArn: !GetAtt AuditDeadLetterQueue\.Arn\s*\n\s*maxReceiveCount: \$\{self:custom\.auditMaxReceiveCount\}/,
  );
  expect(yml).toMatch(/auditMaxReceiveCount: 3\b/);
});
