/**
 * The operator's scan settings in the service (handlers/runtime.ts, read through src/config.ts):
 * archive limits (`TFGUARD_MAX_*`), the per-scan time limit (`TFGUARD_SCAN_TIMEOUT_MS`, combined
 * with the invocation's deadline) and remote module resolution (on by default, cached in S3), end
 * to end against s3rver; unusable values name the variable.
 */
import { handler } from '../../handlers/upload-scan';
import { runtime } from '../../handlers/runtime';
import { EnvironmentError } from '../../src/config';
import { InputError } from '../../src/errors';
import { ReportLayout, uploadScanId } from '../../src/service/keys';
import type { RejectedRecord } from '../../src/service/scans';
import { UploadBatchError } from '../../src/service/upload-scan';
import { makeTarGz } from '../support/archive';
import { type Harness, lambdaContext, startHarness, UPLOADS_BUCKET, withEnv } from '../support/lambda';
import { slowToParse } from '../support/scan';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRegistry } from '../support/registry-server';
import type { Report } from '../../src/report/types';

const layout = new ReportLayout('reports/');
let h: Harness;

const MAIN_TF = 'terraform {\n  required_version = ">= 1.5"\n}\n';

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

test('the runtime reads the archive limits and the scan time limit from the environment', async () => {
  await withEnv(
    {
      TFGUARD_MAX_ENTRIES: '100',
      TFGUARD_MAX_TOTAL_BYTES: '1048576',
      TFGUARD_MAX_FILE_BYTES: '65536',
      TFGUARD_MAX_COMPRESSION_RATIO: '50',
      TFGUARD_MAX_PATH_LENGTH: '255',
      TFGUARD_MAX_PATH_DEPTH: '8',
      TFGUARD_SCAN_TIMEOUT_MS: '30000',
    },
    async () => {
      const options = runtime().scanOptions;
      expect(options.limits).toEqual({
        maxEntries: 100,
        maxTotalBytes: 1_048_576,
        maxFileBytes: 65_536,
        maxCompressionRatio: 50,
        maxPathLength: 255,
        maxPathDepth: 8,
      });
      expect(options.timeoutMs).toBe(30_000);
    },
  );
  // Unset: the library defaults, no time limit of its own (the invocation's deadline still applies).
  expect(runtime().scanOptions.limits).toEqual({});
  expect(runtime().scanOptions.timeoutMs).toBeUndefined();
});

test('the runtime reads the remote resolution budget from the environment', async () => {
  await withEnv(
    {
      TFGUARD_REMOTE_MAX_REQUESTS: '300',
      TFGUARD_REMOTE_MAX_DOWNLOADS: '40',
      TFGUARD_REMOTE_MAX_CONCURRENCY: '4',
      TFGUARD_REMOTE_MUTABLE_TTL_SECONDS: '120',
    },
    async () => {
      expect(runtime().scanOptions.remoteModuleSettings).toEqual({
        maxRequests: 300,
        maxDownloads: 40,
        maxConcurrent: 4,
        mutableTtlMs: 120_000,
      });
    },
  );
  // Unset: the defaults of src/modules/remote/budget.ts.
  expect(runtime().scanOptions.remoteModuleSettings).toEqual({});
});

test.each([
  ['TFGUARD_MAX_ENTRIES', 'lots', 'positive integer'],
  ['TFGUARD_MAX_COMPRESSION_RATIO', '0', 'positive number'],
  ['TFGUARD_SCAN_TIMEOUT_MS', '-1', 'positive integer'],
  ['TFGUARD_REMOTE_MAX_REQUESTS', 'all', 'positive integer'],
  ['TFGUARD_REMOTE_MAX_DOWNLOADS', '0', 'positive integer'],
  ['TFGUARD_REMOTE_MAX_CONCURRENCY', '2.5', 'positive integer'],
  ['TFGUARD_REMOTE_MUTABLE_TTL_SECONDS', '-60', 'positive integer'],
])('%s=%j: the handler fails naming the variable', async (name, value, what) => {
  await withEnv({ [name]: value }, async () => {
    expect(() => runtime()).toThrow(EnvironmentError);
    await expect(handler(h.s3Event([]), lambdaContext('scanUpload', 60_000))).rejects.toThrow(
      `environment variable ${name} must be a ${what}, got ${JSON.stringify(value)}`,
    );
  });
});

