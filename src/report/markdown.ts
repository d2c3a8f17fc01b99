import type { Finding } from '../rules';
import type { Severity } from '../model';
import { SEVERITIES } from '../model';
import type { Report } from './types';
import { mdCode, mdFence, mdText } from './escape';

const ICON: Record<Severity, string> = { error: '🔴', warning: '🟠', notice: '🔵' };

/** GitHub rejects a pull-request or issue comment longer than this many characters. */
export const GITHUB_COMMENT_LIMIT = 65_536;

export interface MarkdownOptions {
  /**
   * Most UTF-8 bytes the Markdown may take (bytes are never fewer than characters, however they are
   * counted). Default `DEFAULT_MARKDOWN_BUDGET`: below GitHub's comment limit with room for a CI job
   * to add a line of its own.
   */
  maxBytes?: number;
  /** Most finding rows shown (the most severe first). Default `DEFAULT_MAX_FINDING_ROWS`. */
  maxFindings?: number;
  /** Where the complete report is, in Markdown (e.g. a link, or a command to run), named
   * whenever something is cut. Default: the CLI command that prints every finding. */
  fullReport?: string;
  /** What the heading names: the repository when the caller knows it (the CI job, the API's
   * `repository`). Default: the scanned directory's or archive's name (`source.name`). */
  title?: string;
}

export const DEFAULT_MARKDOWN_BUDGET = 60_000;
export const DEFAULT_MAX_FINDING_ROWS = 100;
const DEFAULT_FULL_REPORT = '`tfguard scan --format json` (or `--format text`) lists every finding';
/** Longest message cell; longer messages end in `…`. */
const MAX_CELL = 600;

/** Archive text as Markdown prose in a table cell or heading (src/report/escape.ts). */
function cell(text: string, max = MAX_CELL): string {
  return mdText(text, max);
}

/** Archive text as a code span; `inTable`: it is in a table cell (pipes escaped). */
function code(text: string, inTable = true): string {
  return mdCode(text, inTable);
}

function location(f: Finding): string {
  return code(f.file === null ? f.module : `${f.file}${f.line !== null ? `:${f.line}` : ''}`);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const RANK: Record<Severity, number> = { error: 0, warning: 1, notice: 2 };

/** The most severe first; within a severity, report order (file, line, rule). */
function bySeverity(findings: Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => RANK[a.f.severity] - RANK[b.f.severity] || a.i - b.i)
    .map(({ f }) => f);
}

/** One row per rule and severity (a rule's low-confidence findings are notices, its others not):
 * the most severe first, then the most findings, then the rule id. */
function rollUp(findings: Finding[]): string[] {
  const rows = new Map<string, { ruleId: string; severity: Severity; count: number }>();
  for (const f of findings) {
    const key = `${f.ruleId}\0${f.severity}`;
    const entry = rows.get(key);
    if (entry === undefined) rows.set(key, { ruleId: f.ruleId, severity: f.severity, count: 1 });
    else entry.count += 1;
  }
  const sorted = [...rows.values()].sort(
    (a, b) =>
      RANK[a.severity] - RANK[b.severity] ||
      b.count - a.count ||
      (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0),
  );
  return [
    '| Rule | Severity | Findings |',
    '|---|---|---:|',
    ...sorted.map((r) => `| ${code(r.ruleId)} | ${ICON[r.severity]} ${r.severity} | ${r.count} |`),
  ];
}

function findingRow(f: Finding): string {
  const message = cell(f.message) + (f.fix ? ` Suggested: ${code(f.fix.replacement)}` : '');
  return `| ${ICON[f.severity]} ${f.severity} | ${code(f.ruleId)} | ${location(f)} | ${message} |`;
}

/**
 * A fix of one edit as a GitHub suggestion: the lines it touches as they read after it, in a
 * fenced block whose info string is `suggestion` (what a review comment on those lines turns into
 * an "Apply suggestion" button). The fence is longer than any backtick run in the text.
 */
function suggestionBlock(f: Finding): string {
  const fix = f.fix as NonNullable<Finding['fix']>;
  const s = fix.suggestion as NonNullable<NonNullable<Finding['fix']>['suggestion']>;
  const lines = s.startLine === s.endLine ? `line ${s.startLine}` : `lines ${s.startLine}–${s.endLine}`;
  const fence = mdFence(s.text) as string;
  return [
    `${code(`${s.file}:${s.startLine}`, false)} ${code(f.ruleId, false)}: ${cell(fix.description)} (${lines}):`,
    '',
    `${fence}suggestion`,
    s.text,
    fence,
    '',
  ].join('\n');
}

function suppressedRow(f: Finding): string {
  const s = f.suppressed as NonNullable<Finding['suppressed']>;
  const at = s.file === f.file ? `line ${s.line}` : `${s.file}:${s.line}`;
  return `| ${code(f.ruleId)} | ${location(f)} | ${cell(s.reason)} (${cell(at)}) |`;
}

