/**
 * Table-driven rule tests over the real pipeline: every row's files are packed into a real tar.gz
 * and scanned (archive reader, HCL parser, module loader, rules, report). A row lists the exact
 * findings expected for ONE rule, so a missing, extra or misplaced finding fails the row.
 */
import type { FileMap } from '../support/archive';
import { findingsOf, scanFiles } from '../support/scan';
import type { Severity } from '../../src/model';
import { ruleById } from '../../src/rules';

export interface ExpectedFinding {
  module: string;
  file: string | null;
  line: number | null;
  /** A substring the message must contain. */
  message: string;
  /** The fix's replacement text; omitted = the finding must have no fix. */
  fix?: string;
  /** Defaults to the rule's default severity. */
  severity?: Severity;
  /** A substring the note must contain; checked only when given. */
  note?: string;
}

export interface Row {
  name: string;
  files: FileMap;
  /** `.tfguard.hcl` text. */
  config?: string;
  expected: ExpectedFinding[];
}

/** Joins lines with `\n` (and a final newline) so a test can count line numbers at a glance. */
export function lines(...ls: string[]): string {
  return `${ls.join('\n')}\n`;
}

/** A root `main.tf` that calls the given local modules (line 1 + 3 per call: `module "<name>" {` is
 * at line 3*i+1 for the i-th call, 0-based). */
export function callsTo(...dirs: string[]): string {
  return lines(
    ...dirs.flatMap((d) => [`module "${d.replace(/[^a-z0-9_]/gi, '_')}" {`, `  source = "./${d}"`, '}']),
  );
}

export function ruleTable(ruleId: string, rows: Row[]): void {
  const rule = ruleById(ruleId);
  if (rule === undefined) throw new Error(`no rule "${ruleId}" in RULES`);
  describe(`rule ${ruleId}`, () => {
    it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
      const report = await scanFiles(row.files, row.config === undefined ? {} : { config: row.config });
      const actual = findingsOf(report, ruleId).map((f) => ({
        module: f.module,
        file: f.file,
        line: f.line,
        message: f.message,
        fix: f.fix?.replacement ?? null,
        severity: f.severity,
        note: f.note ?? null,
      }));
      const expected = row.expected.map((e, i) => ({
        module: e.module,
        file: e.file,
        line: e.line,
        message: expect.stringContaining(e.message),
        fix: e.fix ?? null,
        severity: e.severity ?? rule.defaultSeverity,
        note: e.note === undefined ? (actual[i]?.note ?? null) : expect.stringContaining(e.note),
      }));
      expect(actual).toEqual(expected);
    });
  });
}
