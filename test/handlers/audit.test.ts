/**
 * Entry point 3 end to end: 52 repositories uploaded to s3rver and scanned by the upload handler,
 * the scheduled start handler fanning out through SQS (the only faked part: SendMessageBatch is
 * captured in-process), the worker handler fed the captured messages as SQS batches, and the
 * summary checked against the archives scanned directly (new/fixed across runs: test/service/audit.test.ts).
 */
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import type { ScheduledEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { handler as auditStart } from '../../handlers/audit-start';
import { handler as auditWorker } from '../../handlers/audit-worker';
import { handler as scanUpload } from '../../handlers/upload-scan';
import type { AuditLatestPointer } from '../../src/service/audit';
import { ReportLayout } from '../../src/service/keys';
import type { AuditSummary } from '../../src/service/summary';
import type { FleetData } from '../../src/service/fleet';
import { scanBytes } from '../../src/scan';
import type { Report } from '../../src/report/types';
import { makeTarGz } from '../support/archive';
import {
  auditSqsEvent,
  collect,
  type Harness,
  sampleEvent,
  startHarness,
  type UploadedObject,
} from '../support/lambda';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/tfguard-test-AuditQueue';
const layout = new ReportLayout('reports/');
const sqs = mockClient(SQSClient);
let h: Harness;

const tf = (constraint: string, extra = '') => `terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = { source = "hashicorp/aws", version = "${constraint}" }${extra}
  }
}
`;
const lock = (providers: Record<string, string>) =>
  Object.entries(providers)
    .map(
      ([source, version]) => `provider "registry.terraform.io/${source}" {
  version     = "${version}"
  constraints = "~> ${version.split('.')[0]}.0"
  hashes = [
    "h1:ltxyuBWIy9cq0kIKDJH1jeWJy/y7XJLjS4QrsQK4plA=",
  ]
}
`,
    )
    .join('\n');

interface Fixture {
  repository: string;
  files: Record<string, string> | null; // null: not an archive
}

function fleet(): Fixture[] {
  const out: Fixture[] = [];
  const pad = (i: number) => String(i).padStart(2, '0');
  for (let i = 0; i < 20; i++) {
    out.push({
      repository: `fleet/a-${pad(i)}`,
      files: { 'main.tf': tf('~> 5.0'), '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.31.0' }) },
    });
  }
  for (let i = 0; i < 18; i++) {
    out.push({
      repository: `fleet/b-${pad(i)}`,
      files: {
        'main.tf': tf('~> 5.0', '\n    random = { source = "hashicorp/random", version = "~> 3.6" }'),
        '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.0', 'hashicorp/random': '3.6.0' }),
      },
    });
  }
  for (let i = 0; i < 9; i++)
    out.push({ repository: `fleet/c-${pad(i)}`, files: { 'main.tf': tf('>= 4.0') } });
  for (let i = 0; i < 2; i++) {
    out.push({
      repository: `fleet/d-${pad(i)}`,
      files: { 'main.tf': tf('~> 4.0'), '.terraform.lock.hcl': lock({ 'hashicorp/aws': '4.67.0' }) },
    });
  }
  out.push({ repository: 'fleet/rejected', files: null });
  out.push({ repository: 'fleet/missing', files: { 'main.tf': tf('~> 5.0') } });
  out.push({ repository: 'fleet/poison', files: { 'main.tf': tf('~> 5.0') } });
  return out;
}

const archives = new Map<string, Buffer>();
const uploads = new Map<string, UploadedObject>();
let captured: SendMessageBatchRequestEntry[] = [];
let sendCalls = 0;

