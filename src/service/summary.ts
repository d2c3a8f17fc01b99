/**
 * The fleet audit summary, as pure functions: per-repository entries from a rescan's report (with
 * what is new or fixed since the previous audit), merged per shard and then across shards into
 * one summary with each provider's locked versions per repository (version skew) and the most
 * common violations; rendered as JSON and Markdown.
 *
 * Findings are compared without their line numbers (edits above a finding move it) as a multiset
 * of (rule, module, file, message).
 */
import { compareVersions as compareTerraformVersions, parseVersion, type Version } from '../constraints';
import type { Finding } from '../rules';
import type { Severity } from '../model';
import { SEVERITIES } from '../model';
import type { Report } from '../report/types';
import { mdCode, mdText } from '../report/escape';
import { compareKeys } from '../storage/keys';
import { count } from '../util/words';

export interface FindingRef {
  ruleId: string;
  severity: Severity;
  module: string;
  file: string | null;
  /** Not part of the comparison (edits above a finding move it); absent in results stored before
   * the fleet page. */
  line?: number | null;
  message: string;
}

export interface SeverityCounts {
  error: number;
  warning: number;
  notice: number;
  total: number;
}

export type AuditStatus = 'scanned' | 'rejected' | 'missing' | 'failed';

/** One repository in one audit run. */
export interface RepositoryEntry {
  repository: string;
  status: AuditStatus;
  /** The rescan's stored report (scanned) or rejection (rejected). */
  scanId: string | null;
  counts: SeverityCounts;
  /** Whether the previous audit scanned this repository (so `new`/`fixed` are meaningful). */
  compared: boolean;
  new: FindingRef[];
  fixed: FindingRef[];
  /** Provider source → the versions its lock files lock (several roots may differ), sorted. */
  locks: Record<string, string[]>;
  /** Findings per rule. */
  rules: Record<string, { severity: Severity; count: number }>;
  /** Why a repository was not scanned (rejected, missing, failed). */
  reason: string | null;
  // The fleet page's data (src/service/fleet.ts). Optional: results stored before it lack them.
  /** The engines of the repository's roots (`terraform`, `opentofu`), sorted. */
  engines?: string[];
  /** Distinct `required_version` constraints, with the number of modules stating each. */
  requiredVersions?: { constraint: string; modules: number }[];
  /** Registry module calls, grouped by source and version constraint (null: none given). */
  moduleVersions?: { source: string; version: string | null; calls: number }[];
  /** The findings of the organisation policy (rule ids starting with `policy-`), not suppressed. */
  policy?: FindingRef[];
}

/** What the worker stores per repository: the entry plus the full finding list for the next diff. */
export interface RepositoryResult extends RepositoryEntry {
  schemaVersion: 1;
  runId: string;
  findings: FindingRef[];
}

export interface ProviderSkew {
  source: string;
  /** Distinct locked versions, newest first, with the repositories locking each. */
  versions: { version: string; repositories: string[] }[];
  skew: boolean;
}

export interface RuleTally {
  ruleId: string;
  severity: Severity;
  findings: number;
  repositories: number;
}

export interface AuditTotals {
  repositories: number;
  scanned: number;
  rejected: number;
  missing: number;
  failed: number;
  findings: SeverityCounts;
  new: number;
  fixed: number;
}

export interface AuditSummary {
  schemaVersion: 1;
  runId: string;
  startedAt: string;
  previousRunId: string | null;
  totals: AuditTotals;
  /** Sorted by repository name (UTF-8 byte order). */
  repositories: RepositoryEntry[];
  /** Every locked provider, sorted by source; `skew` when repositories lock different versions. */
  providers: ProviderSkew[];
  /** The most common violations: by repositories affected, then findings, then rule id. */
  topViolations: RuleTally[];
}

export const TOP_VIOLATIONS = 10;

export function findingRef(f: Finding): FindingRef {
  return {
    ruleId: f.ruleId,
    severity: f.severity,
    module: f.module,
    file: f.file,
    line: f.line,
    message: f.message,
  };
}

/** Rule ids of the organisation policy's rules start with this. */
export const POLICY_RULE_PREFIX = 'policy-';

function fingerprint(f: FindingRef): string {
  return JSON.stringify([f.ruleId, f.module, f.file, f.message]);
}

