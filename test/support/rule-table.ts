/**
 * The one table-driven harness of the rule tests (`test/rules/<rule-id>.test.ts`). Every row's files
 * are packed into a real tar.gz and run through real components; the row lists the exact findings
 * expected, so a missing, extra or misplaced finding fails it. Two pipelines:
 *
 * - `scan` (default): the whole scan (archive reader, HCL parser, module loader, rules, report);
 *   the row's `config` is `.tfguard.hcl` text, and the row lists
 *   the findings of the table's rule (a whole scan reports other rules too).
 * - `lock`: the lock-file half (`lock-pipeline.ts`: archive reader, HCL parser, module loader,
 *   `analyzeLocks`, the `lock-*` rules through the rule engine), with settings and a registry
 *   client of the row's own; the row lists EVERY lock finding, the table's rule by default and
 *   another lock rule where a finding names it (`rule`). So a row that expects only its rule's
 *   findings also asserts that no other lock rule reports anything.
 *
 * `scenarioTable` is the same table without a rule of its own: each expected finding names its rule.
 * The `policy-*` rule tables (`policy-table.ts`) are rows of this harness too: real corpus
 * repositories scanned with a policy in the row's scan options, in a table that needs the corpus.
 */
import type { RegistryClient } from '../../src/lockfile';
import type { ScanConfig, Severity } from '../../src/model';
import type { ScanOptions } from '../../src/scan/types';
import { compareFindings, ruleById, type Finding } from '../../src/rules';
import type { FileMap } from './archive';
import { closeLockParser, lockScan } from './lock-pipeline';
import { describeWithCorpus } from './external';
import { scanFiles } from './scan';

export interface ExpectedFinding {
  /** Defaults to the table's rule. */
  rule?: string;
  /** The module; checked only when given. */
  module?: string;
  file: string | null;
  line: number | null;
  /** A substring the message must contain (each of them, for a list), or a pattern it matches. */
  message: string | string[] | RegExp;
  /** The fix's replacement text; omitted = the finding must have no fix. */
  fix?: string;
  /** Defaults to the rule's default severity. */
  severity?: Severity;
  /** A substring the note must contain; checked only when given. */
  note?: string;
  /** A substring of the suppression's reason; omitted = the finding must not be suppressed. */
  suppressed?: string;
}

export interface Row {
  name: string;
  files: FileMap;
  /** Scan pipeline: `.tfguard.hcl` text. Lock pipeline: settings over the defaults. */
  config?: string | Partial<ScanConfig>;
  /** The registry client of the scan (lock pipeline only; default: none). */
  registry?: RegistryClient;
  /** Further options of the scan (scan pipeline only), e.g. a policy; settings given here as an
   * object exclude `config` text. */
  scan?: ScanOptions;
  expected: ExpectedFinding[];
}

/** A row whose files or expectations need something from the test's hooks (a running registry,
 * computed hashes): `build` runs inside the test. */
export interface LazyRow {
  name: string;
  build: () => Omit<Row, 'name'> | Promise<Omit<Row, 'name'>>;
}

export type RowSpec = Row | LazyRow;