test('TFGUARD_MAX_ENTRIES: an upload over it is stored as rejected (too-many-entries), not retried', async () => {
  const object = await h.upload(
    'uploads/limits/entries/a.tar.gz',
    await makeTarGz({ 'a/main.tf': MAIN_TF, 'b/main.tf': MAIN_TF, 'c/main.tf': MAIN_TF }),
  );
  const result = await withEnv({ TFGUARD_MAX_ENTRIES: '2' }, () =>
    handler(h.s3Event([object]), lambdaContext('scanUpload', 60_000)),
  );
  expect(result.outcomes.map((o) => o.status)).toEqual(['rejected']);
  const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key: object.key, etag: object.etag });
  const stored = await h.reports.get(layout.rejected(scanId));
  const record = JSON.parse(stored!.body.toString('utf8')) as RejectedRecord;
  expect(record.error).toEqual({
    code: 'too-many-entries',
    message: 'more than 2 entries (at "c/main.tf")',
    entry: 'c/main.tf',
  });
  // Without the setting the same upload scans.
  const again = await h.upload(
    'uploads/limits/entries-default/a.tar.gz',
    (await h.uploads.get(object.key))!.body,
  );
  const scanned = await handler(h.s3Event([again]), lambdaContext('scanUpload', 60_000));
  expect(scanned.outcomes.map((o) => o.status)).toEqual(['scanned']);
});

test('TFGUARD_SCAN_TIMEOUT_MS stops a scan long before the invocation deadline: retried, nothing stored', async () => {
  const object = await h.upload(
    'uploads/limits/timeout/a.tar.gz',
    await makeTarGz({ 'main.tf': MAIN_TF, 'slow/main.tf': slowToParse(MAIN_TF, 3_000_000) }),
  );
  const err = await withEnv({ TFGUARD_SCAN_TIMEOUT_MS: '800' }, () =>
    handler(h.s3Event([object]), lambdaContext('scanUpload', 60_000)).then(
      () => null,
      (e: unknown) => e,
    ),
  );
  expect(err).toBeInstanceOf(UploadBatchError);
  const cause = (err as UploadBatchError).failures[0]!.error as InputError;
  expect(cause.code).toBe('scan-timeout');
  expect(cause.message).toMatch(/while parsing "slow\/main\.tf": the scan time limit is 800 ms$/);
  const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key: object.key, etag: object.etag });
  expect(await h.reports.get(layout.reports(scanId).json)).toBeNull();
  expect(await h.reports.get(layout.rejected(scanId))).toBeNull();
  expect(await h.reports.get(layout.latest('limits/timeout'))).toBeNull();
}, 30_000);

