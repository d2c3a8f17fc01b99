/**
 * Entry point 3, the fleet audit, designed so that no invocation does per-repository work for the
 * whole fleet:
 *
 * 1. `startAudit` (scheduled) lists the repositories' `latest` pointers, splits them into shards
 *    of ~√N repositories, writes the run manifest and each shard's member list, and sends one
 *    queue message per repository. It reads no pointer and scans nothing.
 * 2. `processAuditMessage` (the SQS worker) rescans one repository's latest upload with the current
 *    rules and the registry check, compares with the previous audit's result for it, and stores
 *    the result plus a `done` marker in its shard. Then it lists its shard's markers: the worker
 *    that sees the shard complete merges it into a shard partial (≤ shard size reads); the worker
 *    that then sees every partial present merges them into the summary (≤ shard count reads). S3
 *    lists are strongly consistent, so the last writer always sees the whole set; writers that
 *    finish together produce identical content.
 *
 * A repository that keeps failing is recorded as `failed` on its last delivery attempt instead of
 * being thrown once more, so one poison repository cannot keep the summary from being written.
 * Every key is deterministic, so redelivered messages and a retried start overwrite identical
 * content.
 */
import { createHash } from 'node:crypto';
import { RegistryClient } from '../lockfile/registry';
import type { MessageQueue, VersionedObjectSource } from '../storage/ports';
import type { ObjectStore } from '../storage/types';
import { compareKeys } from '../storage/keys';
import { deadlinePassed, isScanTimeout } from './deadline';
import { auditRunId, type AuditRunLayout, type ReportLayout } from './keys';
import { METRIC, errorAttributes, type ServiceLogger, type ServiceMetrics } from './observability';
import { readLatest, scanAndStore, type ScanContext } from './scans';
import { buildFleet, parseFleetData, registryNewest, type FleetData } from './fleet';
import { renderFleetHtml } from './fleet-html';
import {
  buildSummary,
  entryOf,
  renderSummaryMarkdown,
  scannedResult,
  unscannedResult,
  type AuditSummary,
  type RepositoryEntry,
  type RepositoryResult,
} from './summary';

export interface AuditDeps {
  reports: ObjectStore;
  layout: ReportLayout;
  scanOptions: ScanContext['scanOptions'];
  logger: ServiceLogger;
  metrics: ServiceMetrics;
  /** Registry cross-check in rescans. */
  registry: boolean;
  /** Repositories per shard; default ~√N (at least 10, at most 1000). */
  shardSize?: number | undefined;
  /** The invocation's deadline: a rescan still running stops (`scan-timeout`), later ones do not
   * start; either way the message is redelivered, and recorded `failed` on its last delivery. */
  signal?: AbortSignal | undefined;
  /** The fleet data to compare the fleet page with instead of the stored `fleet/index.json`
   * (`tfguard audit --previous FILE`). */
  previousFleet?: FleetData | undefined;
}

export interface AuditManifest {
  schemaVersion: 1;
  runId: string;
  startedAt: string;
  previousRunId: string | null;
  repositories: number;
  shardSize: number;
  shards: number;
}

export interface AuditLatestPointer {
  schemaVersion: 1;
  runId: string;
  startedAt: string;
  summary: { json: string; markdown: string };
  totals: AuditSummary['totals'];
}

/** One queue message: one repository of one run. */
export interface AuditMessage {
  v: 1;
  runId: string;
  startedAt: string;
  previousRunId: string | null;
  shard: number;
  shards: number;
  repository: string;
}

export class AuditMessageError extends Error {
  override readonly name = 'AuditMessageError';
}

export function shardSizeFor(repositories: number, configured?: number): number {
  if (configured !== undefined) return configured;
  return Math.min(1000, Math.max(10, Math.ceil(Math.sqrt(repositories))));
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

async function readJson<T>(store: ObjectStore, key: string): Promise<T | null> {
  const stored = await store.get(key);
  return stored === null ? null : (JSON.parse(stored.body.toString('utf8')) as T);
}

async function putJson(store: ObjectStore, key: string, value: unknown): Promise<void> {
  await store.put(key, json(value), { contentType: 'application/json' });
}

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const key of iterable) out.push(key);
  return out;
}

/** Lists every repository that has a `latest` pointer, sorted. */
export async function listRepositories(deps: Pick<AuditDeps, 'reports' | 'layout'>): Promise<string[]> {
  const repositories: string[] = [];
  for await (const key of deps.reports.list(deps.layout.repositoriesPrefix)) {
    const repository = deps.layout.repositoryOfLatest(key);
    if (repository !== null) repositories.push(repository);
  }
  return repositories.sort(compareKeys);
}

export interface PlannedRun {
  manifest: AuditManifest;
  /** Shard index → its repositories. */
  members: string[][];
  messages: AuditMessage[];
}