export interface TableOptions {
  /** Which pipeline runs the rows (see the file header). */
  pipeline?: 'scan' | 'lock';
  /** The rows read the corpus: without it, the table is skipped with a line saying so. */
  corpus?: boolean;
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

function severityOf(ruleId: string): Severity {
  const rule = ruleById(ruleId);
  if (rule === undefined) throw new Error(`no rule "${ruleId}" in RULES`);
  return rule.defaultSeverity;
}

function messageMatcher(message: string | string[] | RegExp): unknown {
  if (typeof message === 'string') return expect.stringContaining(message);
  if (message instanceof RegExp) return expect.stringMatching(message);
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return expect.stringMatching(new RegExp(`^${message.map((m) => `(?=[\\s\\S]*${escape(m)})`).join('')}`));
}

async function findingsOfRow(
  row: Omit<Row, 'name'>,
  name: string,
  pipeline: 'scan' | 'lock',
): Promise<Finding[]> {
  if (pipeline === 'lock') {
    if (typeof row.config === 'string')
      throw new Error(`${name}: the lock pipeline takes settings, not .tfguard.hcl`);
    if (row.scan !== undefined) throw new Error(`${name}: scan options need the scan pipeline`);
    const { findings } = await lockScan(row.files, {
      ...(row.config === undefined ? {} : { config: row.config }),
      ...(row.registry === undefined ? {} : { registry: row.registry }),
    });
    return findings;
  }
  if (row.registry !== undefined) throw new Error(`${name}: a registry client needs the lock pipeline`);
  if (typeof row.config === 'object') throw new Error(`${name}: the scan pipeline reads .tfguard.hcl text`);
  if (row.config !== undefined && row.scan?.config !== undefined)
    throw new Error(`${name}: settings come from .tfguard.hcl text or scan options, not both`);
  const report = await scanFiles(row.files, {
    ...row.scan,
    ...(row.config === undefined ? {} : { config: row.config }),
  });
  return report.findings;
}

async function checkRow(
  spec: RowSpec,
  tableRule: string | undefined,
  pipeline: 'scan' | 'lock',
): Promise<void> {
  const row = 'build' in spec ? await spec.build() : spec;
  const all = await findingsOfRow(row, spec.name, pipeline);
  // A whole scan reports every rule: its rows are about the table's rule only.
  const findings =
    pipeline === 'scan' && tableRule !== undefined ? all.filter((f) => f.ruleId === tableRule) : all;
  const actual = findings.map((f) => ({
    rule: f.ruleId,
    module: f.module,
    file: f.file,
    line: f.line,
    message: f.message,
    fix: f.fix?.replacement ?? null,
    severity: f.severity,
    note: f.note ?? null,
    suppressed: f.suppressed?.reason ?? null,
  }));
  const withRules = row.expected.map((e) => {
    const rule = e.rule ?? tableRule;
    if (rule === undefined) throw new Error(`${spec.name}: a scenario row names the rule of every finding`);
    return { ...e, rule };
  });
  // The engine's order (file, line, rule: `compareFindings`); findings of one rule on one line in
  // the order written.
  const sorted = [...withRules].sort((a, b) =>
    compareFindings(
      { file: a.file, line: a.line, ruleId: a.rule, module: '', message: '' } as Finding,
      { file: b.file, line: b.line, ruleId: b.rule, module: '', message: '' } as Finding,
    ),
  );
  const expected = sorted.map((e, i) => ({
    rule: e.rule,
    module: e.module ?? actual[i]?.module ?? null,
    file: e.file,
    line: e.line,
    message: messageMatcher(e.message),
    fix: e.fix ?? null,
    severity: e.severity ?? severityOf(e.rule),
    note: e.note === undefined ? (actual[i]?.note ?? null) : expect.stringContaining(e.note),
    suppressed: e.suppressed === undefined ? null : expect.stringContaining(e.suppressed),
  }));
  expect(actual).toEqual(expected);
}

function table(title: string, rows: RowSpec[], rule: string | undefined, options: TableOptions): void {
  const pipeline = options.pipeline ?? 'scan';
  if (pipeline === 'lock') {
    afterAll(async () => {
      await closeLockParser();
    });
  }
  (options.corpus === true ? describeWithCorpus : describe)(title, () => {
    it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
      await checkRow(row, rule, pipeline);
    });
  });
}

/** The table of one rule. Call at the top level of the test file. */
export function ruleTable(ruleId: string, rows: RowSpec[], options: TableOptions = {}): void {
  severityOf(ruleId);
  table(`rule ${ruleId}`, rows, ruleId, options);
}

/** Rows about a set of rules together, each expected finding naming its rule. */
export function scenarioTable(title: string, rows: RowSpec[], options: TableOptions = {}): void {
  table(title, rows, undefined, options);
}

/** `ruleTable` on the lock pipeline: the table of one lock rule. */
export function lockRuleTable(ruleId: string, rows: RowSpec[]): void {
  ruleTable(ruleId, rows, { pipeline: 'lock' });
}

/** `scenarioTable` on the lock pipeline: rows about every lock finding together. */
export function lockScenarioTable(title: string, rows: RowSpec[]): void {
  scenarioTable(title, rows, { pipeline: 'lock' });
}
