/**
 * One soak round (scripts/soak.ts): a real s3rver on a random 127.0.0.1 port with the buckets, the
 * conditional-write proxy in front of it (test/support/conditional-s3.ts: S3's `If-Match` /
 * `If-None-Match` semantics, which s3rver lacks, so the `latest` pointer behaves as on S3), and the
 * real handlers in-process, driven as Lambda would drive them:
 *
 * 1. the round's archives are uploaded to s3rver one after the other (so the upload order is the
 *    order of `LastModified` and `eventTime`, the order "newest" means) and s3rver's own
 *    notification event of each is kept;
 * 2. the events (a share of them twice, as S3 may deliver them) are delivered in random order,
 *    `concurrency` invocations of the upload-scan handler at a time (plus `POST /scans` calls
 *    to the createScan handler for the API share); a failed invocation is retried twice after a
 *    delay, as Lambda retries asynchronous invocations, then counted as dead-lettered;
 * 3. optionally s3rver is killed (SIGKILL) part-way through and started again on the same port
 *    and data after `downMs`;
 * 4. some events are delivered once more after their outcome was stored, and the bytes of the
 *    outcome and of the pointer compared before and after;
 * 5. everything in the reports bucket is read back and checked (scripts/soak/invariants.ts).
 *
 * With `tenants` (mixed callers) the round runs under an access policy (`TFGUARD_ACCESS_POLICY`,
 * docs/service.md "Tenants") of three principals (see `SOAK_CALLERS`): each archive is delivered
 * by one of them (the S3 event's `userIdentity.principalId`, the API request's IAM authorizer
 * fields), a share by one the policy does not allow on the archive's repository, and every
 * allowed `POST /scans` archive is also sent once by a caller not allowed on it (a takeover of
 * its scan id). Who may write where is decided here by a plain table (`allowedOn`), not by the
 * service's pattern matcher, so the checker's expectation is independent of the code it checks.
 *
 * All in this process (the handlers share one event loop and its CPU, as `concurrency` Lambda
 * instances would not), so the figures are those of one Node process on this machine.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, S3Event } from 'aws-lambda';
import { createScan } from '../../handlers/api';
import { handler as scanUpload } from '../../handlers/upload-scan';
import { apiScanId, ReportLayout, uploadScanId } from '../../src/service/keys';
import { createS3Client, S3ObjectStore } from '../../src/storage/s3';
import {
  lambdaContext,
  lambdaEnv,
  REPORTS_BUCKET,
  sampleEvent,
  setEnv,
  UPLOADS_BUCKET,
} from '../../test/support/lambda';
import { startConditionalS3, type ConditionalS3 } from '../../test/support/conditional-s3';
import {
  S3RVER_CREDENTIALS,
  S3RVER_REGION,
  startS3rver,
  type RunningS3rver,
} from '../../test/support/s3rver';
import { rng } from '../../test/support/random';
import { planArchives, shuffle, type PlannedArchive } from './archives';
import { startFaultGate, type FaultGate } from './fault-gate';
import {
  checkInvariants,
  sha256,
  type DeliveryRecord,
  type Redelivery,
  type SoakArchive,
  type SoakObservation,
  type Violation,
} from './invariants';

export interface RoundOptions {
  label: string;
  archives: number;
  concurrency: number;
  repositories: number;
  hostileShare: number;
  apiShare: number;
  /** Share of the events delivered twice during the round. */
  duplicateShare: number;
  /** Events delivered once more after the round, their stored outcome compared byte for byte. */
  redeliver: number;
  /** Corpus archives (absolute paths). */
  corpus: readonly string[];
  seed: number;
  /** Put the conditional-write proxy in front of s3rver (default). Without it s3rver ignores
   * `If-Match` / `If-None-Match` and the `latest` pointer is a plain read-then-write: a run
   * that shows the invariant checker catching the lost update (`--no-conditional-writes`). */
  conditionalWrites?: boolean | undefined;
  /** `TFGUARD_MAX_ARCHIVE_BYTES` for the round. */
  maxArchiveBytes: number;
  /** Kill s3rver once `afterShare` of the deliveries are done; start it again `downMs` later. */
  fault?: { afterShare: number; downMs: number } | undefined;
  /** Delays before the retries of a failed invocation (Lambda: two retries). */
  retryDelaysMs: readonly number[];
  /** No delivery starts after this time (epoch ms). */
  deadline?: number | undefined;
  /** Mixed callers under an access policy: `foreignShare` of the archives delivered by a caller not
   * allowed on their repository. Without it: a single-tenant install (no policy). */
  tenants?: { foreignShare: number } | undefined;
  log?: ((line: string) => void) | undefined;
}

