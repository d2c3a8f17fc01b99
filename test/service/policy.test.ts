/**
 * The service's policy object (src/service/policy.ts) on a real S3-compatible server (s3rver on a
 * random 127.0.0.1 port): read once, asked again with If-None-Match before each scan, read and
 * parsed again only when it changed; a missing or broken policy fails loudly. And a scan through
 * `scanAndStore` judged against it as the upload's repository.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { InputError } from '../../src/errors';
import { closeSharedParser } from '../../src/scan';
import { ReportLayout } from '../../src/service/keys';
import { noMetrics, silentLogger } from '../../src/service/observability';
import { PolicyObject, PolicyUnavailableError } from '../../src/service/policy';
import { scanAndStore } from '../../src/service/scans';
import { LocalObjectStore } from '../../src/storage/local';
import { S3ObjectStore } from '../../src/storage/s3';
import { readCorpusArchive } from '../support/corpus';
import { describeWithCorpus } from '../support/external';
import { s3rverClient, startS3rver, type RunningS3rver } from '../support/s3rver';

let server: RunningS3rver;
let client: S3Client;

beforeAll(async () => {
  server = await startS3rver(['policies']);
  client = s3rverClient(server.endpoint);
});
afterAll(async () => {
  client?.destroy();
  await server?.stop();
  await closeSharedParser();
});

const V1 = 'provider "hashicorp/aws" {\n  versions = ">= 5.40, < 7.0"\n}\n';
const V2 = 'provider "hashicorp/aws" {\n  versions = ">= 5.50, < 7.0"\n}\n';

describe('the policy object', () => {
  test('getIfChanged: 304 for the ETag it has, the object once it changed', async () => {
    const store = new S3ObjectStore({ bucket: 'policies', client });
    await store.put('cond.hcl', V1);
    const first = await store.getIfChanged('cond.hcl', undefined);
    expect(first.status).toBe('found');
    if (first.status !== 'found') throw new Error('unreachable');
    expect(first.object.body.toString()).toBe(V1);
    expect(await store.getIfChanged('cond.hcl', first.object.etag)).toEqual({ status: 'not-modified' });
    await store.put('cond.hcl', V2);
    const changed = await store.getIfChanged('cond.hcl', first.object.etag);
    expect(changed.status).toBe('found');
    if (changed.status === 'found') expect(changed.object.body.toString()).toBe(V2);
    expect(await store.getIfChanged('nothing.hcl', undefined)).toEqual({ status: 'missing' });
  });

  test('read once, kept while unchanged, read again when it changes', async () => {
    const store = new S3ObjectStore({ bucket: 'policies', client });
    await store.put('org/policy.hcl', V1);
    const source = new PolicyObject({ store, key: 'org/policy.hcl', name: 's3://policies/org/policy.hcl' });
    const a = await source.current();
    expect(a.file).toBe('s3://policies/org/policy.hcl');
    expect(a.providers[0]?.versions?.text).toBe('>= 5.40, < 7.0');
    expect(await source.current()).toBe(a);
    expect(await source.current()).toBe(a);
    expect(source.reads).toBe(1);
    await store.put('org/policy.hcl', V2);
    const b = await source.current();
    expect(b.providers[0]?.versions?.text).toBe('>= 5.50, < 7.0');
    expect(source.reads).toBe(2);
    expect(await source.current()).toBe(b);
    expect(source.reads).toBe(2);
  });

  test('a broken policy is an input error naming the object and line, and is read again once fixed', async () => {
    const store = new S3ObjectStore({ bucket: 'policies', client });
    await store.put('broken.hcl', V1);
    const source = new PolicyObject({ store, key: 'broken.hcl', name: 's3://policies/broken.hcl' });
    await source.current();
    await store.put(
      'broken.hcl',
      `${V1}exception {\n  repository = "acme/*"\n  rule = "policy-provider-version"\n  reason = "r"\n}\n`,
    );
    const err = await source.current().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('invalid-policy');
    expect((err as InputError).message).toBe(
      'policy s3://policies/broken.hcl:4: the exception has no "expires" (required)',
    );
    // Never the last good policy instead: the broken one keeps failing until it is fixed.
    await expect(source.current()).rejects.toThrow('the exception has no "expires"');
    await store.put('broken.hcl', V2);
    expect((await source.current()).providers[0]?.versions?.text).toBe('>= 5.50, < 7.0');
  });

  test('a missing policy object fails; it is never scanned without', async () => {
    const store = new S3ObjectStore({ bucket: 'policies', client });
    const source = new PolicyObject({ store, key: 'absent.hcl', name: 's3://policies/absent.hcl' });
    await expect(source.current()).rejects.toThrow(PolicyUnavailableError);
    await expect(source.current()).rejects.toThrow(
      'the policy object s3://policies/absent.hcl does not exist',
    );
  });
});

describeWithCorpus('a service scan with the policy', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tfguard-policy-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('scanAndStore judges the upload as its repository, with exceptions by the given day', async () => {
    const store = new S3ObjectStore({ bucket: 'policies', client });
    await store.put(
      'scan.hcl',
      `${V2}exception {\n  repository = "acme/legacy"\n  rule = "policy-provider-version"\n  reason = "migration planned for Q1"\n  expires = "2027-03-31"\n}\n`,
    );
    const policy = new PolicyObject({ store, key: 'scan.hcl', name: 's3://policies/scan.hcl' });
    const ctx = {
      reports: new LocalObjectStore(dir),
      layout: new ReportLayout('reports/'),
      scanOptions: {},
      logger: silentLogger,
      metrics: noMetrics,
      policy,
      now: () => new Date('2026-06-01T00:00:00Z'),
    };
    const bytes = await readCorpusArchive('hashicorp_learn-terraform-provision-eks-cluster.tar.gz');
    const scan = (repository: string, scanId: string) =>
      scanAndStore(ctx, {
        scanId,
        name: 'eks.tar.gz',
        bytes,
        repository,
        source: { kind: 'local', name: 'eks.tar.gz' },
        registry: false,
      });
    const other = await scan('acme/eks', 'scan-1');
    if (other.status !== 'complete') throw new Error(other.status);
    const version = (r: typeof other.report) =>
      r.findings.filter((f) => f.ruleId === 'policy-provider-version');
    expect(version(other.report).map((f) => [f.severity, f.file, f.suppressed ?? null])).toEqual([
      ['error', '.terraform.lock.hcl', null],
      ['warning', 'terraform.tf', null],
    ]);
    expect(other.report.summary.error).toBeGreaterThan(0);
    const legacy = await scan('acme/legacy', 'scan-2');
    if (legacy.status !== 'complete') throw new Error(legacy.status);
    expect(version(legacy.report).map((f) => f.suppressed)).toEqual([
      {
        reason: 'migration planned for Q1 (policy exception until 2027-03-31)',
        file: 's3://policies/scan.hcl',
        line: 4,
      },
      {
        reason: 'migration planned for Q1 (policy exception until 2027-03-31)',
        file: 's3://policies/scan.hcl',
        line: 4,
      },
    ]);
    expect(policy.reads).toBe(1);
  });
});
