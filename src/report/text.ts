import type { Finding } from '../rules';
import type { Severity } from '../model';
import { SEVERITIES } from '../model';
import { kindLabel } from '../modules';
import type { Report } from './types';
import { ciSafeLines, visibleStrings } from './escape';

export interface TextOptions {
  color: boolean;
}

const COLOR: Record<Severity, string> = { error: '31', warning: '33', notice: '36' };

function paint(enabled: boolean, code: string, text: string): string {
  return enabled ? `\u001b[${code}m${text}\u001b[0m` : text;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What the text report prints of a finding: only these fields are copied and escaped (a finding's
 * edits, ranges and suggestion are most of its bytes, and none of them is printed here). */
type PrintedFinding = Pick<
  Finding,
  'ruleId' | 'severity' | 'message' | 'module' | 'file' | 'line' | 'note' | 'confidence' | 'suppressed'
> & { fix?: Pick<NonNullable<Finding['fix']>, 'replacement' | 'description'> };

function printed(f: Finding): PrintedFinding {
  const out: PrintedFinding = {
    ruleId: f.ruleId,
    severity: f.severity,
    message: f.message,
    module: f.module,
    file: f.file,
    line: f.line,
    note: f.note,
    confidence: f.confidence,
    suppressed: f.suppressed,
  };
  if (f.fix) out.fix = { replacement: f.fix.replacement, description: f.fix.description };
  return out;
}

function where(f: PrintedFinding): string {
  if (f.file === null) return f.module;
  return f.line !== null ? `${f.file}:${f.line}` : f.file;
}

/**
 * Findings of one module in print order: grouped by rule (rules in order of their first finding,
 * findings of a rule in report order), each rule's findings cut into runs that share a note, so a
 * note repeated for several findings in a row is printed once, after them.
 */
function noteGroups(findings: PrintedFinding[]): { findings: PrintedFinding[]; note: string | undefined }[] {
  const byRule = new Map<string, PrintedFinding[]>();
  for (const f of findings) {
    const list = byRule.get(f.ruleId);
    if (list === undefined) byRule.set(f.ruleId, [f]);
    else list.push(f);
  }
  const groups: { findings: PrintedFinding[]; note: string | undefined }[] = [];
  for (const list of byRule.values()) {
    let run: { findings: PrintedFinding[]; note: string | undefined } | null = null;
    for (const f of list) {
      if (run !== null && run.note === f.note) run.findings.push(f);
      else groups.push((run = { findings: [f], note: f.note }));
    }
  }
  return groups;
}

/** One module's findings of one severity: the low-confidence ones that rest on a guess of the
 * module's kind (printed as one line) and the others (printed one by one). */
interface ModuleGroup {
  module: string;
  guessed: PrintedFinding[];
  findings: PrintedFinding[];
}

function byModule(findings: PrintedFinding[], weak: ReadonlySet<string>): ModuleGroup[] {
  const groups = new Map<string, ModuleGroup>();
  for (const f of findings) {
    let g = groups.get(f.module);
    if (g === undefined) groups.set(f.module, (g = { module: f.module, guessed: [], findings: [] }));
    (f.confidence === 'low' && weak.has(f.module) ? g.guessed : g.findings).push(f);
  }
  return [...groups.values()].sort((a, b) => (a.module < b.module ? -1 : a.module > b.module ? 1 : 0));
}

/** `lock-missing, root-module-unbounded ×3`: the rules of some findings, in order of first finding. */
function ruleCounts(findings: PrintedFinding[]): string {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.ruleId, (counts.get(f.ruleId) ?? 0) + 1);
  return [...counts].map(([rule, n]) => (n === 1 ? rule : `${rule} \u00d7${n}`)).join(', ');
}

const SECTION: Record<Severity, string> = { error: 'errors', warning: 'warnings', notice: 'notices' };

/**
 * Plain text for people, what matters first: the summary, then the errors, the warnings and the
 * notices, each severity grouped by module (and within a module by rule, a note repeated for
 * several findings printed once). A module's findings that rest on a guess of its kind
 * (low-confidence) are one line per module and severity, saying what they assume; the JSON report
 * lists them one by one. Suppressed findings follow in a short section of their own, and the
 * summary line closes the report too.
 */
