/**
 * The checks behind the property tests and the fuzz run (scripts/fuzz.ts): scan an archive and
 * hold the outcome to the threat model's properties. Plain `node:assert`, so it runs under jest and
 * under tsx alike; a violation throws `PropertyViolation`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { detectFormat, readArchiveBytes } from '../../src/archive';
import { InputError } from '../../src/errors';
import type { Report } from '../../src/report/types';
import { scanBytes, shouldLoad } from '../../src/scan';
import type { ScanOptions } from '../../src/scan/types';
import { pack, type GeneratedArchive } from './generators';
import { isInsideArchive, reportedPaths } from './security';

export class PropertyViolation extends Error {
  override readonly name = 'PropertyViolation';
}

export type Outcome =
  { kind: 'report'; json: string; report: Report } | { kind: 'rejected'; error: InputError };

/** Scans; an `InputError` is an outcome, anything else is a violation of property 1. */
export async function outcome(name: string, bytes: Buffer, options: ScanOptions = {}): Promise<Outcome> {
  try {
    const report = await scanBytes(name, bytes, options);
    return { kind: 'report', json: JSON.stringify(report), report };
  } catch (err) {
    if (err instanceof InputError) return { kind: 'rejected', error: err };
    throw new PropertyViolation(`the scan threw something other than an InputError: ${describe(err)}`, {
      cause: err,
    });
  }
}

/** What the archive reader makes of `bytes`: the entries and the SHA-256 of every loaded file, or
 * the rejection (code, entry, message). */
async function readerOutcome(name: string, bytes: Buffer, streamingTar: boolean): Promise<string> {
  try {
    const archive = await readArchiveBytes(name, bytes, { shouldLoad, streamingTar });
    const files = [...archive.files].map(([p, c]) => [p, createHash('sha256').update(c).digest('hex')]);
    return JSON.stringify({ entries: archive.entries, files, format: archive.format });
  } catch (err) {
    if (err instanceof InputError) return `rejected: ${err.code} ${String(err.entry)} ${err.message}`;
    throw new PropertyViolation(
      `the archive reader threw something other than an InputError: ${describe(err)}`,
      {
        cause: err,
      },
    );
  }
}

/**
 * The two tar readers agree (docs/security.md §4, "Two tar readers"): reading a tar or tar.gz with
 * the in-memory fast path enabled gives exactly what the streaming reader alone gives, entries and
 * contents or the rejection. Other formats have one reader; nothing to compare.
 */
