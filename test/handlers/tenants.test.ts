/**
 * Tenant boundaries, end to end on 127.0.0.1: two CI
 * roles and an auditor role call the real API handlers through the SigV4-verifying stand-in for API
 * Gateway (each request verified against its own caller's credentials, the verified caller in
 * `requestContext.authorizer.iam`), uploads go to s3rver and its notifications to the real upload
 * handler. With the operator's access policy (`TFGUARD_ACCESS_POLICY`) each role scans, uploads and
 * reads only its own repository; the auditor reads all; an install without a policy keeps working
 * as before.
 */
import { createHash } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { handler as scanUpload } from '../../handlers/upload-scan';
import { ReportLayout, apiScanId, uploadScanId } from '../../src/service/keys';
import type { LatestPointer, RejectedRecord } from '../../src/service/scans';
import { processUploadEvent } from '../../src/service/upload-scan';
import { parseAccessPolicy } from '../../src/service/access';
import { noMetrics, silentLogger } from '../../src/service/observability';
import type { UploadRequestRecord } from '../../src/service/requests';
import { S3ObjectStore } from '../../src/storage/s3';
import type { ObjectVersion } from '../../src/storage/ports';
import { makeTarGz } from '../support/archive';
import { postForm } from '../support/presigned-post';
import { Sha256 } from '../support/sigv4-gateway';
import {
  collect,
  type Harness,
  lambdaContext,
  SAMPLE_ARCHIVE,
  setEnv,
  startHarness,
  UPLOADS_BUCKET,
  withEnv,
} from '../support/lambda';
import { CI_REGION, startApiStandIn, type ApiStandIn, type StandInCaller } from '../support/api-stand-in';

const layout = new ReportLayout('reports/');
const ACCOUNT = '123456789012';

function role(name: string, key: string): StandInCaller {
  return {
    credentials: {
      accessKeyId: `ASIA${key}`,
      secretAccessKey: `secret-of-${name}`,
      sessionToken: `token-of-${name}`,
    },
    // The session name is chosen by whoever assumes the role (here: what GitHub's action sets).
    userArn: `arn:aws:sts::${ACCOUNT}:assumed-role/${name}/GitHubActions`,
    userId: `AROA${key}:GitHubActions`,
  };
}

const NETWORK = role('ci-network', 'NETWORK');
const BILLING = role('ci-billing', 'BILLING');
const AUDITOR = role('security-audit', 'AUDITOR');

