/**
 * The soak script's core (scripts/soak/round.ts) at a tiny size, against a real s3rver behind the
 * conditional-write proxy with the real handlers: 12 archives (one of each hostile kind), 4 at a
 * time, duplicate deliveries and redeliveries. Every invariant must hold.
 *
 * Then the checker itself (scripts/soak/invariants.ts) on that run's observation, broken one way
 * at a time as a faulty service would break it: each must be reported, so the soak cannot pass by
 * checking nothing.
 *
 * The same with mixed callers under an access policy (the soak's default; the round above is the
 * single-tenant `--no-tenants` one): three principals, deliveries by callers not allowed on the
 * repository refused and recorded, takeovers of allowed scans refused, in a plain round and in the
 * round where s3rver is killed; and the checker on that run broken as a tenant boundary would break.
 */
import { HOSTILE_KINDS } from '../../scripts/soak/archives';
import {
  checkInvariants,
  newestUploads,
  type Invariant,
  type SoakArchive,
  type SoakObservation,
} from '../../scripts/soak/invariants';
import { percentile, runRound, SOAK_CALLERS, type RoundResult } from '../../scripts/soak/round';
import { ReportLayout } from '../../src/service/keys';
import type { LatestPointer, RejectedRecord } from '../../src/service/scans';

const layout = new ReportLayout('reports/');
let result: RoundResult;
let run: SoakObservation;

beforeAll(async () => {
  result = await runRound(
    {
      label: 'test',
      archives: 12,
      concurrency: 4,
      repositories: 3,
      hostileShare: 5 / 12,
      apiShare: 0.15,
      duplicateShare: 0.25,
      redeliver: 6,
      corpus: [],
      seed: 20251121,
      maxArchiveBytes: 256 * 1024,
      retryDelaysMs: [200, 400],
    },
    (observation) => (run = observation),
  );
}, 60_000);

/** A copy of the run that the mutations below may change freely. */
function copy(): SoakObservation {
  return {
    ...run,
    archives: run.archives.map((a) => ({ ...a })),
    stored: new Map(run.stored),
    deliveries: run.deliveries.map((d) => ({ ...d })),
    redeliveries: run.redeliveries.map((r) => ({ ...r, before: { ...r.before }, after: { ...r.after } })),
  };
}

function violated(observation: SoakObservation): Invariant[] {
  return [...new Set(checkInvariants(observation).map((v) => v.invariant))].sort();
}

const scanned = (o: SoakObservation): SoakArchive =>
  o.archives.find((a) => a.expect.status === 'complete' && a.via === 'upload')!;

test('a tiny soak round against s3rver: every invariant holds', () => {
  expect(result.violations).toEqual([]);
  expect(result).toMatchObject({ archives: 12, hostile: 5, api: 1, deliveries: 15, redelivered: 6 });
  expect(result.deadLetters).toBe(0);
  // One rejection of each hostile kind, with the code that kind calls for (checked by the checker).
  const rejected = run.archives.filter((a) => a.expect.status === 'rejected');
  expect(rejected.map((a) => a.label).sort()).toEqual(HOSTILE_KINDS.map((k) => `hostile ${k}`).sort());
  const codes = rejected.map(
    (a) => (JSON.parse(run.stored.get(layout.rejected(a.scanId))!.toString()) as RejectedRecord).error.code,
  );
  expect(codes.sort()).toEqual(
    expect.arrayContaining(['compression-ratio', 'link-outside', 'path-traversal', 'total-too-large']),
  );
  // Three repositories with uploads, each with a pointer; the deliveries ran 4 at a time.
  expect(newestUploads(run.archives).size).toBe(3);
  expect(result.latencyMs.p50).toBeGreaterThan(0);
  expect(result.peakRssMiB).toBeGreaterThan(0);
  // The observation is checked as it is (the mutations below start from a clean run).
  expect(checkInvariants(copy())).toEqual([]);
}, 60_000);

test('s3rver killed mid-round and started again: after retries every archive still has exactly one outcome', async () => {
  const faulted = await runRound({
    label: 'fault',
    archives: 10,
    concurrency: 4,
    repositories: 2,
    hostileShare: 0.2,
    apiShare: 0.1,
    duplicateShare: 0.2,
    redeliver: 4,
    corpus: [],
    seed: 7,
    maxArchiveBytes: 256 * 1024,
    fault: { afterShare: 0.3, downMs: 1000 },
    tenants: { foreignShare: 0.3 },
    // Longer than the outage and a restart of s3rver on a loaded machine.
    retryDelaysMs: [2000, 4000],
  });
  expect(faulted.fault).toMatchObject({ killedAfter: 3, downMs: 1000 });
  // With mixed callers: some deliveries were refused, and every refusal was recorded.
  expect(faulted.tenants!.foreignArchives).toBeGreaterThan(0);
  expect(faulted.tenants!.refusedDeliveries).toBeGreaterThanOrEqual(faulted.tenants!.foreignArchives);
  // The outage was felt: requests were refused, invocations failed and were retried ...
  expect(faulted.fault!.refused).toBeGreaterThan(0);
  expect(faulted.failedInvocations).toBeGreaterThan(0);
  // ... and none was given up on, and every invariant holds.
  expect(faulted.deadLetters).toBe(0);
  expect(faulted.violations).toEqual([]);
}, 60_000);

