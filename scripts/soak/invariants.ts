/**
 * The invariants a soak round must end with (scripts/soak.ts), checked on what is really stored in
 * the reports bucket after the round, not on what the handlers said they did. Pure: it takes the
 * stored objects and the run's records and returns the violations, so a unit test can feed it a run
 * that breaks each invariant (test/handlers/soak.test.ts).
 *
 * - `one-outcome`: every archive has exactly one outcome under its scan id: the three renderings
 *   (`report.json`, `report.md`, `report.sarif`) of a complete scan, or one `rejected.json`;
 *   never both, never a partial set, never nothing.
 * - `expected-outcome`: a usable archive is scanned, a hostile one rejected with the code its kind
 *   calls for; the stored documents parse and name the right scan, repository and upload.
 * - `no-strays`: nothing is stored that belongs to no archive (a scan id the round did not make, a
 *   pointer of an unknown repository, any key outside `scans/`, `repos/`, `cache/`).
 * - `delivered`: every delivery ended in a successful invocation within its retries (none went to
 *   the dead-letter queue), and what the handler answered matches what is stored.
 * - `latest`: each repository's `@latest.json` names its newest upload (the one uploaded last),
 *   with that scan's stored outcome; a repository with no upload has no pointer.
 * - `idempotent`: an event delivered again after its outcome was stored leaves every stored byte
 *   of that outcome, and the repository's pointer, unchanged.
 *
 * With mixed callers under an access policy (docs/service.md "Tenants"; the round's default):
 *
 * - `refused`: a delivery by a caller the policy does not allow on the archive's repository is
 *   answered `refused` (upload) or `403 repository-not-allowed` (`POST /scans`); a refused upload
 *   is recorded as one `rejected.json` with code `repository-not-allowed` naming the repository, the
 *   upload and the refused caller, and is never scanned; a refused `POST /scans` stores nothing;
 *   no `@latest.json` names a refused upload (`latest` above counts allowed uploads only, so a
 *   repository whose uploads were all refused has no pointer), and a refused attempt on an
 *   allowed archive's scan id (a takeover) leaves the owner's outcome as it was.
 * - `caller`: every stored object of an outcome records (`uploaded-by` metadata, and a rejection's
 *   `source.uploadedBy`) the caller that delivered its archive: never another caller, so no
 *   report of a repository is stored under a caller that may not write it.
 */
import { createHash } from 'node:crypto';
import type { LatestPointer, RejectedRecord } from '../../src/service/scans';
import { ReportLayout } from '../../src/service/keys';

export type Expectation =
  | { status: 'complete' }
  | { status: 'rejected'; codes: readonly string[] }
  /** Delivered by a caller the access policy does not allow on the repository. */
  | { status: 'refused' };

/** The code a refused upload's `rejected.json` records (and `POST /scans` answers with 403). */
export const REFUSED_CODE = 'repository-not-allowed';

export interface SoakArchive {
  /** Unique within the round (e.g. `r03-b07`). */
  id: string;
  /** Through an S3 upload event (`upload-scan` handler) or `POST /scans` (`createScan`). */
  via: 'upload' | 'api';
  repository: string;
  /** The uploaded object's key (uploads only). */
  key: string | null;
  /** Upload order within the round (uploads only): the larger, the newer. */
  sequence: number;
  /** The scan id the service must store the outcome under (derived as docs/service.md says). */
  scanId: string;
  expect: Expectation;
  /** What it is, for messages (`tree tar.gz`, `hostile bomb`, `corpus cloudposse` ...). */
  label: string;
  /** With mixed callers: who delivers it, as the service records the uploader (the API caller's
   * ARN, the S3 event's principal id). Undefined in a single-tenant round (not checked). */
  caller?: string | undefined;
}

export interface DeliveryRecord {
  archiveId: string;
  /** Invocations made (1 = no retry). */
  attempts: number;
  /** `ok`: an invocation succeeded; `dead-letter`: every attempt failed. */
  final: 'ok' | 'dead-letter';
  /** What the successful invocation answered: `scanned`/`rejected` (or another upload status). */
  status?: string;
  scanId?: string;
  /** The last failure's message. */
  error?: string;
  /** Delivered by a caller the access policy does not allow on the archive's repository (a
   * refused archive's own deliveries, or a takeover attempt on an allowed archive). */
  foreign?: boolean | undefined;
}

