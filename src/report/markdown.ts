import type { Finding, Severity } from '../model';
import type { Report } from './types';

const ICON: Record<Severity, string> = { error: '🔴', warning: '🟠', notice: '🔵' };

/** Escapes text for a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/`/g, '\\`').replace(/\r?\n/g, ' ');
}

function location(f: Finding): string {
  const where = f.file === null ? f.module : `${f.file}${f.line !== null ? `:${f.line}` : ''}`;
  return `\`${where.replace(/`/g, "'").replace(/\|/g, '\\|')}\``;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Markdown for pull-request comments: a verdict line, a summary and one table of findings. */
export function renderMarkdown(report: Report): string {
  const s = report.summary;
  const lines: string[] = [];
  lines.push(`## tfguard: ${cell(report.source.name)}`);
  lines.push('');
  const status = s.error > 0 ? '❌' : s.warning > 0 ? '⚠️' : '✅';
  lines.push(
    `${status} ${plural(s.error, 'error')}, ${plural(s.warning, 'warning')}, ${plural(s.notice, 'notice')} ` +
      `in ${plural(s.modules, 'module')} (${plural(s.roots, 'root')}).`,
  );
  lines.push('');
  if (report.findings.length > 0) {
    lines.push('| | Rule | Location | Message |');
    lines.push('|---|---|---|---|');
    for (const f of report.findings) {
      const message = f.fix ? `${f.message} Suggested: \`${f.fix.replacement}\`` : f.message;
      lines.push(
        `| ${ICON[f.severity]} ${f.severity} | \`${f.ruleId}\` | ${location(f)} | ${cell(message)} |`,
      );
    }
    lines.push('');
  }
  if (report.roots.length > 0) {
    lines.push('<details><summary>Provider constraints per root module</summary>');
    lines.push('');
    lines.push('| Root | Provider | Combined constraints |');
    lines.push('|---|---|---|');
    for (const root of report.roots) {
      for (const p of root.providers) {
        const c =
          p.constraints === null ? '(invalid)' : p.constraints === '' ? '(none)' : `\`${p.constraints}\``;
        lines.push(`| \`${cell(root.path)}\` | \`${cell(p.source)}\` | ${c} |`);
      }
    }
    lines.push('');
    lines.push('</details>');
    lines.push('');
  }
  lines.push(
    `<sub>tfguard ${report.tool.version} · source sha256 \`${report.source.sha256.slice(0, 12)}\`</sub>`,
  );
  return lines.join('\n') + '\n';
}
