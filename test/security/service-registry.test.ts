/**
 * Threat model, "Faults in the service" row "a registry that hangs or returns garbage"
 * (docs/security.md §8): the upload-triggered scan with the registry cross-check on
 * (TFGUARD_SCAN_REGISTRY=true), against a real registry on 127.0.0.1 that answers garbage or never
 * answers. Either way the scan completes with a report, and the report is a clearly marked partial
 * result: a `lock-registry-unavailable` notice on the lock entry says which check was skipped and
 * why. Nothing is retried (the next scan asks again).
 *
 * `POST /scans` gives a scan 21.75 s (29 s timeout, 7.25 s margin), less than the
 * registry client's own ~31 s of retries; the registry check gets a budget inside the scan's
 * deadline, so a hung registry gives the same notice there too, never a 504.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createScan } from '../../handlers/api';
import { handler } from '../../handlers/upload-scan';
import type { Report } from '../../src/report/types';
import { loadScan } from '../../src/service/scans';
import { generateTestKey, startRegistry, type RegistryServer } from '../support/registry-server';
import { makeTarGz } from '../support/archive';
import { lambdaContext, sampleEvent } from '../support/lambda';
import { lockText } from '../support/lock-fixtures';
import { COMPLETE, layout, startServiceFixture, type ServiceFixture } from '../support/service-fixture';

const HOST = 'registry.example.test';
const SOURCE = `${HOST}/acme/cloud`;

let f: ServiceFixture;
let reg: RegistryServer;

beforeAll(async () => {
  reg = await startRegistry({
    signingKey: await generateTestKey('Fault Registry'),
    releases: [{ namespace: 'acme', type: 'cloud', version: '1.0.0', platforms: ['linux_amd64'] }],
  });
  // The operator maps the registry host; a scanned archive cannot (SSRF).
  f = await startServiceFixture({
    TFGUARD_SCAN_REGISTRY: 'true',
    TFGUARD_REGISTRY_HOSTS: JSON.stringify({ [HOST]: reg.url }),
  });
});
afterAll(async () => {
  await reg?.close();
  await f?.dispose();
});

async function archive(): Promise<Buffer> {
  const zh = reg.zh('acme', 'cloud', '1.0.0').linux_amd64 as string;
  return makeTarGz({
    'main.tf': `terraform {\n  required_version = ">= 1.5"\n  required_providers {\n    cloud = {\n      source  = "${SOURCE}"\n      version = "~> 1.0"\n    }\n  }\n}\n`,
    '.terraform.lock.hcl': lockText([
      { source: SOURCE, version: '1.0.0', constraints: '~> 1.0', hashes: [zh] },
    ]),
  });
}

async function scanThroughService(repository: string): Promise<Report> {
  const object = await f.upload(`uploads/${repository}/a.tar.gz`, await archive());
  const result = await handler(f.s3Event([object]));
  expect(result.outcomes.map((o) => o.status)).toEqual(['scanned']);
  expect(await f.stored(object, repository)).toEqual(COMPLETE);
  const scan = await loadScan({ reports: f.reports, layout }, f.scanIdOf(object));
  if (scan?.status !== 'complete') throw new Error(`no complete scan for ${object.key}`);
  return scan.report;
}

function registryNotices(report: Report) {
  return report.findings
    .filter((x) => x.ruleId === 'lock-registry-unavailable')
    .map((x) => ({ severity: x.severity, file: x.file, line: x.line, message: x.message }));
}

test('a registry answering garbage: a complete report marked partial by lock-registry-unavailable', async () => {
  reg.faults.splice(0, reg.faults.length, { path: /.*/, kind: 'garbage' });
  const report = await scanThroughService('faults/registry-garbage');
  expect(registryNotices(report)).toEqual([
    {
      severity: 'notice',
      file: '.terraform.lock.hcl',
      line: 4, // the provider block, after terraform's two comment lines
      message: expect.stringMatching(
        /^could not check registry\.example\.test\/acme\/cloud 1\.0\.0 against its registry: /,
      ) as string,
    },
  ]);
  // The checks that need the registry were skipped, not guessed: no unknown-hash finding.
  expect(report.findings.filter((x) => x.ruleId === 'lock-hash-unknown')).toEqual([]);
});

test('a registry that never answers: bounded by the client timeout, then the same marked partial report', async () => {
  reg.faults.splice(0, reg.faults.length, { path: /.*/, kind: 'hang' });
  const started = Date.now();
  const report = await scanThroughService('faults/registry-hang');
  // 10 s per request, 3 attempts, 250 + 500 ms backoff; the unavailable host is not asked again.
  expect(Date.now() - started).toBeLessThan(45_000);
  expect(registryNotices(report)).toEqual([
    {
      severity: 'notice',
      file: '.terraform.lock.hcl',
      line: 4, // the provider block, after terraform's two comment lines
      message: expect.stringContaining('no answer within 10000 ms (after 3 attempts)') as string,
    },
  ]);
}, 60_000);

test('POST /scans with a registry that never answers: 200 with the notice inside the 29 s timeout, never a 504', async () => {
  reg.faults.splice(0, reg.faults.length, { path: /.*/, kind: 'hang' });
  const event = sampleEvent<APIGatewayProxyEventV2>('http-post-scans.json');
  const posted: APIGatewayProxyEventV2 = {
    ...event,
    queryStringParameters: { repository: 'faults/registry-hang-api' },
    body: (await archive()).toString('base64'),
    isBase64Encoded: true,
  };
  const started = Date.now();
  // createScan's timeout in serverless.yml; the default margin leaves the scan 21.75 s.
  const result = (await createScan(
    posted,
    lambdaContext('createScan', 29_000),
  )) as APIGatewayProxyStructuredResultV2 & { statusCode: number; body: string };
  const elapsed = Date.now() - started;
  expect(JSON.parse(result.body)).toMatchObject({ status: 'complete', reportInline: true });
  expect(result.statusCode).toBe(200);
  expect(elapsed).toBeLessThan(21_750);
  const report = (JSON.parse(result.body) as { report: Report }).report;
  expect(registryNotices(report)).toEqual([
    {
      severity: 'notice',
      file: '.terraform.lock.hcl',
      line: 4,
      message: expect.stringMatching(
        /^could not check registry\.example\.test\/acme\/cloud 1\.0\.0 against its registry: .*the registry check's time budget of 1\d\.\d s ran out \(the scan's deadline left 2\d\.\d s, \d\.\d s of it kept for the rules and the report\)$/,
      ) as string,
    },
  ]);
  expect(report.findings.filter((x) => x.ruleId === 'lock-hash-unknown')).toEqual([]);
}, 60_000);
