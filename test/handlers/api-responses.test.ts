/**
 * API responses always fit Lambda's 6 MB response limit. A report whose response
 * would not fit under `MAX_INLINE_RESPONSE_BYTES` is not inlined: the response says
 * `reportInline: false` and carries the verdict, the summary, the stored keys and presigned links,
 * which really download the stored renderings from s3rver. A SARIF/Markdown document that does not
 * fit is a 303 to its link. Real archives (generated, and a real corpus configuration five times
 * over), the real handlers, real s3rver.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createScan, createUpload, getScan } from '../../handlers/api';
import { handler as scanUpload } from '../../handlers/upload-scan';
import { verdict as verdictOf } from '../../src/report';
import type { Report, Summary } from '../../src/report/types';
import { MAX_INLINE_RESPONSE_BYTES } from '../../src/service/api';
import { ReportLayout } from '../../src/service/keys';
import { makeTarGz, type FileMap } from '../support/archive';
import { readCorpusArchive, replicateTarGz } from '../support/corpus';
import { describeWithCorpus } from '../support/external';
import { type Harness, sampleEvent, startHarness, withEnv } from '../support/lambda';

const layout = new ReportLayout('reports/');
/** Lambda's limit on a synchronous response payload, as its error message states it. */
const LAMBDA_LIMIT = 6_291_556;
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

type Result = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
};

type Handler = (
  e: APIGatewayProxyEventV2,
  c?: ReturnType<Harness['context']>,
) => Promise<APIGatewayProxyStructuredResultV2>;

interface Envelope {
  id?: string;
  scanId: string;
  status: string;
  verdict: 'pass' | 'fail';
  failOn: string;
  repository: string | null;
  summary: Summary;
  reportInline: boolean;
  report: Report | null;
  reportKeys: { json: string; sarif: string; markdown: string };
  reportUrls: { json: string; sarif: string; markdown: string };
  reportUrlsExpireAt: string;
  message?: string;
}

async function call(fn: Handler, event: APIGatewayProxyEventV2): Promise<{ result: Result; bytes: number }> {
  const result = (await fn(event, h.context('api'))) as Result;
  // What Lambda measures against its limit: the serialized result object.
  return { result, bytes: Buffer.byteLength(JSON.stringify(result), 'utf8') };
}

function postScans(archive: Buffer, query: Record<string, string>): APIGatewayProxyEventV2 {
  const event = sampleEvent<APIGatewayProxyEventV2>('http-post-scans.json');
  return { ...event, queryStringParameters: query, body: archive.toString('base64'), isBase64Encoded: true };
}

function getEvent(id: string, query: Record<string, string> = {}): APIGatewayProxyEventV2 {
  const event = sampleEvent<APIGatewayProxyEventV2>('http-get-scan.json');
  return {
    ...event,
    rawPath: `/scans/${id}`,
    pathParameters: { id },
    headers: { ...event.headers, accept: 'application/json' },
    queryStringParameters: query,
  };
}

function envelope(result: Result): Envelope {
  expect(result.headers['content-type']).toBe('application/json');
  return JSON.parse(result.body) as Envelope;
}

async function download(url: string): Promise<Buffer> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** Checks a not-inlined JSON response: the links download exactly what is stored. */
async function expectLinked(payload: Envelope): Promise<Report> {
  expect(payload.status).toBe('complete');
  expect(payload.reportInline).toBe(false);
  expect(payload.report).toBeNull();
  expect(payload.reportKeys).toEqual(layout.reports(payload.scanId));
  for (const format of ['json', 'sarif', 'markdown'] as const) {
    const stored = await h.reports.get(payload.reportKeys[format]);
    expect((await download(payload.reportUrls[format])).equals(stored!.body)).toBe(true);
  }
  const report = JSON.parse((await download(payload.reportUrls.json)).toString('utf8')) as Report;
  expect(payload.summary).toEqual(report.summary);
  expect(payload.verdict).toBe(verdictOf(report, payload.failOn as 'error'));
  return report;
}