describe('the invariant checker reports a broken run', () => {
  test('two outcomes for one archive: a rejection stored beside its report', () => {
    const o = copy();
    const a = scanned(o);
    o.stored.set(layout.rejected(a.scanId), Buffer.from('{}'));
    const violations = checkInvariants(o);
    expect(violations).toContainEqual(expect.objectContaining({ invariant: 'one-outcome', archive: a.id }));
  });

  test('a partial report set (no report.json: the scan never completed)', () => {
    const o = copy();
    const a = scanned(o);
    o.stored.delete(layout.report(a.scanId, 'json'));
    expect(violated(o)).toEqual(expect.arrayContaining(['one-outcome']));
  });

  test('a stale pointer: a repository ends on an older upload', () => {
    const o = copy();
    const [repository, newest] = [...newestUploads(o.archives)][0]!;
    const older = o.archives.find(
      (a) => a.repository === repository && a.via === 'upload' && a.sequence < newest.sequence,
    )!;
    const key = layout.latest(repository);
    const pointer = JSON.parse(o.stored.get(key)!.toString()) as LatestPointer;
    o.stored.set(
      key,
      Buffer.from(
        JSON.stringify({ ...pointer, scanId: older.scanId, upload: { ...pointer.upload, key: older.key } }),
      ),
    );
    expect(violated(o)).toEqual(['latest']);
  });

  test('a missing pointer', () => {
    const o = copy();
    const [repository] = [...newestUploads(o.archives).keys()];
    o.stored.delete(layout.latest(repository!));
    expect(violated(o)).toEqual(['latest']);
  });

  test('a hostile archive scanned as if usable, and a rejection with the wrong code', () => {
    const o = copy();
    const hostile = o.archives.filter((a) => a.expect.status === 'rejected');
    const [first, second] = [hostile[0]!, hostile[1]!];
    // The first: a report instead of its rejection.
    o.stored.delete(layout.rejected(first.scanId));
    for (const k of Object.values(layout.reports(first.scanId))) o.stored.set(k, Buffer.from('{}'));
    // The second: rejected, but for another reason.
    const key = layout.rejected(second.scanId);
    const record = JSON.parse(o.stored.get(key)!.toString()) as RejectedRecord;
    o.stored.set(
      key,
      Buffer.from(JSON.stringify({ ...record, error: { ...record.error, code: 'empty-archive' } })),
    );
    const violations = checkInvariants(o).filter((v) => v.invariant === 'expected-outcome');
    expect(violations.map((v) => v.archive).sort()).toEqual([first.id, second.id].sort());
  });

  test('an outcome that belongs to no archive', () => {
    const o = copy();
    o.stored.set(layout.rejected('0'.repeat(32)), Buffer.from('{}'));
    o.stored.set('reports/requests/x.json', Buffer.from('{}'));
    expect(violated(o)).toEqual(['no-strays']);
  });

  test('a delivery that went to the dead-letter queue, and one that answered another scan', () => {
    const o = copy();
    o.deliveries[0] = { ...o.deliveries[0]!, final: 'dead-letter', error: 'S3 unavailable' };
    o.deliveries[1] = { ...o.deliveries[1]!, scanId: 'f'.repeat(32) };
    expect(checkInvariants(o).filter((v) => v.invariant === 'delivered')).toHaveLength(2);
  });

  test('a redelivery that rewrote an outcome with other bytes', () => {
    const o = copy();
    const r = o.redeliveries[0]!;
    const [key] = Object.keys(r.after);
    r.after[key!] = '0'.repeat(64);
    expect(violated(o)).toEqual(['idempotent']);
  });
});

