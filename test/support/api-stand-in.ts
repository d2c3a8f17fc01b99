/**
 * The pipeline API as CI clients meet it, on 127.0.0.1: the SigV4-verifying stand-in for API
 * Gateway (test/support/sigv4-gateway.ts) in front of the real API handlers (HTTP API payload v2
 * events, with the verified caller in `requestContext.authorizer.iam` as API Gateway passes it),
 * and s3rver's upload notifications delivered to the real upload handler, as S3 → Lambda would.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createScan, createUpload, getScan } from '../../handlers/api';
import { handler as scanUpload } from '../../handlers/upload-scan';
import { startGateway, type Credentials, type Gateway, type ReceivedRequest } from './sigv4-gateway';
import { type Harness, setEnv, UPLOADS_BUCKET } from './lambda';
import { startConditionalS3 } from './conditional-s3';

export const CI_REGION = 'eu-west-1';
export const CI_CREDENTIALS: Credentials = {
  accessKeyId: 'ASIAEXAMPLEEXAMPLE',
  secretAccessKey: 'example-secret',
  sessionToken: 'example-session-token',
};
/** The environment a CI job has after assuming its role (see docs/ci/README.md). */
export const CI_AWS_ENV: Record<string, string> = {
  AWS_REGION: CI_REGION,
  AWS_ACCESS_KEY_ID: CI_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: CI_CREDENTIALS.secretAccessKey,
  AWS_SESSION_TOKEN: CI_CREDENTIALS.sessionToken!,
};

/** An IAM principal that may invoke the API: its credentials and what API Gateway's IAM authorizer
 * says about it (`requestContext.authorizer.iam`). */
export interface StandInCaller {
  credentials: Credentials;
  userArn: string;
  /** `<unique id>:<session>` for a role session. */
  userId: string;
}

/** The CI role of docs/ci/ (the stand-in's only caller unless others are given). */
export const CI_CALLER: StandInCaller = {
  credentials: CI_CREDENTIALS,
  userArn: 'arn:aws:sts::123456789012:assumed-role/tfguard-ci/tfguard-ci',
  userId: 'AROAEXAMPLE:tfguard-ci',
};

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

export interface ApiStandIn {
  gateway: Gateway;
  /** The Lambda context of the next invocations of a route (`POST /scans` …); default: 60 s left. */
  contexts: Map<string, () => Context>;
  /** Rewrites a route's response before it is sent (what a later API version may answer). */
  rewrites: Map<string, (body: Record<string, unknown>) => Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startApiStandIn(
  h: Harness,
  options: { callers?: readonly StandInCaller[] } = {},
): Promise<ApiStandIn> {
  const callers = options.callers ?? [CI_CALLER];
  // The handlers reach s3rver through a proxy that gives S3's all-or-nothing visibility of writes
  // (s3rver writes in place: a GET racing a PUT can read a truncated report, which real S3 never
  // shows) and S3's conditional writes.
  const proxy = await startConditionalS3(h.server.endpoint, h.client);
  const previousEndpoint = process.env.TFGUARD_S3_ENDPOINT;
  setEnv({ TFGUARD_S3_ENDPOINT: proxy.endpoint });
  const contexts = new Map<string, () => Context>();
  const rewrites = new Map<string, (body: Record<string, unknown>) => Record<string, unknown>>();
  const backend = async (req: ReceivedRequest) => {
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    const rawQuery = q < 0 ? '' : req.url.slice(q + 1);
    const target = route(req.method, path);
    if (target === null) {
      return {
        statusCode: 404,
        headers: { 'content-type': 'application/json' },
        body: '{"message":"Not Found"}',
      };
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]),
    );
    // The caller whose signature the gateway verified.
    const caller = callers.find((c) => c.credentials.accessKeyId === req.accessKeyId) ?? callers[0]!;
    const event = {
      version: '2.0',
      routeKey: target.key,
      rawPath: path,
      rawQueryString: rawQuery,
      headers,
      queryStringParameters:
        rawQuery === '' ? undefined : Object.fromEntries(new URLSearchParams(rawQuery.replace(/\+/g, '%2B'))),
      pathParameters: target.params,
      body: req.body.length > 0 ? req.body.toString('base64') : undefined,
      isBase64Encoded: req.body.length > 0,
      requestContext: {
        accountId: '123456789012',
        authorizer: {
          iam: {
            accessKey: caller.credentials.accessKeyId,
            accountId: '123456789012',
            callerId: caller.userId,
            principalOrgId: null,
            userArn: caller.userArn,
            userId: caller.userId,
          },
        },
        http: { method: req.method, path },
        requestId: randomUUID(),
        routeKey: target.key,
      },
    } as unknown as APIGatewayProxyEventV2;
    const context = contexts.get(target.key)?.() ?? h.context('api');
    const result = (await target.fn(event, context)) as {
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    };
    const rewrite = rewrites.get(target.key);
    if (rewrite !== undefined && result.statusCode < 300) {
      const body = JSON.stringify(rewrite(JSON.parse(result.body) as Record<string, unknown>));
      return { ...result, body };
    }
    return result;
  };
  const gateway = await startGateway({
    credentials: callers.map((c) => c.credentials),
    region: CI_REGION,
    backend,
  });

  // S3 → Lambda: deliver each upload notification s3rver emits to the upload handler.
  // Only the uploads made while this stand-in runs (a harness may outlive several stand-ins).
  let delivered = h.server.events.length;
  let busy = false;
  const pump = setInterval(() => {
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
          r.s3.bucket.name === UPLOADS_BUCKET &&
          r.s3.object.key.startsWith('uploads/'),
      )
      // s3rver reports keys unencoded; the harness encodes them as S3 notifications do.
      .map((r) => ({ key: r.s3.object.key, etag: r.s3.object.eTag ?? '', size: r.s3.object.size ?? 0 }));
    const done =
      objects.length > 0 ? scanUpload(h.s3Event(objects), h.context('scanUpload')) : Promise.resolve();
    void done.finally(() => (busy = false));
  }, 100);

  return {
    gateway,
    contexts,
    rewrites,
    async stop() {
      clearInterval(pump);
      await gateway.close();
      setEnv({ TFGUARD_S3_ENDPOINT: previousEndpoint });
      await proxy.close();
    },
  };
}
