import type { Severity } from '../model';
import { SEVERITIES } from '../model';
import { RULES } from '../rules';
import { renderCodeQuality } from './codequality';
import { renderMarkdown, type MarkdownOptions } from './markdown';
import { renderSarif } from './sarif';
import { renderText } from './text';
import type { FailOn, Report, ReportFormat } from './types';

export { buildReport } from './build';
export type { FailOn, Report, ReportFormat } from './types';
export { REPORT_FORMATS } from './types';
export { GITHUB_COMMENT_LIMIT, type MarkdownOptions } from './markdown';
export { ciSafeLines, visible } from './escape';

export interface RenderOptions {
  /** ANSI colour in text output. */
  color?: boolean;
  /** Size limits of the Markdown report and where it says the full report is. */
  markdown?: MarkdownOptions;
  /** Base URL of the documentation that rule links point to (SARIF); default `DOCS_URL`. */
  docsUrl?: string;
}

export const CONTENT_TYPES: Record<ReportFormat, string> = {
  json: 'application/json',
  sarif: 'application/sarif+json',
  markdown: 'text/markdown; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  codequality: 'application/json',
};

export function renderReport(report: Report, format: ReportFormat, options: RenderOptions = {}): string {
  switch (format) {
    case 'json':
      return JSON.stringify(report, null, 2) + '\n';
    case 'sarif':
      return renderSarif(report, RULES, options.docsUrl !== undefined ? { docsUrl: options.docsUrl } : {});
    case 'markdown':
      return renderMarkdown(report, options.markdown);
    case 'text':
      return renderText(report, { color: options.color ?? false });
    case 'codequality':
      return renderCodeQuality(report);
  }
}

/** Severities at or above `failOn`. */
export function severitiesAtOrAbove(failOn: FailOn): Severity[] {
  if (failOn === 'never') return [];
  return SEVERITIES.slice(0, SEVERITIES.indexOf(failOn) + 1);
}

/** `fail` when any finding that is not suppressed is at or above `failOn`. */
export function verdict(report: Report, failOn: FailOn): 'pass' | 'fail' {
  const gate = new Set(severitiesAtOrAbove(failOn));
  return report.findings.some((f) => f.suppressed === undefined && gate.has(f.severity)) ? 'fail' : 'pass';
}