beforeAll(async () => {
  h = await startHarness({ TFGUARD_AUDIT_QUEUE_URL: QUEUE_URL, TFGUARD_AUDIT_REGISTRY: 'false' });
  sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: SendMessageBatchRequestEntry[] }) => {
    sendCalls++;
    // The first batch reports one entry as throttled: the sender must resend just that one.
    if (sendCalls === 1) {
      const [first, ...rest] = input.Entries;
      captured.push(...rest);
      return {
        Successful: rest.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: '' })),
        Failed: [{ Id: first!.Id, Code: 'ThrottlingException', SenderFault: false, Message: 'slow down' }],
      };
    }
    captured.push(...input.Entries);
    return {
      Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: '' })),
      Failed: [],
    };
  });
  const fixtures = fleet();
  for (const f of fixtures) {
    const bytes = f.files === null ? Buffer.from('not an archive at all') : await makeTarGz(f.files);
    archives.set(f.repository, bytes);
    uploads.set(f.repository, await h.upload(`uploads/${f.repository}/build.tar.gz`, bytes));
  }
  const all = [...uploads.values()];
  const batches: UploadedObject[][] = [];
  for (let i = 0; i < all.length; i += 5) batches.push(all.slice(i, i + 5));
  await Promise.all(batches.map((b) => scanUpload(h.s3Event(b), h.context('scanUpload'))));
  expect(await collect(h.reports.list(layout.repositoriesPrefix))).toHaveLength(52);
  // The missing repository's upload is deleted after its scan; the poison repository's pointer is
  // corrupted, so every rescan attempt of it fails.
  await h.uploads.delete(uploads.get('fleet/missing')!.key);
  await h.reports.put(layout.latest('fleet/poison'), '{ not json');
}, 240_000);

afterAll(async () => {
  sqs.restore();
  await h?.stop();
});

/** Delivers messages in batches of 5 (the event source's batch size); returns what failed. */
async function deliver(
  entries: SendMessageBatchRequestEntry[],
  receiveCount: number,
): Promise<SendMessageBatchRequestEntry[]> {
  const failed: SendMessageBatchRequestEntry[] = [];
  for (let i = 0; i < entries.length; i += 5) {
    const batch = entries.slice(i, i + 5);
    const event = auditSqsEvent(batch, receiveCount);
    const response = await auditWorker(event, h.context('auditWorker'));
    const failedIds = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    event.Records.forEach((r, j) => {
      if (failedIds.has(r.messageId)) failed.push(batch[j]!);
    });
  }
  return failed;
}

async function json<T>(key: string): Promise<T> {
  const got = await h.reports.get(key);
  if (got === null) throw new Error(`missing ${key}`);
  return JSON.parse(got.body.toString('utf8')) as T;
}

const repositoryOf = (e: SendMessageBatchRequestEntry) =>
  (JSON.parse(e.MessageBody!) as { repository: string }).repository;

async function runAudit(time: string, id: string): Promise<{ runId: string; summary: AuditSummary }> {
  captured = [];
  const schedule = { ...sampleEvent<ScheduledEvent>('audit-schedule.json'), time, id };
  const started = await auditStart(schedule, h.context('auditStart'));
  expect(started).toMatchObject({ repositories: 52, shards: 6, completed: false });
  expect(captured).toHaveLength(52);
  expect(new Set(captured.map(repositoryOf)).size).toBe(52);
  // A malformed message rides along in the first batch: reported as a failure, the others pass.
  const malformed: SendMessageBatchRequestEntry = { Id: 'bad', MessageBody: '{"v":1,"runId":"nope"}' };
  let pending = await deliver([malformed, ...captured], 1);
  expect(pending.map((e) => (e.Id === 'bad' ? 'bad' : repositoryOf(e)))).toEqual(['bad', 'fleet/poison']);
  expect(await h.reports.get(layout.auditRun(started.runId).summaryJson)).toBeNull();
  pending = await deliver(pending, 2);
  expect(pending.map((e) => (e.Id === 'bad' ? 'bad' : repositoryOf(e)))).toEqual(['bad', 'fleet/poison']);
  // Third and last attempt (maxReceiveCount 3): the poison repository is recorded as failed, the
  // malformed message keeps failing and goes to the dead-letter queue.
  pending = await deliver(pending, 3);
  expect(pending.map((e) => e.Id)).toEqual(['bad']);
  return {
    runId: started.runId,
    summary: await json<AuditSummary>(layout.auditRun(started.runId).summaryJson),
  };
}