describe('mixed callers under an access policy', () => {
  let mixed: RoundResult;
  let tenantRun: SoakObservation;
  beforeAll(async () => {
    mixed = await runRound(
      {
        label: 'tenants',
        archives: 16,
        concurrency: 4,
        repositories: 4,
        hostileShare: 2 / 16,
        apiShare: 0.3,
        duplicateShare: 0.25,
        redeliver: 8,
        corpus: [],
        seed: 20251126,
        maxArchiveBytes: 256 * 1024,
        retryDelaysMs: [200, 400],
        tenants: { foreignShare: 0.3 },
      },
      (observation) => (tenantRun = observation),
    );
  }, 60_000);

  const tenantCopy = (): SoakObservation => ({
    ...tenantRun,
    archives: tenantRun.archives.map((a) => ({ ...a })),
    stored: new Map(tenantRun.stored),
    uploadedBy: new Map(tenantRun.uploadedBy),
    deliveries: tenantRun.deliveries.map((d) => ({ ...d })),
  });
  const refusedUpload = (o: SoakObservation) =>
    o.archives.find((a) => a.expect.status === 'refused' && a.via === 'upload')!;

  test('refusals recorded, allowed deliveries stored as before by their callers, every invariant holds', () => {
    expect(mixed.violations).toEqual([]);
    const t = mixed.tenants!;
    expect(t.callers).toBe(SOAK_CALLERS.length);
    expect(t.foreignArchives).toBeGreaterThan(0);
    expect(t.takeovers).toBeGreaterThan(0);
    // Each refused archive's deliveries and each takeover were answered `refused`.
    expect(t.refusedDeliveries).toBeGreaterThanOrEqual(t.foreignArchives + t.takeovers);
    // Every refused upload left one rejected.json with the tenant code, naming the refused caller.
    const refused = tenantRun.archives.filter((a) => a.expect.status === 'refused' && a.via === 'upload');
    expect(refused.length).toBeGreaterThan(0);
    expect(t.stored.refusals).toBe(refused.length);
    for (const a of refused) {
      const record = JSON.parse(
        tenantRun.stored.get(layout.rejected(a.scanId))!.toString(),
      ) as RejectedRecord;
      expect(record.error.code).toBe('repository-not-allowed');
      expect(record.source).toMatchObject({ kind: 'upload', key: a.key, uploadedBy: a.caller });
    }
    // Every allowed archive has its outcome, recorded as its own caller's.
    const allowed = tenantRun.archives.filter((a) => a.expect.status !== 'refused');
    expect(t.stored.reports + t.stored.rejections).toBe(allowed.length);
    for (const a of allowed) expect(a.caller).toMatch(/^(arn:aws:sts::|AWS:AROA)/);
    expect(checkInvariants(tenantCopy())).toEqual([]);
  });

  test('a refused upload scanned, and a pointer moved by a refused upload', () => {
    const o = tenantCopy();
    const a = refusedUpload(o);
    o.stored.delete(layout.rejected(a.scanId));
    for (const k of Object.values(layout.reports(a.scanId))) {
      o.stored.set(k, Buffer.from('{}'));
      o.uploadedBy!.set(k, a.caller ?? null);
    }
    o.deliveries = o.deliveries.map((d) => (d.archiveId === a.id ? { ...d, status: 'scanned' } : d));
    const pointer = {
      schemaVersion: 1,
      repository: a.repository,
      scanId: a.scanId,
      status: 'complete',
      upload: { kind: 'upload', key: a.key, uploadedBy: a.caller },
      reports: layout.reports(a.scanId),
      rejected: null,
      summary: null,
    };
    o.stored.set(layout.latest(a.repository), Buffer.from(JSON.stringify(pointer)));
    const violations = checkInvariants(o).filter((v) => v.invariant === 'refused');
    // Stored as a report, answered `scanned`, and the repository's pointer names it.
    expect(violations.length).toBeGreaterThanOrEqual(3);
    expect(violations.some((v) => /pointer/.test(v.detail))).toBe(true);
  });

  test('a refusal with another code, and a refused POST /scans that stored a report', () => {
    const o = tenantCopy();
    const a = refusedUpload(o);
    const key = layout.rejected(a.scanId);
    const record = JSON.parse(o.stored.get(key)!.toString()) as RejectedRecord;
    o.stored.set(
      key,
      Buffer.from(JSON.stringify({ ...record, error: { ...record.error, code: 'empty-archive' } })),
    );
    const api = o.archives.find((b) => b.expect.status === 'refused' && b.via === 'api');
    if (api !== undefined) o.stored.set(layout.report(api.scanId, 'json'), Buffer.from('{}'));
    const refusedIds = checkInvariants(o)
      .filter((v) => v.invariant === 'refused')
      .map((v) => v.archive);
    expect(refusedIds).toEqual(expect.arrayContaining([a.id, ...(api !== undefined ? [api.id] : [])]));
  });

  test("an allowed scan taken over: its report stored as another caller's", () => {
    const o = tenantCopy();
    const owned = o.archives.find((b) => b.via === 'api' && b.expect.status === 'complete')!;
    const intruder = SOAK_CALLERS.find((c) => c.api && c.arn !== owned.caller)!;
    o.uploadedBy!.set(layout.report(owned.scanId, 'json'), intruder.arn);
    expect(checkInvariants(o)).toEqual([expect.objectContaining({ invariant: 'caller', archive: owned.id })]);
  });

  test('an allowed delivery refused by the service', () => {
    const o = tenantCopy();
    const owned = o.archives.find((b) => b.via === 'upload' && b.expect.status === 'complete')!;
    const i = o.deliveries.findIndex((d) => d.archiveId === owned.id && d.foreign !== true);
    o.deliveries[i] = { ...o.deliveries[i]!, status: 'refused' };
    expect(violated(o)).toEqual(['delivered']);
  });
});

test('percentiles by the nearest rank', () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  expect([50, 95, 99, 100].map((p) => percentile(values, p))).toEqual([50, 95, 99, 100]);
  expect(percentile([7], 99)).toBe(7);
  expect(percentile([], 50)).toBe(0);
});