/** What the response would have been with the report inlined, as Lambda would measure it. */
function inlinedBytes(result: Result, payload: Envelope, report: Report): number {
  const body = JSON.stringify({ ...payload, reportInline: true, report }, null, 2) + '\n';
  return Buffer.byteLength(JSON.stringify({ ...result, body }), 'utf8');
}

/**
 * 2,000 stacks, each requiring hashicorp/aws without a version constraint: a 21 kB archive with
 * 8,000 findings, whose JSON response would be ~8 MB and its SARIF ~9.7 MB.
 */
async function manyFindings(stacks: number): Promise<Buffer> {
  const files: FileMap = {};
  for (let i = 0; i < stacks; i++) {
    files[`stacks/s${i}/main.tf`] =
      'terraform {\n  required_providers {\n    aws = {\n      source = "hashicorp/aws"\n    }\n' +
      '    random = {\n      source  = "hashicorp/random"\n      version = ">= 3.0"\n    }\n  }\n}\n\n' +
      'provider "aws" {\n  region = "eu-west-1"\n}\n';
  }
  return makeTarGz(files);
}

test('the inline limit leaves room for base64: 4/3 of it is still under the Lambda limit', () => {
  expect((MAX_INLINE_RESPONSE_BYTES * 4) / 3).toBeLessThan(LAMBDA_LIMIT);
});

test('POST /scans and GET /scans/{id}: a report too large for a response is linked, never inlined past the limit', async () => {
  const archive = await manyFindings(2000);
  const posted = await call(createScan, postScans(archive, { repository: 'big/findings' }));
  expect(posted.result.statusCode).toBe(200);
  expect(posted.bytes).toBeLessThanOrEqual(LAMBDA_LIMIT);
  expect(posted.bytes).toBeLessThanOrEqual(MAX_INLINE_RESPONSE_BYTES);
  const payload = envelope(posted.result);
  expect(payload).toMatchObject({ repository: 'big/findings', failOn: 'error', verdict: 'fail' });
  expect(posted.result.headers['x-tfguard-verdict']).toBe('fail');
  const report = await expectLinked(payload);
  expect(report.summary.total).toBe(8000);
  // Inlined, the same response would be more than Lambda returns at all.
  expect(inlinedBytes(posted.result, payload, report)).toBeGreaterThan(LAMBDA_LIMIT);

  // GET by scan id: the same, in JSON.
  const got = await call(getScan, getEvent(payload.scanId));
  expect(got.result.statusCode).toBe(200);
  expect(got.bytes).toBeLessThanOrEqual(MAX_INLINE_RESPONSE_BYTES);
  await expectLinked(envelope(got.result));

  // The bare SARIF (~10 MB) cannot be the body either: 303 to its link, which serves it.
  for (const [route, event] of [
    [getScan, getEvent(payload.scanId, { format: 'sarif' })],
    [createScan, postScans(archive, { repository: 'big/findings', format: 'sarif' })],
  ] as const) {
    const sarif = await call(route, event);
    expect(sarif.result.statusCode).toBe(303);
    expect(sarif.bytes).toBeLessThanOrEqual(MAX_INLINE_RESPONSE_BYTES);
    const redirect = envelope(sarif.result);
    expect(redirect.reportInline).toBe(false);
    expect(redirect.message).toMatch(
      /the sarif report is larger than the 4000000 bytes a response can carry/,
    );
    expect(sarif.result.headers.location).toBe(redirect.reportUrls.sarif);
    expect(sarif.result.headers['x-tfguard-verdict']).toBe('fail');
    const document = await download(sarif.result.headers.location!);
    expect(document.length).toBeGreaterThan(LAMBDA_LIMIT);
    expect(JSON.parse(document.toString('utf8')).version).toBe('2.1.0');
  }

  // The Markdown rendering (~2 MB) fits, and is returned as before.
  const markdown = await call(getScan, getEvent(payload.scanId, { format: 'markdown' }));
  expect(markdown.result.statusCode).toBe(200);
  expect(markdown.result.headers['content-type']).toBe('text/markdown; charset=utf-8');
  expect(markdown.bytes).toBeLessThanOrEqual(MAX_INLINE_RESPONSE_BYTES);
  expect(markdown.result.body).toBe((await h.reports.get(payload.reportKeys.markdown))!.body.toString());
});