/** Multiset difference a − b. */
function minus(a: FindingRef[], b: FindingRef[]): FindingRef[] {
  const remaining = new Map<string, number>();
  for (const f of b) remaining.set(fingerprint(f), (remaining.get(fingerprint(f)) ?? 0) + 1);
  const out: FindingRef[] = [];
  for (const f of a) {
    const key = fingerprint(f);
    const n = remaining.get(key) ?? 0;
    if (n > 0) remaining.set(key, n - 1);
    else out.push(f);
  }
  return out;
}

export function emptyCounts(): SeverityCounts {
  return { error: 0, warning: 0, notice: 0, total: 0 };
}

function countFindings(findings: FindingRef[]): SeverityCounts {
  const counts = emptyCounts();
  for (const f of findings) {
    counts[f.severity]++;
    counts.total++;
  }
  return counts;
}

function terraformVersion(s: string): Version | null {
  try {
    return parseVersion(s);
  } catch {
    return null;
  }
}

/**
 * Newest first in Terraform's own order (src/constraints/version.ts, after apparentlymart/go-versions,
 * which `terraform init` uses to pick provider versions) — not npm semver's, which orders
 * pre-releases differently (`1.5.0-beta` is older than `1.5.0-alpha.1` for Terraform) and rejects
 * versions Terraform reads (`1.2` is 1.2.0). What Terraform cannot read comes last, by key; equal
 * precedence (e.g. different build metadata) falls back to the key, so the order is total.
 */
export function compareVersions(a: string, b: string): number {
  const va = terraformVersion(a);
  const vb = terraformVersion(b);
  if (va && vb) return compareTerraformVersions(vb, va) || compareKeys(a, b);
  if (va) return -1;
  if (vb) return 1;
  return compareKeys(a, b);
}

/** Provider source → locked versions, from every root's lock file in the report. */
export function lockedVersions(report: Report): Record<string, string[]> {
  const bySource = new Map<string, Set<string>>();
  for (const root of report.roots) {
    for (const provider of root.lock?.providers ?? []) {
      if (provider.version === null || provider.version === undefined) continue;
      const set = bySource.get(provider.source) ?? new Set<string>();
      set.add(provider.version);
      bySource.set(provider.source, set);
    }
  }
  const out: Record<string, string[]> = {};
  for (const source of [...bySource.keys()].sort(compareKeys))
    out[source] = [...bySource.get(source)!].sort(compareVersions);
  return out;
}