/** One role per repository, direct writers by principal id, one auditor role. */
const POLICY = JSON.stringify({
  callers: [
    {
      principal: [`arn:aws:sts::${ACCOUNT}:assumed-role/ci-network/*`, 'AWS:AROANETWORK:*'],
      repositories: 'acme/network',
    },
    {
      principal: [`arn:aws:sts::${ACCOUNT}:assumed-role/ci-billing/*`, 'AWS:AROABILLING:*'],
      repositories: ['acme/billing'],
    },
  ],
  auditors: [`arn:aws:sts::${ACCOUNT}:assumed-role/security-audit/*`],
});

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ TFGUARD_ACCESS_POLICY: POLICY });
});
afterAll(async () => {
  setEnv({ TFGUARD_ACCESS_POLICY: undefined });
  await h?.stop();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A request signed with `caller`'s credentials by the AWS SDK's own signer. */
async function as(
  api: ApiStandIn,
  caller: StandInCaller,
  method: string,
  path: string,
  options: { query?: Record<string, string>; body?: Buffer | string; contentType?: string } = {},
): Promise<Answer> {
  const url = new URL(api.gateway.url);
  const signer = new SignatureV4({
    service: 'execute-api',
    region: CI_REGION,
    credentials: caller.credentials,
    sha256: Sha256,
  });
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const signed = await signer.sign({
    method,
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path,
    query: options.query ?? {},
    headers: {
      host: url.host,
      accept: 'application/json',
      ...(options.contentType !== undefined ? { 'content-type': options.contentType } : {}),
    },
    ...(body !== undefined ? { body } : {}),
  });
  const query = new URLSearchParams(options.query ?? {}).toString();
  const response = await fetch(`${api.gateway.url}${path}${query === '' ? '' : `?${query}`}`, {
    method,
    headers: signed.headers as Record<string, string>,
    ...(body !== undefined ? { body } : {}),
  });
  const record = api.gateway.records[api.gateway.records.length - 1]!;
  // Every request here is a genuine one: the stand-in verified its signature.
  expect(record).toMatchObject({ verified: true });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
}

const scanArchive = (api: ApiStandIn, caller: StandInCaller, repository: string, archive: Buffer) =>
  as(api, caller, 'POST', '/scans', {
    query: { repository },
    body: archive,
    contentType: 'application/gzip',
  });

async function awaitScan(api: ApiStandIn, caller: StandInCaller, id: string): Promise<Answer> {
  for (let waited = 0; waited < 20_000; waited += 100) {
    const answer = await as(api, caller, 'GET', `/scans/${id}`);
    if (answer.status !== 202) return answer;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`upload ${id} was never scanned`);
}

async function latest(repository: string): Promise<LatestPointer | null> {
  const got = await h.reports.get(layout.latest(repository));
  return got === null ? null : (JSON.parse(got.body.toString('utf8')) as LatestPointer);
}

/**
 * Waits for the second after the one `repository`'s pointer was uploaded in. S3's LastModified has
 * one-second resolution, and uploads of the same second are ordered by key (`compareUploads`): an
 * upload the test needs to be the newer one must come in a later second.
 */
async function afterLatestSecond(repository: string): Promise<void> {
  const at = (await latest(repository))?.upload.lastModified;
  if (at === undefined) return;
  const next = Math.floor(Date.parse(at) / 1000) * 1000 + 1000;
  while (Date.now() < next) await new Promise((resolve) => setTimeout(resolve, next - Date.now() + 5));
}

const terraform = (note: string) =>
  makeTarGz({ 'main.tf': `# ${note}\nterraform {\n  required_version = ">= 1.5"\n}\n` });

describe('two CI roles and an auditor through the SigV4 stand-in', () => {
  let api: ApiStandIn;
  beforeAll(async () => {
    api = await startApiStandIn(h, { callers: [NETWORK, BILLING, AUDITOR] });
  });
  afterAll(async () => {
    await api?.stop();
  });

  test("POST /scans: the owner's scan as before; another role's scan of it refused before anything is stored", async () => {
    const mine = await scanArchive(api, NETWORK, 'acme/network', SAMPLE_ARCHIVE);
    expect(mine.status).toBe(200);
    const scanId = apiScanId('acme/network', createHash('sha256').update(SAMPLE_ARCHIVE).digest('hex'));
    expect(mine.body).toMatchObject({ scanId, repository: 'acme/network', uploadedBy: NETWORK.userArn });

    // The same archive for the same repository would overwrite the owner's scan (same id).
    const stored = await h.reports.get(layout.report(scanId, 'json'));
    const theirs = await scanArchive(api, BILLING, 'acme/network', SAMPLE_ARCHIVE);
    expect(theirs).toEqual({
      status: 403,
      body: {
        error: 'repository-not-allowed',
        message:
          `caller "${BILLING.userArn}" may not scan or upload archives of repository "acme/network"; ` +
          "the operator's access policy (TFGUARD_ACCESS_POLICY) names the repositories of each caller",
      },
    });
    const after = await h.reports.get(layout.report(scanId, 'json'));
    expect(after!.metadata['uploaded-by']).toBe(NETWORK.userArn);
    expect(after!.etag).toBe(stored!.etag);
    // Another archive: nothing at all is stored for it.
    const other = await terraform('billing takes over');
    expect((await scanArchive(api, BILLING, 'acme/network', other)).status).toBe(403);
    const otherId = apiScanId('acme/network', createHash('sha256').update(other).digest('hex'));
    expect(await collect(h.reports.list(`reports/scans/${otherId}/`))).toEqual([]);
    // Its own repository: as before.
    const own = await scanArchive(api, BILLING, 'acme/billing', other);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ repository: 'acme/billing', uploadedBy: BILLING.userArn });
    // A scan that names no repository would belong to nobody.
    const unnamed = await as(api, NETWORK, 'POST', '/scans', {
      body: SAMPLE_ARCHIVE,
      contentType: 'application/gzip',
    });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error).toBe('missing-repository');
  });

  test('GET /scans/{id}: another role gets exactly what an unknown id gets; the owner and the auditor the report', async () => {
    const scanId = apiScanId('acme/network', createHash('sha256').update(SAMPLE_ARCHIVE).digest('hex'));
    const owner = await as(api, NETWORK, 'GET', `/scans/${scanId}`);
    expect(owner.status).toBe(200);
    expect(owner.body).toMatchObject({ scanId, repository: 'acme/network', status: 'complete' });
    const auditor = await as(api, AUDITOR, 'GET', `/scans/${scanId}`);
    expect(auditor.status).toBe(200);
    expect(auditor.body.report).toEqual(owner.body.report);

    const other = await as(api, BILLING, 'GET', `/scans/${scanId}`);
    const unknownId = 'f'.repeat(32);
    const unknown = await as(api, BILLING, 'GET', `/scans/${unknownId}`);
    expect(unknown).toEqual({ status: 404, body: { error: 'not-found', message: `no scan ${unknownId}` } });
    expect(other).toEqual({ status: 404, body: { error: 'not-found', message: `no scan ${scanId}` } });
    expect(JSON.stringify(other.body).includes('reportUrls')).toBe(false);
  });

  test("POST /uploads: another role's request refused, nothing recorded; the owner's upload scanned and readable by owner and auditor only", async () => {
    const requestsBefore = await collect(h.reports.list('reports/requests/'));
    const refused = await as(api, BILLING, 'POST', '/uploads', {
      body: JSON.stringify({ repository: 'acme/network' }),
      contentType: 'application/json',
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('repository-not-allowed');
    expect(await collect(h.reports.list('reports/requests/'))).toEqual(requestsBefore);

    const created = await as(api, NETWORK, 'POST', '/uploads', {
      body: JSON.stringify({ repository: 'acme/network' }),
      contentType: 'application/json',
    });
    expect(created.status).toBe(201);
    const upload = created.body as {
      id: string;
      key: string;
      post: { url: string; fields: Record<string, string> };
    };
    const record = JSON.parse(
      (await h.reports.get(layout.uploadRequest(upload.id)))!.body.toString('utf8'),
    ) as UploadRequestRecord;
    expect(record).toMatchObject({
      uploadedBy: NETWORK.userArn,
      uploaderPrincipalId: `AWS:${NETWORK.userId}`,
    });
    const archive = await terraform('network release 1');
    expect((await postForm(upload.post, archive)).status).toBe(204);
    const answer = await awaitScan(api, NETWORK, upload.id);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: upload.id,
      repository: 'acme/network',
      uploadedBy: NETWORK.userArn,
    });
    expect(await latest('acme/network')).toMatchObject({
      scanId: answer.body.scanId,
      upload: { key: upload.key, uploadedBy: NETWORK.userArn },
    });
    expect((await as(api, AUDITOR, 'GET', `/scans/${upload.id}`)).status).toBe(200);
    // By upload id or by the scan id it names: another role learns nothing.
    const unknownId = '0b5a4c1e-3f9e-4b1a-9a56-2c7d9b1f0e11';
    expect(await as(api, BILLING, 'GET', `/scans/${upload.id}`)).toEqual({
      status: 404,
      body: { error: 'not-found', message: `no upload ${upload.id}` },
    });
    expect(await as(api, BILLING, 'GET', `/scans/${unknownId}`)).toEqual({
      status: 404,
      body: { error: 'not-found', message: `no upload ${unknownId}` },
    });
    expect((await as(api, BILLING, 'GET', `/scans/${answer.body.scanId as string}`)).status).toBe(404);
  });

  test("@latest takeover through another role's own upload URL: its metadata naming the victim is a mismatch under its own repository", async () => {
    const before = await latest('acme/network');
    const created = await as(api, BILLING, 'POST', '/uploads', {
      body: JSON.stringify({ repository: 'acme/billing' }),
      contentType: 'application/json',
    });
    expect(created.status).toBe(201);
    const upload = created.body as { id: string; post: { url: string; fields: Record<string, string> } };
    // S3 would refuse the changed field (the policy binds it); s3rver does not, the scan does.
    const sent = await postForm(upload.post, await terraform('takeover'), {
      'x-amz-meta-repository': 'acme/network',
    });
    expect(sent.status).toBe(204);
    const answer = await awaitScan(api, BILLING, upload.id);
    expect(answer.status).toBe(422);
    expect(answer.body.code).toBe('upload-mismatch');
    expect(await latest('acme/network')).toEqual(before);
  });
});

