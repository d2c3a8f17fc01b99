/**
 * docs/ci/tfguard-scan.sh run for real (bash, curl --aws-sigv4, jq) against the real API handlers
 * behind a stand-in for API Gateway that verifies every request's SigV4 signature with the AWS
 * SDK's own signer (test/support/sigv4-gateway.ts, checked in sigv4-gateway.test.ts), and against
 * s3rver, whose upload notifications reach the real upload handler. Every flow the script has is
 * run: POST /scans; POST /uploads + upload + polling GET /scans/{id}; the fallback to uploads on a
 * 413 or a 504 of POST /scans; retries; fail-on, format and repository parameters. The last test
 * checks that every request the script sent in this file verified.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { makeTarGz } from '../support/archive';
import {
  type Harness,
  lambdaContext,
  SAMPLE_ARCHIVE,
  startHarness,
  UPLOADS_BUCKET,
  withEnv,
} from '../support/lambda';
import { slowToParse } from '../support/scan';
import type { GatewayRecord } from '../support/sigv4-gateway';
import { CI_AWS_ENV, startApiStandIn, type ApiStandIn } from '../support/api-stand-in';
import { count } from '../../src/util/words';

export const SCRIPT = resolve(__dirname, '..', '..', 'docs', 'ci', 'tfguard-scan.sh');

let h: Harness;
let api: ApiStandIn;
let work: string;
let sample: string;

beforeAll(async () => {
  h = await startHarness();
  api = await startApiStandIn(h);
  work = await mkdtemp(join(tmpdir(), 'tfguard-ci-'));
  sample = join(work, 'config.tar.gz');
  await writeFile(sample, SAMPLE_ARCHIVE);
});

afterAll(async () => {
  await api?.stop();
  await h?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  dir: string;
  /** What the stand-in received during this run. */
  calls: GatewayRecord[];
}