test('an audit over 52 repositories writes a summary that matches the archives', async () => {
  const { runId, summary } = await runAudit('2025-01-01T03:00:00Z', 'schedule-1');
  // Oracle: each kind of archive scanned directly (repositories of a kind differ only in name).
  const byKind = new Map<string, Report>();
  const direct = new Map<string, Report>();
  for (const [repository, bytes] of archives) {
    if (['fleet/rejected', 'fleet/poison', 'fleet/missing'].includes(repository)) continue;
    const kind = repository.slice(0, 'fleet/x'.length);
    if (!byKind.has(kind)) byKind.set(kind, await scanBytes('build.tar.gz', bytes));
    direct.set(repository, byKind.get(kind)!);
  }
  expect(summary.runId).toBe(runId);
  expect(summary.previousRunId).toBeNull();
  expect(summary.totals).toMatchObject({
    repositories: 52,
    scanned: 49,
    rejected: 1,
    missing: 1,
    failed: 1,
    new: 0,
    fixed: 0,
  });
  const sum = (s: 'error' | 'warning' | 'notice') =>
    [...direct.values()].reduce((n, r) => n + r.summary[s], 0);
  expect(summary.totals.findings).toEqual({
    error: sum('error'),
    warning: sum('warning'),
    notice: sum('notice'),
    total: sum('error') + sum('warning') + sum('notice'),
  });
  expect(summary.totals.findings.error).toBe(9); // fleet/c-*: no upper bound on aws

  expect(summary.repositories.map((r) => r.repository)).toEqual([...archives.keys()].sort());
  for (const entry of summary.repositories) {
    const report = direct.get(entry.repository);
    if (report === undefined) continue;
    expect({ repository: entry.repository, status: entry.status, counts: entry.counts }).toEqual({
      repository: entry.repository,
      status: 'scanned',
      counts: {
        error: report.summary.error,
        warning: report.summary.warning,
        notice: report.summary.notice,
        total: report.summary.total,
      },
    });
    expect(entry.compared).toBe(false);
  }
  const byName = new Map(summary.repositories.map((r) => [r.repository, r]));
  expect(byName.get('fleet/rejected')).toMatchObject({ status: 'rejected' });
  expect(byName.get('fleet/missing')).toMatchObject({
    status: 'missing',
    reason: expect.stringContaining('no longer exists'),
  });
  expect(byName.get('fleet/poison')).toMatchObject({ status: 'failed' });

  // Version skew: aws locked at three versions, random at one.
  const aws = summary.providers.find((p) => p.source === 'registry.terraform.io/hashicorp/aws')!;
  expect(aws.skew).toBe(true);
  expect(aws.versions.map((v) => [v.version, v.repositories.length])).toEqual([
    ['5.40.0', 18],
    ['5.31.0', 20],
    ['4.67.0', 2],
  ]);
  expect(aws.versions[2]!.repositories).toEqual(['fleet/d-00', 'fleet/d-01']);
  const random = summary.providers.find((p) => p.source === 'registry.terraform.io/hashicorp/random')!;
  expect(random).toMatchObject({ skew: false, versions: [{ version: '3.6.0' }] });

  // Most common violations, from the direct scans.
  const tally = new Map<string, { findings: number; repositories: Set<string> }>();
  for (const [repository, report] of direct) {
    for (const f of report.findings) {
      const t = tally.get(f.ruleId) ?? { findings: 0, repositories: new Set<string>() };
      t.findings++;
      t.repositories.add(repository);
      tally.set(f.ruleId, t);
    }
  }
  for (const v of summary.topViolations) {
    expect({ rule: v.ruleId, findings: v.findings, repositories: v.repositories }).toEqual({
      rule: v.ruleId,
      findings: tally.get(v.ruleId)!.findings,
      repositories: tally.get(v.ruleId)!.repositories.size,
    });
  }
  expect(summary.topViolations.map((v) => v.ruleId)).toContain('root-module-unbounded');
  expect(summary.topViolations.length).toBe(Math.min(10, tally.size));

  const markdown = (await h.reports.get(layout.auditRun(runId).summaryMarkdown))!.body.toString();
  expect(markdown).toContain(`# tfguard fleet audit ${runId}`);
  expect(markdown).toContain('52 repositories: 49 scanned, 1 rejected, 1 missing, 1 failed.');
  expect(markdown).toContain('| `registry.terraform.io/hashicorp/aws` | ⚠️ 3 versions |');
  const latest = await json<AuditLatestPointer>(layout.auditLatest);
  expect(latest).toMatchObject({ runId, summary: { json: layout.auditRun(runId).summaryJson } });
  // Six shards of ten, each merged once into a partial.
  expect(await collect(h.reports.list(layout.auditRun(runId).partialsPrefix))).toHaveLength(6);

  // A duplicate delivery after completion changes nothing, even when the repository's latest upload
  // changed in between: the recorded result is kept, not rescanned.
  const before = (await h.reports.get(layout.auditRun(runId).summaryJson))!.etag;
  const changed = await h.upload(
    'uploads/fleet/a-00/build-2.tar.gz',
    await makeTarGz({ 'main.tf': tf('>= 1.0') }),
  );
  await scanUpload(h.s3Event([changed]), h.context('scanUpload'));
  const a00 = captured.find((e) => repositoryOf(e) === 'fleet/a-00')!;
  expect(await deliver([a00, ...captured.slice(0, 4)], 1)).toEqual([]);
  expect((await h.reports.get(layout.auditRun(runId).summaryJson))!.etag).toBe(before);

  // Retrying the start of the same run re-sends the same plan.
  const resent = captured.length;
  captured = [];
  const again = await auditStart(
    { ...sampleEvent<ScheduledEvent>('audit-schedule.json'), time: '2025-01-01T03:00:00Z', id: 'schedule-1' },
    h.context('auditStart'),
  );
  expect(again.runId).toBe(runId);
  expect(captured.map((e) => e.MessageBody).sort()).toHaveLength(resent);
}, 240_000);

