/**
 * Fix mode over the scan pipeline: scan, apply the planned edits to the files in memory, and scan
 * again while fixes waited for others they overlap (two inserts into one `required_providers`
 * entry, a legacy string that one fix bounds and another rewrites as an object), so one run
 * converges. Lock files are rewritten whole, as Terraform writes them (`planLockFixes`); when a
 * pass changed a configuration's constraints, one more scan brings the lock files' recorded
 * constraints up to date in the same run. A plain run without fixes costs one scan. Pure: the
 * caller writes the files or shows the patch (`tfguard fix`, the API's `fix=true`).
 */
import { createHash } from 'node:crypto';
import { readArchiveBytes, readInput } from '../archive';
import {
  applyEdits,
  EditPlacer,
  gitQuotedName,
  LOCK_FIX_RULES,
  planFixes,
  planLockFixes,
  realFile,
  unifiedDiff,
  unpatchablePath,
} from '../fix';
import type { LockFixSource, SkippedFix } from '../fix';
import { currentPlatform } from '../lockfile';
import type { LockAnalysis } from '../lockfile';
import type { ScanConfig } from '../model';
import type { Finding } from '../rules';
import type { ArchiveEntry, LoadedArchive } from '../archive';
import type { Report } from '../report/types';
import type { ScanOptions } from './types';
import { scanArchive, shouldLoad } from './pipeline';
import { ScanReuse } from './reuse';
import { insideSubtree } from './subtree';

/** At most this many scans: each further pass exists only for fixes an overlap deferred. */
const MAX_PASSES = 4;

export interface FixOptions extends ScanOptions {
  /** Only the fixes of these rule ids (all when absent). */
  rules?: ReadonlySet<string>;
  /** Registry access for lock-file fixes that add entries, lock files or platforms, given the
   * scan's settings; null or absent: only what needs no registry (stale entries, drifted
   * constraints). */
  lockRegistry?: (config: ScanConfig) => LockFixSource | null;
  /** Only the findings in this directory (`/`-separated, from the input's top) and only fixes
   * whose edits stay inside it (`tfguard fix live/prod` in a repository); all when absent. */
  within?: string;
}

export interface FileChange {
  /** Archive-relative path. */
  path: string;
  before: Buffer;
  after: Buffer;
  /** The fix creates the file (a lock file that did not exist); `before` is empty. */
  created: boolean;
}

export interface FixOutcome {
  /** The scan of the files as given. */
  report: Report;
  /** The files the fixes change, sorted by path, with their bytes before and after. */
  changes: FileChange[];
  /** The findings whose fixes were applied (over every pass). */
  fixed: Finding[];
  /** What the fix of each fixed finding does (its `fix.description`, or the lock rewrite's). */
  descriptions: Map<Finding, string>;
  /** The findings of the last pass whose fix was not applied, with why. */
  skipped: SkippedFix[];
  /** The scan of the fixed files when a later pass ran one (it shows what remains), else null. */
  after: Report | null;
}

/** `archive` with some files' bytes replaced or added (entries keep their metadata, with the new
 * size and hash, so the extraction cache keys stay right). A symlink to a changed file reads the
 * new bytes too. The archive the passes after the first scan read (test/scan/reuse.test.ts too). */
