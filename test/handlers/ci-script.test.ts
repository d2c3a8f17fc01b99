/**
 * docs/ci/tfguard-scan.sh run for real (bash, curl --aws-sigv4, jq) against the real API handlers,
 * served by a small local HTTP API that, like API Gateway's IAM authorizer, refuses requests without
 * a SigV4 Authorization header, and against s3rver, whose upload notifications are delivered to the
 * upload handler as S3 events.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createScan, createUpload, getScan } from '../../handlers/api';
import { handler as scanUpload } from '../../handlers/upload-scan';
import { SAMPLE_ARCHIVE, startHarness, type Harness } from './harness';

const SCRIPT = resolve(__dirname, '..', '..', 'docs', 'ci', 'tfguard-scan.sh');
const SIGV4 =
  /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[a-z0-9-]+\/execute-api\/aws4_request, ?SignedHeaders=[a-z0-9;-]+, ?Signature=[0-9a-f]{64}$/;

let h: Harness;
let server: Server;
let api: string;
let work: string;
let pump: NodeJS.Timeout;
const requests: string[] = [];

type Route = (e: APIGatewayProxyEventV2, c?: Context) => Promise<APIGatewayProxyStructuredResultV2>;

function route(
  method: string,
  path: string,
): { fn: Route; key: string; params: Record<string, string> } | null {
  if (method === 'POST' && path === '/scans') return { fn: createScan, key: 'POST /scans', params: {} };
  if (method === 'POST' && path === '/uploads') return { fn: createUpload, key: 'POST /uploads', params: {} };
  const m = /^\/scans\/([^/]+)$/.exec(path);
  if (method === 'GET' && m)
    return { fn: getScan, key: 'GET /scans/{id}', params: { id: decodeURIComponent(m[1]!) } };
  return null;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  h = await startHarness();
  server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    requests.push(`${req.method} ${url.pathname}`);
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!SIGV4.test(String(req.headers.authorization ?? ''))) return reply(403, { message: 'Forbidden' });
    const target = route(req.method ?? 'GET', url.pathname);
    if (target === null) return reply(404, { message: 'Not Found' });
    const body = await readBody(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]),
    );
    const event = {
      version: '2.0',
      routeKey: target.key,
      rawPath: url.pathname,
      rawQueryString: url.search.slice(1),
      headers,
      queryStringParameters: Object.fromEntries(url.searchParams),
      pathParameters: target.params,
      body: body.length > 0 ? body.toString('base64') : undefined,
      isBase64Encoded: body.length > 0,
      requestContext: {
        http: { method: req.method, path: url.pathname },
        requestId: randomUUID(),
        routeKey: target.key,
      },
    } as unknown as APIGatewayProxyEventV2;
    const result = (await target.fn(event, h.context('api'))) as {
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    };
    res.writeHead(result.statusCode, result.headers);
    res.end(result.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // S3 → Lambda: deliver each upload notification s3rver emits to the upload handler.
  let delivered = 0;
  let busy = false;
  pump = setInterval(() => {
    if (busy || delivered >= h.server.events.length) return;
    busy = true;
    const fresh = h.server.events.slice(delivered);
    delivered = h.server.events.length;
    const objects = fresh
      .map(
        (e) =>
          e.Records[0] as {
            eventName: string;
            s3: { bucket: { name: string }; object: { key: string; eTag?: string; size?: number } };
          },
      )
      .filter(
        (r) =>
          r.eventName.startsWith('ObjectCreated') &&
          r.s3.bucket.name === 'tfguard-uploads-local' &&
          r.s3.object.key.startsWith('uploads/'),
      )
      .map((r) => ({ key: r.s3.object.key, etag: r.s3.object.eTag ?? '', size: r.s3.object.size ?? 0 }));
    const done =
      objects.length > 0 ? scanUpload(h.s3Event(objects), h.context('scanUpload')) : Promise.resolve();
    void done.finally(() => (busy = false));
  }, 100);
  work = await mkdtemp(join(tmpdir(), 'tfguard-ci-'));
});

afterAll(async () => {
  clearInterval(pump);
  await new Promise((r) => server?.close(r));
  await h?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

async function runScript(
  archive: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string; dir: string }> {
  const dir = await mkdtemp(join(work, 'run-'));
  return new Promise((resolvePromise) => {
    execFile(
      'bash',
      [SCRIPT, archive],
      {
        cwd: dir,
        timeout: 60_000,
        env: {
          PATH: process.env.PATH,
          TFGUARD_API: api,
          TFGUARD_REPOSITORY: 'acme/network',
          AWS_REGION: 'eu-west-1',
          AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEEXAMPLE',
          AWS_SECRET_ACCESS_KEY: 'example-secret',
          AWS_SESSION_TOKEN: 'example-session-token',
          TFGUARD_POLL_SECONDS: '0.2',
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolvePromise({ code, stdout, stderr, dir });
      },
    );
  });
}

test('a small archive is posted; the failing verdict exits 1 with JSON, SARIF and Markdown written', async () => {
  const archive = join(work, 'config.tar.gz');
  await writeFile(archive, SAMPLE_ARCHIVE);
  const run = await runScript(archive, {});
  expect(run.stderr).toBe('');
  expect(run.code).toBe(1);
  const result = JSON.parse(await readFile(join(run.dir, 'tfguard.json'), 'utf8'));
  expect(result).toMatchObject({
    status: 'complete',
    verdict: 'fail',
    failOn: 'error',
    repository: 'acme/network',
  });
  expect(run.stdout).toBe(
    `tfguard: ${result.report.summary.error} errors, ${result.report.summary.warning} warnings, ${result.report.summary.notice} notices; verdict fail (fail on error), scan ${result.scanId}\n`,
  );
  expect(JSON.parse(await readFile(join(run.dir, 'tfguard.sarif'), 'utf8')).version).toBe('2.1.0');
  expect(await readFile(join(run.dir, 'tfguard.md'), 'utf8')).toContain('## tfguard');
  expect(requests.slice(-3)).toEqual([
    'POST /scans',
    `GET /scans/${result.scanId}`,
    `GET /scans/${result.scanId}`,
  ]);

  const lenient = await runScript(archive, { TFGUARD_FAIL_ON: 'never' });
  expect(lenient.code).toBe(0);
  expect(lenient.stdout).toContain('verdict pass (fail on never)');
});

test('a large archive goes through POST /uploads, a presigned PUT and polling', async () => {
  const archive = join(work, 'large.tar.gz');
  await writeFile(archive, SAMPLE_ARCHIVE);
  const before = requests.length;
  const run = await runScript(archive, { TFGUARD_MAX_POST_BYTES: '100' });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(1);
  const result = JSON.parse(await readFile(join(run.dir, 'tfguard.json'), 'utf8'));
  expect(result.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(result.verdict).toBe('fail');
  const calls = requests.slice(before);
  expect(calls[0]).toBe('POST /uploads');
  expect(calls).toContain(`GET /scans/${result.id}`);
  expect(calls).not.toContain('POST /scans');
  expect(calls.slice(-2)).toEqual([`GET /scans/${result.scanId}`, `GET /scans/${result.scanId}`]);
  expect(JSON.parse(await readFile(join(run.dir, 'tfguard.sarif'), 'utf8')).version).toBe('2.1.0');
});

test('an unusable archive, missing credentials or an unreachable API exit 2 with the reason', async () => {
  const archive = join(work, 'broken.tar.gz');
  await writeFile(archive, 'not an archive');
  const rejected = await runScript(archive, {});
  expect(rejected.code).toBe(2);
  expect(rejected.stderr).toMatch(/^tfguard: HTTP 422 .*\(unsupported-format\)\n$/);
  const unsigned = await runScript(archive, { AWS_ACCESS_KEY_ID: '' });
  expect(unsigned.code).toBe(2);
  expect(unsigned.stderr).toContain('AWS credentials are not set');
  const down = await runScript(archive, { TFGUARD_API: 'http://127.0.0.1:9' });
  expect(down.code).toBe(2);
  expect(down.stderr).toContain('tfguard: cannot reach http://127.0.0.1:9');
  const missing = await runScript(join(work, 'nope.tar.gz'), {});
  expect([missing.code, missing.stderr]).toEqual([
    2,
    `tfguard: no such archive: ${join(work, 'nope.tar.gz')}\n`,
  ]);
});
