import { scanBytes } from '../../src/scan';
import type { Report } from '../../src/report/types';
import type { ScanOptions } from '../../src/scan/types';
import { makeTarGz } from './archive';
import type { FileMap } from './archive';

/**
 * Runs the real pipeline on inline files: packs them into a tar.gz, reads it back with the archive
 * reader and scans it. `options.config` may be a `.tfguard.hcl` text (added at the archive root).
 */
export async function scanFiles(
  files: FileMap,
  options: { config?: string } & Omit<ScanOptions, 'config'> = {},
): Promise<Report> {
  const { config, ...rest } = options;
  const all: FileMap = config === undefined ? { ...files } : { ...files, '.tfguard.hcl': config };
  const bytes = await makeTarGz(all);
  return scanBytes('inline.tar.gz', bytes, rest);
}

/** Findings of one rule, in report order. */
export function findingsOf(report: Report, ruleId: string) {
  return report.findings.filter((f) => f.ruleId === ruleId);
}
