/**
 * Entry point 1 end to end: real archives uploaded to a real s3rver, the handler invoked with the
 * sample S3 events (adjusted to the uploaded objects), the stored reports read back.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { S3Event } from 'aws-lambda';
import { handler } from '../../handlers/upload-scan';
import { ReportLayout, uploadScanId } from '../../src/service/keys';
import type { LatestPointer, RejectedRecord } from '../../src/service/scans';
import { UploadBatchError } from '../../src/service/upload-scan';
import { decodeS3EventKey } from '../../src/service/uploads';
import { scanBytes } from '../../src/scan';
import type { Report } from '../../src/report/types';
import { writeZip } from '../support/zip-writer';
import { makeTarGz } from '../support/archive';
import {
  collect,
  type Harness,
  SAMPLE_ARCHIVE,
  sampleEvent,
  startHarness,
  UPLOADS_BUCKET,
  withEnv,
} from '../support/lambda';

const layout = new ReportLayout('reports/');
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

async function json<T>(key: string): Promise<T> {
  const got = await h.reports.get(key);
  if (got === null) throw new Error(`missing ${key}`);
  return JSON.parse(got.body.toString('utf8')) as T;
}

async function snapshot(keys: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const key of keys) {
    const got = await h.reports.get(key);
    out[key] = got === null ? '<missing>' : createHash('sha256').update(got.body).digest('hex');
  }
  return out;
}

const TERRAFORM = (constraint: string) => `terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = { source = "hashicorp/aws", version = "${constraint}" }
  }
}
`;

test('the sample event scans the sample archive and stores JSON, SARIF, Markdown and the latest pointer', async () => {
  const event = sampleEvent<S3Event>('s3-upload.json');
  const key = decodeS3EventKey(event.Records[0]!.s3.object.key);
  expect(key).toBe('uploads/acme/network/release 42.tar.gz');
  const uploaded = await h.upload(key, SAMPLE_ARCHIVE);
  // The sample's eTag is the MD5 of events/archives/acme-network.tar.gz, as S3 computes it.
  expect(uploaded.etag).toBe(event.Records[0]!.s3.object.eTag);

  const result = await handler(event, h.context('scanUpload'));
  const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key, etag: uploaded.etag });
  expect(result.outcomes).toEqual([
    {
      status: 'scanned',
      bucket: UPLOADS_BUCKET,
      key,
      scanId,
      repository: 'acme/network',
      latestUpdated: true,
    },
  ]);
  const keys = layout.reports(scanId);
  const report = await json<Report>(keys.json);
  const direct = await scanBytes('release 42.tar.gz', SAMPLE_ARCHIVE);
  expect(report).toEqual(direct);
  expect(report.findings.length).toBeGreaterThan(0);
  const sarif = await json<{ version: string; runs: unknown[] }>(keys.sarif);
  expect(sarif.version).toBe('2.1.0');
  const markdown = (await h.reports.get(keys.markdown))!;
  expect(markdown.contentType).toBe('text/markdown; charset=utf-8');
  // Titled with the repository the upload belongs to, not the uploaded file's name.
  expect(markdown.body.toString().split('\n')[0]).toBe('## tfguard: acme/network');
  // Written to the bucket directly: the uploader is the principal the S3 event names.
  const principal = event.Records[0]!.userIdentity.principalId;
  expect(principal).toBe('AWS:AROAEXAMPLE:ci');
  expect((await h.reports.get(keys.json))!.metadata).toEqual({
    repository: 'acme/network',
    'scan-id': scanId,
    'uploaded-by': principal,
  });

  const latest = await json<LatestPointer>(layout.latest('acme/network'));
  expect(latest).toMatchObject({
    repository: 'acme/network',
    scanId,
    status: 'complete',
    upload: { bucket: UPLOADS_BUCKET, key, etag: uploaded.etag, uploadedBy: principal },
    reports: keys,
    summary: direct.summary,
  });
  // Nothing was written to the uploads bucket (no recursive trigger).
  expect(await collect(h.uploads.list(''))).toEqual([key]);
});

test('duplicate delivery overwrites identical content and creates nothing new', async () => {
  const uploaded = await h.upload(
    'uploads/dup/repo/a.tgz',
    await makeTarGz({ 'main.tf': TERRAFORM('>= 4.0') }),
  );
  const event = h.s3Event([uploaded]);
  await handler(event, h.context('scanUpload'));
  const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key: uploaded.key, etag: uploaded.etag });
  const keys = [...Object.values(layout.reports(scanId)), layout.latest('dup/repo')];
  const first = await snapshot(keys);
  const listingBefore = await collect(h.reports.list('reports/'));
  // Same event three more times, once as a two-record event with itself.
  await handler(event, h.context('scanUpload'));
  await handler(h.s3Event([uploaded, uploaded]), h.context('scanUpload'));
  expect(await snapshot(keys)).toEqual(first);
  expect(Object.values(first)).not.toContain('<missing>');
  expect(await collect(h.reports.list('reports/'))).toEqual(listingBefore);
});

test('keys with spaces, +, % and non-ASCII characters are decoded and scanned', async () => {
  const keys = [
    'uploads/acme/with space/build 1.tar.gz',
    'uploads/acme/plus+sign/a+b.tgz',
    'uploads/acme/100%/50%25.zip',
    'uploads/équipe/dépôt/日本語 🚀.tar',
  ];
  const uploaded = [];
  for (const [i, key] of keys.entries()) {
    const files = { 'main.tf': TERRAFORM(`~> ${i + 1}.0`) };
    const bytes = key.endsWith('.zip')
      ? writeZip([{ name: 'main.tf', data: files['main.tf'], method: 'deflate' }])
      : key.endsWith('.tar')
        ? gunzipSync(await makeTarGz(files))
        : await makeTarGz(files);
    uploaded.push(await h.upload(key, bytes));
  }
  const event = h.s3Event(uploaded);
  // What S3 sends: form-encoded keys.
  expect(event.Records.map((r) => r.s3.object.key)).toEqual([
    'uploads/acme/with+space/build+1.tar.gz',
    'uploads/acme/plus%2Bsign/a%2Bb.tgz',
    'uploads/acme/100%25/50%2525.zip',
    'uploads/%C3%A9quipe/d%C3%A9p%C3%B4t/%E6%97%A5%E6%9C%AC%E8%AA%9E+%F0%9F%9A%80.tar',
  ]);
  const result = await handler(event, h.context('scanUpload'));
  expect(result.outcomes.map((o) => [o.status, o.key, 'repository' in o ? o.repository : null])).toEqual([
    ['scanned', keys[0], 'acme/with space'],
    ['scanned', keys[1], 'acme/plus+sign'],
    ['scanned', keys[2], 'acme/100%'],
    ['scanned', keys[3], 'équipe/dépôt'],
  ]);
  for (const [i, repository] of [
    'acme/with space',
    'acme/plus+sign',
    'acme/100%',
    'équipe/dépôt',
  ].entries()) {
    const latest = await json<LatestPointer>(layout.latest(repository));
    expect(latest.upload.key).toBe(keys[i]);
    const report = await json<Report>(latest.reports!.json);
    expect(report.source.name).toBe(keys[i]!.slice(keys[i]!.lastIndexOf('/') + 1));
  }
});

test('a multi-record event with one bad archive stores a rejection for it and scans the others', async () => {
  const event = sampleEvent<S3Event>('s3-upload-multi.json');
  const keys = event.Records.map((r) => decodeS3EventKey(r.s3.object.key));
  expect(keys).toEqual([
    'uploads/acme/network/release 42.tar.gz',
    'uploads/acme/café + %/release 42.tar.gz',
    'uploads/acme/broken/not-an-archive.tar.gz',
  ]);
  await h.upload(keys[0]!, SAMPLE_ARCHIVE);
  await h.upload(keys[1]!, SAMPLE_ARCHIVE);
  const bad = await h.upload(keys[2]!, 'hello');
  expect(bad.etag).toBe(event.Records[2]!.s3.object.eTag);

  const result = await handler(event, h.context('scanUpload'));
  expect(result.outcomes.map((o) => o.status)).toEqual(['scanned', 'scanned', 'rejected']);
  const rejectedId = uploadScanId({ bucket: UPLOADS_BUCKET, key: keys[2]!, etag: bad.etag });
  const record = await json<RejectedRecord>(layout.rejected(rejectedId));
  expect(record).toMatchObject({
    status: 'rejected',
    repository: 'acme/broken',
    source: { kind: 'upload', key: keys[2], etag: bad.etag },
    error: { code: 'unsupported-format' },
  });
  expect(await h.reports.get(layout.report(rejectedId, 'json'))).toBeNull();
  expect(await json<LatestPointer>(layout.latest('acme/broken'))).toMatchObject({
    status: 'rejected',
    rejected: layout.rejected(rejectedId),
  });
  expect((await json<LatestPointer>(layout.latest('acme/café + %'))).status).toBe('complete');
});

test('repository identity comes from x-amz-meta-repository when set', async () => {
  const uploaded = await h.upload(
    'uploads/ci/build-7.tar.gz',
    await makeTarGz({ 'main.tf': TERRAFORM('~> 5.0') }),
    {
      repository: 'github.com/acme/platform',
    },
  );
  const result = await handler(h.s3Event([uploaded]), h.context('scanUpload'));
  expect(result.outcomes[0]).toMatchObject({ status: 'scanned', repository: 'github.com/acme/platform' });
  expect((await json<LatestPointer>(layout.latest('github.com/acme/platform'))).upload.key).toBe(
    uploaded.key,
  );
  expect(await h.reports.get(layout.latest('ci'))).toBeNull();
});

test('an event for an object overwritten since is superseded: nothing is stored for it', async () => {
  const key = 'uploads/over/written/x.tar.gz';
  const first = await h.upload(key, await makeTarGz({ 'main.tf': TERRAFORM('>= 1.0') }));
  const second = await h.upload(key, await makeTarGz({ 'main.tf': TERRAFORM('~> 5.1') }));
  const before = await collect(h.reports.list('reports/scans/'));
  const result = await handler(h.s3Event([first]), h.context('scanUpload'));
  expect(result.outcomes).toEqual([
    { status: 'superseded', bucket: UPLOADS_BUCKET, key, reason: 'the object was overwritten since' },
  ]);
  expect(await collect(h.reports.list('reports/scans/'))).toEqual(before);
  const scanned = await handler(h.s3Event([second]), h.context('scanUpload'));
  expect(scanned.outcomes[0]!.status).toBe('scanned');
});

test('records that are not uploads of this service are skipped, not retried', async () => {
  const ok = await h.upload('uploads/skip/me.tar.gz', await makeTarGz({ 'main.tf': TERRAFORM('~> 5.0') }));
  const notes = await h.upload('uploads/skip/notes.txt', 'text');
  const outside = await h.upload('elsewhere/x.tar.gz', 'x');
  const outcomes = [
    ...(await handler(h.s3Event([notes, outside]), h.context('scanUpload'))).outcomes,
    ...(await handler(h.s3Event([ok], { bucket: 'someone-elses-bucket' }), h.context('scanUpload'))).outcomes,
    ...(await handler(h.s3Event([ok], { eventName: 'ObjectRemoved:Delete' }), h.context('scanUpload')))
      .outcomes,
  ];
  expect(outcomes.map((o) => [o.status, 'reason' in o ? o.reason : ''])).toEqual([
    ['skipped', 'not an archive name (.tar.gz, .tgz, .tar, .zip)'],
    ['skipped', 'key is not under the uploads prefix uploads/'],
    ['skipped', 'bucket someone-elses-bucket is not the uploads bucket'],
    ['skipped', 'event ObjectRemoved:Delete is not an object creation'],
  ]);
  const deleted = { key: 'uploads/skip/gone.tar.gz', etag: 'abc', size: 3 };
  expect((await handler(h.s3Event([deleted]), h.context('scanUpload'))).outcomes[0]!.status).toBe('missing');
});

test('an upload over the size limit is rejected without being downloaded', async () => {
  await withEnv({ TFGUARD_MAX_ARCHIVE_BYTES: '100' }, async () => {
    const uploaded = await h.upload('uploads/big/one.tar.gz', Buffer.alloc(101, 1));
    const result = await handler(h.s3Event([uploaded]), h.context('scanUpload'));
    expect(result.outcomes[0]!.status).toBe('rejected');
    const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key: uploaded.key, etag: uploaded.etag });
    const record = await json<RejectedRecord>(layout.rejected(scanId));
    expect(record.error.code).toBe('total-too-large');
    expect(record.error.message).toBe(
      'the upload is 101 bytes, more than the 100 bytes this service accepts',
    );
  });
});

test('an older upload delivered late does not move the latest pointer back', async () => {
  const older = await h.upload(
    'uploads/order/repo/1.tar.gz',
    await makeTarGz({ 'main.tf': TERRAFORM('~> 4.0') }),
  );
  await new Promise((r) => setTimeout(r, 1100)); // S3 LastModified has one-second resolution
  const newer = await h.upload(
    'uploads/order/repo/2.tar.gz',
    await makeTarGz({ 'main.tf': TERRAFORM('~> 5.0') }),
  );
  await handler(h.s3Event([newer]), h.context('scanUpload'));
  const result = await handler(h.s3Event([older]), h.context('scanUpload'));
  expect(result.outcomes[0]).toMatchObject({ status: 'scanned', latestUpdated: false });
  expect((await json<LatestPointer>(layout.latest('order/repo'))).upload.key).toBe(newer.key);
});

test('a transient S3 failure throws after every record was tried, so Lambda retries the event', async () => {
  const a = await h.upload('uploads/transient/a.tar.gz', await makeTarGz({ 'main.tf': TERRAFORM('~> 5.0') }));
  await withEnv({ TFGUARD_S3_ENDPOINT: 'http://127.0.0.1:9' }, async () => {
    const error = await handler(h.s3Event([a, a]), h.context('scanUpload')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UploadBatchError);
    expect((error as UploadBatchError).failures).toHaveLength(2);
    expect((error as Error).message).toBe(
      '2 uploads failed and will be retried: s3://tfguard-uploads-local/uploads/transient/a.tar.gz, s3://tfguard-uploads-local/uploads/transient/a.tar.gz',
    );
  });
  // The retry succeeds once S3 is back.
  expect((await handler(h.s3Event([a]), h.context('scanUpload'))).outcomes[0]!.status).toBe('scanned');
});

test('logs are structured JSON with the request id and repository; scans, findings and duration are metrics', async () => {
  const uploaded = await h.upload(
    'uploads/observed/repo/x.tar.gz',
    await makeTarGz({ 'main.tf': TERRAFORM('>= 2.0') }),
  );
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(chunk.toString());
    return true;
  });
  try {
    await withEnv({ POWERTOOLS_LOG_LEVEL: 'INFO', POWERTOOLS_METRICS_DISABLED: 'false' }, async () => {
      await handler(h.s3Event([uploaded]), h.context('scanUpload'));
    });
  } finally {
    spy.mockRestore();
  }
  const records = lines
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const complete = records.find((r) => r.message === 'scan complete');
  expect(complete).toMatchObject({
    level: 'INFO',
    service: 'tfguard',
    function_request_id: expect.stringMatching(/^req-scanUpload-/),
    repository: 'observed/repo',
    scanId: uploadScanId({ bucket: UPLOADS_BUCKET, key: uploaded.key, etag: uploaded.etag }),
  });
  const emf = records.find((r) => r._aws !== undefined) as {
    _aws: { CloudWatchMetrics: { Namespace: string; Metrics: { Name: string }[] }[] };
  } & Record<string, unknown>;
  expect(emf._aws.CloudWatchMetrics[0]!.Namespace).toBe('tfguard');
  expect(emf._aws.CloudWatchMetrics[0]!.Metrics.map((m) => m.Name).sort()).toEqual(
    ['ErrorFindings', 'Findings', 'NoticeFindings', 'ScanDuration', 'Scans', 'WarningFindings'].sort(),
  );
  expect(emf.Scans).toBe(1);
  expect(emf.ErrorFindings).toBe(1);
});
