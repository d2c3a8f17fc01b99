/**
 * The fleet page's data (`fleet/index.json`, documented by docs/fleet.schema.json), as pure
 * functions over an audit summary: per provider the versions locked across repositories and how
 * far each repository is behind the newest locked in the fleet (and, with the registry check, the
 * registry's newest), the `required_version` spread, registry module versions, the organisation
 * policy's findings, and what changed since the previous fleet data. src/service/fleet-html.ts
 * renders it.
 *
 * "Behind" is measured in Terraform's version order (src/constraints/version.ts, as
 * `terraform init` orders provider versions): `releases` counts the distinct versions of the
 * reference list (the versions locked in the fleet, or the versions the registry publishes) newer
 * than the locked one and not newer than the newest; `majors` is the difference of the major
 * versions; `minors` the difference of the minor versions when the major is the same (null when it
 * is not: the major says it). Pre-releases are never "the newest" unless nothing else is known.
 */
import { parseVersion, type Version } from '../constraints';
import { compareKeys } from '../storage/keys';
import { TOOL_VERSION } from '../version';
import {
  compareVersions,
  type AuditStatus,
  type AuditSummary,
  type AuditTotals,
  type FindingRef,
  type RepositoryEntry,
  type SeverityCounts,
} from './summary';

/** How far a locked version is behind a newest one. */
export interface Behind {
  newest: string;
  releases: number;
  majors: number;
  /** Null when the major versions differ. */
  minors: number | null;
}

/** What the registry answered for a provider's newest version. */
export type RegistryNewest =
  | { status: 'ok'; newest: string; releases: number }
  | { status: 'not-found' | 'unavailable'; reason: string };

export interface FleetProvider {
  source: string;
  /** Distinct locked versions, newest first, with the repositories locking each. */
  versions: { version: string; repositories: string[] }[];
  /** The newest version locked anywhere in the fleet. */
  newest: string;
  /** With the registry check: its newest release, or why it is not known; null without it. */
  registry: RegistryNewest | null;
  /** Repositories whose oldest locked version is behind `newest`. */
  behind: number;
}

export interface FleetLock {
  source: string;
  /** The versions the repository's lock files lock (several roots may differ), newest first. */
  versions: string[];
  /** The oldest of them: what "behind" is measured from. */
  oldest: string;
  fleet: Behind;
  /** Behind the registry's newest; null without the registry check or without its answer. */
  registry: Behind | null;
}

/** At most this many new and fixed findings are listed per repository (the counts are exact). */
export const FLEET_DETAIL_LIMIT = 50;

export interface FleetRepository {
  repository: string;
  status: AuditStatus;
  reason: string | null;
  scanId: string | null;
  counts: SeverityCounts;
  /** Whether the audit compared the findings with the previous audit's (`new` / `fixed`). */
  compared: boolean;
  newCount: number;
  fixedCount: number;
  /** The first `FLEET_DETAIL_LIMIT` new and fixed findings. */
  new: FindingRef[];
  fixed: FindingRef[];
  engines: string[];
  locks: FleetLock[];
  requiredVersions: { constraint: string; modules: number }[];
  moduleVersions: { source: string; version: string | null; calls: number }[];
  policy: FindingRef[];
  rules: Record<string, { severity: FindingRef['severity']; count: number }>;
}

export interface LockChange {
  repository: string;
  source: string;
  before: string[];
  after: string[];
  /** `upgrade` / `downgrade` compare the oldest locked versions; `added` / `removed` the provider. */
  change: 'upgrade' | 'downgrade' | 'changed' | 'added' | 'removed';
}

/** What changed since the previous fleet data (`fleet/index.json` of the previous audit). */
export interface FleetChanges {
  previous: { runId: string; startedAt: string };
  added: string[];
  removed: string[];
  status: { repository: string; before: AuditStatus; after: AuditStatus }[];
  counts: { repository: string; before: SeverityCounts; after: SeverityCounts }[];
  locks: LockChange[];
}

export interface FleetData {
  schemaVersion: 1;
  kind: 'tfguard-fleet';
  tool: { name: 'tfguard'; version: string };
  runId: string;
  startedAt: string;
  /** The audit run whose findings `new` / `fixed` were compared with. */
  previousRunId: string | null;
  /** Whether the registry was asked for each provider's newest release. */
  registry: boolean;
  totals: AuditTotals;
  providers: FleetProvider[];
  repositories: FleetRepository[];
  /** Each `required_version` constraint with the repositories stating it. */
  requiredVersions: { constraint: string; repositories: string[]; modules: number }[];
  /** Null when there is no previous fleet data to compare with. */
  changes: FleetChanges | null;
}

function version(s: string): Version | null {
  try {
    return parseVersion(s);
  } catch {
    return null;
  }
}

/** The newest of `versions` in Terraform's order, a release rather than a pre-release when any. */
export function newestOf(versions: readonly string[]): string | null {
  const sorted = [...versions].sort(compareVersions);
  return sorted.find((v) => version(v)?.prerelease === '') ?? sorted[0] ?? null;
}