export function renderText(archiveReport: Report, options: TextOptions): string {
  // Every string shown with its control characters escaped; no line a CI command (escape.ts). Only
  // the parts printed are copied (a module's requirements and trees, a finding's edits are not
  // shown here).
  const report = visibleStrings({
    tool: archiveReport.tool,
    source: archiveReport.source,
    engine: archiveReport.engine,
    summary: archiveReport.summary,
    findings: archiveReport.findings.map(printed),
    modules: archiveReport.modules.map(({ path, kind, kindEvidence, kindReason }) => ({
      path,
      kind,
      kindEvidence,
      kindReason,
    })),
  });
  const c = options.color;
  const out: string[] = [];
  const s = report.summary;
  out.push(
    `${paint(c, '1', 'tfguard')} ${report.tool.version}  ${report.source.name}  ` +
      `(${plural(s.modules, 'module')}, ${plural(s.roots, 'root')}, engine ${report.engine})`,
  );
  const suppressed = report.findings.filter((f) => f.suppressed !== undefined);
  const parts = [
    paint(c && s.error > 0, COLOR.error, plural(s.error, 'error')),
    paint(c && s.warning > 0, COLOR.warning, plural(s.warning, 'warning')),
    paint(c && s.notice > 0, COLOR.notice, plural(s.notice, 'notice')),
  ];
  const summary = `${parts.join(', ')}${suppressed.length > 0 ? `; ${suppressed.length} suppressed` : ''}`;
  out.push(summary);
  const kinds = new Map(report.modules.map((m) => [m.path, m]));
  const weak = new Set(report.modules.filter((m) => m.kindEvidence === 'weak').map((m) => m.path));
  for (const severity of SEVERITIES) {
    const findings = report.findings.filter((f) => f.suppressed === undefined && f.severity === severity);
    if (findings.length === 0) continue;
    out.push('');
    out.push(paint(c, `1;${COLOR[severity]}`, `${SECTION[severity]} (${findings.length})`));
    for (const group of byModule(findings, weak)) {
      const info = kinds.get(group.module);
      out.push('');
      out.push(
        paint(c, '1', group.module) +
          (info
            ? paint(
                c,
                '2',
                `  (${info.kind}${info.kindEvidence === 'weak' ? ', a guess' : ''}: ${info.kindReason})`,
              )
            : ''),
      );
      if (group.guessed.length > 0 && info !== undefined) {
        const n = group.guessed.length;
        out.push(
          `  ${paint(c, COLOR[severity], severity.padEnd(7))} ${n === 1 ? '1 finding assumes' : `${n} findings assume`} ` +
            `"${group.module}" is a ${kindLabel(info.kind)}; confirm with \`tfguard init\`  ` +
            paint(c, '2', `[${ruleCounts(group.guessed)}]`),
        );
      }
      for (const notes of noteGroups(group.findings)) {
        for (const f of notes.findings) {
          const sev = paint(c, COLOR[f.severity], f.severity.padEnd(7));
          out.push(`  ${sev} ${where(f)}  ${f.message}  ${paint(c, '2', `[${f.ruleId}]`)}`);
          if (f.fix) out.push(`          fix: ${f.fix.replacement}  (${f.fix.description})`);
        }
        if (notes.note === undefined) continue;
        const n = notes.findings.length;
        out.push(`          note${n === 1 ? '' : ` (for the ${n} findings above)`}: ${notes.note}`);
      }
    }
  }
  if (suppressed.length > 0) {
    out.push('');
    out.push(paint(c, '1', `suppressed by inline annotations (${suppressed.length}, not counted)`));
    for (const f of suppressed) {
      const at = f.suppressed as NonNullable<PrintedFinding['suppressed']>;
      const annotation = at.file === f.file ? `line ${at.line}` : `${at.file}:${at.line}`;
      out.push(
        `  ${f.severity.padEnd(7)} ${where(f)}  ${paint(c, '2', `[${f.ruleId}]`)}  ${at.reason}  ` +
          paint(c, '2', `(annotation on ${annotation})`),
      );
    }
  }
  out.push('');
  out.push(summary);
  return ciSafeLines(out.join('\n') + '\n');
}