/**
 * Writes a run's manifest and member lists (or, when a retried start finds them, reuses them) and
 * returns the messages to send.
 */
export async function planRun(
  deps: Pick<AuditDeps, 'reports' | 'layout' | 'shardSize'>,
  run: { runId: string; startedAt: string },
  repositories: () => Promise<string[]>,
): Promise<PlannedRun> {
  const layout = deps.layout.auditRun(run.runId);
  let manifest = await readJson<AuditManifest>(deps.reports, layout.manifest);
  let members: string[][];
  if (manifest !== null) {
    members = [];
    for (let shard = 0; shard < manifest.shards; shard++) {
      members.push((await readJson<string[]>(deps.reports, layout.members(shard))) ?? []);
    }
  } else {
    const all = await repositories();
    if (new Set(all).size !== all.length) throw new Error('duplicate repository names in an audit run');
    const previous = await readJson<AuditLatestPointer>(deps.reports, deps.layout.auditLatest);
    const shardSize = shardSizeFor(all.length, deps.shardSize);
    members = [];
    for (let i = 0; i < all.length; i += shardSize) members.push(all.slice(i, i + shardSize));
    manifest = {
      schemaVersion: 1,
      runId: run.runId,
      startedAt: run.startedAt,
      previousRunId: previous !== null && compareKeys(previous.runId, run.runId) < 0 ? previous.runId : null,
      repositories: all.length,
      shardSize,
      shards: members.length,
    };
    // Members before the manifest: a manifest that exists always has its member lists.
    for (const [shard, list] of members.entries()) await putJson(deps.reports, layout.members(shard), list);
    await putJson(deps.reports, layout.manifest, manifest);
  }
  const messages: AuditMessage[] = [];
  for (const [shard, list] of members.entries()) {
    for (const repository of list) {
      messages.push({
        v: 1,
        runId: manifest.runId,
        startedAt: manifest.startedAt,
        previousRunId: manifest.previousRunId,
        shard,
        shards: manifest.shards,
        repository,
      });
    }
  }
  return { manifest, members, messages };
}

export interface StartAuditResult {
  runId: string;
  repositories: number;
  shards: number;
  /** True when there was nothing to fan out and the (empty) summary was written at once. */
  completed: boolean;
}

/** Starts a run: plans it and sends one message per repository. */
export async function startAudit(
  deps: AuditDeps & { queue: MessageQueue },
  trigger: { time: Date; eventId: string },
): Promise<StartAuditResult> {
  const runId = auditRunId(trigger.time, trigger.eventId);
  const plan = await planRun(deps, { runId, startedAt: trigger.time.toISOString() }, () =>
    listRepositories(deps),
  );
  deps.logger.info('audit run planned', {
    runId,
    repositories: plan.manifest.repositories,
    shards: plan.manifest.shards,
  });
  if (plan.messages.length === 0) {
    await completeRun(deps, plan.manifest, []);
    return { runId, repositories: 0, shards: 0, completed: true };
  }
  await deps.queue.sendAll(plan.messages.map((m) => JSON.stringify(m)));
  return { runId, repositories: plan.manifest.repositories, shards: plan.manifest.shards, completed: false };
}

export function parseAuditMessage(body: string): AuditMessage {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new AuditMessageError('audit message is not JSON', { cause: err });
  }
  const m = value as Partial<AuditMessage> | null;
  const ok =
    m !== null &&
    typeof m === 'object' &&
    m.v === 1 &&
    typeof m.runId === 'string' &&
    typeof m.startedAt === 'string' &&
    (m.previousRunId === null || typeof m.previousRunId === 'string') &&
    Number.isInteger(m.shard) &&
    Number.isInteger(m.shards) &&
    (m.shard as number) >= 0 &&
    (m.shard as number) < (m.shards as number) &&
    typeof m.repository === 'string' &&
    m.repository !== '';
  if (!ok) throw new AuditMessageError(`not an audit message: ${body.slice(0, 200)}`);
  return m as AuditMessage;
}

/** What a rescan reads: the archive, or why there is none. */
export type ArchiveLoad =
  | { kind: 'archive'; name: string; bytes: Buffer }
  | { kind: 'missing'; reason: string }
  | { kind: 'rejected'; code: 'total-too-large'; reason: string };

