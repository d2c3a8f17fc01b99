/**
 * The check of the check: the SigV4 stand-in (test/support/sigv4-gateway.ts) accepts requests the
 * AWS SDK's own signer signed, including with the query written in another order than the
 * canonical one (API Gateway canonicalizes what it receives), and rejects every kind of tampering
 * and the request curl's `--aws-sigv4` produces for a query that is not in canonical order
 * (curl issue #9717), which is what API Gateway answers 403 to.
 */
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256, startGateway, type Credentials, type Gateway } from '../support/sigv4-gateway';

const run = promisify(execFile);
const REGION = 'eu-west-1';
const CREDENTIALS: Credentials = {
  accessKeyId: 'ASIAEXAMPLEEXAMPLE',
  secretAccessKey: 'example-secret',
  sessionToken: 'example-session-token',
};

let gateway: Gateway;
const reached: string[] = [];

beforeAll(async () => {
  gateway = await startGateway({
    credentials: CREDENTIALS,
    region: REGION,
    backend: async (r) => {
      reached.push(`${r.method} ${r.url}`);
      return { statusCode: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' };
    },
  });
});
afterAll(() => gateway.close());

interface Outgoing {
  method: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
}

/** Signs with the AWS SDK's signer. */
async function sdkSign(
  req: Outgoing,
  options: { credentials?: Credentials; signingDate?: Date; region?: string; applyChecksum?: boolean } = {},
): Promise<Record<string, string>> {
  const url = new URL(gateway.url);
  const signer = new SignatureV4({
    service: 'execute-api',
    region: options.region ?? REGION,
    credentials: options.credentials ?? CREDENTIALS,
    sha256: Sha256,
    // By default the SDK also sends and signs x-amz-content-sha256; curl does not.
    applyChecksum: options.applyChecksum ?? true,
  });
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: req.path,
      query: req.query ?? {},
      headers: { host: url.host, ...(req.headers ?? {}) },
      ...(req.body !== undefined ? { body: req.body } : {}),
    },
    options.signingDate ? { signingDate: options.signingDate } : {},
  );
  return signed.headers as Record<string, string>;
}

/** Sends a request to the stand-in exactly as given: `target` is the raw path and query. */
function send(
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: string,
  base = gateway.url,
): Promise<number> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: Number(url.port), method, path: target, headers },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function lastRecord() {
  const record = gateway.records[gateway.records.length - 1];
  if (record === undefined) throw new Error('no request reached the stand-in');
  return record;
}

const SCAN = {
  method: 'POST',
  path: '/scans',
  query: { repository: 'acme/ops (eu) it’s!*', failOn: 'warning', format: 'json' },
  headers: { 'content-type': 'application/gzip' },
  body: 'archive bytes',
};
const CANONICAL_QUERY = 'failOn=warning&format=json&repository=acme%2Fops%20%28eu%29%20it%E2%80%99s%21%2A';
const WRITTEN_ORDER_QUERY =
  'repository=acme%2Fops%20%28eu%29%20it%E2%80%99s%21%2A&failOn=warning&format=json';

describe('requests the AWS SDK signed', () => {
  test('are accepted and reach the backend, whatever order the query is written in', async () => {
    const headers = await sdkSign(SCAN);
    expect(await send('POST', `/scans?${CANONICAL_QUERY}`, headers, SCAN.body)).toBe(200);
    expect(lastRecord()).toMatchObject({ verified: true, status: 200 });
    // API Gateway canonicalizes the query it receives; so does the stand-in.
    expect(await send('POST', `/scans?${WRITTEN_ORDER_QUERY}`, headers, SCAN.body)).toBe(200);
    expect(lastRecord()).toMatchObject({ verified: true, status: 200 });
    expect(reached.slice(-2)).toEqual([
      `POST /scans?${CANONICAL_QUERY}`,
      `POST /scans?${WRITTEN_ORDER_QUERY}`,
    ]);
    // Without a query, a body or a session token. The signed host must be this API's.
    const longTerm = await startGateway({
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'long-term' },
      region: REGION,
      backend: async () => ({ statusCode: 204, headers: {}, body: '' }),
    });
    try {
      const path = '/scans/0123456789abcdef0123456789abcdef';
      const credentials = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'long-term' };
      const forOther = await sdkSign({ method: 'GET', path }, { credentials });
      expect(await send('GET', path, forOther, undefined, longTerm.url)).toBe(403);
      const host = new URL(longTerm.url).host;
      const forThis = await sdkSign({ method: 'GET', path, headers: { host } }, { credentials });
      expect(await send('GET', path, forThis, undefined, longTerm.url)).toBe(204);
      expect(longTerm.records.map((r) => [r.verified, r.reason ?? ''])).toEqual([
        [false, expect.stringMatching(/^Host 127\.0\.0\.1:\d+ is not this API/)],
        [true, ''],
      ]);
    } finally {
      await longTerm.close();
    }
  });
});

