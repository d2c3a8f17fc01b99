/**
 * A stand-in for API Gateway's IAM (SigV4) authorizer, for the tests of the CI clients: an HTTP
 * server on 127.0.0.1 (random port) that recomputes the signature of every request it receives
 * with the AWS SDK's own signer (`@smithy/signature-v4`) and answers 403 when it differs, as API
 * Gateway does. Requests that verify are handed to a backend (the real API handlers in the tests).
 *
 * What is checked, per request (the reason of the first failure is recorded):
 * - an `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` header whose
 *   access key, region, service (`execute-api`) and date match the credentials and `x-amz-date`;
 * - `x-amz-date` present, well-formed and within 5 minutes of now;
 * - the signed headers include `host` (which must name this server) and `x-amz-date` (and `x-amz-content-sha256` when it is sent,
 *   whose value must be the SHA-256 of the body), every signed header is present;
 * - the session token (`x-amz-security-token`) is the one issued with the credentials;
 * - the signature equals the SDK's for the method, path, query (parsed from the raw query string
 *   and canonicalized by the SDK: sorted, RFC 3986-encoded), the signed headers and the body.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** SHA-256 and HMAC-SHA256 (node:crypto) in the shape the SDK signer takes. */
export class Sha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

export interface ReceivedRequest {
  method: string;
  /** The request target as sent: path and raw query string. */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** The access key whose signature verified (which of the gateway's callers sent it). */
  accessKeyId?: string;
}

export type Verification = { ok: true } | { ok: false; reason: string };

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request, ?SignedHeaders=([^,\s]+), ?Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const MAX_SKEW_MS = 5 * 60 * 1000;

function header(headers: IncomingMessage['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** The query as API Gateway reads it: `&`-separated, each `name=value` percent-decoded. */
function parseQuery(raw: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  if (raw === '') return query;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
    const seen = query[name];
    query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return query;
}

/** Verifies one request's SigV4 `Authorization` header, as API Gateway's IAM authorizer would. */
export async function verifySigV4(
  request: ReceivedRequest,
  options: { credentials: Credentials; region: string; host: string; service?: string; now?: Date },
): Promise<Verification> {
  const service = options.service ?? 'execute-api';
  const { credentials } = options;
  const fail = (reason: string): Verification => ({ ok: false, reason });
  const auth = header(request.headers, 'authorization');
  if (auth === undefined) return fail('no Authorization header');
  const m = AUTH.exec(auth);
  if (m === null) return fail(`malformed Authorization header: ${auth}`);
  const [, accessKeyId, scopeDate, region, scopeService, signedList, signature] = m as unknown as string[];
  if (accessKeyId !== credentials.accessKeyId) return fail(`unknown access key ${accessKeyId}`);
  if (region !== options.region) return fail(`credential scope region ${region}, expected ${options.region}`);
  if (scopeService !== service) return fail(`credential scope service ${scopeService}, expected ${service}`);
  const amzDate = header(request.headers, 'x-amz-date');
  const d = amzDate === undefined ? null : AMZ_DATE.exec(amzDate);
  if (amzDate === undefined || d === null) return fail(`missing or malformed x-amz-date: ${amzDate}`);
  const signingDate = new Date(`${d[1]}-${d[2]}-${d[3]}T${d[4]}:${d[5]}:${d[6]}Z`);
  if (Math.abs(signingDate.getTime() - (options.now ?? new Date()).getTime()) > MAX_SKEW_MS) {
    return fail(`x-amz-date ${amzDate} is more than 5 minutes from now`);
  }
  if (scopeDate !== amzDate.slice(0, 8)) return fail(`credential scope date ${scopeDate} ≠ x-amz-date`);
  const signed = signedList!.split(';');
  if ([...signed].sort().join(';') !== signedList || new Set(signed).size !== signed.length) {
    return fail(`SignedHeaders not sorted or repeated: ${signedList}`);
  }
  for (const required of ['host', 'x-amz-date']) {
    if (!signed.includes(required)) return fail(`${required} is not signed (SignedHeaders=${signedList})`);
  }
  const host = header(request.headers, 'host');
  if (host !== options.host) return fail(`Host ${host} is not this API (${options.host})`);
  const contentSha = header(request.headers, 'x-amz-content-sha256');
  if (contentSha !== undefined) {
    if (!signed.includes('x-amz-content-sha256')) return fail('x-amz-content-sha256 is sent but not signed');
    if (contentSha !== createHash('sha256').update(request.body).digest('hex')) {
      return fail('x-amz-content-sha256 is not the SHA-256 of the body');
    }
  }
  const token = header(request.headers, 'x-amz-security-token');
  if ((credentials.sessionToken ?? undefined) !== token) return fail('wrong or missing x-amz-security-token');
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = header(request.headers, name);
    if (value === undefined) return fail(`signed header ${name} is not in the request`);
    headers[name] = value;
  }
  const q = request.url.indexOf('?');
  const path = q < 0 ? request.url : request.url.slice(0, q);
  let query: Record<string, string | string[]>;
  try {
    query = parseQuery(q < 0 ? '' : request.url.slice(q + 1));
  } catch {
    return fail('the query string is not valid percent-encoding');
  }
  const signer = new SignatureV4({
    service,
    region: options.region,
    // The SDK adds (and signs) the token header when the credentials have one: only when the
    // client signed it too.
    credentials: {
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(signed.includes('x-amz-security-token') && credentials.sessionToken
        ? { sessionToken: credentials.sessionToken }
        : {}),
    },
    sha256: Sha256,
    applyChecksum: false,
  });
  const expected = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: (headers.host ?? '').replace(/:\d+$/, ''),
      path,
      query,
      headers,
      body: request.body.length > 0 ? request.body : undefined,
    },
    { signingDate, signableHeaders: new Set(signed) },
  );
  const recomputed = String(expected.headers.authorization);
  const ours = /Signature=([0-9a-f]{64})$/.exec(recomputed)?.[1];
  const list = /SignedHeaders=([^,]+),/.exec(recomputed)?.[1];
  if (list !== signedList) return fail(`the SDK signs ${list}, the request lists ${signedList}`);
  if (ours !== signature) {
    return fail('signature mismatch (the SDK computes another signature for this request)');
  }
  return { ok: true };
}