/** Loads a repository's latest upload for the Lambda worker. */
export function latestUploadLoader(
  deps: Pick<AuditDeps, 'reports' | 'layout'> & { source: VersionedObjectSource; maxArchiveBytes: number },
): (repository: string) => Promise<ArchiveLoad> {
  return async (repository) => {
    const pointer = await readLatest(deps, repository);
    if (pointer === null) return { kind: 'missing', reason: 'the repository has no latest upload' };
    const upload = pointer.upload;
    const got = await deps.source.getVersion(
      upload.key,
      { versionId: upload.versionId },
      { maxBytes: deps.maxArchiveBytes },
    );
    if (got.status === 'missing' || got.status === 'superseded') {
      return {
        kind: 'missing',
        reason: `the latest upload s3://${upload.bucket}/${upload.key} no longer exists`,
      };
    }
    if (got.status === 'too-large') {
      return {
        kind: 'rejected',
        code: 'total-too-large',
        reason: `the latest upload is ${got.size} bytes, over the limit`,
      };
    }
    return {
      kind: 'archive',
      name: upload.key.slice(upload.key.lastIndexOf('/') + 1),
      bytes: got.object.body,
    };
  };
}

/** Scan id of an audit rescan (distinct from the upload's own scan: rules may have changed). */
export function auditScanId(runId: string, repository: string): string {
  return createHash('sha256')
    .update(JSON.stringify(['audit', runId, repository]))
    .digest('hex')
    .slice(0, 32);
}

/**
 * Rescans one repository and records the result; completes the shard and the run when this was
 * the last piece. `lastAttempt`: record a failure instead of throwing it.
 */
export async function auditRepository(
  deps: AuditDeps,
  message: AuditMessage,
  load: (repository: string) => Promise<ArchiveLoad>,
  options: { lastAttempt: boolean },
): Promise<RepositoryResult> {
  const { runId, repository } = message;
  const run = deps.layout.auditRun(runId);
  // A redelivered message keeps the result already recorded: a second rescan could differ (the
  // registry's answers, a newer upload) and would make the run's outputs depend on delivery order.
  const recorded = await readJson<RepositoryResult>(deps.reports, run.result(repository));
  let result: RepositoryResult;
  try {
    result = recorded ?? (await rescan(deps, message, load));
  } catch (err) {
    if (!options.lastAttempt) throw err;
    deps.logger.error('audit rescan failed on its last attempt; recorded as failed', {
      repository,
      ...errorAttributes(err),
    });
    deps.metrics.addMetric(METRIC.auditFailures, 'Count', 1);
    result = unscannedResult(
      runId,
      repository,
      'failed',
      isScanTimeout(err)
        ? `scan-timeout: ${err.message}`
        : 'the rescan failed repeatedly (see the worker logs)',
    );
  }
  if (recorded === null) {
    await putJson(deps.reports, run.result(repository), result);
    deps.metrics.addMetric(METRIC.auditRepositories, 'Count', 1);
  }
  await deps.reports.put(run.done(message.shard, repository), '', { contentType: 'text/plain' });
  await completeShardIfDone(deps, message, run);
  return result;
}

async function rescan(
  deps: AuditDeps,
  message: AuditMessage,
  load: (repository: string) => Promise<ArchiveLoad>,
): Promise<RepositoryResult> {
  const { runId, repository } = message;
  if (deps.signal?.aborted) throw deadlinePassed(`the rescan of ${repository}`);
  const loaded = await load(repository);
  if (loaded.kind === 'missing') return unscannedResult(runId, repository, 'missing', loaded.reason);
  if (loaded.kind === 'rejected') return unscannedResult(runId, repository, 'rejected', loaded.reason);
  const scanId = auditScanId(runId, repository);
  const outcome = await scanAndStore(deps, {
    scanId,
    name: loaded.name,
    bytes: loaded.bytes,
    repository,
    registry: deps.registry,
    source: { kind: 'local', name: loaded.name },
  });
  if (outcome.status === 'rejected') {
    return unscannedResult(runId, repository, 'rejected', outcome.record.error.message, scanId);
  }
  const previous =
    message.previousRunId === null
      ? null
      : await readJson<RepositoryResult>(
          deps.reports,
          deps.layout.auditRun(message.previousRunId).result(repository),
        );
  return scannedResult(runId, repository, scanId, outcome.report, previous);
}

async function completeShardIfDone(
  deps: AuditDeps,
  message: AuditMessage,
  run: AuditRunLayout,
): Promise<void> {
  const members = await readJson<string[]>(deps.reports, run.members(message.shard));
  if (members === null)
    throw new Error(`audit run ${message.runId} has no member list for shard ${message.shard}`);
  const done = new Set<string>();
  for (const key of await collect(deps.reports.list(run.donePrefix(message.shard)))) {
    const repository = run.repositoryOfDone(message.shard, key);
    if (repository !== null) done.add(repository);
  }
  if (!members.every((m) => done.has(m))) return;
  const entries: RepositoryEntry[] = [];
  for (const repository of members) {
    const result = await readJson<RepositoryResult>(deps.reports, run.result(repository));
    if (result === null)
      throw new Error(`audit result of ${repository} is missing although it is marked done`);
    entries.push(entryOf(result));
  }
  await putJson(deps.reports, run.partial(message.shard), entries);
  const partials = await collect(deps.reports.list(run.partialsPrefix));
  if (partials.length < message.shards) return;
  const manifest = await readJson<AuditManifest>(deps.reports, run.manifest);
  if (manifest === null) throw new Error(`audit run ${message.runId} has no manifest`);
  const all: RepositoryEntry[] = [];
  for (let shard = 0; shard < manifest.shards; shard++) {
    const part = await readJson<RepositoryEntry[]>(deps.reports, run.partial(shard));
    if (part === null) return; // listed but not readable yet: the writer of that partial completes the run
    all.push(...part);
  }
  await completeRun(deps, manifest, all);
}

