/**
 * The fleet audit run locally (the CLI's `tfguard audit <dir-of-archives>`): the same plan, rescan,
 * comparison and summary code as the Lambda functions, over any `ObjectStore` (the filesystem store
 * by default), with the archives handed in instead of read from upload pointers.
 */
import { InputError } from '../errors';
import type { ObjectStore } from '../storage/types';
import { auditRepository, completeRun, planRun, type ArchiveLoad, type AuditDeps } from './audit';
import { auditRunId, normalizeRepository, ReportLayout } from './keys';
import { noMetrics, silentLogger, type ServiceLogger, type ServiceMetrics } from './observability';
import type { ScanContext } from './scans';
import type { AuditSummary, RepositoryResult } from './summary';
import type { FleetData } from './fleet';

export interface LocalArchive {
  /** Repository name (for example the archive's file name without its suffix). */
  repository: string;
  /** File name, used as the archive's display name. */
  name: string;
  read(): Promise<Buffer>;
}

export interface LocalAuditOptions {
  /** Key prefix inside the store (default `reports/`, like the service). */
  reportsPrefix?: string;
  /** Registry cross-check of lock files (default false). */
  registry?: boolean;
  scanOptions?: ScanContext['scanOptions'];
  /** Archives scanned at once (default 2). */
  concurrency?: number;
  /** Run start time (default now); also seeds the run id. */
  now?: Date;
  shardSize?: number;
  /** Fleet data to compare the fleet page with instead of the store's `fleet/index.json`. */
  previousFleet?: FleetData;
  logger?: ServiceLogger;
  metrics?: ServiceMetrics;
  onProgress?: (progress: {
    done: number;
    total: number;
    repository: string;
    status: RepositoryResult['status'];
  }) => void;
}

export interface LocalAuditResult {
  runId: string;
  summary: AuditSummary;
  /** The fleet page's data (null when a newer audit in the store already wrote the page). */
  fleet: FleetData | null;
  /** Store keys of the summary and of the fleet page and its data. */
  keys: { json: string; markdown: string; fleetHtml: string; fleetJson: string };
}

/**
 * Audits the given archives (one per repository), comparing with the previous audit in the same
 * store, and writes `<prefix>audits/runs/<runId>/summary.json|.md` plus `<prefix>audits/latest.json`.
 * Throws `InputError('usage')` for unusable or duplicate repository names. An archive that cannot
 * be read or scanned is recorded in the summary (`rejected` / `failed`), not thrown.
 */
export async function runLocalAudit(
  archives: readonly LocalArchive[],
  store: ObjectStore,
  options: LocalAuditOptions = {},
): Promise<LocalAuditResult> {
  const byRepository = new Map<string, LocalArchive>();
  for (const archive of archives) {
    const repository = normalizeRepository(archive.repository);
    if (repository === null)
      throw new InputError('usage', `unusable repository name ${JSON.stringify(archive.repository)}`);
    const other = byRepository.get(repository);
    if (other !== undefined) {
      throw new InputError(
        'usage',
        `archives ${other.name} and ${archive.name} are both repository ${JSON.stringify(repository)}`,
      );
    }
    byRepository.set(repository, archive);
  }
  const now = options.now ?? new Date();
  const layout = new ReportLayout(options.reportsPrefix ?? 'reports/');
  const deps: AuditDeps = {
    reports: store,
    layout,
    scanOptions: options.scanOptions ?? {},
    logger: options.logger ?? silentLogger,
    metrics: options.metrics ?? noMetrics,
    registry: options.registry ?? false,
    shardSize: options.shardSize,
    previousFleet: options.previousFleet,
  };
  const runId = auditRunId(now, `local:${[...byRepository.keys()].join('\n')}`);
  const plan = await planRun(deps, { runId, startedAt: now.toISOString() }, async () => [
    ...byRepository.keys(),
  ]);
  const load = async (repository: string): Promise<ArchiveLoad> => {
    const archive = byRepository.get(repository);
    if (archive === undefined) return { kind: 'missing', reason: 'no archive for this repository' };
    return { kind: 'archive', name: archive.name, bytes: await archive.read() };
  };
  const run = layout.auditRun(runId);
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < plan.messages.length) {
      const message = plan.messages[next++]!;
      // Locally there is no redelivery: every attempt is the last one.
      const result = await auditRepository(deps, message, load, { lastAttempt: true });
      done++;
      options.onProgress?.({
        done,
        total: plan.messages.length,
        repository: message.repository,
        status: result.status,
      });
    }
  };
  const concurrency = Math.max(1, options.concurrency ?? 2);
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, plan.messages.length)) }, worker));
  if (plan.messages.length === 0) {
    await completeRun(deps, plan.manifest, []);
  }
  const stored = await store.get(run.summaryJson);
  if (stored === null) throw new Error(`audit ${runId} finished without a summary`);
  const fleetStored = await store.get(layout.fleetJson);
  const fleet = fleetStored === null ? null : (JSON.parse(fleetStored.body.toString('utf8')) as FleetData);
  return {
    runId,
    summary: JSON.parse(stored.body.toString('utf8')) as AuditSummary,
    fleet: fleet !== null && fleet.runId === runId ? fleet : null,
    keys: {
      json: run.summaryJson,
      markdown: run.summaryMarkdown,
      fleetHtml: layout.fleetHtml,
      fleetJson: layout.fleetJson,
    },
  };
}