export interface GatewayRecord {
  method: string;
  path: string;
  /** The raw query string as sent (without `?`). */
  query: string;
  /** The status the stand-in answered. */
  status: number;
  verified: boolean;
  reason?: string;
}

export interface GatewayReply {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export type Backend = (request: ReceivedRequest) => Promise<GatewayReply>;

/** A fault the stand-in answers instead of calling the backend (after the signature verified). */
export interface Fault {
  /** `METHOD /path` (path without the query). */
  match: (method: string, path: string) => boolean;
  statusCode: number;
  body: unknown;
}

export interface Gateway {
  url: string;
  /** Every request received, in order. */
  records: GatewayRecord[];
  /** Faults to inject, each used once, in order. */
  faults: Fault[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, statusCode: number, body: unknown): void {
  res.writeHead(statusCode, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/**
 * Starts the stand-in on 127.0.0.1 (random port). Several `credentials`: several callers (each
 * request is verified against the credentials of the access key it names), as an API that several
 * IAM roles may invoke.
 */
export async function startGateway(options: {
  credentials: Credentials | readonly Credentials[];
  region: string;
  backend: Backend;
}): Promise<Gateway> {
  const all: readonly Credentials[] = Array.isArray(options.credentials)
    ? options.credentials
    : [options.credentials as Credentials];
  const records: GatewayRecord[] = [];
  const faults: Fault[] = [];
  let host = '';
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const record: GatewayRecord = {
        method: req.method ?? 'GET',
        path: q < 0 ? url : url.slice(0, q),
        query: q < 0 ? '' : url.slice(q + 1),
        status: 0,
        verified: false,
      };
      records.push(record);
      try {
        const received: ReceivedRequest = {
          method: record.method,
          url,
          headers: req.headers,
          body: await readBody(req),
        };
        const named = /Credential=([^/,\s]+)\//.exec(header(req.headers, 'authorization') ?? '')?.[1];
        const credentials = all.find((c) => c.accessKeyId === named) ?? all[0]!;
        const check = await verifySigV4(received, { region: options.region, credentials, host });
        if (!check.ok) {
          record.reason = check.reason;
          record.status = 403;
          // API Gateway's answer to a signature that does not verify.
          return send(res, 403, {
            message:
              'The request signature we calculated does not match the signature you provided. ' +
              'Check your AWS Secret Access Key and signing method.',
          });
        }
        record.verified = true;
        received.accessKeyId = credentials.accessKeyId;
        const i = faults.findIndex((f) => f.match(record.method, record.path));
        if (i >= 0) {
          const [fault] = faults.splice(i, 1);
          record.status = fault!.statusCode;
          return send(res, fault!.statusCode, fault!.body);
        }
        const reply = await options.backend(received);
        record.status = reply.statusCode;
        res.writeHead(reply.statusCode, reply.headers);
        res.end(reply.body);
      } catch (err) {
        record.status = 500;
        record.reason = `stand-in failure: ${(err as Error).stack ?? String(err)}`;
        if (!res.headersSent) send(res, 500, { message: 'Internal Server Error' });
        else res.end();
      }
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `http://${host}`,
    records,
    faults,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