export async function checkTarReaders(name: string, bytes: Buffer): Promise<void> {
  let format: string;
  try {
    format = detectFormat(bytes, name);
  } catch {
    return; // not an archive format at all: both readers reject it the same way, before reading
  }
  if (format !== 'tar' && format !== 'tar.gz') return;
  const fast = await readerOutcome(name, bytes, false);
  const streamed = await readerOutcome(name, bytes, true);
  if (fast !== streamed) {
    throw new PropertyViolation(
      `the tar fast path and the streaming reader disagree:\n  fast:      ${fast.slice(0, 500)}\n  streaming: ${streamed.slice(0, 500)}`,
    );
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}

/** Every path of the archive and each of its ancestor directories, plus `.`. */
export async function archivePaths(name: string, bytes: Buffer): Promise<Set<string>> {
  const archive = await readArchiveBytes(name, bytes, { shouldLoad });
  const paths = new Set<string>(['.']);
  for (const entry of archive.entries) {
    const segments = entry.path.split('/');
    for (let i = 1; i <= segments.length; i++) paths.add(segments.slice(0, i).join('/'));
  }
  return paths;
}

/**
 * Property 2: every location in the report is inside the archive and names one of its entries.
 * Module-call targets (`moduleCalls[].target`) too: `null` (not a local source, or a local one that
 * climbs above the archive root) or an archive-relative directory; a local call whose target is
 * `null` or not in the archive must be reported by `module-source-missing` at the call.
 */
export async function checkPaths(name: string, bytes: Buffer, report: Report): Promise<void> {
  const listed = await archivePaths(name, bytes);
  for (const p of reportedPaths(report)) {
    if (!isInsideArchive(p) || !listed.has(p)) {
      throw new PropertyViolation(
        `the report names ${JSON.stringify(p)}, which is ${isInsideArchive(p) ? 'not an entry of' : 'outside'} the archive`,
      );
    }
  }
  for (const m of report.modules) {
    for (const call of m.moduleCalls) {
      const what = `module "${call.name}" in ${JSON.stringify(m.path)} (${call.file}:${call.line})`;
      // A missing target is reported as missing, or as an installed copy of a remote module
      // (module-unresolved); a fragment's calls resolve where its files are copied to, so they
      // need no finding where the files sit (docs/classification.md).
      const reportedMissing =
        m.kind === 'fragment' ||
        report.findings.some(
          (f) =>
            (f.ruleId === 'module-source-missing' || f.ruleId === 'module-unresolved') &&
            f.module === m.path &&
            f.file === call.file &&
            f.line === call.line,
        );
      if (call.target === null) {
        if (call.sourceKind === 'local' && !reportedMissing) {
          throw new PropertyViolation(
            `${what}: local source ${JSON.stringify(call.source)} has no target and no module-source-missing finding`,
          );
        }
        continue;
      }
      if (call.sourceKind !== 'local') {
        throw new PropertyViolation(
          `${what}: a ${call.sourceKind} source has a target ${JSON.stringify(call.target)}`,
        );
      }
      if (!isInsideArchive(call.target)) {
        throw new PropertyViolation(`${what}: target ${JSON.stringify(call.target)} is outside the archive`);
      }
      if (!listed.has(call.target) && !reportedMissing) {
        throw new PropertyViolation(
          `${what}: target ${JSON.stringify(call.target)} is not in the archive and not reported by module-source-missing or module-unresolved`,
        );
      }
    }
  }
}

/** The report with `source.sha256` (the hash of the uploaded bytes themselves) masked. */
export function masked(json: string): string {
  const report = JSON.parse(json) as Report;
  report.source.sha256 = '<bytes-dependent>';
  return JSON.stringify(report);
}

function rotate<T>(items: T[], by: number): T[] {
  if (items.length === 0) return items;
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** Another order of the entries: reversed for even seeds, rotated otherwise. */
export function reorder<T>(items: T[], seed: number): T[] {
  return seed % 2 === 0 ? [...items].reverse() : rotate(items, 1 + (seed >> 1));
}

function sameOutcome(a: Outcome, b: Outcome, compare: (json: string) => string, what: string): void {
  const view = (o: Outcome): string =>
    o.kind === 'report'
      ? compare(o.json)
      : `rejected: ${o.error.code} ${String(o.error.entry)} ${o.error.message}`;
  try {
    assert.equal(view(b), view(a));
  } catch (err) {
    throw new PropertyViolation(`${what}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * All three properties for one generated archive: (1) only `InputError`; (2) paths inside;
 * (3) byte-identical reports on a rerun, and (source hash masked) for another entry order; and the
 * two tar readers agree on it.
 * Returns the first outcome.
 */
export async function checkArchive(generated: GeneratedArchive, permutationSeed: number): Promise<Outcome> {
  const name = `random.${generated.format}`;
  const bytes = await pack(generated.format, generated.entries);
  await checkTarReaders(name, bytes);
  const first = await outcome(name, bytes);
  const rerun = await outcome(name, bytes);
  sameOutcome(first, rerun, (json) => json, 'a rerun gave a different outcome');
  if (first.kind === 'rejected') {
    // Another order may hit another of several problems first; it must still be a rejection.
    const other = await outcome(
      name,
      await pack(generated.format, reorder(generated.entries, permutationSeed)),
    );
    if (other.kind !== 'rejected') {
      throw new PropertyViolation(
        `rejected in one entry order (${first.error.code}: ${first.error.message}), accepted in another`,
      );
    }
    return first;
  }
  await checkPaths(name, bytes, first.report);
  const other = await outcome(
    name,
    await pack(generated.format, reorder(generated.entries, permutationSeed)),
  );
  sameOutcome(first, other, masked, 'another entry order gave a different report');
  return first;
}