describe('requests that do not verify are answered 403 and never reach the backend', () => {
  const cases: Array<[string, () => Promise<number>, RegExp]> = [
    [
      'body changed after signing',
      async () =>
        send(
          'POST',
          `/scans?${CANONICAL_QUERY}`,
          await sdkSign(SCAN, { applyChecksum: false }),
          'other bytes',
        ),
      /signature mismatch/,
    ],
    [
      'body changed after signing, with x-amz-content-sha256',
      async () => send('POST', `/scans?${CANONICAL_QUERY}`, await sdkSign(SCAN), 'other bytes'),
      /x-amz-content-sha256 is not the SHA-256 of the body/,
    ],
    [
      'query value changed after signing',
      async () =>
        send('POST', `/scans?${CANONICAL_QUERY.replace('warning', 'never')}`, await sdkSign(SCAN), SCAN.body),
      /signature mismatch/,
    ],
    [
      'path changed after signing',
      async () => send('POST', `/uploads?${CANONICAL_QUERY}`, await sdkSign(SCAN), SCAN.body),
      /signature mismatch/,
    ],
    [
      'signed with another secret key',
      async () =>
        send(
          'POST',
          `/scans?${CANONICAL_QUERY}`,
          await sdkSign(SCAN, { credentials: { ...CREDENTIALS, secretAccessKey: 'wrong' } }),
          SCAN.body,
        ),
      /signature mismatch/,
    ],
    [
      'signed for another region',
      async () =>
        send('POST', `/scans?${CANONICAL_QUERY}`, await sdkSign(SCAN, { region: 'us-east-1' }), SCAN.body),
      /region us-east-1/,
    ],
    [
      'signed ten minutes ago',
      async () =>
        send(
          'POST',
          `/scans?${CANONICAL_QUERY}`,
          await sdkSign(SCAN, { signingDate: new Date(Date.now() - 10 * 60 * 1000) }),
          SCAN.body,
        ),
      /more than 5 minutes/,
    ],
    [
      'session token missing',
      async () => {
        const headers = await sdkSign(SCAN);
        delete headers['x-amz-security-token'];
        return send('POST', `/scans?${CANONICAL_QUERY}`, headers, SCAN.body);
      },
      /x-amz-security-token/,
    ],
    [
      'x-amz-content-sha256 not the body hash',
      async () => {
        const headers = await sdkSign({
          ...SCAN,
          headers: { ...SCAN.headers, 'x-amz-content-sha256': '0'.repeat(64) },
        });
        return send('POST', `/scans?${CANONICAL_QUERY}`, headers, SCAN.body);
      },
      /x-amz-content-sha256 is not the SHA-256/,
    ],
    [
      'host not among the signed headers',
      async () => {
        const headers = await sdkSign(SCAN);
        headers.authorization = headers.authorization!.replace(
          /SignedHeaders=[^,]+/,
          'SignedHeaders=content-type;x-amz-date;x-amz-security-token',
        );
        return send('POST', `/scans?${CANONICAL_QUERY}`, headers, SCAN.body);
      },
      /host is not signed/,
    ],
    [
      'no Authorization header',
      async () =>
        send('POST', `/scans?${CANONICAL_QUERY}`, { 'content-type': 'application/gzip' }, SCAN.body),
      /no Authorization header/,
    ],
  ];

  test.each(cases)('%s', async (_name, attempt, reason) => {
    const before = reached.length;
    expect(await attempt()).toBe(403);
    expect(lastRecord()).toMatchObject({ verified: false, status: 403 });
    expect(lastRecord().reason).toMatch(reason);
    expect(reached.length).toBe(before);
  });
});

describe('curl --aws-sigv4 (the client the CI script uses)', () => {
  async function curl(target: string): Promise<string> {
    const { stdout } = await run('curl', [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '--aws-sigv4',
      `aws:amz:${REGION}:execute-api`,
      '--user',
      `${CREDENTIALS.accessKeyId}:${CREDENTIALS.secretAccessKey}`,
      '-H',
      `x-amz-security-token: ${CREDENTIALS.sessionToken}`,
      '-H',
      'content-type: application/gzip',
      '--data-binary',
      SCAN.body,
      `${gateway.url}${target}`,
    ]);
    return stdout;
  }

  test('is rejected for a query written out of canonical order (curl issue #9717)', async () => {
    const { stdout: version } = await run('curl', ['--version']);
    const major = Number(/^curl (\d+)\./.exec(version)?.[1]);
    // curl 7 signs the query as written (issue #9717, closed in curl 8); the machine's curl is 7.88.
    if (major < 8) {
      expect(await curl(`/scans?${WRITTEN_ORDER_QUERY}`)).toBe('403');
      expect(lastRecord().reason).toMatch(/signature mismatch/);
    }
    expect(await curl(`/scans?${CANONICAL_QUERY}`)).toBe('200');
    expect(lastRecord()).toMatchObject({ verified: true });
    expect(await curl('/scans')).toBe('200');
    expect(lastRecord()).toMatchObject({ verified: true });
  });
});