describe('the upload-triggered path: direct writes to the uploads bucket', () => {
  const deliver = (object: { key: string; etag: string; size: number }, principalId: string) => {
    const event = h.s3Event([object]);
    event.Records[0]!.userIdentity = { principalId };
    return scanUpload(event, lambdaContext('scanUpload', 60_000));
  };

  test("another principal's write into a repository's directory is refused: nothing scanned, @latest not moved", async () => {
    // The pointer the API tests above left may be of this very second; this upload must be newer.
    await afterLatestSecond('acme/network');
    const own = await h.upload('uploads/acme/network/direct-1.tar.gz', await terraform('network direct'));
    const first = await deliver(own, `AWS:${NETWORK.userId}`);
    expect(first.outcomes).toEqual([expect.objectContaining({ status: 'scanned', latestUpdated: true })]);
    const before = await latest('acme/network');
    expect(before).toMatchObject({ upload: { key: own.key, uploadedBy: `AWS:${NETWORK.userId}` } });

    // Later (so it would be the newest), by the billing role, into network's directory, and with
    // network's name in the metadata of an object in its own directory.
    await new Promise((r) => setTimeout(r, 1100));
    const attempts = [
      await h.upload('uploads/acme/network/takeover.tar.gz', await terraform('takeover 1')),
      await h.upload('uploads/acme/billing/takeover.tar.gz', await terraform('takeover 2'), {
        repository: 'acme/network',
      }),
    ];
    for (const object of attempts) {
      const result = await deliver(object, `AWS:${BILLING.userId}`);
      const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key: object.key, etag: object.etag });
      expect(result.outcomes).toEqual([
        {
          status: 'refused',
          bucket: UPLOADS_BUCKET,
          key: object.key,
          scanId,
          repository: 'acme/network',
          latestUpdated: false,
        },
      ]);
      const rejected = JSON.parse(
        (await h.reports.get(layout.rejected(scanId)))!.body.toString('utf8'),
      ) as RejectedRecord;
      expect(rejected.error).toEqual({
        code: 'repository-not-allowed',
        message:
          `uploader "AWS:${BILLING.userId}" may not upload archives of repository "acme/network" ` +
          '(the access policy, TFGUARD_ACCESS_POLICY)',
        entry: null,
      });
      expect(await h.reports.get(layout.report(scanId, 'json'))).toBeNull();
    }
    expect(await latest('acme/network')).toEqual(before);
    // A principal the policy does not know at all (the sample event's) is refused too.
    const unknown = await h.upload('uploads/acme/network/unknown.tar.gz', await terraform('unknown'));
    expect((await deliver(unknown, 'AWS:AROAEXAMPLE:ci')).outcomes[0]!.status).toBe('refused');
    expect(await latest('acme/network')).toEqual(before);
  });

  test('a POST /uploads request whose caller lost the repository since is refused when its upload arrives', async () => {
    const before = await latest('acme/billing');
    const id = '9d1c2b9e-1d2a-4c3b-8e4f-5a6b7c8d9e01';
    const key = `uploads/acme/billing/${id}.tar.gz`;
    const request: UploadRequestRecord = {
      schemaVersion: 1,
      id,
      status: 'pending',
      repository: 'acme/billing',
      bucket: UPLOADS_BUCKET,
      key,
      failOn: 'error',
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 900_000).toISOString(),
      // Issued to the network role under an earlier policy.
      uploadedBy: NETWORK.userArn,
      uploaderPrincipalId: `AWS:${NETWORK.userId}`,
    };
    await h.reports.put(layout.uploadRequest(id), JSON.stringify(request));
    const object = await h.upload(key, await terraform('stale grant'));
    const result = await deliver(object, 'AWS:AROACREATEUPLOAD:tfguard-createUpload');
    expect(result.outcomes).toEqual([
      expect.objectContaining({ status: 'refused', repository: 'acme/billing' }),
    ]);
    expect(await latest('acme/billing')).toEqual(before);
    const updated = JSON.parse(
      (await h.reports.get(layout.uploadRequest(id)))!.body.toString('utf8'),
    ) as UploadRequestRecord;
    expect(updated.status).toBe('rejected');
  });
});

