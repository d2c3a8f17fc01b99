/**
 * `lock_mode` (.tfguard.hcl / --config) over the full scan (real tar.gz, real settings parser, real
 * rules): "readonly" raises the two findings `terraform init -lockfile=readonly` fails on but plain
 * `init` repairs (lock-missing, lock-provider-stale) to errors; every other lock rule keeps its
 * severity; an explicit rule setting still wins; a later settings file wins over an earlier one.
 * (test/lockfile/differential.test.ts checks "readonly" against terraform itself.)
 */
import type { Severity } from '../../src/model';
import { scanFiles } from '../support/scan';
import { fakeH1, lockText, tf } from '../lockfile/fixtures';

const AWS = 'registry.terraform.io/hashicorp/aws';
const NULL = 'registry.terraform.io/hashicorp/null';
const awsTf = tf(
  { aws: { source: 'hashicorp/aws', version: '~> 5.1' } },
  'terraform {\n  required_version = ">= 1.6"\n}\n',
);

/** Root "a": a stale entry and drifted constraints; root "b": no lock file. */
const FILES = {
  'envs/a/main.tf': awsTf,
  'envs/a/.terraform.lock.hcl': lockText([
    { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
    { source: NULL, version: '3.2.2', hashes: [fakeH1('null')] },
  ]),
  'envs/b/main.tf': awsTf,
};

type Severities = Partial<Record<string, Severity>>;

const DEFAULT: Severities = {
  'lock-constraints-drift': 'warning',
  'lock-missing': 'warning',
  'lock-provider-stale': 'warning',
};
const READONLY: Severities = { ...DEFAULT, 'lock-missing': 'error', 'lock-provider-stale': 'error' };

interface Row {
  name: string;
  /** The archive's own .tfguard.hcl. */
  archive?: string;
  /** --config FILE, applied after it. */
  operator?: string;
  expected: Severities;
}

const ROWS: Row[] = [
  { name: 'no setting', expected: DEFAULT },
  { name: 'lock_mode = "default"', archive: 'lock_mode = "default"\n', expected: DEFAULT },
  { name: 'lock_mode = "readonly"', archive: 'lock_mode = "readonly"\n', expected: READONLY },
  { name: 'readonly from --config', operator: 'lock_mode = "readonly"\n', expected: READONLY },
  {
    name: '--config "default" after the archive\'s "readonly"',
    archive: 'lock_mode = "readonly"\n',
    operator: 'lock_mode = "default"\n',
    expected: DEFAULT,
  },
  {
    name: 'readonly, and an explicit severity wins',
    archive: 'lock_mode = "readonly"\nrule "lock-provider-stale" {\n  severity = "notice"\n}\n',
    expected: { ...READONLY, 'lock-provider-stale': 'notice' },
  },
  {
    name: 'readonly, and an explicit severity in --config wins',
    archive: 'lock_mode = "readonly"\n',
    operator: 'rule "lock-missing" {\n  severity = "warning"\n}\n',
    expected: { ...READONLY, 'lock-missing': 'warning' },
  },
  {
    name: 'readonly, and a disabled rule stays off',
    archive: 'lock_mode = "readonly"\nrule "lock-missing" {\n  enabled = false\n}\n',
    expected: { ...READONLY, 'lock-missing': undefined },
  },
  {
    name: 'default mode keeps an explicit raise',
    archive: 'rule "lock-missing" {\n  severity = "error"\n}\n',
    expected: { ...DEFAULT, 'lock-missing': 'error' },
  },
];

describe('lock_mode', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const report = await scanFiles(FILES, {
      ...(row.archive === undefined ? {} : { config: row.archive }),
      ...(row.operator === undefined ? {} : { configText: { name: 'ops.hcl', text: row.operator } }),
    });
    const got: Severities = {};
    for (const f of report.findings) {
      if (!f.ruleId.startsWith('lock-')) continue;
      expect(got[f.ruleId] ?? f.severity).toBe(f.severity); // one severity per rule
      got[f.ruleId] = f.severity;
    }
    const want = Object.fromEntries(Object.entries(row.expected).filter(([, v]) => v !== undefined));
    expect(got).toEqual(want);
  });
});