test("remote modules are resolved by default, through the operator's hosts, and cached in S3", async () => {
  const registry = await startRegistry({
    modules: [
      {
        namespace: 'acme',
        name: 'kms',
        system: 'aws',
        versions: [
          {
            version: '2.2.1',
            root: { providers: [{ name: 'random', source: 'hashicorp/random', version: '>= 3.1' }] },
          },
        ],
      },
    ],
  });
  try {
    const archive = await makeTarGz({
      'main.tf': `${MAIN_TF}module "kms" {\n  source  = "acme/kms/aws"\n  version = "~> 2.2"\n}\n`,
    });
    const env = {
      TFGUARD_REMOTE_MODULES: undefined,
      TFGUARD_REGISTRY_HOSTS: JSON.stringify({ 'registry.terraform.io': registry.url }),
    };
    const reportOf = async (key: string): Promise<Report> => {
      const object = await h.upload(key, archive);
      const result = await withEnv(env, () =>
        handler(h.s3Event([object]), lambdaContext('scanUpload', 60_000)),
      );
      expect(result.outcomes.map((o) => o.status)).toEqual(['scanned']);
      const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key: object.key, etag: object.etag });
      const stored = await h.reports.get(layout.reports(scanId).json);
      return JSON.parse(stored!.body.toString('utf8')) as Report;
    };
    const first = await reportOf('uploads/remote/kms/a.tar.gz');
    expect(first.roots[0]?.remoteModuleTree?.map((m) => [m.key, m.resolvedVersion, m.origin])).toEqual([
      ['kms', '2.2.1', 'metadata'],
    ]);
    expect(first.roots[0]?.providers.map((p) => p.source)).toEqual([
      'registry.terraform.io/hashicorp/random',
    ]);
    const cached: string[] = [];
    for await (const k of h.reports.list(`${layout.registryCachePrefix}remote-modules/v1/`)) cached.push(k);
    // The tree's resolution and the module's version list, each under the SHA-256 of what it is.
    expect(cached).toEqual([
      expect.stringMatching(/remote-modules\/v1\/tree\/[0-9a-f]{64}\.json$/),
      expect.stringMatching(/remote-modules\/v1\/versions\/[0-9a-f]{64}\.json$/),
    ]);
    // Another scan (another process could run it): the answer comes from S3.
    registry.requests.length = 0;
    const second = await reportOf('uploads/remote/kms/b.tar.gz');
    expect(registry.requests).toEqual([]);
    expect(second.roots).toEqual(first.roots);
    // Switched off: a notice says so, and nothing is asked.
    const object = await h.upload('uploads/remote/kms/c.tar.gz', archive);
    const off = await withEnv({ ...env, TFGUARD_REMOTE_MODULES: 'false' }, () =>
      handler(h.s3Event([object]), lambdaContext('scanUpload', 60_000)),
    );
    expect(off.outcomes.map((o) => o.status)).toEqual(['scanned']);
    const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key: object.key, etag: object.etag });
    const report = JSON.parse(
      (await h.reports.get(layout.reports(scanId).json))!.body.toString('utf8'),
    ) as Report;
    expect(report.findings.filter((f) => f.ruleId === 'module-unresolved').map((f) => f.message)).toEqual([
      expect.stringContaining('switched off in this deployment (TFGUARD_REMOTE_MODULES)'),
    ]);
    expect(registry.requests).toEqual([]);
  } finally {
    await registry.close();
  }
});

test("a module on a branch is cached for the uploading repository only: another repository's scan asks again", async () => {
  // A git host stand-in whose branch moves between the scans.
  let body = await makeTarGz({
    'net-main/main.tf':
      'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 6.0" }\n  }\n}\n',
  });
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/acme/net/archive/main.tar.gz') res.writeHead(200).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const archive = await makeTarGz({
      'main.tf': `${MAIN_TF}module "net" {\n  source = "git::https://github.com/acme/net.git?ref=main"\n}\n`,
    });
    const constraintsSeenBy = async (key: string): Promise<string[]> => {
      const object = await h.upload(key, archive);
      const result = await withEnv(
        { TFGUARD_REMOTE_MODULES: undefined, TFGUARD_MODULE_HOSTS: JSON.stringify({ 'github.com': url }) },
        () => handler(h.s3Event([object]), lambdaContext('scanUpload', 60_000)),
      );
      expect(result.outcomes.map((o) => o.status)).toEqual(['scanned']);
      const scanId = uploadScanId({ bucket: UPLOADS_BUCKET, key: object.key, etag: object.etag });
      const report = JSON.parse(
        (await h.reports.get(layout.reports(scanId).json))!.body.toString('utf8'),
      ) as Report;
      return (report.roots[0]?.remoteModuleTree ?? []).flatMap((m) =>
        m.providers.flatMap((p) => p.constraints),
      );
    };
    expect(await constraintsSeenBy('uploads/tenants/attacker/a.tar.gz')).toEqual(['>= 6.0']);
    body = await makeTarGz({
      'net-main/main.tf':
        'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 5.0" }\n  }\n}\n',
    });
    requests.length = 0;
    expect(await constraintsSeenBy('uploads/tenants/victim/a.tar.gz')).toEqual(['>= 5.0']);
    expect(requests).toEqual(['/acme/net/archive/main.tar.gz']);
    // The attacker's own rescan reuses its cached answer (10 minutes), without a request.
    requests.length = 0;
    expect(await constraintsSeenBy('uploads/tenants/attacker/b.tar.gz')).toEqual(['>= 6.0']);
    expect(requests).toEqual([]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
