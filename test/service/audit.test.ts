/**
 * The audit core through `runLocalAudit` (what `tfguard audit <dir>` runs) on the filesystem store:
 * the same plan / rescan / shard / summary code as the Lambda worker, new and fixed findings across
 * runs, the registry check with its SHA256SUMS cache in the store, and the failure statuses.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../src/errors';
import { runLocalAudit, type LocalArchive } from '../../src/service/local-audit';
import type { AuditLatestPointer } from '../../src/service/audit';
import { scanBytes } from '../../src/scan';
import { LocalObjectStore } from '../../src/storage/local';
import { makeTarGz } from '../support/archive';
import { generateTestKey, startRegistry, type RegistryServer } from '../support/registry-server';

let dir: string;
let reg: RegistryServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tfguard-local-audit-'));
  reg = await startRegistry({
    signingKey: await generateTestKey('Audit Registry'),
    releases: [
      { namespace: 'acme', type: 'cloud', version: '1.2.0', platforms: ['linux_amd64', 'darwin_arm64'] },
    ],
  });
});
afterAll(async () => {
  await reg?.close();
  await rm(dir, { recursive: true, force: true });
});

const tf = (constraint: string) => `terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = { source = "hashicorp/aws", version = "${constraint}" }
  }
}
`;
const awsLock = (version: string) => `provider "registry.terraform.io/hashicorp/aws" {
  version     = "${version}"
  constraints = "~> 5.0"
  hashes = [
    "h1:ltxyuBWIy9cq0kIKDJH1jeWJy/y7XJLjS4QrsQK4plA=",
  ]
}
`;

function archive(repository: string, bytes: Buffer | (() => Promise<Buffer>)): LocalArchive {
  return {
    repository,
    name: `${repository.replace(/\//g, '_')}.tar.gz`,
    read: typeof bytes === 'function' ? bytes : async () => bytes,
  };
}

test('two local audits: statuses, skew, and what is new and fixed in between', async () => {
  const store = new LocalObjectStore(join(dir, 'store'));
  const good = await makeTarGz({ 'main.tf': tf('~> 5.0'), '.terraform.lock.hcl': awsLock('5.31.0') });
  const unbounded = await makeTarGz({ 'main.tf': tf('>= 4.0') });
  const newer = await makeTarGz({ 'main.tf': tf('~> 5.0'), '.terraform.lock.hcl': awsLock('5.40.0') });
  const progress: string[] = [];
  const first = await runLocalAudit(
    [
      archive('org/good', good),
      archive('org/unbounded', unbounded),
      archive('org/newer', newer),
      archive('org/corrupt', Buffer.from('PK\u0003\u0004 broken zip')),
      archive('org/unreadable', async () => {
        throw new Error('EACCES: permission denied');
      }),
    ],
    store,
    {
      now: new Date('2025-03-01T00:00:00Z'),
      onProgress: (p) => progress.push(`${p.done}/${p.total} ${p.repository} ${p.status}`),
    },
  );
  expect(progress).toHaveLength(5);
  expect(progress.map((p) => p.split(' ')[0])).toEqual(['1/5', '2/5', '3/5', '4/5', '5/5']);
  expect(progress.find((p) => p.includes('org/unreadable'))).toMatch(/ failed$/);
  const s1 = first.summary;
  expect(s1.previousRunId).toBeNull();
  expect(s1.totals).toMatchObject({ repositories: 5, scanned: 3, rejected: 1, failed: 1, missing: 0 });
  const unboundedReport = await scanBytes('x.tar.gz', unbounded);
  expect(s1.repositories.find((r) => r.repository === 'org/unbounded')!.counts.total).toBe(
    unboundedReport.summary.total,
  );
  expect(s1.providers).toEqual([
    {
      source: 'registry.terraform.io/hashicorp/aws',
      skew: true,
      versions: [
        { version: '5.40.0', repositories: ['org/newer'] },
        { version: '5.31.0', repositories: ['org/good'] },
      ],
    },
  ]);
  // The summary is in the store, and the store is a plain directory.
  const onDisk = JSON.parse(await readFile(join(dir, 'store', first.keys.json), 'utf8'));
  expect(onDisk).toEqual(s1);
  expect(await readFile(join(dir, 'store', first.keys.markdown), 'utf8')).toContain(
    '5 repositories: 3 scanned, 1 rejected, 0 missing, 1 failed.',
  );

  // Second run: unbounded gets fixed, good regresses, newer is gone, a new repository appears.
  const second = await runLocalAudit(
    [
      archive('org/good', unbounded),
      archive('org/unbounded', good),
      archive('org/corrupt', good),
      archive('org/unreadable', good),
      archive('org/fresh', unbounded),
    ],
    store,
    { now: new Date('2025-03-02T00:00:00Z') },
  );
  const s2 = second.summary;
  expect(s2.previousRunId).toBe(first.runId);
  const entry = (name: string) => s2.repositories.find((r) => r.repository === name)!;
  const ids = (refs: { ruleId: string }[]) => refs.map((f) => f.ruleId).sort();
  const expected = ids(unboundedReport.findings);
  expect(expected.length).toBeGreaterThan(0);
  expect(entry('org/good')).toMatchObject({ compared: true, fixed: [] });
  expect(ids(entry('org/good').new)).toEqual(expected);
  expect(entry('org/unbounded')).toMatchObject({ compared: true, new: [] });
  expect(ids(entry('org/unbounded').fixed)).toEqual(expected);
  // Not scanned last time (rejected / failed) or new: nothing to compare with.
  for (const name of ['org/corrupt', 'org/unreadable', 'org/fresh'])
    expect(entry(name)).toMatchObject({ compared: false, new: [], fixed: [] });
  expect(s2.totals).toMatchObject({
    repositories: 5,
    scanned: 5,
    new: expected.length,
    fixed: expected.length,
  });
  const latest = (await store.get('reports/audits/latest.json'))!;
  expect((JSON.parse(latest.body.toString()) as AuditLatestPointer).runId).toBe(second.runId);
  expect(await readFile(join(dir, 'store', second.keys.markdown), 'utf8')).toContain('### org/good');
});

test('the registry check runs in audits and caches verified checksums in the store', async () => {
  const store = new LocalObjectStore(join(dir, 'registry-store'));
  const zh = reg.zh('acme', 'cloud', '1.2.0');
  const files = {
    'main.tf': `terraform {
  required_version = ">= 1.5"
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud", version = "~> 1.2" }
  }
}
`,
    '.terraform.lock.hcl': `provider "registry.example.test/acme/cloud" {
  version     = "1.2.0"
  constraints = "~> 1.2"
  hashes = [
    "${zh.linux_amd64}",
    "${zh.darwin_arm64}",
  ]
}
`,
    '.tfguard.hcl': `platforms = ["linux_amd64", "darwin_arm64"]\n`,
  };
  const tampered = {
    ...files,
    '.terraform.lock.hcl': files['.terraform.lock.hcl'].replace(zh.linux_amd64!, `zh:${'0'.repeat(64)}`),
  };
  const run = await runLocalAudit(
    [archive('reg/ok', await makeTarGz(files)), archive('reg/bad', await makeTarGz(tampered))],
    store,
    {
      registry: true,
      // The operator maps the private registry host (an archive may not: SSRF).
      scanOptions: { config: { registryHosts: { 'registry.example.test': reg.url } } },
      now: new Date('2025-04-01T00:00:00Z'),
    },
  );
  const ok = run.summary.repositories.find((r) => r.repository === 'reg/ok')!;
  const bad = run.summary.repositories.find((r) => r.repository === 'reg/bad')!;
  expect(ok.counts.total).toBe(0);
  expect(Object.keys(bad.rules)).toContain('lock-hash-unknown');
  const cached: string[] = [];
  for await (const key of store.list('reports/cache/registry/')) cached.push(key);
  expect(cached.length).toBeGreaterThan(0);
  expect(cached.every((k) => k.includes('registry.example.test/acme/cloud/1.2.0'))).toBe(true);
  // A later audit answers from the cache: the registry is not asked for the sums again.
  const before = reg.requests.filter((p) => p.includes('SHA256SUMS')).length;
  await runLocalAudit([archive('reg/ok', await makeTarGz(files))], store, {
    registry: true,
    now: new Date('2025-04-02T00:00:00Z'),
  });
  expect(reg.requests.filter((p) => p.includes('SHA256SUMS')).length).toBe(before);
  // Without the registry check the same archive has no registry findings either way.
  const off = await runLocalAudit([archive('reg/bad', await makeTarGz(tampered))], store, {
    now: new Date('2025-04-03T00:00:00Z'),
  });
  expect(Object.keys(off.summary.repositories[0]!.rules)).not.toContain('lock-hash-unknown');
});

test('duplicate or unusable repository names are a usage error; no archives is an empty summary', async () => {
  const store = new LocalObjectStore(join(dir, 'misc'));
  const bytes = await makeTarGz({ 'main.tf': tf('~> 5.0') });
  await expect(runLocalAudit([archive('a/b', bytes), archive('a//b/', bytes)], store)).rejects.toThrow(
    InputError,
  );
  await expect(runLocalAudit([archive('a/b', bytes), archive('a//b/', bytes)], store)).rejects.toThrow(
    'archives a_b.tar.gz and a__b_.tar.gz are both repository "a/b"',
  );
  await expect(runLocalAudit([archive('../x', bytes)], store)).rejects.toThrow(
    'unusable repository name "../x"',
  );
  const empty = await runLocalAudit([], store, { now: new Date('2025-05-01T00:00:00Z') });
  expect(empty.summary.totals.repositories).toBe(0);
  expect(empty.summary.repositories).toEqual([]);
});

test('many repositories are split into shards and merged into one summary', async () => {
  const store = new LocalObjectStore(join(dir, 'shards'));
  const bytes = await makeTarGz({ 'main.tf': tf('~> 5.0'), '.terraform.lock.hcl': awsLock('5.31.0') });
  const archives = Array.from({ length: 23 }, (_, i) => archive(`s/${String(i).padStart(2, '0')}`, bytes));
  const run = await runLocalAudit(archives, store, {
    shardSize: 4,
    concurrency: 3,
    now: new Date('2025-06-01T00:00:00Z'),
  });
  expect(run.summary.totals).toMatchObject({ repositories: 23, scanned: 23 });
  expect(run.summary.repositories.map((r) => r.repository)).toEqual(archives.map((a) => a.repository));
  const partials: string[] = [];
  for await (const key of store.list(`reports/audits/runs/${run.runId}/partials/`)) partials.push(key);
  expect(partials).toHaveLength(6);
  expect(run.summary.providers[0]!.versions[0]!.repositories).toHaveLength(23);
});