test('every audit writes the fleet page and its data to the reports bucket, the next one says what changed', async () => {
  const first = await json<FleetData>(layout.fleetJson);
  const page = await h.reports.get(layout.fleetHtml);
  expect(page?.contentType).toBe('text/html; charset=utf-8');
  expect(first).toMatchObject({ kind: 'tfguard-fleet', schemaVersion: 1, registry: false, changes: null });
  const lock = (repository: string, source = 'registry.terraform.io/hashicorp/aws') =>
    first.repositories.find((r) => r.repository === repository)!.locks.find((l) => l.source === source);
  // Newest aws in the fleet: 5.40.0 (fleet/b-*); 5.31.0 is 9 minor versions and one locked
  // version behind, 4.67.0 a major and two locked versions behind.
  expect(lock('fleet/a-00')).toMatchObject({
    versions: ['5.31.0'],
    fleet: { newest: '5.40.0', releases: 1, majors: 0, minors: 9 },
    registry: null,
  });
  expect(lock('fleet/d-01')!.fleet).toEqual({ newest: '5.40.0', releases: 2, majors: 1, minors: null });
  expect(lock('fleet/b-00')!.fleet).toEqual({ newest: '5.40.0', releases: 0, majors: 0, minors: 0 });
  expect(first.providers.find((p) => p.source === 'registry.terraform.io/hashicorp/aws')).toMatchObject({
    newest: '5.40.0',
    behind: 22,
  });
  expect(first.requiredVersions).toEqual([
    { constraint: '>= 1.5', repositories: expect.any(Array), modules: 49 },
  ]);
  const html = page!.body.toString('utf8');
  expect(html).toContain(`<code>${first.runId}</code>`);
  expect(html).toContain('fleet/d-01');
  expect(html).toContain('1 major behind');

  // fleet/a-00's latest upload changed (no lock file, no upper bound) since the first run.
  const second = await runAudit('2025-01-02T03:00:00Z', 'schedule-2');
  const fleet = await json<FleetData>(layout.fleetJson);
  expect(fleet.runId).toBe(second.runId);
  expect(fleet.previousRunId).toBe(first.runId);
  expect(fleet.changes).toMatchObject({
    previous: { runId: first.runId },
    added: [],
    removed: [],
    locks: [
      {
        repository: 'fleet/a-00',
        source: 'registry.terraform.io/hashicorp/aws',
        before: ['5.31.0'],
        after: [],
        change: 'removed',
      },
    ],
  });
  const a00 = fleet.repositories.find((r) => r.repository === 'fleet/a-00')!;
  expect(a00.compared).toBe(true);
  expect(a00.newCount).toBeGreaterThan(0);
  expect(fleet.changes!.counts.map((c) => c.repository)).toEqual(['fleet/a-00']);
  const html2 = (await h.reports.get(layout.fleetHtml))!.body.toString('utf8');
  expect(html2).toContain('lock-changes-table');
  expect(html2).toContain(`Fleet compared with audit <code>${first.runId}</code>`);
}, 240_000);
