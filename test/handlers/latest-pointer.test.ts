/**
 * The per-repository `latest` pointer never goes backwards. Many uploads of one
 * repository (real archives uploaded to s3rver one after the other, within a second or two), their
 * own s3rver notification events delivered to the real handler concurrently and in random order:
 * the pointer must end on the upload made last. The service's S3 client goes through
 * test/support/conditional-s3.ts, which adds S3's conditional writes to s3rver (it ignores them).
 *
 * And the lost update itself, made deterministic: two updates that both read the pointer before
 * either writes, the newer one writing first. A plain read-compare-write ends on the older one.
 */
import type { S3Event } from 'aws-lambda';
import { handler } from '../../handlers/upload-scan';
import { ReportLayout } from '../../src/service/keys';
import { readLatest, updateLatest, type LatestPointer } from '../../src/service/scans';
import type { ConditionalObjectStore, WriteCondition } from '../../src/storage/ports';
import { createS3Client, S3ObjectStore } from '../../src/storage/s3';
import type { PutOptions, StoredObject } from '../../src/storage/types';
import { makeTarGz } from '../support/archive';
import { startConditionalS3, type ConditionalS3 } from '../support/conditional-s3';
import { S3RVER_CREDENTIALS, S3RVER_REGION } from '../support/s3rver';
import { type Harness, REPORTS_BUCKET, setEnv, startHarness } from '../support/lambda';

const layout = new ReportLayout('reports/');
let h: Harness;
let proxy: ConditionalS3;
let reports: S3ObjectStore;

beforeAll(async () => {
  h = await startHarness();
  proxy = await startConditionalS3(h.server.endpoint, h.client);
  // The handlers reach S3 through the proxy.
  setEnv({ TFGUARD_S3_ENDPOINT: proxy.endpoint });
  reports = new S3ObjectStore({
    bucket: REPORTS_BUCKET,
    client: createS3Client({
      endpoint: proxy.endpoint,
      region: S3RVER_REGION,
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
    }),
  });
});
afterAll(async () => {
  reports?.client.destroy();
  await proxy?.close();
  await h?.stop();
});

function shuffle<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const archive = (build: number) =>
  makeTarGz({
    'main.tf': `terraform {\n  required_version = ">= 1.5"\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.${build}" }\n  }\n}\n`,
  });

/** Uploads `count` builds of `repository` one after the other; s3rver's event for each. */
async function uploadBuilds(repository: string, count: number): Promise<{ key: string; event: S3Event }[]> {
  const out: { key: string; event: S3Event }[] = [];
  for (let build = 1; build <= count; build++) {
    const key = `uploads/${repository}/build-${build}.tar.gz`;
    const before = h.server.events.length;
    await h.upload(key, await archive(build));
    for (let waited = 0; h.server.events.length === before && waited < 5000; waited += 10) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const event = h.server.events[h.server.events.length - 1] as unknown as S3Event;
    expect(event.Records[0]!.s3.object.key).toBe(key);
    out.push({ key, event });
  }
  return out;
}

test('eight uploads of one repository, processed concurrently in random order: the pointer ends on the newest, every trial', async () => {
  const TRIALS = 5;
  const BUILDS = 8;
  const wrong: string[] = [];
  for (let trial = 1; trial <= TRIALS; trial++) {
    const repository = `race/trial-${trial}`;
    const builds = await uploadBuilds(repository, BUILDS);
    const results = await Promise.all(
      shuffle(builds).map(({ event }) => handler(event, h.context('scanUpload'))),
    );
    expect(results.flatMap((r) => r.outcomes.map((o) => o.status))).toEqual(Array(BUILDS).fill('scanned'));
    const latest = await readLatest({ reports, layout }, repository);
    if (latest?.upload.key !== builds[BUILDS - 1]!.key) wrong.push(`${repository}: ${latest?.upload.key}`);
  }
  expect(wrong).toEqual([]);
  // The races were real: conditional writes lost and were decided again.
  expect(proxy.counts.preconditionFailed + proxy.counts.conflict).toBeGreaterThan(0);
}, 120_000);

/** Holds the reads of one key until `readers` of them happened, and the writes of a losing body
 * until the winner's write is done. */
class Interleaving implements ConditionalObjectStore {
  private reads = 0;
  private release!: () => void;
  private readonly allRead = new Promise<void>((r) => (this.release = r));
  private winnerWritten!: () => void;
  private readonly afterWinner = new Promise<void>((r) => (this.winnerWritten = r));

  constructor(
    private readonly inner: ConditionalObjectStore,
    private readonly key: string,
    private readonly readers: number,
    private readonly winnerScanId: string,
  ) {}

  async get(key: string): Promise<StoredObject | null> {
    const got = await this.inner.get(key);
    if (key === this.key && ++this.reads <= this.readers) {
      if (this.reads === this.readers) this.release();
      await this.allRead;
    }
    return got;
  }

  private async ordered<T>(key: string, body: Buffer | string, write: () => Promise<T>): Promise<T> {
    if (key !== this.key) return write();
    if (body.toString().includes(this.winnerScanId)) {
      const result = await write();
      this.winnerWritten();
      return result;
    }
    await this.afterWinner;
    return write();
  }

  put(key: string, body: Buffer | string, options?: PutOptions): Promise<void> {
    return this.ordered(key, body, () => this.inner.put(key, body, options));
  }

  putIf(key: string, body: Buffer | string, condition: WriteCondition, options?: PutOptions) {
    return this.ordered(key, body, () => this.inner.putIf(key, body, condition, options));
  }

  list(prefix: string): AsyncIterable<string> {
    return this.inner.list(prefix);
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }
}

function pointer(repository: string, build: number, lastModified: string): LatestPointer {
  return {
    schemaVersion: 1,
    repository,
    scanId: `${String(build).padStart(2, '0')}${'0'.repeat(30)}`,
    status: 'complete',
    upload: {
      kind: 'upload',
      bucket: 'tfguard-uploads-local',
      key: `uploads/${repository}/build-${build}.tar.gz`,
      lastModified,
      eventTime: lastModified,
    },
    reports: null,
    rejected: null,
    summary: null,
  };
}

test.each([
  ['no pointer yet (both see none)', false],
  ['an older pointer (both see it)', true],
])(
  'the lost update: two updates read %s, the newer writes first, the older cannot overwrite it',
  async (_label, existing) => {
    const repository = `lost/update-${existing ? 'existing' : 'none'}`;
    if (existing) {
      expect(
        await updateLatest({ reports, layout }, pointer(repository, 1, '2025-01-01T00:00:01.000Z')),
      ).toBe(true);
    }
    const older = pointer(repository, 2, '2025-01-01T00:00:02.000Z');
    const newer = pointer(repository, 3, '2025-01-01T00:00:03.000Z');
    const store = new Interleaving(reports, layout.latest(repository), 2, newer.scanId);
    const ctx = { reports: store, layout };
    const [olderWritten, newerWritten] = await Promise.all([
      updateLatest(ctx, older),
      updateLatest(ctx, newer),
    ]);
    expect((await readLatest({ reports, layout }, repository))!.scanId).toBe(newer.scanId);
    expect([olderWritten, newerWritten]).toEqual([false, true]);
  },
);
