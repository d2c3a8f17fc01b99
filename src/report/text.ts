import type { Finding, Severity } from '../model';
import type { Report } from './types';

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

/** Plain text for people: findings grouped by module, then a summary line. */
export function renderText(report: Report, options: TextOptions): string {
  const c = options.color;
  const out: string[] = [];
  const s = report.summary;
  out.push(
    `${paint(c, '1', 'tfguard')} ${report.tool.version}  ${report.source.name}  ` +
      `(${plural(s.modules, 'module')}, ${plural(s.roots, 'root')}, engine ${report.engine})`,
  );
  const byModule = new Map<string, Finding[]>();
  for (const f of report.findings) {
    const list = byModule.get(f.module) ?? [];
    list.push(f);
    byModule.set(f.module, list);
  }
  const kinds = new Map(report.modules.map((m) => [m.path, m]));
  for (const [module, findings] of [...byModule.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const info = kinds.get(module);
    out.push('');
    out.push(paint(c, '1', module) + (info ? paint(c, '2', `  (${info.kind}: ${info.kindReason})`) : ''));
    for (const f of findings) {
      const sev = paint(c, COLOR[f.severity], f.severity.padEnd(7));
      out.push(`  ${sev} ${where(f)}  ${f.message}  ${paint(c, '2', `[${f.ruleId}]`)}`);
      if (f.fix) out.push(`          fix: ${f.fix.replacement}  (${f.fix.description})`);
      if (f.note) out.push(`          note: ${f.note}`);
    }
  }
  out.push('');
  const parts = [
    paint(c && s.error > 0, COLOR.error, plural(s.error, 'error')),
    paint(c && s.warning > 0, COLOR.warning, plural(s.warning, 'warning')),
    paint(c && s.notice > 0, COLOR.notice, plural(s.notice, 'notice')),
  ];
  out.push(`${parts.join(', ')}`);
  return out.join('\n') + '\n';
}