describe('refused, oversize and mismatched uploads are decided from a HEAD: the body is never downloaded', () => {
  /** The real S3 adapter over s3rver, counting what is read. */
  function countingSource() {
    const store = new S3ObjectStore({ bucket: UPLOADS_BUCKET, client: h.client });
    const calls: string[] = [];
    return {
      calls,
      source: {
        headVersion: (key: string, version: ObjectVersion) => {
          calls.push(`HEAD ${key}`);
          return store.headVersion(key, version);
        },
        getVersion: (key: string, version: ObjectVersion, options?: { maxBytes?: number }) => {
          calls.push(`GET ${key}`);
          return store.getVersion(key, version, options);
        },
      },
    };
  }

  async function run(
    object: { key: string; etag: string; size: number },
    principalId: string,
    maxArchiveBytes = 50 * 1024 * 1024,
  ) {
    const { calls, source } = countingSource();
    const event = h.s3Event([object]);
    event.Records[0]!.userIdentity = { principalId };
    const outcomes = await processUploadEvent(
      {
        uploads: { bucket: UPLOADS_BUCKET, prefix: 'uploads/' },
        source,
        reports: h.reports,
        layout,
        scanOptions: {},
        registry: false,
        maxArchiveBytes,
        logger: silentLogger,
        metrics: noMetrics,
        accessPolicy: parseAccessPolicy(POLICY),
      },
      event,
    );
    return { outcomes, calls };
  }

  test('a 2 MB mismatched upload, a refused one and an oversize one: one HEAD each, no GET', async () => {
    // A POST /uploads request of the network role, and a PUT carrying another repository's name.
    const id = '7a1c2b9e-1d2a-4c3b-8e4f-5a6b7c8d9e02';
    const key = `uploads/acme/network/${id}.tar.gz`;
    const request: UploadRequestRecord = {
      schemaVersion: 1,
      id,
      status: 'pending',
      repository: 'acme/network',
      bucket: UPLOADS_BUCKET,
      key,
      failOn: 'error',
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 900_000).toISOString(),
      uploadedBy: NETWORK.userArn,
      uploaderPrincipalId: `AWS:${NETWORK.userId}`,
    };
    await h.reports.put(layout.uploadRequest(id), JSON.stringify(request));
    const big = Buffer.concat([await terraform('big'), Buffer.alloc(2 * 1024 * 1024, 7)]);
    const mismatched = await h.upload(key, big, { repository: 'victim/prod' });
    const m = await run(mismatched, 'AWS:AROACREATEUPLOAD:tfguard-createUpload');
    expect(m.outcomes).toEqual([expect.objectContaining({ status: 'rejected', repository: 'acme/network' })]);
    expect(m.calls).toEqual([`HEAD ${key}`]);
    const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key, etag: mismatched.etag });
    const rejected = JSON.parse(
      (await h.reports.get(layout.rejected(scanId)))!.body.toString(),
    ) as RejectedRecord;
    expect(rejected.error.code).toBe('upload-mismatch');
    expect(rejected.source).toMatchObject({ size: big.length, uploadedBy: NETWORK.userArn });

    const refused = await h.upload('uploads/acme/network/refused-big.tar.gz', big);
    const r = await run(refused, `AWS:${BILLING.userId}`);
    expect(r.outcomes.map((o) => o.status)).toEqual(['refused']);
    expect(r.calls).toEqual([`HEAD ${refused.key}`]);

    const oversize = await h.upload('uploads/acme/network/oversize.tar.gz', big);
    const o = await run(oversize, `AWS:${NETWORK.userId}`, 1024 * 1024);
    expect(o.outcomes.map((x) => x.status)).toEqual(['rejected']);
    expect(o.calls).toEqual([`HEAD ${oversize.key}`]);

    // What is allowed and within bounds is read once, after its HEAD.
    const fine = await h.upload('uploads/acme/network/fine.tar.gz', await terraform('fine'));
    const f = await run(fine, `AWS:${NETWORK.userId}`);
    expect(f.outcomes.map((x) => x.status)).toEqual(['scanned']);
    expect(f.calls).toEqual([`HEAD ${fine.key}`, `GET ${fine.key}`]);
  });
});