/** How far `locked` is behind `newest`, counting releases in `reference` (see the file comment). */
export function behind(locked: string, newest: string, reference: readonly string[]): Behind {
  const l = version(locked);
  const n = version(newest);
  if (l === null || n === null || compareVersions(locked, newest) <= 0) {
    return { newest, releases: 0, majors: 0, minors: 0 };
  }
  // The newest counts even when the reference lacks it (a pre-release newest, an odd list).
  const releases = new Set([
    newest,
    ...reference.filter(
      (r) =>
        version(r)?.prerelease === '' && compareVersions(r, locked) < 0 && compareVersions(r, newest) >= 0,
    ),
  ]).size;
  const majors = Math.max(0, n.major - l.major);
  return { newest, releases, majors, minors: majors === 0 ? Math.max(0, n.minor - l.minor) : null };
}

/** Whether a `Behind` says anything is newer. */
export function isBehind(b: Behind): boolean {
  return b.releases > 0;
}

/** Asks the registry for a provider's versions (`RegistryClient.availableVersions`). */
export type VersionLookup = (
  source: string,
) => Promise<
  { status: 'ok'; versions: { version: string }[] } | { status: 'not-found' | 'unavailable'; reason: string }
>;

/** The registry's newest release of each source, asked two at a time; never throws. */
export async function registryNewest(
  sources: readonly string[],
  lookup: VersionLookup,
): Promise<Map<string, { newest: RegistryNewest; versions: string[] }>> {
  const out = new Map<string, { newest: RegistryNewest; versions: string[] }>();
  let next = 0;
  const worker = async () => {
    while (next < sources.length) {
      const source = sources[next++]!;
      let answer: Awaited<ReturnType<VersionLookup>>;
      try {
        answer = await lookup(source);
      } catch (err) {
        answer = { status: 'unavailable', reason: err instanceof Error ? err.message : String(err) };
      }
      if (answer.status !== 'ok') {
        out.set(source, { newest: { status: answer.status, reason: answer.reason }, versions: [] });
        continue;
      }
      const versions = answer.versions.map((v) => v.version).filter((v) => version(v) !== null);
      const newest = newestOf(versions);
      out.set(
        source,
        newest === null
          ? { newest: { status: 'not-found', reason: 'the registry lists no versions' }, versions }
          : {
              newest: {
                status: 'ok',
                newest,
                releases: versions.filter((v) => version(v)?.prerelease === '').length,
              },
              versions,
            },
      );
    }
  };
  await Promise.all([worker(), worker()]);
  return out;
}

function lockChanges(previous: FleetData, current: FleetRepository[]): LockChange[] {
  const before = new Map(previous.repositories.map((r) => [r.repository, r]));
  const out: LockChange[] = [];
  for (const repo of current) {
    const old = before.get(repo.repository);
    if (old === undefined || old.status !== 'scanned' || repo.status !== 'scanned') continue;
    const oldLocks = new Map(old.locks.map((l) => [l.source, l]));
    const newLocks = new Map(repo.locks.map((l) => [l.source, l]));
    for (const source of [...new Set([...oldLocks.keys(), ...newLocks.keys()])].sort(compareKeys)) {
      const a = oldLocks.get(source);
      const b = newLocks.get(source);
      const was = a?.versions ?? [];
      const is = b?.versions ?? [];
      if (JSON.stringify(was) === JSON.stringify(is)) continue;
      let change: LockChange['change'];
      if (a === undefined) change = 'added';
      else if (b === undefined) change = 'removed';
      else {
        const order = compareVersions(b.oldest, a.oldest);
        change = order < 0 ? 'upgrade' : order > 0 ? 'downgrade' : 'changed';
      }
      out.push({ repository: repo.repository, source, before: was, after: is, change });
    }
  }
  return out;
}

function changesSince(previous: FleetData, repositories: FleetRepository[]): FleetChanges {
  const before = new Map(previous.repositories.map((r) => [r.repository, r]));
  const now = new Set(repositories.map((r) => r.repository));
  const status: FleetChanges['status'] = [];
  const counts: FleetChanges['counts'] = [];
  for (const r of repositories) {
    const old = before.get(r.repository);
    if (old === undefined) continue;
    if (old.status !== r.status)
      status.push({ repository: r.repository, before: old.status, after: r.status });
    else if (
      r.status === 'scanned' &&
      (old.counts.error !== r.counts.error ||
        old.counts.warning !== r.counts.warning ||
        old.counts.notice !== r.counts.notice)
    )
      counts.push({ repository: r.repository, before: old.counts, after: r.counts });
  }
  return {
    previous: { runId: previous.runId, startedAt: previous.startedAt },
    added: repositories.map((r) => r.repository).filter((r) => !before.has(r)),
    removed: [...before.keys()].filter((r) => !now.has(r)).sort(compareKeys),
    status,
    counts,
    locks: lockChanges(previous, repositories),
  };
}