test('fix=true with a report too large to inline: the patch is inlined first, the report linked', async () => {
  const archive = await manyFindings(2000);
  const posted = await call(createScan, postScans(archive, { repository: 'big/findings', fix: 'true' }));
  expect(posted.result.statusCode).toBe(200);
  expect(posted.bytes).toBeLessThanOrEqual(MAX_INLINE_RESPONSE_BYTES);
  const payload = envelope(posted.result) as Envelope & {
    patch: string | null;
    reportKeys: Record<string, string>;
    reportUrls: Record<string, string>;
  };
  expect([payload.reportInline, payload.report]).toEqual([false, null]);
  // Every stack's unbounded random constraint is bounded: one hunk per stack.
  expect(payload.patch?.match(/^\+\+\+ b\/stacks\/s\d+\/main\.tf$/gm)).toHaveLength(2000);
  const stored = await h.reports.get(payload.reportKeys.patch!);
  expect(stored!.body.toString('utf8')).toBe(payload.patch);
  expect((await download(payload.reportUrls.patch!)).toString('utf8')).toBe(payload.patch);
});

describeWithCorpus('a real corpus configuration', () => {
  test('an upload of a real configuration five times over: GET /scans/{uploadId} links the report', async () => {
    const archive = await replicateTarGz(
      await readCorpusArchive('cloudposse_terraform-aws-components.tar.gz'),
      5,
    );
    const created = await call(createUpload, sampleEvent('http-post-uploads.json'));
    const upload = JSON.parse(created.result.body) as { id: string; key: string; upload: { url: string } };
    const put = await fetch(upload.upload.url, { method: 'PUT', body: archive });
    expect(put.status).toBe(200);
    const object = await h.uploads.get(upload.key);
    const outcome = await scanUpload(
      h.s3Event([{ key: upload.key, etag: object!.etag!, size: archive.length }]),
      h.context('scanUpload'),
    );
    expect(outcome.outcomes[0]!.status).toBe('scanned');

    const got = await call(getScan, getEvent(upload.id));
    expect(got.result.statusCode).toBe(200);
    expect(got.bytes).toBeLessThanOrEqual(LAMBDA_LIMIT);
    expect(got.bytes).toBeLessThanOrEqual(MAX_INLINE_RESPONSE_BYTES);
    const payload = envelope(got.result);
    expect(payload.id).toBe(upload.id);
    expect(payload.repository).toBe('acme/network');
    const report = await expectLinked(payload);
    expect(report.modules.length).toBeGreaterThan(100);
    expect(inlinedBytes(got.result, payload, report)).toBeGreaterThan(LAMBDA_LIMIT);
  });
});

test('the report links are short-lived: s3rver refuses them once expired', async () => {
  await withEnv({ TFGUARD_REPORT_URL_TTL_SECONDS: '1' }, async () => {
    const archive = await makeTarGz({ 'main.tf': 'terraform {\n  required_version = ">= 1.5"\n}\n' });
    const posted = await call(createScan, postScans(archive, { repository: 'short/lived' }));
    const payload = envelope(posted.result);
    // Small enough to inline, and the links come with it.
    expect(payload.reportInline).toBe(true);
    expect(payload.report).not.toBeNull();
    expect(new URL(payload.reportUrls.json).searchParams.get('X-Amz-Expires')).toBe('1');
    await new Promise((r) => setTimeout(r, 2100));
    const expired = await fetch(payload.reportUrls.json);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('Request has expired');
  });
});