function severityCounts(findings: Finding[]): string {
  const parts = SEVERITIES.map((s) => [s, findings.filter((f) => f.severity === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => plural(n, s));
  return parts.join(', ');
}

/** Counts the UTF-8 bytes of the lines emitted so far against a maximum. */
class Budget {
  private used = 0;
  constructor(private readonly max: number) {}
  take(line: string): void {
    this.used += bytes(line) + 1;
  }
  /** Whether `line` fits with `reserve` more bytes still free after it. */
  fits(line: string, reserve: number): boolean {
    return this.used + bytes(line) + 1 + reserve <= this.max;
  }
}

/**
 * Markdown for pull-request comments: a verdict line, a roll-up per rule and severity, the findings (the most
 * severe first), suppressed findings and each root's provider constraints, within `maxBytes`
 * (default below GitHub's 65,536-character comment limit). Whatever does not fit is cut at a row
 * boundary, and the comment says what was cut and where the full report is. Deterministic: the
 * same report and options give the same text.
 */
export function renderMarkdown(report: Report, options: MarkdownOptions = {}): string {
  const maxBytes = options.maxBytes ?? DEFAULT_MARKDOWN_BUDGET;
  const maxRows = options.maxFindings ?? DEFAULT_MAX_FINDING_ROWS;
  const fullReport = options.fullReport ?? DEFAULT_FULL_REPORT;
  const s = report.summary;
  const active = report.findings.filter((f) => f.suppressed === undefined);
  const suppressed = report.findings.filter((f) => f.suppressed !== undefined);

  const head: string[] = [];
  head.push(`## tfguard: ${cell(options.title ?? report.source.name, 200)}`);
  head.push('');
  const status = s.error > 0 ? '❌' : s.warning > 0 ? '⚠️' : '✅';
  head.push(
    `${status} ${plural(s.error, 'error')}, ${plural(s.warning, 'warning')}, ${plural(s.notice, 'notice')} ` +
      `in ${plural(s.modules, 'module')} (${plural(s.roots, 'root')}).` +
      (suppressed.length > 0 ? ` ${suppressed.length} suppressed by inline annotations.` : ''),
  );
  head.push('');
  if (active.length > 0) head.push(...rollUp(active), '');
  const footer = `<sub>tfguard ${report.tool.version} · source sha256 \`${report.source.sha256.slice(0, 12)}\`</sub>`;

  const budget = new Budget(maxBytes);
  const out: string[] = [];
  const emit = (line: string): void => {
    out.push(line);
    budget.take(line);
  };
  for (const line of head) emit(line);
  // Room always kept for what closes the comment: the footer, the closing of a <details> section
  // and two statements of what was cut (each under 400 bytes besides the full report's name).
  const reserve = bytes(footer) + 40 + 2 * (bytes(fullReport) + 400);

  if (active.length > 0) {
    const ordered = bySeverity(active);
    for (const line of ['| | Rule | Location | Message |', '|---|---|---|---|']) emit(line);
    let shown = 0;
    for (const f of ordered) {
      const row = findingRow(f);
      if (shown >= maxRows || !budget.fits(row, reserve)) break;
      emit(row);
      shown++;
    }
    emit('');
    if (shown < ordered.length) {
      emit(
        `**Showing the ${shown} most severe of ${plural(active.length, 'finding')}**; not shown: ` +
          `${severityCounts(ordered.slice(shown))} (all counted in the table above). ` +
          `The full report: ${fullReport}.`,
      );
      emit('');
    }
  }

  // Lower-priority sections take what room is left: rows that do not fit are counted, not shown,
  // and a section whose heading does not fit is named in one closing statement.
  const cuts: string[] = [];
  const section = (summary: string, header: string[], rows: string[], what: string): void => {
    const frame = [`<details><summary>${summary}</summary>`, '', ...header];
    if (!budget.fits(frame.join('\n'), reserve)) {
      cuts.push(`${summary} (${plural(rows.length, 'row')})`);
      return;
    }
    for (const line of frame) emit(line);
    let shown = 0;
    for (const row of rows) {
      if (!budget.fits(row, reserve)) break;
      emit(row);
      shown++;
    }
    if (shown < rows.length) {
      emit('');
      emit(`…and ${rows.length - shown} more ${what}, in the full report: ${fullReport}.`);
    }
    for (const line of ['', '</details>', '']) emit(line);
  };

  // A suggestion no fence can show exactly (mdFence) would apply something else: left out.
  const suggestions = bySeverity(active).filter(
    (f) => f.fix?.suggestion !== undefined && mdFence(f.fix.suggestion.text) !== null,
  );
  if (suggestions.length > 0) {
    section(
      `${plural(suggestions.length, 'suggested change')} (\`tfguard fix\` applies them all)`,
      [],
      suggestions.map(suggestionBlock),
      'suggested changes',
    );
  }
  if (suppressed.length > 0) {
    section(
      `${plural(suppressed.length, 'suppressed finding')} (not counted)`,
      ['| Rule | Location | Reason (annotation) |', '|---|---|---|'],
      suppressed.map(suppressedRow),
      'suppressed findings',
    );
  }
  const constraintRows: string[] = [];
  for (const root of report.roots) {
    for (const p of root.providers) {
      const c = p.constraints === null ? '(invalid)' : p.constraints === '' ? '(none)' : code(p.constraints);
      constraintRows.push(`| ${code(root.path)} | ${code(p.source)} | ${c} |`);
    }
  }
  if (report.roots.length > 0) {
    section(
      'Provider constraints per root module',
      ['| Root | Provider | Combined constraints |', '|---|---|---|'],
      constraintRows,
      'rows',
    );
  }
  if (cuts.length > 0) {
    emit(`Not shown for want of room: ${cuts.join('; ')}. The full report: ${fullReport}.`);
    emit('');
  }
  emit(footer);
  return out.join('\n') + '\n';
}