describe('a single-tenant install (no policy)', () => {
  test('every caller may scan any repository and read any scan, as before', async () => {
    await withEnv({ TFGUARD_ACCESS_POLICY: undefined }, async () => {
      const api = await startApiStandIn(h, { callers: [NETWORK, BILLING] });
      try {
        const archive = await terraform('single tenant');
        const posted = await scanArchive(api, BILLING, 'acme/network', archive);
        expect(posted.status).toBe(200);
        expect(posted.body).toMatchObject({ repository: 'acme/network', uploadedBy: BILLING.userArn });
        const read = await as(api, NETWORK, 'GET', `/scans/${posted.body.scanId as string}`);
        expect(read.status).toBe(200);
        const unnamed = await as(api, NETWORK, 'POST', '/scans', {
          body: archive,
          contentType: 'application/gzip',
        });
        expect(unnamed.status).toBe(200);
        expect(unnamed.body.repository).toBeNull();
      } finally {
        await api.stop();
      }
      const object = await h.upload('uploads/acme/network/single.tar.gz', await terraform('single'));
      const event = h.s3Event([object]);
      const result = await scanUpload(event, lambdaContext('scanUpload', 60_000));
      expect(result.outcomes).toEqual([expect.objectContaining({ status: 'scanned', latestUpdated: true })]);
    });
  });
});
