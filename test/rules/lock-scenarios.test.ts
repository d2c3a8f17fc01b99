/**
 * Lock-file cases that assert across several lock rules at once (one scenario, the whole set of
 * lock findings); each rule's own cases are in test/rules/<rule-id>.test.ts.
 */
import type { Severity } from '../../src/model';
import { MemoryStore } from '../support/memory-store';
import {
  AWS,
  CLOUD,
  L,
  NULL,
  REGISTRY_HOST,
  awsTf,
  cloudLock,
  cloudTf,
  fakeH1,
  fakeZh,
  goodLock,
  lineOf,
  lockScenarioTable,
  lockText,
  tf,
  useTestRegistry,
} from '../support/lock';
import { scanFiles } from '../support/scan';

lockScenarioTable('lock scenarios', [
  {
    name: 'a consistent lock file has no lock finding',
    files: { 'main.tf': awsTf, [L]: goodLock },
    expected: [],
  },
]);

// ---------------------------------------------------------------------------------------------
// lock_mode
// ---------------------------------------------------------------------------------------------

/**
 * `lock_mode` (.tfguard.hcl / --config) over the full scan (real tar.gz, real settings parser, real
 * rules): "readonly" raises the two findings `terraform init -lockfile=readonly` fails on but plain
 * `init` repairs (lock-missing, lock-provider-stale) to errors; every other lock rule keeps its
 * severity; an explicit rule setting still wins; a later settings file wins over an earlier one.
 * (test/lockfile/differential.test.ts checks "readonly" against terraform itself.)
 */
describe('lock_mode', () => {
  const changedTf = tf(
    { aws: { source: 'hashicorp/aws', version: '~> 5.1' } },
    'terraform {\n  required_version = ">= 1.6"\n}\n',
  );

  /** Root "a": a stale entry and drifted constraints; root "b": no lock file. */
  const FILES = {
    'envs/a/main.tf': changedTf,
    'envs/a/.terraform.lock.hcl': lockText([
      { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
      { source: NULL, version: '3.2.2', hashes: [fakeH1('null')] },
    ]),
    'envs/b/main.tf': changedTf,
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

// ---------------------------------------------------------------------------------------------
// The registry cross-check through the full scan
// ---------------------------------------------------------------------------------------------

const reg = useTestRegistry();

describe('registry cross-check, full scan', () => {
  it('.tfguard.hcl turns the check on, the operator maps the hostname; the store caches verified sums', async () => {
    const zh = reg().zh('acme', 'cloud', '1.0.0');
    const foreign = fakeZh('foreign, full scan');
    // No h1: hashes: with one, the missing darwin_arm64 zh: would be a hedged notice (that h1: may be
    // darwin_arm64's package), not the certain finding whose severity the settings raise here.
    const body = cloudLock('1.0.0', [zh.linux_amd64 as string, foreign]);
    const config = [
      'registry = true',
      'platforms = ["linux_amd64", "darwin_arm64"]',
      'rule "lock-platform-coverage" { severity = "error" }',
    ].join('\n');
    const operator = {
      name: 'operator.hcl',
      text: `registry_hosts = { "${REGISTRY_HOST}" = "${reg().url}" }\n`,
    };
    const store = new MemoryStore();
    const first = await scanFiles({ 'main.tf': cloudTf, [L]: body }, { config, store, configText: operator });
    const lockFindings = (r: typeof first) =>
      r.findings
        .filter((f) => f.ruleId.startsWith('lock-'))
        .map((f) => [f.ruleId, f.severity, f.file, f.line] as const);
    expect(lockFindings(first)).toEqual([
      ['lock-platform-coverage', 'error', L, lineOf(body, 'hashes')],
      ['lock-hash-unknown', 'error', L, lineOf(body, foreign)],
    ]);
    expect([...store.objects.keys()]).toEqual([`registry-sums/v1/${CLOUD}/1.0.0.json`]);
    // a second scan with the same store does not ask the registry and reports the same
    const before = reg().requests.length;
    const second = await scanFiles(
      { 'main.tf': cloudTf, [L]: body },
      { config, store, configText: operator },
    );
    expect(reg().requests.length).toBe(before);
    expect(lockFindings(second)).toEqual(lockFindings(first));
  });
});