export interface RoundResult {
  label: string;
  concurrency: number;
  archives: number;
  hostile: number;
  api: number;
  corpus: number;
  repositories: number;
  /** Deliveries during the round (archives + duplicates + takeover attempts). */
  deliveries: number;
  /** Mixed callers: the principals, archives delivered by a caller not allowed on their
   * repository, takeover attempts on allowed API scans, deliveries answered `refused`, archives
   * whose outcome was stored (allowed ones: reports and rejections). Null: single-tenant. */
  tenants: {
    callers: number;
    foreignArchives: number;
    takeovers: number;
    refusedDeliveries: number;
    /** Outcomes stored: reports and rejections of allowed archives, refusals of uploads. */
    stored: { reports: number; rejections: number; refusals: number };
  } | null;
  uploadSeconds: number;
  /** The slowest deliveries (first invocation start to success). */
  slowest: { id: string; label: string; ms: number; attempts: number }[];
  /** Wall time of the delivery phase. */
  seconds: number;
  archivesPerSecond: number;
  /** Per delivery: first invocation start to the end of the successful one. */
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  /** Invocations that failed (and were retried, or dead-lettered). */
  failedInvocations: number;
  /** Why they failed (the first few, with the archive). */
  failures: string[];
  deadLetters: number;
  redelivered: number;
  /** Conditional writes of the pointers that lost a race and were decided again. */
  pointerRaces: number;
  /** Writes the proxy held until reads of the same key finished (s3rver would have served
   * those reads torn). */
  writesAfterReads: number;
  /** Peak RSS of this process so far (MiB). */
  peakRssMiB: number;
  /** Peak RSS of the s3rver process(es) (MiB), when /proc tells. */
  s3rverPeakRssMiB: number | null;
  /** The fault round's kill: after how many deliveries, for how long, requests refused while
   * down and answers lost in flight (the work was done, the caller never heard). */
  fault: { killedAfter: number; downMs: number; refused: number; answersLost: number } | null;
  timedOut: boolean;
  violations: Violation[];
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

const MIME: Record<PlannedArchive['format'], string> = {
  'tar.gz': 'application/gzip',
  tar: 'application/x-tar',
  zip: 'application/zip',
};

/** A caller as the service sees it: an API request's IAM authorizer fields, an S3 event's
 * `userIdentity.principalId` (what the service records as `uploadedBy` for each). */
export interface SoakCaller {
  name: string;
  arn: string;
  /** The authorizer's `userId` (`AROA…:<session>`); the principal id is `AWS:` + it. */
  userId: string;
  /** Whether it calls `POST /scans` (the direct-writing pipeline has no API role). */
  api: boolean;
}

const ACCOUNT = '123456789012';
const role = (name: string, unique: string, api: boolean): SoakCaller => ({
  name,
  arn: `arn:aws:sts::${ACCOUNT}:assumed-role/${name}/GitHubActions`,
  userId: `AROA${unique}:GitHubActions`,
  api,
});

/** Two CI roles (even- and odd-numbered repositories, named one by one) and a pipeline that writes
 * straight into the uploads bucket (repositories 00–09 and the corpus, by patterns). */
export const SOAK_CALLERS: readonly SoakCaller[] = [
  role('soak-ci-even', 'SOAKCIEVEN', true),
  role('soak-ci-odd', 'SOAKCIODD', true),
  role('soak-pipeline', 'SOAKPIPELINE', false),
];

/** The repositories' index in the plan (`<prefix>/repo-07` → 7), null for the corpus ones. */
function repoIndex(prefix: string, repository: string): number | null {
  const rest = repository.startsWith(`${prefix}/repo-`) ? repository.slice(prefix.length + 6) : '';
  return /^\d+$/.test(rest) ? Number(rest) : null;
}

/** Who may write `repository`: the oracle the round's expectations come from (a plain table, not
 * the service's matcher). */
export function allowedOn(prefix: string, caller: SoakCaller, repository: string): boolean {
  const index = repoIndex(prefix, repository);
  switch (caller.name) {
    case 'soak-ci-even':
      return index !== null && index % 2 === 0;
    case 'soak-ci-odd':
      return index !== null && index % 2 === 1;
    default:
      return index === null ? repository.startsWith(`${prefix}/corpus/`) : index < 10;
  }
}

/** The access policy that says the same as `allowedOn`, for the round's repositories. */
export function soakPolicy(prefix: string, repositories: readonly string[]): string {
  const indexed = repositories.filter((r) => repoIndex(prefix, r) !== null);
  const parity = (p: number) => indexed.filter((r) => repoIndex(prefix, r)! % 2 === p);
  const principals = (c: SoakCaller) => [
    c.arn.replace(/\/GitHubActions$/, '/*'),
    `AWS:${c.userId.replace(/:GitHubActions$/, ':*')}`,
  ];
  const [even, odd, pipeline] = SOAK_CALLERS as [SoakCaller, SoakCaller, SoakCaller];
  return JSON.stringify({
    callers: [
      { principal: principals(even), repositories: parity(0) },
      { principal: principals(odd), repositories: parity(1) },
      { principal: principals(pipeline), repositories: [`${prefix}/repo-0*`, `${prefix}/corpus/*`] },
    ].filter((c) => c.repositories.length > 0),
  });
}

/** An error with its causes (UploadBatchError → S3StorageError → the SDK's error). */
function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 4; depth++) {
    parts.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(' ← ');
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function peakRssOf(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}

function apiEvent(archive: PlannedArchive, caller: SoakCaller | null): APIGatewayProxyEventV2 {
  const event = sampleEvent<APIGatewayProxyEventV2>('http-post-scans.json');
  const context = event.requestContext as unknown as { authorizer: { iam: Record<string, unknown> } };
  return {
    ...event,
    ...(caller !== null
      ? {
          requestContext: {
            ...event.requestContext,
            authorizer: {
              iam: {
                ...context.authorizer.iam,
                userArn: caller.arn,
                userId: caller.userId,
                callerId: caller.userId,
              },
            },
          } as unknown as APIGatewayProxyEventV2['requestContext'],
        }
      : {}),
    rawQueryString: `repository=${encodeURIComponent(archive.repository)}`,
    headers: { ...event.headers, 'content-type': MIME[archive.format] },
    queryStringParameters: { repository: archive.repository },
    body: archive.bytes.toString('base64'),
    isBase64Encoded: true,
  };
}

interface Item {
  archive: PlannedArchive;
  scanId: string;
  event: S3Event | null;
  /** Who delivers it (mixed callers), and whether the policy refuses that caller. */
  caller: SoakCaller | null;
  foreign: boolean;
}

/** Who the service records as the uploader: the API caller's ARN, the S3 writer's principal id. */
const recordedAs = (item: Pick<Item, 'archive' | 'caller'>): string | undefined =>
  item.caller === null
    ? undefined
    : item.archive.via === 'api'
      ? item.caller.arn
      : `AWS:${item.caller.userId}`;

/** Runs one round and checks it; `observe` receives the observation (tests mutate it). */
export async function runRound(
  options: RoundOptions,
  observe?: (observation: SoakObservation) => void,
): Promise<RoundResult> {
  const log = options.log ?? (() => undefined);
  const random = rng(options.seed ^ 0x5eed);
  const planned = await planArchives({
    prefix: `soak/${options.label}`,
    archives: options.archives,
    repositories: options.repositories,
    hostileShare: options.hostileShare,
    apiShare: options.apiShare,
    corpus: options.corpus,
    maxArchiveBytes: options.maxArchiveBytes,
    seed: options.seed,
  });
  // Mixed callers: who delivers each archive (its own rng, so the rest of the round is as without).
  const prefix = `soak/${options.label}`;
  const tenants = options.tenants;
  const callerRandom = rng(options.seed ^ 0x7e4a47);
  const pickFrom = <T>(list: readonly T[]): T => list[Math.floor(callerRandom() * list.length)]!;
  const callerOf = new Map<string, { caller: SoakCaller; foreign: boolean }>();
  if (tenants !== undefined) {
    for (const archive of planned) {
      const eligible = SOAK_CALLERS.filter((c) => archive.via === 'upload' || c.api);
      const allowed = eligible.filter((c) => allowedOn(prefix, c, archive.repository));
      const others = eligible.filter((c) => !allowedOn(prefix, c, archive.repository));
      const foreign = others.length > 0 && (allowed.length === 0 || callerRandom() < tenants.foreignShare);
      callerOf.set(archive.id, { caller: pickFrom(foreign ? others : allowed), foreign });
    }
  }

  const directory = await mkdtemp(join(tmpdir(), 'tfguard-soak-'));
  const buckets = [UPLOADS_BUCKET, REPORTS_BUCKET];
  let server: RunningS3rver = await startS3rver(buckets, { directory });
  const incarnations: RunningS3rver[] = [server];
  const s3rverPeaks: number[] = [];
  const direct = server.client();
  let proxy: ConditionalS3 | undefined;
  let gate: FaultGate | undefined;
  let gateClient: ReturnType<typeof createS3Client> | undefined;
  try {
    // The service reaches s3rver through the conditional-write proxy and, in a fault round, the
    // gate that makes the kill fall between writes (scripts/soak/fault-gate.ts).
    let upstream = server.endpoint;
    let proxyClient = direct;
    if (options.fault !== undefined) {
      gate = await startFaultGate(server.endpoint);
      upstream = gate.endpoint;
      gateClient = createS3Client({
        endpoint: gate.endpoint,
        region: S3RVER_REGION,
        forcePathStyle: true,
        credentials: S3RVER_CREDENTIALS,
      });
      proxyClient = gateClient;
    }
    proxy = await startConditionalS3(upstream, proxyClient);
    // The registry cross-check is off in lambdaEnv: 127.0.0.1 only.
    // Single-tenant: no policy (also none left over from an earlier round in this process).
    setEnv({
      ...lambdaEnv(options.conditionalWrites === false ? upstream : proxy.endpoint, {
        TFGUARD_MAX_ARCHIVE_BYTES: String(options.maxArchiveBytes),
      }),
      TFGUARD_ACCESS_POLICY:
        tenants === undefined
          ? undefined
          : soakPolicy(prefix, [...new Set(planned.map((a) => a.repository))]),
    });

    // 1. Uploads, one after the other, and s3rver's event for each.
    const uploadStarted = Date.now();
    const items: Item[] = [];
    const etags = new Map<string, string>();
    for (const archive of planned) {
      const { caller, foreign } = callerOf.get(archive.id) ?? { caller: null, foreign: false };
      if (archive.via === 'api') {
        const sha = sha256(archive.bytes);
        items.push({ archive, scanId: apiScanId(archive.repository, sha), event: null, caller, foreign });
        continue;
      }
      const put = await direct.send(
        new PutObjectCommand({ Bucket: UPLOADS_BUCKET, Key: archive.key, Body: archive.bytes }),
      );
      const etag = (put.ETag ?? '').replace(/"/g, '');
      etags.set(archive.key, etag);
      items.push({
        archive,
        scanId: uploadScanId({ bucket: UPLOADS_BUCKET, key: archive.key, etag }),
        event: null,
        caller,
        foreign,
      });
    }
    const eventFor = new Map<string, S3Event>();
    for (let waited = 0; eventFor.size < etags.size; waited += 20) {
      for (const event of server.events as unknown as S3Event[]) {
        const record = event.Records[0];
        if (record !== undefined && record.eventName.startsWith('ObjectCreated:'))
          eventFor.set(decodeURIComponent(record.s3.object.key.replace(/\+/g, ' ')), event);
      }
      if (eventFor.size >= etags.size) break;
      if (waited > 20_000) throw new Error(`s3rver sent ${eventFor.size} of ${etags.size} upload events`);
      await sleep(20);
    }
    for (const item of items) {
      if (item.archive.via !== 'upload') continue;
      const event = eventFor.get(item.archive.key)!;
      // The writer as S3 names it: a role session's principal id.
      item.event =
        item.caller === null
          ? event
          : {
              Records: event.Records.map((r) => ({
                ...r,
                userIdentity: { principalId: `AWS:${item.caller!.userId}` },
              })),
            };
    }
    // Every allowed POST /scans archive is sent once more by a caller not allowed on its
    // repository: the same scan id, which must stay its owner's.
    const takeovers: Item[] = [];
    if (tenants !== undefined)
      for (const item of items) {
        if (item.archive.via !== 'api' || item.foreign) continue;
        const others = SOAK_CALLERS.filter((c) => c.api && !allowedOn(prefix, c, item.archive.repository));
        if (others.length > 0) takeovers.push({ ...item, caller: pickFrom(others), foreign: true });
      }
    const uploadSeconds = (Date.now() - uploadStarted) / 1000;
    const uploaded = etags.size;
    log(
      `${options.label}: ${items.length} archives (${uploaded} uploaded to s3rver) in ${uploadSeconds.toFixed(1)} s`,
    );

    // 2. Deliveries, some twice, in random order, `concurrency` at a time, with retries.
    const duplicates = shuffle(items, random).slice(0, Math.round(items.length * options.duplicateShare));
    const queue: Item[] = shuffle([...items, ...duplicates], random);
    // Inserted at random places with the callers' rng (the order of the rest is as without).
    for (const t of takeovers) queue.splice(Math.floor(callerRandom() * (queue.length + 1)), 0, t);
    const total = queue.length;
    const deliveries: DeliveryRecord[] = [];
    const latencies: number[] = [];
    const timed: RoundResult['slowest'] = [];
    let failedInvocations = 0;
    const failures: string[] = [];
    let done = 0;
    let timedOut = false;
    let fault: RoundResult['fault'] = null;
    let restarting: Promise<void> | null = null;

    const invoke = async (item: Item): Promise<{ status: string; scanId: string }> => {
      if (item.event !== null) {
        const result = await scanUpload(item.event, lambdaContext('scanUpload', 120_000));
        const outcome = result.outcomes[0];
        if (result.outcomes.length !== 1 || outcome === undefined)
          throw new Error(`the handler answered ${result.outcomes.length} outcomes for one record`);
        return { status: outcome.status, scanId: 'scanId' in outcome ? outcome.scanId : '' };
      }
      const response = (await createScan(
        apiEvent(item.archive, item.caller),
        lambdaContext('createScan', 29_000),
      )) as APIGatewayProxyStructuredResultV2 & { statusCode: number; body: string };
      const body = JSON.parse(response.body) as { scanId?: string; error?: string; message?: string };
      if (response.statusCode === 200) return { status: 'scanned', scanId: body.scanId ?? '' };
      if (response.statusCode === 422) return { status: 'rejected', scanId: body.scanId ?? '' };
      if (response.statusCode === 403 && body.error === 'repository-not-allowed')
        return { status: 'refused', scanId: body.scanId ?? '' };
      throw new Error(`POST /scans answered ${response.statusCode}: ${body.error} ${body.message ?? ''}`);
    };

    const crashAndRestart = async (downMs: number): Promise<void> => {
      const crashed = server;
      const at = done;
      await gate!.outage();
      s3rverPeaks.push((await peakRssOf(crashed.pid)) ?? 0);
      await crashed.crash();
      log(
        `${options.label}: s3rver killed (SIGKILL) after ${at} of ${total} deliveries ` +
          `(${gate!.counts.answersLost} answers lost in flight); down for ${downMs} ms`,
      );
      await sleep(downMs);
      server = await startS3rver(buckets, { directory, port: crashed.port });
      incarnations.push(server);
      gate!.restore();
      log(
        `${options.label}: s3rver started again on port ${server.port}; ` +
          `${gate!.counts.refused} requests refused while it was down`,
      );
    };

    /** A delivery with Lambda's retries; resolves when it succeeded or was dead-lettered. */
    const deliver = async (item: Item): Promise<void> => {
      const started = Date.now();
      let attempts = 0;
      let error = '';
      for (;;) {
        attempts++;
        try {
          const answer = await invoke(item);
          latencies.push(Date.now() - started);
          timed.push({ id: item.archive.id, label: item.archive.label, ms: Date.now() - started, attempts });
          deliveries.push({
            archiveId: item.archive.id,
            attempts,
            final: 'ok',
            ...answer,
            ...(item.caller !== null ? { foreign: item.foreign } : {}),
          });
          return;
        } catch (err) {
          failedInvocations++;
          error = describe(err);
          if (failures.length < 5) failures.push(`${item.archive.id} attempt ${attempts}: ${error}`);
          const delay = options.retryDelaysMs[attempts - 1];
          if (delay === undefined) {
            deliveries.push({
              archiveId: item.archive.id,
              attempts,
              final: 'dead-letter',
              error,
              ...(item.caller !== null ? { foreign: item.foreign } : {}),
            });
            return;
          }
          await sleep(delay);
        }
      }
    };

    const phaseStarted = Date.now();
    const faultAt = options.fault ? Math.max(1, Math.floor(total * options.fault.afterShare)) : -1;
    const inFlight = new Set<Promise<void>>();
    while (queue.length > 0) {
      if (options.deadline !== undefined && Date.now() > options.deadline) {
        timedOut = true;
        log(`${options.label}: time cap reached with ${queue.length} of ${total} deliveries not started`);
        break;
      }
      while (inFlight.size >= options.concurrency) await Promise.race(inFlight);
      const item = queue.shift()!;
      const p: Promise<void> = deliver(item).then(() => {
        done++;
        inFlight.delete(p);
        if (done === faultAt && options.fault !== undefined && restarting === null) {
          fault = { killedAfter: done, downMs: options.fault.downMs, refused: 0, answersLost: 0 };
          restarting = crashAndRestart(options.fault.downMs);
        }
      });
      inFlight.add(p);
    }
    await Promise.all(inFlight);
    if (restarting !== null) await restarting;
    const seconds = (Date.now() - phaseStarted) / 1000;
    const faultSeen = fault as RoundResult['fault'];
    if (faultSeen !== null && gate !== undefined) {
      faultSeen.refused = gate.counts.refused;
      faultSeen.answersLost = gate.counts.answersLost;
    }
    const slowest = timed.sort((a, b) => b.ms - a.ms).slice(0, 3);

    // 4. Deliver some events once more, after their outcome is stored: nothing may change.
    const reports = new S3ObjectStore({ bucket: REPORTS_BUCKET, client: server.client() });
    const layout = new ReportLayout('reports/');
    const snapshot = async (item: Item): Promise<Record<string, string>> => {
      const keys: string[] = [];
      for await (const key of reports.list(layout.scanPrefix(item.scanId))) keys.push(key);
      if (item.archive.via === 'upload') keys.push(layout.latest(item.archive.repository));
      const out: Record<string, string> = {};
      for (const key of keys) {
        const got = await reports.get(key);
        if (got !== null) out[key] = sha256(got.body);
      }
      return out;
    };
    // The oldest upload of each repository first (a late event must not move the pointer back),
    // then hostile, API and corpus archives, then any.
    const oldest = new Map<string, Item>();
    for (const item of items)
      if (item.archive.via === 'upload' && !oldest.has(item.archive.repository))
        oldest.set(item.archive.repository, item);
    const others = shuffle(
      items.filter(
        (i) => i.archive.hostile !== null || i.archive.via === 'api' || i.archive.id.startsWith('corpus-'),
      ),
      random,
    );
    const chosen = [...new Set([...oldest.values(), ...others, ...shuffle(items, random)])].slice(
      0,
      timedOut ? 0 : options.redeliver,
    );
    const redeliveries: Redelivery[] = [];
    const befores = await Promise.all(chosen.map((item) => snapshot(item)));
    for (let i = 0; i < chosen.length; i += options.concurrency) {
      await Promise.all(chosen.slice(i, i + options.concurrency).map((item) => deliver(item)));
    }
    const afters = await Promise.all(chosen.map((item) => snapshot(item)));
    chosen.forEach((item, i) =>
      redeliveries.push({ archiveId: item.archive.id, before: befores[i]!, after: afters[i]! }),
    );

    // 5. Read everything back and check.
    const stored = new Map<string, Buffer>();
    const uploadedBy = new Map<string, string | null>();
    for await (const key of reports.list('')) {
      const got = await reports.get(key);
      if (got === null) continue;
      stored.set(key, got.body);
      uploadedBy.set(key, got.metadata['uploaded-by'] ?? null);
    }
    const archives: SoakArchive[] = items.map((item, sequence) => ({
      id: item.archive.id,
      via: item.archive.via,
      repository: item.archive.repository,
      key: item.archive.via === 'upload' ? item.archive.key : null,
      sequence,
      scanId: item.scanId,
      expect: item.foreign ? { status: 'refused' } : item.archive.expect,
      label:
        item.caller === null
          ? item.archive.label
          : `${item.archive.label} by ${item.caller.name}${item.foreign ? ', not allowed' : ''}`,
      ...(item.caller !== null ? { caller: recordedAs(item) } : {}),
    }));
    const observation: SoakObservation = {
      prefix: 'reports/',
      archives,
      stored,
      deliveries,
      redeliveries,
      ...(tenants !== undefined ? { uploadedBy } : {}),
    };
    observe?.(observation);
    const violations = checkInvariants(observation);
    if (timedOut)
      violations.push({ invariant: 'delivered', detail: `time cap reached in round ${options.label}` });

    for (const s of incarnations) s3rverPeaks.push((await peakRssOf(s.pid)) ?? 0);
    const sorted = [...latencies].sort((a, b) => a - b);
    const s3rverPeak = Math.max(...s3rverPeaks);
    return {
      label: options.label,
      concurrency: options.concurrency,
      archives: items.length,
      hostile: planned.filter((a) => a.hostile !== null).length,
      api: planned.filter((a) => a.via === 'api').length,
      corpus: planned.filter((a) => a.id.startsWith('corpus-')).length,
      repositories: new Set(planned.map((a) => a.repository)).size,
      deliveries: total,
      tenants:
        tenants === undefined
          ? null
          : {
              callers: SOAK_CALLERS.length,
              foreignArchives: items.filter((i) => i.foreign).length,
              takeovers: takeovers.length,
              refusedDeliveries: deliveries.filter((d) => d.status === 'refused').length,
              stored: {
                reports: items.filter((i) => !i.foreign && stored.has(layout.report(i.scanId, 'json')))
                  .length,
                rejections: items.filter((i) => !i.foreign && stored.has(layout.rejected(i.scanId))).length,
                refusals: items.filter((i) => i.foreign && stored.has(layout.rejected(i.scanId))).length,
              },
            },
      uploadSeconds,
      slowest,
      seconds,
      archivesPerSecond: items.length / seconds,
      latencyMs: {
        p50: percentile(sorted, 50),
        p95: percentile(sorted, 95),
        p99: percentile(sorted, 99),
        max: sorted[sorted.length - 1] ?? 0,
      },
      failedInvocations,
      failures,
      deadLetters: deliveries.filter((d) => d.final === 'dead-letter').length,
      redelivered: chosen.length,
      pointerRaces: proxy.counts.preconditionFailed + proxy.counts.conflict,
      writesAfterReads: proxy.counts.waitedForReads,
      peakRssMiB: process.resourceUsage().maxRSS / 1024,
      s3rverPeakRssMiB: s3rverPeak > 0 ? s3rverPeak : null,
      fault: faultSeen,
      timedOut,
      violations,
    };
  } finally {
    await proxy?.close();
    await gate?.close();
    gateClient?.destroy();
    for (const s of incarnations) await s.stop();
    await rm(directory, { recursive: true, force: true });
  }
}