/** The `required_version` constraints of every module, with how many modules state each. */
export function requiredVersions(report: Report): { constraint: string; modules: number }[] {
  const counts = new Map<string, number>();
  for (const m of report.modules) {
    for (const c of new Set(m.requiredVersion)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  return [...counts.keys()]
    .sort(compareKeys)
    .map((constraint) => ({ constraint, modules: counts.get(constraint)! }));
}

/** Registry module calls of every module, grouped by source and version constraint. */
export function moduleVersions(report: Report): { source: string; version: string | null; calls: number }[] {
  const counts = new Map<string, { source: string; version: string | null; calls: number }>();
  for (const m of report.modules) {
    for (const call of m.moduleCalls) {
      if (call.sourceKind !== 'registry' || call.source === null) continue;
      const key = JSON.stringify([call.source, call.version]);
      const entry = counts.get(key) ?? { source: call.source, version: call.version, calls: 0 };
      entry.calls++;
      counts.set(key, entry);
    }
  }
  return [...counts.values()].sort(
    (a, b) => compareKeys(a.source, b.source) || compareKeys(a.version ?? '', b.version ?? ''),
  );
}

function ruleCounts(findings: FindingRef[]): Record<string, { severity: Severity; count: number }> {
  const out: Record<string, { severity: Severity; count: number }> = {};
  for (const f of [...findings].sort((a, b) => compareKeys(a.ruleId, b.ruleId))) {
    const entry = out[f.ruleId];
    if (entry === undefined) out[f.ruleId] = { severity: f.severity, count: 1 };
    else {
      entry.count++;
      // The most severe severity the rule was reported with (rules can be overridden per repository).
      if (SEVERITIES.indexOf(f.severity) < SEVERITIES.indexOf(entry.severity)) entry.severity = f.severity;
    }
  }
  return out;
}

/** The result of rescanning a repository, compared with its previous audit result (if any). */
export function scannedResult(
  runId: string,
  repository: string,
  scanId: string,
  report: Report,
  previous: RepositoryResult | null,
): RepositoryResult {
  // Findings suppressed by an inline annotation are accepted on purpose: not counted, and a newly
  // suppressed finding is listed as fixed.
  const findings = report.findings.filter((f) => f.suppressed === undefined).map(findingRef);
  const compared = previous !== null && previous.status === 'scanned';
  return {
    schemaVersion: 1,
    runId,
    repository,
    status: 'scanned',
    scanId,
    counts: countFindings(findings),
    compared,
    new: compared ? minus(findings, previous.findings) : [],
    fixed: compared ? minus(previous.findings, findings) : [],
    locks: lockedVersions(report),
    rules: ruleCounts(findings),
    reason: null,
    engines: [...new Set(report.roots.map((r) => r.engine))].sort(compareKeys),
    requiredVersions: requiredVersions(report),
    moduleVersions: moduleVersions(report),
    policy: findings.filter((f) => f.ruleId.startsWith(POLICY_RULE_PREFIX)),
    findings,
  };
}

/** The result for a repository that could not be scanned. */
export function unscannedResult(
  runId: string,
  repository: string,
  status: Exclude<AuditStatus, 'scanned'>,
  reason: string,
  scanId: string | null = null,
): RepositoryResult {
  return {
    schemaVersion: 1,
    runId,
    repository,
    status,
    scanId,
    counts: emptyCounts(),
    compared: false,
    new: [],
    fixed: [],
    locks: {},
    rules: {},
    reason,
    findings: [],
  };
}

export function entryOf(result: RepositoryResult): RepositoryEntry {
  const { schemaVersion: _v, runId: _r, findings: _f, ...entry } = result;
  return entry;
}

/** Builds the summary from every repository's entry (in any order). */
export function buildSummary(
  run: { runId: string; startedAt: string; previousRunId: string | null },
  entries: RepositoryEntry[],
): AuditSummary {
  const repositories = [...entries].sort((a, b) => compareKeys(a.repository, b.repository));
  const totals: AuditTotals = {
    repositories: repositories.length,
    scanned: 0,
    rejected: 0,
    missing: 0,
    failed: 0,
    findings: emptyCounts(),
    new: 0,
    fixed: 0,
  };
  const providers = new Map<string, Map<string, string[]>>();
  const rules = new Map<string, RuleTally>();
  for (const entry of repositories) {
    totals[entry.status]++;
    for (const s of SEVERITIES) totals.findings[s] += entry.counts[s];
    totals.findings.total += entry.counts.total;
    totals.new += entry.new.length;
    totals.fixed += entry.fixed.length;
    for (const [source, versions] of Object.entries(entry.locks)) {
      const byVersion = providers.get(source) ?? new Map<string, string[]>();
      for (const version of versions)
        byVersion.set(version, [...(byVersion.get(version) ?? []), entry.repository]);
      providers.set(source, byVersion);
    }
    for (const [ruleId, { severity, count }] of Object.entries(entry.rules)) {
      const tally = rules.get(ruleId) ?? { ruleId, severity, findings: 0, repositories: 0 };
      tally.findings += count;
      tally.repositories += 1;
      if (SEVERITIES.indexOf(severity) < SEVERITIES.indexOf(tally.severity)) tally.severity = severity;
      rules.set(ruleId, tally);
    }
  }
  const providerList: ProviderSkew[] = [...providers.keys()].sort(compareKeys).map((source) => {
    const byVersion = providers.get(source)!;
    const versions = [...byVersion.keys()]
      .sort(compareVersions)
      .map((version) => ({ version, repositories: byVersion.get(version)! }));
    return { source, versions, skew: versions.length > 1 };
  });
  const topViolations = [...rules.values()]
    .sort(
      (a, b) => b.repositories - a.repositories || b.findings - a.findings || compareKeys(a.ruleId, b.ruleId),
    )
    .slice(0, TOP_VIOLATIONS);
  return {
    schemaVersion: 1,
    runId: run.runId,
    startedAt: run.startedAt,
    previousRunId: run.previousRunId,
    totals,
    repositories,
    providers: providerList,
    topViolations,
  };
}

// ---------------------------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------------------------

/** Repository names, reasons and finding messages as Markdown prose (src/report/escape.ts). */
function cell(text: string): string {
  return mdText(text);
}

/** Rule ids, paths, provider sources and versions as code spans (src/report/escape.ts). */
function code(text: string): string {
  return mdCode(text);
}

function describeFinding(f: FindingRef): string {
  const where = f.file ?? f.module;
  return `${f.severity} ${code(f.ruleId)} ${code(where)}: ${cell(f.message)}`;
}

/** At most this many new/fixed findings are listed per repository in Markdown (JSON has all). */
export const MARKDOWN_DETAIL_LIMIT = 20;

export function renderSummaryMarkdown(summary: AuditSummary): string {
  const t = summary.totals;
  const lines: string[] = [];
  lines.push(`# tfguard fleet audit ${summary.runId}`);
  lines.push('');
  lines.push(
    `Started ${summary.startedAt}; ` +
      (summary.previousRunId === null
        ? 'no previous audit to compare with.'
        : `compared with audit ${summary.previousRunId}.`),
  );
  lines.push('');
  lines.push(
    `${count(t.repositories, 'repository', 'repositories')}: ${t.scanned} scanned, ${t.rejected} rejected, ${t.missing} missing, ${t.failed} failed. ` +
      `Findings: ${count(t.findings.error, 'error')}, ${count(t.findings.warning, 'warning')}, ${count(t.findings.notice, 'notice')}; ` +
      `${t.new} new, ${t.fixed} fixed since the previous audit.`,
  );
  lines.push('');
  lines.push('## Most common violations');
  lines.push('');
  if (summary.topViolations.length === 0) lines.push('None.');
  else {
    lines.push('| Rule | Severity | Repositories | Findings |');
    lines.push('|---|---|---:|---:|');
    for (const v of summary.topViolations) {
      lines.push(`| ${code(v.ruleId)} | ${v.severity} | ${v.repositories} | ${v.findings} |`);
    }
  }
  lines.push('');
  lines.push('## Locked provider versions');
  lines.push('');
  if (summary.providers.length === 0) lines.push('No lock files.');
  else {
    lines.push('| Provider | Skew | Versions (repositories) |');
    lines.push('|---|---|---|');
    const ordered = [...summary.providers].sort(
      (a, b) => Number(b.skew) - Number(a.skew) || compareKeys(a.source, b.source),
    );
    for (const p of ordered) {
      const versions = p.versions.map((v) => `${code(v.version)} (${v.repositories.length})`).join(', ');
      lines.push(
        `| ${code(p.source)} | ${p.skew ? `⚠️ ${p.versions.length} versions` : 'no'} | ${versions} |`,
      );
    }
    for (const p of ordered.filter((x) => x.skew)) {
      lines.push('');
      lines.push(`### ${code(p.source)}`);
      lines.push('');
      for (const v of p.versions) lines.push(`- ${code(v.version)}: ${v.repositories.map(cell).join(', ')}`);
    }
  }
  lines.push('');
  lines.push('## Repositories');
  lines.push('');
  lines.push('| Repository | Status | Errors | Warnings | Notices | New | Fixed |');
  lines.push('|---|---|---:|---:|---:|---:|---:|');
  for (const r of summary.repositories) {
    const status = r.status === 'scanned' ? 'scanned' : `${r.status}: ${cell(r.reason ?? '')}`;
    const diff = (n: number) => (r.compared ? String(n) : '–');
    lines.push(
      `| ${cell(r.repository)} | ${status} | ${r.counts.error} | ${r.counts.warning} | ${r.counts.notice} | ` +
        `${diff(r.new.length)} | ${diff(r.fixed.length)} |`,
    );
  }
  const changed = summary.repositories.filter((r) => r.new.length > 0 || r.fixed.length > 0);
  if (changed.length > 0) {
    lines.push('');
    lines.push('## Changes since the previous audit');
    for (const r of changed) {
      lines.push('');
      lines.push(`### ${cell(r.repository)}`);
      lines.push('');
      for (const [label, list] of [
        ['New', r.new],
        ['Fixed', r.fixed],
      ] as const) {
        if (list.length === 0) continue;
        lines.push(`${label}:`);
        for (const f of list.slice(0, MARKDOWN_DETAIL_LIMIT)) lines.push(`- ${describeFinding(f)}`);
        if (list.length > MARKDOWN_DETAIL_LIMIT)
          lines.push(`- … and ${list.length - MARKDOWN_DETAIL_LIMIT} more (see summary.json)`);
      }
    }
  }
  return lines.join('\n') + '\n';
}