export function withFiles(
  archive: LoadedArchive,
  changed: ReadonlyMap<string, Buffer>,
  byPath: ReadonlyMap<string, ArchiveEntry> = entriesByPath(archive),
): LoadedArchive {
  const files = new Map(archive.files);
  for (const [path, bytes] of changed) files.set(path, bytes);
  for (const e of archive.entries) {
    if (e.type !== 'symlink' && e.type !== 'hardlink') continue;
    if (!files.has(e.path)) continue;
    const real = realFile(byPath, e.path);
    const bytes = real.ok ? changed.get(real.file) : undefined;
    if (bytes !== undefined) files.set(e.path, bytes);
  }
  const entries = archive.entries.map((e) => {
    const bytes = changed.get(e.path);
    if (bytes === undefined || e.type !== 'file') return e;
    return { ...e, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  });
  // Files a fix creates (a new lock file) join the archive as regular files.
  for (const [path, bytes] of changed) {
    if (byPath.has(path)) continue;
    entries.push({
      path,
      type: 'file',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
  }
  return { ...archive, files, entries };
}

/** The entries of `archive` by path. */
function entriesByPath(archive: LoadedArchive): Map<string, ArchiveEntry> {
  return new Map(archive.entries.map((e) => [e.path, e]));
}

/** Per archive: each link target's bytes, as loaded through the first link (in entry order) that
 * resolves to it. Built once, on the first lookup: fixes look files up once per edit. */
const linkTargets = new WeakMap<LoadedArchive, Map<string, Buffer>>();

/** The bytes of a file that was loaded only as a symlink's content (its target, not selected itself). */
function linkedBytes(
  archive: LoadedArchive,
  file: string,
  byPath: ReadonlyMap<string, ArchiveEntry>,
): Buffer | undefined {
  let targets = linkTargets.get(archive);
  if (targets === undefined) {
    targets = new Map();
    for (const e of archive.entries) {
      if (e.type !== 'symlink' && e.type !== 'hardlink') continue;
      const real = realFile(byPath, e.path);
      if (!real.ok || targets.has(real.file)) continue;
      const bytes = archive.files.get(e.path);
      if (bytes !== undefined) targets.set(real.file, bytes);
    }
    linkTargets.set(archive, targets);
  }
  return targets.get(file);
}

/** Applies every safe fix the scan of `archive` finds, in memory. */
export async function fixArchive(archive: LoadedArchive, options: FixOptions = {}): Promise<FixOutcome> {
  const { rules, lockRegistry, within, ...scanOptions } = options;
  const inside = (path: string): boolean => within === undefined || insideSubtree(path, within);
  const inScope = (f: Finding): boolean =>
    inside(f.file ?? f.module) && (f.fix?.edits ?? []).every((e) => inside(e.range.file));
  const lockFixes = rules === undefined || [...rules].some((r) => LOCK_FIX_RULES.has(r));
  let analysed: { lock: LockAnalysis; config: ScanConfig } | null = null;
  // The passes after the first take over what the edits cannot change (src/scan/reuse.ts).
  const reuse = new ScanReuse();
  const onLockAnalysis = (lock: LockAnalysis, config: ScanConfig): void => {
    analysed = { lock, config };
    scanOptions.onLockAnalysis?.(lock, config);
  };
  // Only the first scan reads and writes the extraction cache (the files as they are). A later
  // scan takes every unchanged file's result from the first (`reuse`) and parses only the edited
  // bytes, which are not on disk (a dry run never writes them): with the cache it would read the
  // manifest again and then save one holding only the edited files under the directory's own
  // keys, leaving the next scan nothing to hit.
  const { cache: _cache, cacheLineage: _lineage, onCacheStats: _stats, ...uncached } = scanOptions;
  const scan = (a: LoadedArchive, first: boolean): Promise<Report> =>
    scanArchive(a, { ...(first ? scanOptions : uncached), onLockAnalysis }, reuse);
  const report = await scan(archive, true);
  const originals = new Map<string, Buffer>();
  const current = new Map<string, Buffer>();
  const created = new Set<string>();
  const fixed: Finding[] = [];
  const descriptions = new Map<Finding, string>();
  let skipped: SkippedFix[] = [];
  let after: Report | null = null;
  let last = report;
  let registry: LockFixSource | null | undefined;
  // The files each was edited through in earlier passes (a file read through symlinks).
  const editedVia = new Map<string, Set<string>>();
  const byPath = entriesByPath(archive);
  /** A file's bytes as the fixes so far left them; through a symlink, its target's. */
  const bytesNow = (file: string): Buffer | undefined => {
    const real = realFile(byPath, file);
    const at = real.ok ? real.file : file;
    return (
      current.get(at) ?? archive.files.get(at) ?? archive.files.get(file) ?? linkedBytes(archive, at, byPath)
    );
  };
  for (let pass = 1; pass <= MAX_PASSES; pass++) {
    const seen = analysed as { lock: LockAnalysis; config: ScanConfig } | null;
    const lockPlan =
      lockFixes && seen !== null
        ? await planLockFixes({
            findings: last.findings.filter(inScope),
            roots: last.roots.filter((r) => inside(r.path)),
            lock: seen.lock,
            platforms: seen.config.platforms.length > 0 ? seen.config.platforms : [currentPlatform()],
            ...(rules === undefined ? {} : { rules }),
            registry: (registry ??= lockRegistry?.(seen.config) ?? null),
            read: (file) => Promise.resolve(bytesNow(file) ?? null),
          })
        : undefined;
    const placer = new EditPlacer(
      {
        entries: archive.entries,
        read: bytesNow,
      },
      editedVia,
    );
    placer.prepare(
      last.findings
        .filter(inScope)
        .filter((f) => f.suppressed === undefined && (rules === undefined || rules.has(f.ruleId)))
        .map((f) => f.fix?.edits ?? []),
    );
    const plan = planFixes(last.findings.filter(inScope), rules, lockPlan, (edits) => placer.place(edits));
    skipped = plan.remaining;
    if (plan.files.size === 0) break;
    let configChanged = false;
    for (const [path, edits] of plan.files) {
      if (!inside(path)) throw new Error(`fix: ${path} is outside ${within ?? '.'}, which the fix may edit`);
      // A file a fix creates: a lock file, or a new `versions.tf` a root's bound goes into (edits
      // that insert at byte 0 of a file the archive does not hold, not even through a link).
      const held = current.get(path) ?? archive.files.get(path) ?? linkedBytes(archive, path, byPath);
      const creates = plan.created.has(path) || edits.every((e) => e.range.end.byte === 0);
      const isNew = held === undefined && creates;
      const before = held ?? (isNew ? Buffer.alloc(0) : undefined);
      if (before === undefined) throw new Error(`fix: ${path} is not among the scanned files`);
      if (!originals.has(path)) {
        originals.set(path, before);
        if (isNew) created.add(path);
      }
      current.set(path, applyEdits(before, edits));
      if (!lockPlan?.edits.has(path)) configChanged = true;
    }
    for (const f of plan.fixed) {
      fixed.push(f);
      descriptions.set(f, lockPlan?.fixed.get(f) ?? f.fix?.description ?? '');
    }
    const deferred = plan.remaining.some((r) => r.deferred === true);
    // Changed constraints leave the lock files' recorded constraints behind: one more pass lets
    // the lock rewrite catch up, so a second `fix` finds nothing to do.
    if ((!deferred && !(configChanged && lockFixes)) || pass === MAX_PASSES) break;
    after = await scan(withFiles(archive, current, byPath), false);
    last = after;
  }
  const changes = [...originals]
    .map(([path, before]) => ({
      path,
      before,
      after: current.get(path) as Buffer,
      created: created.has(path),
    }))
    .filter((c) => c.created || !c.before.equals(c.after))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { report, changes, fixed, descriptions, skipped, after };
}

/** A changed file a patch cannot carry, and why. */
export interface LeftOut {
  path: string;
  reason: string;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function isUtf8(bytes: Buffer): boolean {
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Why the change of one file cannot be in a patch that `git apply` and `patch -p1` accept, or null. */
function leftOutReason(c: FileChange): string | null {
  const path = unpatchablePath(c.path);
  if (path !== null) return path;
  if (!isUtf8(c.before) || !isUtf8(c.after)) return 'not UTF-8 text: a text patch would not keep its bytes';
  return null;
}

/** The unified diff (`git apply`-able) of the changes, files in path order, and the changed files
 * it leaves out (one such file would make `git apply` refuse the whole patch). */
export function fixPatchParts(changes: readonly FileChange[]): { patch: string; leftOut: LeftOut[] } {
  const leftOut: LeftOut[] = [];
  const diffs: string[] = [];
  for (const c of changes) {
    const reason = leftOutReason(c);
    if (reason !== null) leftOut.push({ path: c.path, reason });
    else diffs.push(unifiedDiff(c.path, c.before.toString('utf8'), c.after.toString('utf8'), c.created));
  }
  return { patch: diffs.join(''), leftOut };
}

/**
 * The unified diff (`git apply`-able) of the changes, files in path order. A file it leaves out is
 * named, with why, in a `#` line before the diffs (text before the first file header, which `git
 * apply` and `patch` skip); names there are quoted as in the headers, so they hold no line break.
 */
export function fixPatch(changes: readonly FileChange[]): string {
  return patchText(fixPatchParts(changes));
}

/** The patch `fixPatch` writes, from the parts `fixPatchParts` made (the CLI names the files left
 * out where a person reads them too, without diffing every file a second time). */
export function patchText({ patch, leftOut }: { patch: string; leftOut: readonly LeftOut[] }): string {
  const notes = leftOut.map(
    (l) => `# tfguard: left out of this patch: ${gitQuotedName('', l.path)}: ${l.reason}\n`,
  );
  return notes.join('') + patch;
}

/** `fixArchive` over a directory (or archive file) on disk. */
export async function fixPath(path: string, options: FixOptions = {}): Promise<FixOutcome> {
  const archive = await readInput(path, {
    limits: options.limits,
    shouldLoad,
    ...(options.directories !== undefined ? { directories: options.directories } : {}),
  });
  return fixArchive(archive, options);
}

/** `fixArchive` over archive bytes. */
export async function fixBytes(name: string, bytes: Buffer, options: FixOptions = {}): Promise<FixOutcome> {
  const archive = await readArchiveBytes(name, bytes, { limits: options.limits, shouldLoad });
  return fixArchive(archive, options);
}
