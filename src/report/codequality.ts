import { createHash } from 'node:crypto';
import type { Finding } from '../rules';
import type { Severity } from '../model';
import type { Report } from './types';
import { jsonForLogs, plainText } from './escape';

/**
 * One issue of a GitLab Code Quality report (`artifacts:reports:codequality`): the subset of the
 * Code Climate issue spec GitLab reads (https://docs.gitlab.com/ci/testing/code_quality/).
 */
export interface CodeQualityIssue {
  description: string;
  check_name: string;
  fingerprint: string;
  severity: 'info' | 'minor' | 'major' | 'critical' | 'blocker';
  location: { path: string; lines: { begin: number } };
}

/** error blocks a pipeline (the default `--fail-on`), so it is GitLab's `major`, not `info`. */
const SEVERITY: Record<Severity, CodeQualityIssue['severity']> = {
  error: 'major',
  warning: 'minor',
  notice: 'info',
};

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * GitLab Code Quality JSON: one issue per finding, in report order, byte-identical for the same
 * report. `fingerprint` is what GitLab compares between the base and the head of a merge request,
 * so it leaves the line out (a finding whose lines moved is not new): it hashes the rule, module,
 * file and message, plus the occurrence number among findings that share those (GitLab shows only
 * one issue per fingerprint). A finding without a file points at its module's directory, line 1.
 * Findings an inline annotation suppressed are left out: GitLab has no notion of a suppressed issue.
 */
export function renderCodeQuality(report: Report): string {
  const occurrences = new Map<string, number>();
  const active = report.findings.filter((f) => f.suppressed === undefined);
  const issues = active.map((f: Finding): CodeQualityIssue => {
    const identity = JSON.stringify([f.ruleId, f.module, f.file, f.message]);
    const n = occurrences.get(identity) ?? 0;
    occurrences.set(identity, n + 1);
    return {
      description: plainText(f.fix ? `${f.message} Suggested: ${f.fix.replacement}` : f.message),
      check_name: f.ruleId,
      fingerprint: sha256(n === 0 ? identity : `${identity}#${n}`),
      severity: SEVERITY[f.severity],
      location: { path: f.file ?? f.module, lines: { begin: f.line ?? 1 } },
    };
  });
  return jsonForLogs(JSON.stringify(issues, null, 2)) + '\n';
}
