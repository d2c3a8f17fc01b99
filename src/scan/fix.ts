/**
 * Fix mode over the scan pipeline: scan, apply the planned edits to the files in memory, and scan
 * again while fixes waited for others they overlap (two inserts into one `required_providers`
 * entry, a legacy string that one fix bounds and another rewrites as an object), so one run
 * converges. A plain run without overlaps costs one scan. Pure: the caller writes the files or shows
 * the patch (`tfguard fix`, the API's `fix=true`).
 */
import { createHash } from 'node:crypto';
import { readArchiveBytes, readInput } from '../archive';
import { applyEdits, planFixes, unifiedDiff } from '../fix';
import type { SkippedFix } from '../fix';
import type { Finding, LoadedArchive } from '../model';
import type { Report } from '../report/types';
import type { ScanOptions } from './types';
import { scanArchive, shouldLoad } from './index';

/** At most this many scans: each further pass exists only for fixes an overlap deferred. */
const MAX_PASSES = 4;

export interface FixOptions extends ScanOptions {
  /** Only the fixes of these rule ids (all when absent). */
  rules?: ReadonlySet<string>;
}

export interface FileChange {
  /** Archive-relative path. */
  path: string;
  before: Buffer;
  after: Buffer;
}

export interface FixOutcome {
  /** The scan of the files as given. */
  report: Report;
  /** The files the fixes change, sorted by path, with their bytes before and after. */
  changes: FileChange[];
  /** The findings whose fixes were applied (over every pass). */
  fixed: Finding[];
  /** The findings of the last pass whose fix was not applied, with why. */
  skipped: SkippedFix[];
  /** The scan of the fixed files when a later pass ran one (it shows what remains), else null. */
  after: Report | null;
}

/** `archive` with some files' bytes replaced (entries keep their metadata, with the new size and
 * hash, so the extraction cache keys stay right). */
function withFiles(archive: LoadedArchive, changed: ReadonlyMap<string, Buffer>): LoadedArchive {
  const files = new Map(archive.files);
  for (const [path, bytes] of changed) files.set(path, bytes);
  const entries = archive.entries.map((e) => {
    const bytes = changed.get(e.path);
    if (bytes === undefined || e.type !== 'file') return e;
    return { ...e, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  });
  return { ...archive, files, entries };
}

/** Applies every safe fix the scan of `archive` finds, in memory. */
export async function fixArchive(archive: LoadedArchive, options: FixOptions = {}): Promise<FixOutcome> {
  const { rules, ...scanOptions } = options;
  const report = await scanArchive(archive, scanOptions);
  const originals = new Map<string, Buffer>();
  const current = new Map<string, Buffer>();
  const fixed: Finding[] = [];
  let skipped: SkippedFix[] = [];
  let after: Report | null = null;
  let findings = report.findings;
  for (let pass = 1; pass <= MAX_PASSES; pass++) {
    const plan = planFixes(findings, rules);
    skipped = plan.remaining;
    if (plan.files.size === 0) break;
    for (const [path, edits] of plan.files) {
      const before = current.get(path) ?? archive.files.get(path);
      if (before === undefined) throw new Error(`fix: ${path} is not among the scanned files`);
      if (!originals.has(path)) originals.set(path, before);
      current.set(path, applyEdits(before, edits));
    }
    fixed.push(...plan.fixed);
    if (!plan.remaining.some((r) => r.deferred === true) || pass === MAX_PASSES) break;
    after = await scanArchive(withFiles(archive, current), scanOptions);
    findings = after.findings;
  }
  const changes = [...originals]
    .map(([path, before]) => ({ path, before, after: current.get(path) as Buffer }))
    .filter((c) => !c.before.equals(c.after))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { report, changes, fixed, skipped, after };
}

/** The unified diff (`git apply`-able) of the changes, files in path order. */
export function fixPatch(changes: readonly FileChange[]): string {
  return changes
    .map((c) => unifiedDiff(c.path, c.before.toString('utf8'), c.after.toString('utf8')))
    .join('');
}

/** `fixArchive` over a directory (or archive file) on disk. */
export async function fixPath(path: string, options: FixOptions = {}): Promise<FixOutcome> {
  const archive = await readInput(path, { limits: options.limits, shouldLoad });
  return fixArchive(archive, options);
}

/** `fixArchive` over archive bytes. */
export async function fixBytes(name: string, bytes: Buffer, options: FixOptions = {}): Promise<FixOutcome> {
  const archive = await readArchiveBytes(name, bytes, { limits: options.limits, shouldLoad });
  return fixArchive(archive, options);
}
