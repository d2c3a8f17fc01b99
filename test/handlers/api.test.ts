/**
 * Entry point 2 end to end against s3rver: the three routes invoked with the sample HTTP API events
 * (adjusted), including a presigned URL that really accepts a PUT and the upload scan it triggers.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { runCli } from '../../src/cli/main';
import { createScan, createUpload, getScan } from '../../handlers/api';
import { handler as scanUpload } from '../../handlers/upload-scan';
import { ReportLayout, SCAN_ID_PATTERN, UPLOAD_ID_PATTERN } from '../../src/service/keys';
import type { UploadRequestRecord } from '../../src/service/requests';
import { scanBytes } from '../../src/scan';
import type { Report } from '../../src/report/types';
import { makeTarGz } from '../support/archive';
import { tarGzFiles } from '../support/corpus';
import { writeTree } from '../support/terraform';
import {
  contentLengthRange,
  decodePolicy,
  exactConditions,
  expectedPostSignature,
  fieldsOutsidePolicy,
  postForm,
} from '../support/presigned-post';
import { S3RVER_CREDENTIALS } from '../support/s3rver';
import {
  type Harness,
  SAMPLE_ARCHIVE,
  sampleEvent,
  startHarness,
  UPLOADS_BUCKET,
  withEnv,
} from '../support/lambda';

const layout = new ReportLayout('reports/');
const run = promisify(execFile);
let h: Harness;
let sampleReport: Report;

beforeAll(async () => {
  h = await startHarness();
  sampleReport = await scanBytes('archive.tar.gz', SAMPLE_ARCHIVE);
});
afterAll(async () => {
  await h?.stop();
});

type Result = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
};

function postScans(
  body: Buffer | null,
  options: { query?: Record<string, string>; headers?: Record<string, string | undefined> } = {},
): APIGatewayProxyEventV2 {
  const event = sampleEvent<APIGatewayProxyEventV2>('http-post-scans.json');
  const headers: Record<string, string | undefined> = { ...event.headers, ...(options.headers ?? {}) };
  for (const [k, v] of Object.entries(headers)) if (v === undefined) delete headers[k];
  return {
    ...event,
    headers: headers as Record<string, string>,
    queryStringParameters: options.query ?? event.queryStringParameters,
    body: body === null ? undefined : body.toString('base64'),
    isBase64Encoded: true,
  };
}

function getEvent(
  id: string,
  options: { query?: Record<string, string>; accept?: string } = {},
): APIGatewayProxyEventV2 {
  const event = sampleEvent<APIGatewayProxyEventV2>('http-get-scan.json');
  return {
    ...event,
    rawPath: `/scans/${id}`,
    pathParameters: { id },
    headers: { ...event.headers, accept: options.accept ?? 'application/json' },
    ...(options.query ? { queryStringParameters: options.query } : {}),
  };
}

function postUploads(body: string | null, headers: Record<string, string> = {}): APIGatewayProxyEventV2 {
  const event = sampleEvent<APIGatewayProxyEventV2>('http-post-uploads.json');
  return {
    ...event,
    headers: { ...event.headers, ...headers },
    body: body ?? undefined,
    isBase64Encoded: false,
  };
}

async function call(
  fn: (
    e: APIGatewayProxyEventV2,
    c?: ReturnType<Harness['context']>,
  ) => Promise<APIGatewayProxyStructuredResultV2>,
  event: APIGatewayProxyEventV2,
): Promise<Result> {
  return (await fn(event, h.context('api'))) as Result;
}

function body<T = Record<string, unknown>>(result: Result): T {
  expect(result.headers['content-type']).toBe('application/json');
  return JSON.parse(result.body) as T;
}

/** The caller API Gateway's IAM authorizer names in the sample POST /uploads event. */
const SAMPLE_CALLER = 'arn:aws:sts::123456789012:assumed-role/tfguard-ci/github-actions';

