import type { Finding } from '../rules';
import type { Severity } from '../model';
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

function where(f: Finding): string {
  if (f.file === null) return f.module;
  return f.line !== null ? `${f.file}:${f.line}` : f.file;
}

/**
 * Findings of one module in print order: grouped by rule (rules in order of their first finding,
 * findings of a rule in report order), each rule's findings cut into runs that share a note, so a
 * note repeated for several findings in a row is printed once, after them.
 */
function noteGroups(findings: Finding[]): { findings: Finding[]; note: string | undefined }[] {
  const byRule = new Map<string, Finding[]>();
  for (const f of findings) byRule.set(f.ruleId, [...(byRule.get(f.ruleId) ?? []), f]);
  const groups: { findings: Finding[]; note: string | undefined }[] = [];
  for (const list of byRule.values()) {
    let run: { findings: Finding[]; note: string | undefined } | null = null;
    for (const f of list) {
      if (run !== null && run.note === f.note) run.findings.push(f);
      else groups.push((run = { findings: [f], note: f.note }));
    }
  }
  return groups;
}

/**
 * Plain text for people: findings grouped by module (and within a module by rule, a note repeated
 * for several findings printed once), suppressed findings in a short section of their own, then
 * a summary line.
 */
export function renderText(archiveReport: Report, options: TextOptions): string {
  // Every string shown with its control characters escaped; no line a CI command (escape.ts).
  const report = visibleStrings(archiveReport);
  const c = options.color;
  const out: string[] = [];
  const s = report.summary;
  out.push(
    `${paint(c, '1', 'tfguard')} ${report.tool.version}  ${report.source.name}  ` +
      `(${plural(s.modules, 'module')}, ${plural(s.roots, 'root')}, engine ${report.engine})`,
  );
  const byModule = new Map<string, Finding[]>();
  const suppressed: Finding[] = [];
  for (const f of report.findings) {
    if (f.suppressed !== undefined) {
      suppressed.push(f);
      continue;
    }
    const list = byModule.get(f.module) ?? [];
    list.push(f);
    byModule.set(f.module, list);
  }
  const kinds = new Map(report.modules.map((m) => [m.path, m]));
  for (const [module, findings] of [...byModule.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const info = kinds.get(module);
    out.push('');
    out.push(
      paint(c, '1', module) +
        (info
          ? paint(
              c,
              '2',
              `  (${info.kind}${info.kindEvidence === 'weak' ? ', a guess' : ''}: ${info.kindReason})`,
            )
          : ''),
    );
    for (const group of noteGroups(findings)) {
      for (const f of group.findings) {
        const sev = paint(c, COLOR[f.severity], f.severity.padEnd(7));
        out.push(`  ${sev} ${where(f)}  ${f.message}  ${paint(c, '2', `[${f.ruleId}]`)}`);
        if (f.fix) out.push(`          fix: ${f.fix.replacement}  (${f.fix.description})`);
      }
      if (group.note === undefined) continue;
      const n = group.findings.length;
      out.push(`          note${n === 1 ? '' : ` (for the ${n} findings above)`}: ${group.note}`);
    }
  }
  if (suppressed.length > 0) {
    out.push('');
    out.push(paint(c, '1', `suppressed by inline annotations (${suppressed.length}, not counted)`));
    for (const f of suppressed) {
      const at = f.suppressed as NonNullable<Finding['suppressed']>;
      const annotation = at.file === f.file ? `line ${at.line}` : `${at.file}:${at.line}`;
      out.push(
        `  ${f.severity.padEnd(7)} ${where(f)}  ${paint(c, '2', `[${f.ruleId}]`)}  ${at.reason}  ` +
          paint(c, '2', `(annotation on ${annotation})`),
      );
    }
  }
  out.push('');
  const parts = [
    paint(c && s.error > 0, COLOR.error, plural(s.error, 'error')),
    paint(c && s.warning > 0, COLOR.warning, plural(s.warning, 'warning')),
    paint(c && s.notice > 0, COLOR.notice, plural(s.notice, 'notice')),
  ];
  out.push(`${parts.join(', ')}${suppressed.length > 0 ? `; ${suppressed.length} suppressed` : ''}`);
  return ciSafeLines(out.join('\n') + '\n');
}