async function runScript(archive: string, env: Record<string, string>): Promise<Run> {
  const dir = await mkdtemp(join(work, 'run-'));
  const before = api.gateway.records.length;
  return new Promise((resolvePromise) => {
    execFile(
      'bash',
      [SCRIPT, archive],
      {
        cwd: dir,
        timeout: 90_000,
        env: {
          PATH: process.env.PATH,
          TFGUARD_API: api.gateway.url,
          TFGUARD_REPOSITORY: 'acme/network',
          ...CI_AWS_ENV,
          TFGUARD_POLL_SECONDS: '0.2',
          TFGUARD_RETRY_SECONDS: '0.1',
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolvePromise({ code, stdout, stderr, dir, calls: api.gateway.records.slice(before) });
      },
    );
  });
}

const json = async (run: Run, name = 'tfguard.json') =>
  JSON.parse(await readFile(join(run.dir, name), 'utf8')) as Record<string, unknown> & {
    scanId: string;
    report: { summary: Record<string, number> };
  };
const call = (r: GatewayRecord) => `${r.status} ${r.method} ${r.path}${r.query ? `?${r.query}` : ''}`;

test('POST /scans: a failing verdict exits 1 with JSON, SARIF and Markdown written', async () => {
  const run = await runScript(sample, {});
  expect(run.stderr).toBe('');
  expect(run.code).toBe(1);
  const result = await json(run);
  expect(result).toMatchObject({
    status: 'complete',
    verdict: 'fail',
    failOn: 'error',
    repository: 'acme/network',
  });
  const s = result.report.summary;
  expect(run.stdout).toBe(
    `tfguard: ${count(s.error ?? 0, 'error')}, ${count(s.warning ?? 0, 'warning')}, ${count(s.notice ?? 0, 'notice')}; verdict fail (fail on error), scan ${result.scanId}\n`,
  );
  expect(JSON.parse(await readFile(join(run.dir, 'tfguard.sarif'), 'utf8')).version).toBe('2.1.0');
  expect(await readFile(join(run.dir, 'tfguard.md'), 'utf8')).toContain('## tfguard');
  // Every query in canonical order: names sorted, RFC 3986 encoding.
  expect(run.calls.map(call)).toEqual([
    '200 POST /scans?failOn=error&format=json&repository=acme%2Fnetwork',
    `200 GET /scans/${result.scanId}?failOn=error&format=sarif`,
    `200 GET /scans/${result.scanId}?failOn=error&format=markdown`,
  ]);
  expect(run.calls.every((c) => c.verified)).toBe(true);
});

test('fail-on and an unusual repository name: parameters encoded canonically, still verified', async () => {
  const lenient = await runScript(sample, { TFGUARD_FAIL_ON: 'never' });
  expect([lenient.code, lenient.stderr]).toEqual([0, '']);
  expect(lenient.stdout).toContain('verdict pass (fail on never)');
  expect(lenient.calls[0]!.query).toBe('failOn=never&format=json&repository=acme%2Fnetwork');

  // jq before 1.7 leaves !*'() unencoded; SigV4 encodes everything but A-Z a-z 0-9 - _ . ~
  const repository = "team (eu)/it's a repo!*~+&=é";
  const strict = await runScript(sample, { TFGUARD_FAIL_ON: 'warning', TFGUARD_REPOSITORY: repository });
  expect([strict.code, strict.stderr]).toEqual([1, '']);
  expect((await json(strict)).repository).toBe(repository);
  expect(strict.calls[0]!.query).toBe(
    'failOn=warning&format=json&repository=team%20%28eu%29%2Fit%27s%20a%20repo%21%2A~%2B%26%3D%C3%A9',
  );
  expect([...lenient.calls, ...strict.calls].every((c) => c.verified)).toBe(true);
});

test('a large archive goes through POST /uploads, the size-bound presigned POST and polling', async () => {
  const run = await runScript(sample, { TFGUARD_MAX_POST_BYTES: '100' });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(1);
  const result = await json(run);
  expect(result.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(result.verdict).toBe('fail');
  const calls = run.calls.map(call);
  expect(calls[0]).toBe('201 POST /uploads');
  expect(calls).toContain(`200 GET /scans/${String(result.id)}?failOn=error&format=json`);
  expect(calls.some((c) => c.startsWith('202 GET /scans/'))).toBe(true);
  expect(calls.some((c) => c.includes('POST /scans'))).toBe(false);
  expect(calls.slice(-2)).toEqual([
    `200 GET /scans/${result.scanId}?failOn=error&format=sarif`,
    `200 GET /scans/${result.scanId}?failOn=error&format=markdown`,
  ]);
  expect(run.calls.every((c) => c.verified)).toBe(true);
  expect(JSON.parse(await readFile(join(run.dir, 'tfguard.sarif'), 'utf8')).version).toBe('2.1.0');
  // Sent with the presigned POST's fields: the object carries the content type and the metadata the
  // policy binds (a presigned PUT sets neither).
  const stored = await h.uploads.get(`uploads/acme/network/${String(result.id)}.tar.gz`);
  expect(stored?.body.equals(SAMPLE_ARCHIVE)).toBe(true);
  expect(stored?.contentType).toBe('application/gzip');
  expect(stored?.metadata).toMatchObject({ repository: 'acme/network' });
});

test('an archive larger than the presigned POST allows is refused before it is sent', async () => {
  const run = await withEnv({ TFGUARD_MAX_ARCHIVE_BYTES: '64' }, () =>
    runScript(sample, { TFGUARD_MAX_POST_BYTES: '10', TFGUARD_REPOSITORY: 'acme/too-big' }),
  );
  expect(run.code).toBe(2);
  expect(run.stderr).toBe(
    `tfguard: ${sample} is ${SAMPLE_ARCHIVE.length} bytes; the service accepts archives of at most 64 bytes\n`,
  );
  expect(run.calls.map(call)).toEqual(['201 POST /uploads']);
  const keys: string[] = [];
  for await (const k of h.uploads.list('uploads/acme/too-big/')) keys.push(k);
  expect(keys).toEqual([]);
});

test('POST /scans answering 413 (a lower API limit): the archive is uploaded instead', async () => {
  const run = await withEnv({ TFGUARD_API_MAX_BODY_BYTES: '100' }, () => runScript(sample, {}));
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(
    /^tfguard: POST \/scans answered 413 \(the archive is \d+ bytes; at most 100 .*\(body-too-large\)\); uploading it instead\n$/,
  );
  const calls = run.calls.map(call);
  expect(calls.slice(0, 2)).toEqual([
    '413 POST /scans?failOn=error&format=json&repository=acme%2Fnetwork',
    '201 POST /uploads',
  ]);
  expect((await json(run)).verdict).toBe('fail');
  expect(run.calls.every((c) => c.verified)).toBe(true);
}, 90_000);

test('POST /scans answering 504 (the scan hit the function deadline): uploaded instead, not retried', async () => {
  const slow = join(work, 'slow.tar.gz');
  await writeFile(
    slow,
    await makeTarGz({
      'main.tf': 'terraform {}\n',
      'slow/main.tf': slowToParse('terraform {}\n', 1_500_000),
    }),
  );
  // 1.2 s left in the createScan invocation: the real handler stops the scan and answers 504.
  api.contexts.set('POST /scans', () => lambdaContext('createScan', 1200));
  try {
    const run = await runScript(slow, { TFGUARD_REPOSITORY: 'acme/slow' });
    expect(run.stderr).toMatch(
      /^tfguard: POST \/scans answered 504 \(scan timed out .*\(scan-timeout\)\); uploading it instead\n$/,
    );
    expect(run.code).toBe(1);
    const calls = run.calls.map(call);
    expect(calls.filter((c) => c.includes('POST /scans'))).toEqual([
      '504 POST /scans?failOn=error&format=json&repository=acme%2Fslow',
    ]);
    expect(calls[1]).toBe('201 POST /uploads');
    const result = await json(run);
    expect(result.verdict).toBe('fail');
    expect(JSON.stringify(result.report)).toContain('parse-error');
    expect(run.calls.every((c) => c.verified)).toBe(true);
  } finally {
    api.contexts.delete('POST /scans');
  }
}, 90_000);

test('throttling and server errors are retried with backoff; persistent ones end in exit 2', async () => {
  const scans = (m: string, p: string) => m === 'POST' && p === '/scans';
  const gets = (m: string, p: string) => m === 'GET' && p.startsWith('/scans/');
  api.gateway.faults.push(
    { match: scans, statusCode: 503, body: { message: 'Service Unavailable' } },
    { match: scans, statusCode: 429, body: { message: 'Too Many Requests' } },
    { match: gets, statusCode: 502, body: { message: 'Internal Server Error' } },
  );
  const run = await runScript(sample, {});
  expect(run.code).toBe(1);
  expect(run.stderr.split('\n')).toEqual([
    'tfguard: POST /scans answered 503 (Service Unavailable); retry 1 of 3 in 0.1s',
    'tfguard: POST /scans answered 429 (Too Many Requests); retry 2 of 3 in 0.2s',
    expect.stringMatching(
      /^tfguard: GET \/scans\/[0-9a-f]{32} answered 502 \(Internal Server Error\); retry 1 of 3 in 0\.1s$/,
    ),
    '',
  ]);
  expect(run.calls.map((c) => c.status)).toEqual([503, 429, 200, 502, 200, 200]);
  expect(run.calls.every((c) => c.verified)).toBe(true);

  for (let i = 0; i < 3; i++)
    api.gateway.faults.push({ match: scans, statusCode: 500, body: { message: 'boom' } });
  const failed = await runScript(sample, { TFGUARD_RETRIES: '3' });
  expect(failed.code).toBe(2);
  expect(failed.stderr.split('\n').slice(-2)).toEqual(['tfguard: HTTP 500 boom', '']);
  expect(failed.calls.map((c) => c.status)).toEqual([500, 500, 500]);
  expect(api.gateway.faults).toEqual([]);
});

test('an API that offers no `post`: its `upload` is followed, a presigned PUT or POST', async () => {
  // What POST /uploads of earlier versions answered: `upload` only, a PUT URL or a presigned POST.
  api.rewrites.set('POST /uploads', ({ post: _post, ...body }) => {
    const upload = body.upload as { expiresAt: string };
    return {
      ...body,
      upload: {
        method: 'POST',
        url: `${h.server.endpoint}/${UPLOADS_BUCKET}`,
        fields: { key: body.key, 'Content-Type': 'application/gzip', 'x-amz-meta-note': '@not-a-file' },
        expiresAt: upload.expiresAt,
      },
    };
  });
  try {
    const run = await runScript(sample, { TFGUARD_MAX_POST_BYTES: '100', TFGUARD_REPOSITORY: 'acme/form' });
    expect([run.code, run.stderr]).toEqual([1, '']);
    const result = await json(run);
    expect(result).toMatchObject({ verdict: 'fail', repository: 'acme/form' });
    const stored = await h.uploads.get(`uploads/acme/form/${String(result.id)}.tar.gz`);
    expect(stored?.body.equals(SAMPLE_ARCHIVE)).toBe(true);
    expect(stored?.metadata.note).toBe('@not-a-file');
    expect(run.calls.every((c) => c.verified)).toBe(true);
  } finally {
    api.rewrites.delete('POST /uploads');
  }
  api.rewrites.set('POST /uploads', ({ post: _post, ...body }) => body);
  try {
    const run = await runScript(sample, { TFGUARD_MAX_POST_BYTES: '100', TFGUARD_REPOSITORY: 'acme/put' });
    expect([run.code, run.stderr]).toEqual([1, '']);
    const result = await json(run);
    const stored = await h.uploads.get(`uploads/acme/put/${String(result.id)}.tar.gz`);
    expect(stored?.body.equals(SAMPLE_ARCHIVE)).toBe(true);
    // The PUT binds nothing: no metadata.
    expect(stored?.metadata.repository).toBeUndefined();
  } finally {
    api.rewrites.delete('POST /uploads');
  }
});

test('a SARIF report over 4,000,000 bytes: the 303 is followed to the stored copy', async () => {
  // 2,000 stacks each requiring hashicorp/aws without a constraint: 8,000 findings, a SARIF of
  // ~9.7 MB, which GET /scans/{id}?format=sarif answers with 303 See Other and its presigned link.
  const files: Record<string, string> = {};
  for (let i = 0; i < 2000; i++) {
    files[`stacks/s${i}/main.tf`] =
      'terraform {\n  required_providers {\n    aws = {\n      source = "hashicorp/aws"\n    }\n  }\n}\n';
  }
  const big = join(work, 'many-findings.tar.gz');
  await writeFile(big, await makeTarGz(files));
  const run = await runScript(big, { TFGUARD_REPOSITORY: 'acme/big' });
  expect([run.code, run.stderr]).toEqual([1, '']);
  const result = await json(run);
  expect(result.reportInline).toBe(false);
  expect(run.calls.map(call)).toEqual([
    '200 POST /scans?failOn=error&format=json&repository=acme%2Fbig',
    `303 GET /scans/${result.scanId}?failOn=error&format=sarif`,
    `200 GET /scans/${result.scanId}?failOn=error&format=markdown`,
  ]);
  const sarif = await readFile(join(run.dir, 'tfguard.sarif'));
  expect(sarif.length).toBeGreaterThan(4_000_000);
  const doc = JSON.parse(sarif.toString('utf8')) as { version: string; runs: { results: unknown[] }[] };
  expect(doc.version).toBe('2.1.0');
  expect(doc.runs[0]!.results.length).toBeGreaterThanOrEqual(4000);
  expect(await readFile(join(run.dir, 'tfguard.md'), 'utf8')).toContain('## tfguard');
  expect(run.stdout).toContain('verdict fail (fail on error)');
}, 120_000);

test('an unusable archive, missing credentials or an unreachable API exit 2 with the reason', async () => {
  const archive = join(work, 'broken.tar.gz');
  await writeFile(archive, 'not an archive');
  const rejected = await runScript(archive, {});
  expect(rejected.code).toBe(2);
  expect(rejected.stderr).toMatch(/^tfguard: HTTP 422 .*\(unsupported-format\)\n$/);
  const badGate = await runScript(sample, { TFGUARD_FAIL_ON: 'sometimes' });
  expect(badGate.code).toBe(2);
  expect(badGate.stderr).toMatch(/^tfguard: HTTP 400 failOn must be .*\(bad-fail-on\)\n$/);
  const unsigned = await runScript(archive, { AWS_ACCESS_KEY_ID: '' });
  expect(unsigned.code).toBe(2);
  expect(unsigned.stderr).toBe('tfguard: AWS credentials are not set\n');
  const down = await runScript(archive, { TFGUARD_API: 'http://127.0.0.1:9', TFGUARD_RETRIES: '2' });
  expect(down.code).toBe(2);
  expect(down.stderr).toMatch(
    /^tfguard: POST \/scans: no answer \(curl: \(7\) [^\n]*\); retry 1 of 1 in 0\.1s\ntfguard: cannot reach http:\/\/127\.0\.0\.1:9: curl: \(7\) [^\n]*\n$/,
  );
  const missing = await runScript(join(work, 'nope.tar.gz'), {});
  expect([missing.code, missing.stderr]).toEqual([
    2,
    `tfguard: no such archive: ${join(work, 'nope.tar.gz')}\n`,
  ]);
  expect([...rejected.calls, ...badGate.calls].every((c) => c.verified)).toBe(true);
});

test('every request the script sent in these runs verified against the AWS SDK signer', () => {
  const records = api.gateway.records;
  expect(records.length).toBeGreaterThan(30);
  expect(records.filter((r) => !r.verified).map((r) => `${call(r)}: ${r.reason}`)).toEqual([]);
  // All flows were exercised.
  const kinds = new Set(records.map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{32,36}$/, '{id}')}`));
  expect([...kinds].sort()).toEqual(['GET /scans/{id}', 'POST /scans', 'POST /uploads']);
});