export interface Redelivery {
  archiveId: string;
  /** SHA-256 of every stored object of its outcome and of its repository's pointer, before ... */
  before: Record<string, string>;
  /** ... and after the event was delivered once more. */
  after: Record<string, string>;
}

export interface SoakObservation {
  /** The reports prefix (`reports/`). */
  prefix: string;
  archives: SoakArchive[];
  /** Every object in the reports bucket after the round: key → body. */
  stored: Map<string, Buffer>;
  deliveries: DeliveryRecord[];
  redeliveries: Redelivery[];
  /** The `uploaded-by` metadata of every stored object (absent: not recorded); checked for the
   * archives that name their `caller`. */
  uploadedBy?: Map<string, string | null> | undefined;
}

export type Invariant =
  | 'one-outcome'
  | 'expected-outcome'
  | 'no-strays'
  | 'delivered'
  | 'latest'
  | 'idempotent'
  | 'refused'
  | 'caller';

export interface Violation {
  invariant: Invariant;
  archive?: string;
  detail: string;
}

const REPORT_FILES = ['report.json', 'report.md', 'report.sarif'] as const;
const REJECTED_FILE = 'rejected.json';

export const sha256 = (body: Buffer): string => createHash('sha256').update(body).digest('hex');

function parseJson<T>(body: Buffer | undefined): T | undefined {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The archive uploaded last of each repository (uploads only, refused uploads left out: they
 * may not move the pointer). */
export function newestUploads(archives: readonly SoakArchive[]): Map<string, SoakArchive> {
  const newest = new Map<string, SoakArchive>();
  for (const a of archives) {
    if (a.via !== 'upload' || a.expect.status === 'refused') continue;
    const current = newest.get(a.repository);
    if (current === undefined || a.sequence > current.sequence) newest.set(a.repository, a);
  }
  return newest;
}

export function checkInvariants(run: SoakObservation): Violation[] {
  const violations: Violation[] = [];
  const layout = new ReportLayout(run.prefix);
  const add = (invariant: Invariant, detail: string, archive?: SoakArchive): void => {
    violations.push({
      invariant,
      ...(archive !== undefined ? { archive: archive.id } : {}),
      detail: archive !== undefined ? `${archive.id} (${archive.label}): ${detail}` : detail,
    });
  };

  // Whoever delivered an archive is recorded on every object of its outcome.
  const checkCaller = (a: SoakArchive, keys: readonly string[]): void => {
    if (a.caller === undefined || run.uploadedBy === undefined) return;
    for (const key of keys) {
      const by = run.uploadedBy.get(key) ?? null;
      if (by !== a.caller)
        add('caller', `${key} is stored as uploaded by ${by ?? 'nobody'}, it came from ${a.caller}`, a);
    }
  };

  // Group the stored scan objects by scan id.
  const scansPrefix = `${run.prefix}scans/`;
  const byScan = new Map<string, string[]>();
  const pointers = new Map<string, Buffer>();
  for (const [key, body] of run.stored) {
    if (key.startsWith(scansPrefix)) {
      const rest = key.slice(scansPrefix.length);
      const slash = rest.indexOf('/');
      const scanId = slash < 0 ? rest : rest.slice(0, slash);
      const file = slash < 0 ? '' : rest.slice(slash + 1);
      byScan.set(scanId, [...(byScan.get(scanId) ?? []), file]);
    } else if (key.startsWith(layout.repositoriesPrefix)) {
      const repository = layout.repositoryOfLatest(key);
      if (repository === null) add('no-strays', `${key} is under repos/ but is not a latest pointer`);
      else pointers.set(repository, body);
    } else if (!key.startsWith(`${run.prefix}cache/`)) {
      add('no-strays', `${key} is outside scans/, repos/ and cache/`);
    }
  }

  // One outcome per archive, the expected one.
  const ids = new Set<string>();
  const byScanId = new Map<string, SoakArchive>();
  for (const a of run.archives) {
    if (ids.has(a.id)) add('one-outcome', 'the archive id is used twice in the round', a);
    ids.add(a.id);
    const other = byScanId.get(a.scanId);
    if (other !== undefined) add('one-outcome', `shares its scan id with ${other.id}`, a);
    byScanId.set(a.scanId, a);

    const files = [...(byScan.get(a.scanId) ?? [])].sort();
    const complete = files.length === 3 && REPORT_FILES.every((f) => files.includes(f));
    const rejected = files.length === 1 && files[0] === REJECTED_FILE;
    const key = (file: string): string => `${layout.scanPrefix(a.scanId)}${file}`;
    checkCaller(a, files.map(key));
    if (a.expect.status === 'refused' && a.via === 'api') {
      // Refused before the archive was read: nothing at all under its scan id.
      if (files.length > 0)
        add('refused', `a refused POST /scans stored ${files.join(', ')} under ${a.scanId}`, a);
      continue;
    }
    if (a.expect.status === 'refused' && !rejected) {
      add(
        'refused',
        files.length === 0
          ? 'a refused upload is not recorded (no rejected.json)'
          : `a refused upload stored ${files.join(', ')} under ${a.scanId}, not one rejected.json`,
        a,
      );
      continue;
    }
    if (!complete && !rejected) {
      add(
        'one-outcome',
        files.length === 0
          ? 'nothing is stored for it'
          : `stored ${files.join(', ')} under ${a.scanId}: neither one report set nor one rejection`,
        a,
      );
      continue;
    }
    if (a.expect.status === 'complete' && !complete) {
      const record = parseJson<RejectedRecord>(run.stored.get(key(REJECTED_FILE)));
      add(
        record?.error.code === REFUSED_CODE ? 'refused' : 'expected-outcome',
        `expected a report, found a rejection (${record?.error.code}: ${record?.error.message})`,
        a,
      );
      continue;
    }
    if (a.expect.status === 'rejected' && !rejected) {
      add('expected-outcome', `expected a rejection (${a.expect.codes.join(' or ')}), found a report`, a);
      continue;
    }
    if (complete) {
      const report = parseJson<{ summary?: unknown; tool?: unknown }>(run.stored.get(key('report.json')));
      if (report?.summary === undefined) add('expected-outcome', 'report.json is not a report', a);
      const sarif = parseJson<{ version?: string }>(run.stored.get(key('report.sarif')));
      if (sarif?.version !== '2.1.0') add('expected-outcome', 'report.sarif is not SARIF 2.1.0', a);
      if ((run.stored.get(key('report.md'))?.length ?? 0) === 0)
        add('expected-outcome', 'report.md is empty', a);
    } else {
      const record = parseJson<RejectedRecord>(run.stored.get(key(REJECTED_FILE)));
      const codes =
        a.expect.status === 'rejected' ? a.expect.codes : a.expect.status === 'refused' ? [REFUSED_CODE] : [];
      const invariant: Invariant = a.expect.status === 'refused' ? 'refused' : 'expected-outcome';
      if (record === undefined || record.status !== 'rejected') {
        add(invariant, 'rejected.json is not a rejection record', a);
      } else {
        if (a.caller !== undefined && record.source.kind !== 'local' && record.source.uploadedBy !== a.caller)
          add(
            'caller',
            `rejected.json names uploader ${record.source.uploadedBy}, it came from ${a.caller}`,
            a,
          );
        if (a.expect.status !== 'refused' && record.error.code === REFUSED_CODE)
          add('refused', `an allowed delivery was refused: ${record.error.message}`, a);
        else if (!codes.includes(record.error.code))
          add(
            invariant,
            `rejected with ${record.error.code} (${record.error.message}), expected ${codes.join(' or ')}`,
            a,
          );
        if (record.scanId !== a.scanId)
          add('expected-outcome', `rejected.json names scan ${record.scanId}`, a);
        if (record.repository !== a.repository)
          add('expected-outcome', `rejected.json names repository ${record.repository}`, a);
        const sourceKey = record.source.kind === 'upload' ? record.source.key : null;
        if (a.via === 'upload' && sourceKey !== a.key)
          add('expected-outcome', `rejected.json names upload ${sourceKey}`, a);
      }
    }
  }
  for (const [scanId, files] of byScan) {
    if (!byScanId.has(scanId))
      add('no-strays', `scans/${scanId}/ (${files.join(', ')}) belongs to no archive of the round`);
  }

  // Every delivery succeeded, and said what is stored.
  const archivesById = new Map(run.archives.map((a) => [a.id, a]));
  const delivered = new Set<string>();
  for (const d of run.deliveries) {
    const a = archivesById.get(d.archiveId);
    if (a === undefined) {
      add('delivered', `a delivery of ${d.archiveId}, which is no archive of the round`);
      continue;
    }
    delivered.add(a.id);
    if (d.final !== 'ok') {
      add('delivered', `failed ${d.attempts} time(s), went to the dead-letter queue: ${d.error}`, a);
      continue;
    }
    if (d.foreign === true || a.expect.status === 'refused') {
      // POST /scans refuses with a 403 that names no scan id.
      const scanId = a.via === 'api' ? '' : a.scanId;
      if (d.status !== 'refused' || d.scanId !== scanId)
        add(
          'refused',
          `a delivery by a caller not allowed on ${a.repository} was answered ${d.status} ${d.scanId}, not refused`,
          a,
        );
      continue;
    }
    const expected = a.expect.status === 'complete' ? 'scanned' : 'rejected';
    if (d.status !== expected || d.scanId !== a.scanId)
      add('delivered', `the handler answered ${d.status} ${d.scanId}, expected ${expected} ${a.scanId}`, a);
  }
  for (const a of run.archives) if (!delivered.has(a.id)) add('delivered', 'was never delivered', a);

  // The latest pointers.
  const newest = newestUploads(run.archives);
  const refusedUploads = new Set(
    run.archives.filter((a) => a.via === 'upload' && a.expect.status === 'refused').map((a) => a.repository),
  );
  for (const repository of pointers.keys()) {
    if (newest.has(repository)) continue;
    if (refusedUploads.has(repository))
      add('refused', `${repository} has a latest pointer, but every upload of it was refused`);
    else add('no-strays', `a latest pointer for ${repository}, which has no upload`);
  }
  for (const [repository, a] of newest) {
    const pointer = parseJson<LatestPointer>(pointers.get(repository));
    if (pointer === undefined) {
      add('latest', `${repository} has no (readable) latest pointer; its newest upload is ${a.key}`, a);
      continue;
    }
    if (pointer.scanId !== a.scanId || pointer.upload.key !== a.key) {
      const pointed = run.archives.find((b) => b.scanId === pointer.scanId);
      add(
        pointed?.expect.status === 'refused' ? 'refused' : 'latest',
        `${repository}'s pointer names ${pointer.upload.key} (${pointed ? `upload #${pointed.sequence}` : 'no archive of the round'}), ` +
          `not its newest upload ${a.key} (#${a.sequence})`,
        a,
      );
      continue;
    }
    const status = a.expect.status;
    if (pointer.status !== status) add('latest', `the pointer says ${pointer.status}, expected ${status}`, a);
    if (a.caller !== undefined && pointer.upload.uploadedBy !== a.caller)
      add(
        'caller',
        `${repository}'s pointer names uploader ${pointer.upload.uploadedBy}, not ${a.caller}`,
        a,
      );
    const referenced = status === 'complete' ? Object.values(pointer.reports ?? {}) : [pointer.rejected];
    for (const key of referenced) {
      if (typeof key !== 'string' || !run.stored.has(key))
        add('latest', `the pointer references ${String(key)}, which is not stored`, a);
    }
  }

  // Redelivered events changed nothing.
  for (const r of run.redeliveries) {
    const a = archivesById.get(r.archiveId);
    const keys = new Set([...Object.keys(r.before), ...Object.keys(r.after)]);
    const changed = [...keys].filter((k) => r.before[k] !== r.after[k]);
    const nothingExpected = a?.via === 'api' && a.expect.status === 'refused';
    if (Object.keys(r.before).length === 0 && !nothingExpected)
      add('idempotent', `nothing was stored for ${r.archiveId} before its redelivery`, a);
    if (changed.length > 0)
      add(
        'idempotent',
        `a redelivery changed ${changed.map((k) => `${k} (${r.before[k] === undefined ? 'created' : r.after[k] === undefined ? 'removed' : 'other bytes'})`).join(', ')}`,
        a,
      );
  }
  return violations;
}
