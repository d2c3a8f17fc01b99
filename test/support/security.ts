/**
 * Helpers for the threat-model tests: run hostile input through the real entry points and capture
 * the exact outcome (the `InputError` code, entry and message, or the report).
 */
import { InputError, type InputErrorCode } from '../../src/errors';
import type { Report } from '../../src/report/types';
import { scanBytes } from '../../src/scan';

/** The outcome of a promise that must reject with an `InputError`; anything else fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<InputError> {
  let outcome: unknown;
  try {
    await promise;
  } catch (err) {
    outcome = err;
  }
  if (outcome instanceof InputError) return outcome;
  throw new Error(
    outcome === undefined
      ? 'expected an InputError, but the input was accepted'
      : `expected an InputError, got ${String((outcome as Error)?.stack ?? outcome)}`,
  );
}

export interface ExpectedRejection {
  code: InputErrorCode;
  /** `InputError.entry`; `null` when the error is about the archive as a whole. */
  entry: string | null;
  /** A fragment (or pattern) the message must contain. */
  message: string | RegExp;
}

/** Scans `bytes` through the public entry point and checks the exact rejection. */
export async function expectScanRejected(
  name: string,
  bytes: Buffer,
  expected: ExpectedRejection,
): Promise<InputError> {
  const error = await rejection(scanBytes(name, bytes));
  expect({ code: error.code, entry: error.entry ?? null }).toEqual({
    code: expected.code,
    entry: expected.entry,
  });
  if (typeof expected.message === 'string') expect(error.message).toContain(expected.message);
  else expect(error.message).toMatch(expected.message);
  return error;
}

/**
 * Every location a report gives for something in the archive: module paths and files, lock files,
 * declarations, provider blocks, backends, module calls' own lines, roots, and finding locations.
 * Module call *targets* are left out: a call may name a module the archive does not contain (that
 * is what `module-source-missing` reports), and one whose source climbs above the archive root is
 * currently reported as a `../` path (a known gap, listed in docs/security.md).
 */
export function reportedPaths(report: Report): string[] {
  const paths: string[] = [];
  for (const m of report.modules) {
    paths.push(m.path, ...m.files);
    if (m.lockFile !== null) paths.push(m.lockFile);
    for (const call of m.moduleCalls) paths.push(call.file);
    for (const p of m.providers) if (p.declared !== null) paths.push(p.declared.file);
    for (const c of m.providerConfigs) paths.push(c.file);
    if (m.backend !== null) paths.push(m.backend.location.file);
  }
  for (const r of report.roots) {
    paths.push(r.path, ...r.modules);
    if (r.lock !== null) paths.push(r.lock.file);
  }
  for (const f of report.findings) {
    paths.push(f.module);
    if (f.file !== null) paths.push(f.file);
  }
  return paths;
}

/** True when `p` is a normalised archive-relative path (or `.`): never absolute, never `..`. */
export function isInsideArchive(p: string): boolean {
  if (p === '.') return true;
  if (p === '' || p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.includes('\\') || p.includes('\0')) {
    return false;
  }
  return p.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}
