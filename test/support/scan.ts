import { scanBytes } from '../../src/scan';
import type { Report } from '../../src/report/types';
import type { ScanOptions } from '../../src/scan/types';
import { makeTarGz } from './archive';
import type { FileMap } from './archive';

/**
 * Runs the real pipeline on inline files: packs them into a tar.gz, reads it back with the archive
 * reader and scans it. `options.config` may be a `.tfguard.hcl` text (added at the archive root)
 * or settings given to the scan as an object (as the CLI and the service pass them).
 */
export async function scanFiles(
  files: FileMap,
  options: { config?: string | ScanOptions['config'] } & Omit<ScanOptions, 'config'> = {},
): Promise<Report> {
  const { config, ...rest } = options;
  if (config !== undefined && typeof config !== 'string')
    return scanBytes('inline.tar.gz', await makeTarGz(files), { ...rest, config });
  const all: FileMap = config === undefined ? { ...files } : { ...files, '.tfguard.hcl': config };
  const bytes = await makeTarGz(all);
  return scanBytes('inline.tar.gz', bytes, rest);
}

/** Findings of one rule, in report order. */
export function findingsOf(report: Report, ruleId: string) {
  return report.findings.filter((f) => f.ruleId === ruleId);
}

/**
 * `bytes` (default 4.5 MB) of resources ending in an unterminated string: the parser's fast path
 * gives up and hcl2json parses the whole file in a worker. That takes about 1 s per MB in a warm
 * worker and twice that in a new one on a 2-core machine, so a deadline a second or two into the
 * scan reliably falls inside the parse.
 */
export function slowToParse(head: string, bytes = 4_500_000): string {
  const pieces = [head];
  for (let i = 0, size = 0; size < bytes; i++) {
    const block = `resource "aws_s3_bucket" "b${i}" {\n  bucket = "bucket-${i}"\n}\n\n`;
    pieces.push(block);
    size += block.length;
  }
  pieces.push('locals {\n  x = "unterminated\n}\n');
  return pieces.join('');
}