/**
 * Checks that a previous `fleet/index.json` (or `--previous FILE`) is fleet data this version can
 * compare with; the message says what is wrong.
 */
export function parseFleetData(text: string, name: string): FleetData {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name} is not JSON: ${(err as Error).message}`);
  }
  const v = value as Partial<FleetData> | null;
  if (v === null || typeof v !== 'object' || v.kind !== 'tfguard-fleet')
    throw new Error(`${name} is not tfguard fleet data (no "kind": "tfguard-fleet")`);
  if (v.schemaVersion !== 1)
    throw new Error(`${name} has schemaVersion ${JSON.stringify(v.schemaVersion)}; this tfguard reads 1`);
  if (typeof v.runId !== 'string' || typeof v.startedAt !== 'string' || !Array.isArray(v.repositories))
    throw new Error(`${name} lacks runId, startedAt or repositories`);
  for (const r of v.repositories) {
    if (
      r === null ||
      typeof r !== 'object' ||
      typeof r.repository !== 'string' ||
      typeof r.status !== 'string' ||
      !Array.isArray(r.locks) ||
      typeof r.counts !== 'object'
    )
      throw new Error(`${name}: a repository entry lacks repository, status, counts or locks`);
  }
  return v as FleetData;
}

function fleetRepository(
  entry: RepositoryEntry,
  providers: Map<string, FleetProvider>,
  fleetVersions: Map<string, string[]>,
  registry: Map<string, { newest: RegistryNewest; versions: string[] }> | null,
): FleetRepository {
  const locks: FleetLock[] = Object.entries(entry.locks)
    .filter(([, versions]) => versions.length > 0)
    .map(([source, versions]) => {
      const sorted = [...versions].sort(compareVersions);
      const oldest = sorted[sorted.length - 1]!;
      const provider = providers.get(source)!;
      const reg = registry?.get(source);
      return {
        source,
        versions: sorted,
        oldest,
        fleet: behind(oldest, provider.newest, fleetVersions.get(source) ?? []),
        registry:
          reg !== undefined && reg.newest.status === 'ok'
            ? behind(oldest, reg.newest.newest, reg.versions)
            : null,
      };
    })
    .sort((a, b) => compareKeys(a.source, b.source));
  return {
    repository: entry.repository,
    status: entry.status,
    reason: entry.reason,
    scanId: entry.scanId,
    counts: entry.counts,
    compared: entry.compared,
    newCount: entry.new.length,
    fixedCount: entry.fixed.length,
    new: entry.new.slice(0, FLEET_DETAIL_LIMIT),
    fixed: entry.fixed.slice(0, FLEET_DETAIL_LIMIT),
    engines: entry.engines ?? [],
    locks,
    requiredVersions: entry.requiredVersions ?? [],
    moduleVersions: entry.moduleVersions ?? [],
    policy: entry.policy ?? [],
    rules: entry.rules,
  };
}

/**
 * The fleet data of an audit: `registry` holds the registry's answers (null without the registry
 * check), `previous` the previous fleet data (null when there is none).
 */
export function buildFleet(
  summary: AuditSummary,
  options: {
    registry: Map<string, { newest: RegistryNewest; versions: string[] }> | null;
    previous: FleetData | null;
  },
): FleetData {
  const providers = new Map<string, FleetProvider>();
  const fleetVersions = new Map<string, string[]>();
  for (const p of summary.providers) {
    const versions = p.versions.map((v) => v.version);
    fleetVersions.set(p.source, versions);
    providers.set(p.source, {
      source: p.source,
      versions: p.versions,
      newest: newestOf(versions) ?? '',
      registry: options.registry === null ? null : (options.registry.get(p.source)?.newest ?? null),
      behind: 0,
    });
  }
  const repositories = summary.repositories.map((e) =>
    fleetRepository(e, providers, fleetVersions, options.registry),
  );
  for (const r of repositories) {
    for (const l of r.locks) if (isBehind(l.fleet)) providers.get(l.source)!.behind++;
  }
  const required = new Map<string, { repositories: string[]; modules: number }>();
  for (const r of repositories) {
    for (const rv of r.requiredVersions) {
      const entry = required.get(rv.constraint) ?? { repositories: [], modules: 0 };
      entry.repositories.push(r.repository);
      entry.modules += rv.modules;
      required.set(rv.constraint, entry);
    }
  }
  return {
    schemaVersion: 1,
    kind: 'tfguard-fleet',
    tool: { name: 'tfguard', version: TOOL_VERSION },
    runId: summary.runId,
    startedAt: summary.startedAt,
    previousRunId: summary.previousRunId,
    registry: options.registry !== null,
    totals: summary.totals,
    providers: [...providers.values()],
    repositories,
    requiredVersions: [...required.entries()]
      .sort(([a], [b]) => compareKeys(a, b))
      .map(([constraint, e]) => ({ constraint, ...e })),
    changes:
      options.previous === null || options.previous.runId === summary.runId
        ? null
        : changesSince(options.previous, repositories),
  };
}
