/**
 * Scanning one directory of a repository (`tfguard scan live`): modules call each other across the
 * repository (`source = "../../modules/net"`) and its `.tfguard.hcl` sits at the top. So the scan
 * reads, from the repository root, the requested directory, the root's `.tfguard.hcl` and the
 * directories local module calls lead to (found by scanning again until no call leads out of what
 * was read), and the report keeps only the requested directory, with paths from the repository
 * root (as SARIF and code review need them). The rest of the repository is never read: a large or
 * unusual tree elsewhere (node_modules, test fixtures) neither slows nor rejects the scan.
 *
 * The repository root is the git top level (the nearest ancestor holding `.git`, a directory or
 * the file of a worktree or submodule, as `git rev-parse --show-toplevel` finds it), else the
 * nearest ancestor holding `.tfguard.hcl`, else the directory itself.
 */
import { promises as fs } from 'node:fs';
import * as nodePath from 'node:path';
import { summarize } from '../report/build';
import type { Report } from '../report/types';
import { CONFIG_FILE_NAME } from './config-file';
import type { ScanOptions } from './types';

export interface RepositoryTarget {
  /** The directory to read (the repository root). */
  root: string;
  /** The requested directory, `/`-separated, relative to `root`; null when it is the root. */
  subtree: string | null;
  /** What decided the root. */
  reason: 'git' | 'config' | 'directory';
}

async function exists(file: string): Promise<boolean> {
  return fs.lstat(file).then(
    () => true,
    () => false,
  );
}

/** The ancestors of `dir` (itself first), up to the filesystem root. */
function ancestors(dir: string): string[] {
  const out = [dir];
  for (let d = dir; nodePath.dirname(d) !== d; d = nodePath.dirname(d)) out.push(nodePath.dirname(d));
  return out;
}

/** Where the repository of directory `dir` starts, and which part of it `dir` is. */
export async function locateRepository(dir: string): Promise<RepositoryTarget> {
  const start = await fs.realpath(dir);
  const chain = ancestors(start);
  let root: string | undefined;
  let reason: RepositoryTarget['reason'] = 'directory';
  for (const d of chain) {
    if (await exists(nodePath.join(d, '.git'))) {
      root = d;
      reason = 'git';
      break;
    }
  }
  if (root === undefined) {
    for (const d of chain) {
      if (await exists(nodePath.join(d, CONFIG_FILE_NAME))) {
        root = d;
        reason = 'config';
        break;
      }
    }
  }
  if (root === undefined || root === start) return { root: dir, subtree: null, reason };
  return { root, subtree: nodePath.relative(root, start).split(nodePath.sep).join('/'), reason };
}

/** The report of the whole repository cut to the findings, modules and roots inside `subtree`;
 * the summary counts what is kept. */
export function restrictReport(report: Report, subtree: string): Report {
  const inside = (path: string): boolean => insideSubtree(path, subtree);
  const findings = report.findings.filter((f) => inside(f.file ?? f.module));
  const modules = report.modules.filter((m) => inside(m.path));
  const roots = report.roots.filter((r) => inside(r.path));
  return {
    ...report,
    modules,
    roots,
    findings,
    summary: summarize(findings, modules.length, roots.filter((r) => r.kind === 'root').length),
  };
}

/** At most this many scans to follow local module calls out of the requested directory. */
const MAX_ROUNDS = 8;

/**
 * Scans directory `subtree` of the repository at `root` (see the file comment) with `scan` (the
 * scanner, `scanPath`), and returns the report cut to it.
 */
export async function scanSubtree(
  root: string,
  subtree: string,
  options: ScanOptions,
  scan: (path: string, options: ScanOptions) => Promise<Report>,
): Promise<Report> {
  const { report } = await subtreeDirectories(root, subtree, options, scan);
  return restrictReport(report, subtree);
}

/** Whether repository path `path` is `subtree` or inside it. */
export function insideSubtree(path: string, subtree: string): boolean {
  return path === subtree || path.startsWith(`${subtree}/`);
}

/**
 * The directories of the repository at `root` that a scan of `subtree` reads (it, and where its
 * local module calls lead), with the uncut report of the last scan (`tfguard fix live/prod`
 * fixes within them).
 */
export async function subtreeDirectories(
  root: string,
  subtree: string,
  options: ScanOptions,
  scan: (path: string, options: ScanOptions) => Promise<Report>,
): Promise<{ directories: string[]; report: Report }> {
  const directories = [subtree];
  const covered = (dir: string): boolean => directories.some((d) => dir === d || dir.startsWith(`${d}/`));
  let report = await scan(root, { ...options, directories });
  for (let round = 1; round < MAX_ROUNDS; round++) {
    const wanted = new Set<string>();
    for (const m of report.modules) {
      for (const call of m.moduleCalls) {
        if (call.target !== null && call.target !== '' && !covered(call.target)) wanted.add(call.target);
      }
      const unit = m.terragrunt?.source;
      if (unit !== undefined && unit !== null && /^\.\.?\//.test(unit)) {
        const target = nodePath.posix.normalize(nodePath.posix.join(m.path, unit.split('//')[0] ?? ''));
        if (!target.startsWith('..') && !covered(target)) wanted.add(target);
      }
    }
    if (wanted.size === 0) break;
    directories.push(...wanted);
    report = await scan(root, { ...options, directories: [...directories] });
  }
  return { directories, report };
}
