/**
 * The logging and metrics surface the service core uses. Powertools' `Logger` and `Metrics` satisfy
 * these interfaces (the handlers pass them in); tests pass collectors.
 */

export type LogAttributes = Record<string, unknown>;

export interface ServiceLogger {
  debug(message: string, ...attributes: LogAttributes[]): void;
  info(message: string, ...attributes: LogAttributes[]): void;
  warn(message: string, ...attributes: LogAttributes[]): void;
  error(message: string, ...attributes: LogAttributes[]): void;
  /** Adds keys to every following log line (Powertools: until `removeKeys`). */
  appendKeys?(attributes: LogAttributes): void;
  removeKeys?(keys: string[]): void;
}

export type MetricUnitName = 'Count' | 'Milliseconds' | 'Bytes';

export interface ServiceMetrics {
  addMetric(name: string, unit: MetricUnitName, value: number): void;
}

export const silentLogger: ServiceLogger = { debug() {}, info() {}, warn() {}, error() {} };
export const noMetrics: ServiceMetrics = { addMetric() {} };

/** Metric names, documented in docs/service.md. */
export const METRIC = {
  scans: 'Scans',
  rejected: 'RejectedArchives',
  timeouts: 'ScanTimeouts',
  duration: 'ScanDuration',
  findings: 'Findings',
  errorFindings: 'ErrorFindings',
  warningFindings: 'WarningFindings',
  noticeFindings: 'NoticeFindings',
  skipped: 'SkippedUploads',
  auditRepositories: 'AuditRepositories',
  auditFailures: 'AuditFailures',
  auditRuns: 'AuditRunsCompleted',
} as const;

/** An error as log attributes, with its cause chain, without leaking anything to callers. */
export function errorAttributes(err: unknown): LogAttributes {
  const chain: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    chain.push(current instanceof Error ? `${current.name}: ${current.message}` : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return { error: chain[0], causes: chain.slice(1), stack: err instanceof Error ? err.stack : undefined };
}