/** Writes the summary (JSON and Markdown) and moves `audits/latest.json` forward. */
export async function completeRun(
  deps: AuditDeps,
  manifest: AuditManifest,
  entries: RepositoryEntry[],
): Promise<AuditSummary> {
  const run = deps.layout.auditRun(manifest.runId);
  const summary = buildSummary(manifest, entries);
  await deps.reports.put(run.summaryMarkdown, renderSummaryMarkdown(summary), {
    contentType: 'text/markdown; charset=utf-8',
  });
  await putJson(deps.reports, run.summaryJson, summary);
  const latest = await readJson<AuditLatestPointer>(deps.reports, deps.layout.auditLatest);
  if (latest === null || compareKeys(latest.runId, manifest.runId) <= 0) {
    const pointer: AuditLatestPointer = {
      schemaVersion: 1,
      runId: manifest.runId,
      startedAt: manifest.startedAt,
      summary: { json: run.summaryJson, markdown: run.summaryMarkdown },
      totals: summary.totals,
    };
    await putJson(deps.reports, deps.layout.auditLatest, pointer);
  }
  await writeFleet(deps, summary);
  deps.metrics.addMetric(METRIC.auditRuns, 'Count', 1);
  deps.logger.info('audit run complete', { runId: manifest.runId, totals: summary.totals });
  return summary;
}

/**
 * Writes the fleet page and its data (`fleet/index.html`, `fleet/index.json`), compared with the
 * stored fleet data of an earlier run (or `deps.previousFleet`), unless a newer run already wrote
 * them. With the registry check, each provider's newest release is asked once per run.
 */
export async function writeFleet(deps: AuditDeps, summary: AuditSummary): Promise<FleetData | null> {
  let stored: FleetData | null = null;
  const got = await deps.reports.get(deps.layout.fleetJson);
  if (got !== null) {
    try {
      stored = parseFleetData(got.body.toString('utf8'), deps.layout.fleetJson);
    } catch (err) {
      // A damaged page is replaced; the run still completes (there is just nothing to diff with).
      deps.logger.warn('the stored fleet data is unreadable; the fleet page is written without changes', {
        ...errorAttributes(err),
      });
    }
  }
  if (stored !== null && compareKeys(stored.runId, summary.runId) > 0) return null;
  const previous =
    deps.previousFleet ?? (stored !== null && compareKeys(stored.runId, summary.runId) < 0 ? stored : null);
  let registry = null;
  if (deps.registry && summary.providers.length > 0) {
    const config = deps.scanOptions.config;
    const client = new RegistryClient({
      hosts: config?.registryHosts ?? {},
      credentials: { ...(config?.credentials ?? {}), ...(deps.scanOptions.registryTokens ?? {}) },
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    registry = await registryNewest(
      summary.providers.map((p) => p.source),
      (source) => client.availableVersions(source),
    );
  }
  const fleet = buildFleet(summary, { registry, previous });
  await putJson(deps.reports, deps.layout.fleetJson, fleet);
  await deps.reports.put(deps.layout.fleetHtml, renderFleetHtml(fleet), {
    contentType: 'text/html; charset=utf-8',
  });
  return fleet;
}

/** Processes one queue message in the Lambda worker. */
export async function processAuditMessage(
  deps: AuditDeps & { source: VersionedObjectSource; maxArchiveBytes: number },
  body: string,
  delivery: { receiveCount: number; maxReceiveCount: number },
): Promise<RepositoryResult> {
  const message = parseAuditMessage(body);
  deps.logger.appendKeys?.({ repository: message.repository, runId: message.runId });
  try {
    return await auditRepository(deps, message, latestUploadLoader(deps), {
      lastAttempt: delivery.receiveCount >= delivery.maxReceiveCount,
    });
  } catch (err) {
    deps.logger.error('audit message failed; it will be redelivered', {
      repository: message.repository,
      runId: message.runId,
      receiveCount: delivery.receiveCount,
      ...errorAttributes(err),
    });
    throw err;
  } finally {
    deps.logger.removeKeys?.(['repository', 'runId']);
  }
}