interface CreatedUpload {
  id: string;
  key: string;
  repository: string;
  uploadedBy: string | null;
  upload: { method: string; url: string; expiresAt: string };
  post: {
    method: string;
    url: string;
    fields: Record<string, string>;
    expiresAt: string;
    maxBytes: number;
    contentType: string;
  };
}

/**
 * Waits for s3rver's notifications of writes made since `eventsBefore` and hands them to the
 * upload handler as the S3 event Lambda would receive.
 */
async function deliverUploads(eventsBefore: number): Promise<Awaited<ReturnType<typeof scanUpload>>> {
  // As S3 → Lambda: only the uploads bucket notifies the upload handler. s3rver emits events for
  // every bucket, and a write to the reports bucket just before (the upload request record) can be
  // emitted after `eventsBefore` was taken.
  type Notified = { s3: { bucket: { name: string }; object: { key: string; eTag: string; size: number } } };
  const uploaded = (): Notified[] =>
    h.server.events
      .slice(eventsBefore)
      .map((e) => e.Records[0] as Notified)
      .filter((r) => r.s3.bucket.name === UPLOADS_BUCKET);
  for (let waited = 0; uploaded().length === 0 && waited < 10_000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const notified = uploaded();
  expect(notified.length).toBeGreaterThan(0);
  return scanUpload(
    h.s3Event(
      notified.map((r) => ({
        key: r.s3.object.key,
        etag: r.s3.object.eTag.replace(/"/g, ''),
        size: r.s3.object.size,
      })),
    ),
    h.context('scanUpload'),
  );
}

describe('POST /scans', () => {
  test('the sample event returns the report with a verdict and stores it', async () => {
    const result = await call(createScan, sampleEvent('http-post-scans.json'));
    expect(result.statusCode).toBe(200);
    const payload = body<{
      scanId: string;
      verdict: string;
      failOn: string;
      repository: string;
      uploadedBy: string | null;
      report: Report;
    }>(result);
    expect(payload.scanId).toMatch(SCAN_ID_PATTERN);
    expect(payload.repository).toBe('acme/network');
    expect(payload.failOn).toBe('error');
    // The sample archive's root module has no upper bound on aws: an error, so the gate fails.
    expect(sampleReport.summary.error).toBeGreaterThan(0);
    expect(payload.verdict).toBe('fail');
    expect(result.headers['x-tfguard-verdict']).toBe('fail');
    expect(result.headers['x-tfguard-scan-id']).toBe(payload.scanId);
    expect(payload.report).toEqual(sampleReport);
    const stored = await h.reports.get(layout.report(payload.scanId, 'json'));
    expect(JSON.parse(stored!.body.toString())).toEqual(sampleReport);
    // Who sent it: the IAM caller API Gateway's authorizer names, in the answer and the report's metadata.
    expect(payload.uploadedBy).toBe(SAMPLE_CALLER);
    expect(stored!.metadata['uploaded-by']).toBe(SAMPLE_CALLER);
    expect(await h.reports.get(layout.report(payload.scanId, 'sarif'))).not.toBeNull();
    expect(await h.reports.get(layout.report(payload.scanId, 'markdown'))).not.toBeNull();
    // A small report is inlined, and the summary, the stored keys and their links come with it.
    const links = body<{
      summary: unknown;
      reportInline: boolean;
      reportKeys: Record<string, string>;
      reportUrls: Record<string, string>;
      reportUrlsExpireAt: string;
    }>(result);
    expect(links.reportInline).toBe(true);
    expect(links.summary).toEqual(sampleReport.summary);
    expect(links.reportKeys).toEqual(layout.reports(payload.scanId));
    for (const format of ['json', 'sarif', 'markdown'] as const) {
      const download = await fetch(links.reportUrls[format]!);
      expect(download.status).toBe(200);
      const storedCopy = await h.reports.get(links.reportKeys[format]!);
      expect(Buffer.from(await download.arrayBuffer()).equals(storedCopy!.body)).toBe(true);
    }
    const ttl = Date.parse(links.reportUrlsExpireAt) - Date.now();
    expect(ttl).toBeGreaterThan(890_000);
    expect(ttl).toBeLessThanOrEqual(900_000);
    // Posting the same archive again is the same scan.
    const again = body<{ scanId: string }>(await call(createScan, sampleEvent('http-post-scans.json')));
    expect(again.scanId).toBe(payload.scanId);
    // The GET sample asks for exactly this scan, in Markdown.
    const get = await call(getScan, sampleEvent('http-get-scan.json'));
    expect(get.statusCode).toBe(200);
    expect(get.headers['x-tfguard-scan-id']).toBe(payload.scanId);
    expect(get.headers['content-type']).toBe('text/markdown; charset=utf-8');
  });

  test('failOn sets the verdict; format and Accept pick SARIF or Markdown', async () => {
    const never = await call(createScan, postScans(SAMPLE_ARCHIVE, { query: { failOn: 'never' } }));
    expect(body(never).verdict).toBe('pass');
    const sarif = await call(
      createScan,
      postScans(SAMPLE_ARCHIVE, { headers: { accept: 'application/sarif+json' } }),
    );
    expect(sarif.statusCode).toBe(200);
    expect(sarif.headers['content-type']).toBe('application/sarif+json');
    expect(JSON.parse(sarif.body).version).toBe('2.1.0');
    expect(sarif.headers['x-tfguard-verdict']).toBe('fail');
    const markdown = await call(
      createScan,
      postScans(SAMPLE_ARCHIVE, {
        query: { format: 'markdown', failOn: 'never' },
        headers: { accept: 'application/json' },
      }),
    );
    expect(markdown.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(markdown.body).toContain('## tfguard');
    expect(markdown.headers['x-tfguard-verdict']).toBe('pass');
    const weighted = await call(
      createScan,
      postScans(SAMPLE_ARCHIVE, { headers: { accept: 'text/html;q=1, text/markdown;q=0.5' } }),
    );
    expect(weighted.headers['content-type']).toBe('text/markdown; charset=utf-8');
  });

  test('fix=true returns the patch tfguard fix --dry-run prints, and stores it beside the reports', async () => {
    const result = await call(createScan, postScans(SAMPLE_ARCHIVE, { query: { fix: 'true' } }));
    expect(result.statusCode).toBe(200);
    const payload = body<{
      scanId: string;
      patch: string;
      report: Report;
      reportKeys: Record<string, string>;
      reportUrls: Record<string, string>;
    }>(result);
    // The report is the scan of the archive as sent; the fixes are in the patch only.
    expect(payload.report).toEqual(sampleReport);
    // The oracle: the CLI's dry run on the same files unpacked, and git apply accepting its patch.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'tfguard-api-fix-'));
    try {
      await writeTree(dir, await tarGzFiles(SAMPLE_ARCHIVE));
      let stdout = '';
      await runCli(['fix', dir, '--dry-run'], {
        stdout: (t) => (stdout += t),
        stderr: () => {},
        isTTY: false,
      });
      expect(stdout).toMatch(/^--- a\//);
      expect(payload.patch).toBe(stdout);
      await writeFile(path.join(dir, 'fix.patch'), payload.patch);
      await run('git', ['apply', '--check', 'fix.patch'], { cwd: dir });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Stored beside the reports (additive: the other keys are as before), and one link away.
    expect(payload.reportKeys).toEqual({
      ...layout.reports(payload.scanId),
      patch: `reports/scans/${payload.scanId}/fix.patch`,
    });
    const stored = await h.reports.get(payload.reportKeys.patch!);
    expect(stored!.body.toString('utf8')).toBe(payload.patch);
    const download = await fetch(payload.reportUrls.patch!);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(payload.patch);
    // GET /scans/{id} lists it too.
    const get = body<{ reportKeys: Record<string, string>; patch?: string }>(
      await call(getScan, getEvent(payload.scanId)),
    );
    expect(get.reportKeys.patch).toBe(payload.reportKeys.patch);
    // Without fix=true there is no patch; a bad value is a 400.
    const plain = body<{ reportKeys: Record<string, string>; patch?: string }>(
      await call(createScan, postScans(SAMPLE_ARCHIVE, { query: { fix: 'false' } })),
    );
    expect([plain.patch, plain.reportKeys]).toEqual([undefined, layout.reports(payload.scanId)]);
    const bad = await call(createScan, postScans(SAMPLE_ARCHIVE, { query: { fix: 'yes' } }));
    expect([bad.statusCode, body(bad).error]).toEqual([400, 'bad-fix']);
  });

  test('a clean archive passes', async () => {
    const clean = await makeTarGz({
      'main.tf': 'terraform {\n  required_version = ">= 1.5"\n}\n',
    });
    const result = await call(createScan, postScans(clean, { query: {} }));
    expect(body(result)).toMatchObject({ verdict: 'pass', repository: null });
  });

  test('an unusable archive is a 422 with the reason, stored as rejected', async () => {
    const result = await call(createScan, postScans(Buffer.from('this is not an archive')));
    expect(result.statusCode).toBe(422);
    const payload = body<{ scanId: string; error: string; code: string }>(result);
    expect(payload).toMatchObject({
      status: 'rejected',
      error: 'input-rejected',
      code: 'unsupported-format',
    });
    const again = await call(getScan, getEvent(payload.scanId));
    expect(again.statusCode).toBe(422);
    expect(body(again).code).toBe('unsupported-format');
  });

  test.each([
    [
      'a wrong content type',
      postScans(SAMPLE_ARCHIVE, { headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported-media-type',
    ],
    [
      'no content type',
      postScans(SAMPLE_ARCHIVE, { headers: { 'content-type': undefined } }),
      415,
      'unsupported-media-type',
    ],
    ['an empty body', postScans(Buffer.alloc(0)), 400, 'empty-body'],
    ['no body', postScans(null), 400, 'empty-body'],
    ['an unknown format', postScans(SAMPLE_ARCHIVE, { query: { format: 'html' } }), 400, 'bad-format'],
    [
      'an unacceptable Accept',
      postScans(SAMPLE_ARCHIVE, { headers: { accept: 'image/png' } }),
      406,
      'not-acceptable',
    ],
    ['a bad failOn', postScans(SAMPLE_ARCHIVE, { query: { failOn: 'critical' } }), 400, 'bad-fail-on'],
    [
      'a bad repository',
      postScans(SAMPLE_ARCHIVE, { query: { repository: 'a/../b' } }),
      400,
      'bad-repository',
    ],
  ])('%s is a clear 4xx', async (_label, event, status, code) => {
    const result = await call(createScan, event);
    expect(result.statusCode).toBe(status);
    expect(body(result)).toMatchObject({ error: code, message: expect.any(String) });
  });

  test('an oversize body is a 413 that points to POST /uploads', async () => {
    await withEnv({ TFGUARD_API_MAX_BODY_BYTES: '100' }, async () => {
      const result = await call(createScan, postScans(SAMPLE_ARCHIVE));
      expect(result.statusCode).toBe(413);
      expect(body(result)).toEqual({
        error: 'body-too-large',
        message: `the archive is ${SAMPLE_ARCHIVE.length} bytes; at most 100 bytes can be posted, use POST /uploads for larger archives`,
      });
    });
  });

  test('an internal failure is a generic 500 that leaks nothing', async () => {
    await withEnv({ TFGUARD_REPORTS_BUCKET: 'tfguard-no-such-bucket' }, async () => {
      const result = await call(createScan, postScans(SAMPLE_ARCHIVE));
      expect(result.statusCode).toBe(500);
      expect(body(result)).toEqual({
        error: 'internal',
        message: 'internal error',
        requestId: 'EXAMPLE-request-id=',
      });
      expect(result.body).not.toMatch(/bucket|S3|NoSuch|127\.0\.0\.1/i);
    });
  });
});

describe('POST /uploads and GET /scans/{id}', () => {
  test('the presigned URL accepts a real PUT, whose upload event produces the report the id returns', async () => {
    const created = await call(createUpload, sampleEvent('http-post-uploads.json'));
    expect(created.statusCode).toBe(201);
    const upload = body<CreatedUpload>(created);
    expect(upload.id).toMatch(UPLOAD_ID_PATTERN);
    expect(upload.key).toBe(`uploads/acme/network/${upload.id}.tar.gz`);
    expect(upload.uploadedBy).toBe(SAMPLE_CALLER);
    expect(created.headers.location).toBe(`/scans/${upload.id}`);
    const record = JSON.parse(
      (await h.reports.get(layout.uploadRequest(upload.id)))!.body.toString(),
    ) as UploadRequestRecord;
    expect(record).toMatchObject({
      status: 'pending',
      repository: 'acme/network',
      key: upload.key,
      failOn: 'error',
      uploadedBy: SAMPLE_CALLER,
      maxBytes: 52428800,
      contentType: 'application/gzip',
    });

    const pending = await call(getScan, getEvent(upload.id));
    expect(pending.statusCode).toBe(202);
    expect(body(pending)).toMatchObject({ id: upload.id, status: 'pending' });
    expect(pending.headers['retry-after']).toBe('5');

    const eventsBefore = h.server.events.length;
    const put = await fetch(upload.upload.url, { method: upload.upload.method, body: SAMPLE_ARCHIVE });
    expect(put.status).toBe(200);
    const stored = await h.uploads.get(upload.key);
    expect(stored!.body.equals(SAMPLE_ARCHIVE)).toBe(true);

    // s3rver's own notification for the PUT, turned into the S3 event Lambda would receive.
    for (let waited = 0; h.server.events.length === eventsBefore && waited < 10_000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const notified = h.server.events
      .slice(eventsBefore)
      .map((e) => e.Records[0] as { s3: { object: { key: string; eTag: string; size: number } } });
    expect(notified.map((r) => r.s3.object.key)).toEqual([upload.key]);
    const object = notified[0]!.s3.object;
    const outcome = await scanUpload(
      h.s3Event([{ key: object.key, etag: object.eTag, size: object.size }]),
      h.context('scanUpload'),
    );
    expect(outcome.outcomes[0]).toMatchObject({ status: 'scanned', repository: 'acme/network' });

    const done = await call(getScan, getEvent(upload.id));
    expect(done.statusCode).toBe(200);
    const payload = body<{ id: string; scanId: string; verdict: string; uploadedBy: string; report: Report }>(
      done,
    );
    expect(payload.id).toBe(upload.id);
    // The caller bound at POST /uploads, not the S3 event's principal (the presigner).
    expect(payload.uploadedBy).toBe(SAMPLE_CALLER);
    expect(payload.scanId).toBe(outcome.outcomes[0]!.status === 'scanned' ? outcome.outcomes[0]!.scanId : '');
    expect(payload.verdict).toBe('fail');
    expect(payload.report.summary).toEqual(sampleReport.summary);
    const lenient = await call(
      getScan,
      getEvent(upload.id, { query: { failOn: 'never' }, accept: 'text/markdown' }),
    );
    expect(lenient.headers['x-tfguard-verdict']).toBe('pass');
    expect(lenient.headers['content-type']).toBe('text/markdown; charset=utf-8');
    // And by scan id.
    const byScan = await call(getScan, getEvent(payload.scanId));
    expect(body<{ scanId: string }>(byScan).scanId).toBe(payload.scanId);
  });

  test('the presigned POST uploads a real multipart form; the report records the bound caller', async () => {
    // A repository of its own: the pointer checked below is not another test's.
    const created = await call(
      createUpload,
      postUploads(JSON.stringify({ repository: 'acme/post-form' }), { 'content-type': 'application/json' }),
    );
    const upload = body<CreatedUpload>(created);
    expect(upload.post).toMatchObject({
      method: 'POST',
      url: `${h.server.endpoint}/${UPLOADS_BUCKET}`,
      expiresAt: upload.upload.expiresAt,
      maxBytes: 52428800,
      contentType: 'application/gzip',
    });
    // The policy S3 enforces: this key, at most TFGUARD_MAX_ARCHIVE_BYTES, the format's content
    // type, the bound repository and caller as metadata; signed as the SDK's signer would.
    const policy = decodePolicy(upload.post.fields);
    expect(contentLengthRange(policy)).toEqual([1, 52428800]);
    expect(exactConditions(policy)).toMatchObject({
      key: upload.key,
      bucket: UPLOADS_BUCKET,
      'content-type': 'application/gzip',
      'x-amz-meta-repository': 'acme/post-form',
      'x-amz-meta-uploaded-by': SAMPLE_CALLER,
    });
    expect(fieldsOutsidePolicy(policy, upload.post.fields)).toEqual([]);
    expect(upload.post.fields['X-Amz-Signature']).toBe(
      await expectedPostSignature(upload.post.fields, S3RVER_CREDENTIALS, h.client.config.sha256),
    );

    const eventsBefore = h.server.events.length;
    const response = await postForm(upload.post, SAMPLE_ARCHIVE);
    expect(response.status).toBe(204);
    const stored = (await h.uploads.get(upload.key))!;
    expect(stored.body.equals(SAMPLE_ARCHIVE)).toBe(true);
    expect(stored.contentType).toBe('application/gzip');
    const outcome = await deliverUploads(eventsBefore);
    expect(outcome.outcomes).toEqual([
      expect.objectContaining({ status: 'scanned', repository: 'acme/post-form' }),
    ]);
    const scanId = (outcome.outcomes[0] as { scanId: string }).scanId;

    const done = await call(getScan, getEvent(upload.id));
    expect(done.statusCode).toBe(200);
    expect(body(done)).toMatchObject({ id: upload.id, scanId, uploadedBy: SAMPLE_CALLER, verdict: 'fail' });
    const byScan = await call(getScan, getEvent(scanId));
    expect(body(byScan)).toMatchObject({ scanId, uploadedBy: SAMPLE_CALLER });
    expect((await h.reports.get(layout.report(scanId, 'json')))!.metadata).toEqual({
      'scan-id': scanId,
      repository: 'acme/post-form',
      'uploaded-by': SAMPLE_CALLER,
    });
    const latest = JSON.parse((await h.reports.get(layout.latest('acme/post-form')))!.body.toString()) as {
      scanId: string;
      upload: { uploadedBy: string };
    };
    expect(latest).toMatchObject({ scanId, upload: { uploadedBy: SAMPLE_CALLER } });
  });

  test('an upload over the size its POST /uploads allowed is rejected without being read', async () => {
    // Issued while the limit was 400 bytes; the sample archive is 475.
    expect(SAMPLE_ARCHIVE.length).toBeGreaterThan(400);
    const created = await withEnv({ TFGUARD_MAX_ARCHIVE_BYTES: '400' }, () =>
      call(createUpload, sampleEvent('http-post-uploads.json')),
    );
    const upload = body<CreatedUpload>(created);
    expect(upload.post.maxBytes).toBe(400);
    expect(contentLengthRange(decodePolicy(upload.post.fields))).toEqual([1, 400]);
    // s3rver does not enforce content-length-range (S3 would answer 400 EntityTooLarge): the
    // upload scan is the second line, with the request's own limit, checked before any read.
    const eventsBefore = h.server.events.length;
    expect((await postForm(upload.post, SAMPLE_ARCHIVE)).status).toBe(204);
    const outcome = await deliverUploads(eventsBefore);
    expect(outcome.outcomes).toEqual([
      expect.objectContaining({ status: 'rejected', repository: 'acme/network', key: upload.key }),
    ]);
    const scanId = (outcome.outcomes[0] as { scanId: string }).scanId;
    const rejected = JSON.parse((await h.reports.get(layout.rejected(scanId)))!.body.toString()) as {
      error: { code: string; message: string; entry: null };
      source: { size: number; uploadedBy: string };
    };
    expect(rejected.error).toEqual({
      code: 'total-too-large',
      message: `the upload is ${SAMPLE_ARCHIVE.length} bytes, more than the 400 bytes its POST /uploads request allowed`,
      entry: null,
    });
    expect(rejected.source).toMatchObject({ size: SAMPLE_ARCHIVE.length, uploadedBy: SAMPLE_CALLER });
    expect(await h.reports.get(layout.report(scanId, 'json'))).toBeNull();
    const answer = await call(getScan, getEvent(upload.id));
    expect(answer.statusCode).toBe(422);
    expect(body(answer)).toMatchObject({ id: upload.id, code: 'total-too-large', uploadedBy: SAMPLE_CALLER });
  });

  test.each([
    ['a POST form whose repository field was changed', 'post'],
    ['a PUT with its own repository metadata header', 'put'],
  ])('%s is rejected as a mismatch, under the bound repository', async (_label, how) => {
    const created = await call(createUpload, sampleEvent('http-post-uploads.json'));
    const upload = body<CreatedUpload>(created);
    const victim = `victim/prod-${how}`;
    const eventsBefore = h.server.events.length;
    if (how === 'post') {
      const spoofed = { 'x-amz-meta-repository': victim };
      // S3 itself would refuse this form (the field differs from its condition); s3rver does not.
      expect(
        fieldsOutsidePolicy(decodePolicy(upload.post.fields), { ...upload.post.fields, ...spoofed }),
      ).toEqual(['x-amz-meta-repository']);
      expect((await postForm(upload.post, SAMPLE_ARCHIVE, spoofed)).status).toBe(204);
    } else {
      const put = await fetch(upload.upload.url, {
        method: 'PUT',
        body: SAMPLE_ARCHIVE,
        headers: { 'x-amz-meta-repository': victim },
      });
      expect(put.status).toBe(200);
    }
    expect((await h.uploads.get(upload.key))!.metadata.repository).toBe(victim);
    const outcome = await deliverUploads(eventsBefore);
    expect(outcome.outcomes).toEqual([
      expect.objectContaining({ status: 'rejected', repository: 'acme/network' }),
    ]);
    const scanId = (outcome.outcomes[0] as { scanId: string }).scanId;
    const rejected = JSON.parse((await h.reports.get(layout.rejected(scanId)))!.body.toString()) as {
      repository: string;
      error: { code: string; message: string };
    };
    expect(rejected.repository).toBe('acme/network');
    expect(rejected.error.code).toBe('upload-mismatch');
    expect(rejected.error.message).toBe(
      `the upload's metadata names repository "${victim}", but its POST /uploads request ${upload.id} ` +
        'was for "acme/network"',
    );
    // The claimed repository got nothing: no report, no pointer.
    expect(await h.reports.get(layout.latest(victim))).toBeNull();
    expect(await h.reports.get(layout.report(scanId, 'json'))).toBeNull();
    const answer = await call(getScan, getEvent(upload.id));
    expect(answer.statusCode).toBe(422);
    expect(body(answer)).toMatchObject({ id: upload.id, code: 'upload-mismatch', uploadedBy: SAMPLE_CALLER });
  });

  test('without an IAM authorizer the upload is bound to no caller, and says so', async () => {
    const event = sampleEvent<APIGatewayProxyEventV2>('http-post-uploads.json');
    const { authorizer: _authorizer, ...requestContext } =
      event.requestContext as typeof event.requestContext & {
        authorizer?: unknown;
      };
    const created = await call(createUpload, { ...event, requestContext });
    const upload = body<CreatedUpload>(created);
    expect(upload.uploadedBy).toBeNull();
    const conditions = exactConditions(decodePolicy(upload.post.fields));
    expect(conditions['x-amz-meta-uploaded-by']).toBeUndefined();
    // A form that claims an uploader anyway does not match the request.
    const eventsBefore = h.server.events.length;
    const claimed = { 'x-amz-meta-uploaded-by': SAMPLE_CALLER };
    expect((await postForm(upload.post, SAMPLE_ARCHIVE, claimed)).status).toBe(204);
    const outcome = await deliverUploads(eventsBefore);
    const scanId = (outcome.outcomes[0] as { scanId: string }).scanId;
    const rejected = JSON.parse((await h.reports.get(layout.rejected(scanId)))!.body.toString()) as {
      error: { code: string; message: string };
    };
    expect(rejected.error).toMatchObject({
      code: 'upload-mismatch',
      message: `the upload's metadata names uploader "${SAMPLE_CALLER}", but its POST /uploads request ${upload.id} was made by null`,
    });
  });

  test('an expired URL that never received an upload is reported as such', async () => {
    const id = '6f1c2b9e-1d2a-4c3b-8e4f-5a6b7c8d9e0f';
    const record: UploadRequestRecord = {
      schemaVersion: 1,
      id,
      status: 'pending',
      repository: 'late/repo',
      bucket: UPLOADS_BUCKET,
      key: `uploads/late/repo/${id}.tar.gz`,
      failOn: 'error',
      createdAt: '2020-01-01T00:00:00.000Z',
      expiresAt: '2020-01-01T00:15:00.000Z',
    };
    await h.reports.put(layout.uploadRequest(id), JSON.stringify(record));
    const result = await call(getScan, getEvent(id));
    expect(result.statusCode).toBe(404);
    expect(body(result)).toEqual({
      error: 'upload-expired',
      message: `upload ${id} was never received and its URL expired at 2020-01-01T00:15:00.000Z`,
    });
  });

  test.each([
    ['an unknown scan id', '0123456789abcdef0123456789abcdef', 404, 'not-found'],
    ['an unknown upload id', '0b5a4c1e-3f9e-4b1a-9a56-2c7d9b1f0e11', 404, 'not-found'],
    ['a malformed id', 'report.json', 400, 'bad-id'],
    ['a traversal attempt', '..%2F..%2Fsecrets', 400, 'bad-id'],
  ])('GET with %s is a clear 4xx', async (_label, id, status, code) => {
    const result = await call(getScan, getEvent(id));
    expect(result.statusCode).toBe(status);
    expect(body(result).error).toBe(code);
  });

  test.each([
    [
      'no repository',
      postUploads(JSON.stringify({ format: 'zip' }), { 'content-type': 'application/json' }),
      400,
      'missing-repository',
    ],
    ['bad JSON', postUploads('{"repository":', { 'content-type': 'application/json' }), 400, 'bad-json'],
    [
      'a non-string field',
      postUploads('{"repository": 7}', { 'content-type': 'application/json' }),
      400,
      'bad-json',
    ],
    [
      'a wrong content type',
      postUploads('repository=x', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported-media-type',
    ],
    [
      'an unknown format',
      postUploads(JSON.stringify({ repository: 'a/b', format: 'rar' }), {
        'content-type': 'application/json',
      }),
      400,
      'bad-format',
    ],
  ])('POST /uploads with %s is a clear 4xx', async (_label, event, status, code) => {
    const result = await call(createUpload, event);
    expect(result.statusCode).toBe(status);
    expect(body(result).error).toBe(code);
  });

  test('POST /uploads takes its parameters from the query too', async () => {
    const event = {
      ...postUploads(null),
      queryStringParameters: { repository: 'q/repo', format: 'zip', failOn: 'warning' },
    };
    const result = await call(createUpload, event);
    expect(result.statusCode).toBe(201);
    const payload = body<{ id: string; key: string }>(result);
    expect(payload.key).toBe(`uploads/q/repo/${payload.id}.zip`);
    const record = JSON.parse(
      (await h.reports.get(layout.uploadRequest(payload.id)))!.body.toString(),
    ) as UploadRequestRecord;
    expect(record.failOn).toBe('warning');
  });
});
