import type { Finding } from '../../src/rules';
import type { Report } from '../../src/report/types';
import {
  buildSummary,
  entryOf,
  lockedVersions,
  renderSummaryMarkdown,
  scannedResult,
  unscannedResult,
  type RepositoryEntry,
} from '../../src/service/summary';

function finding(
  ruleId: string,
  line: number | null,
  message = `${ruleId} message`,
  severity: Finding['severity'] = 'warning',
): Finding {
  return { ruleId, severity, message, module: '.', file: 'main.tf', line };
}

function report(findings: Finding[], locks: Array<Record<string, string | null>> = []): Report {
  return {
    findings,
    modules: [],
    roots: locks.map((providers, i) => ({
      path: String(i),
      engine: 'terraform',
      modules: [],
      remoteModules: [],
      providers: [],
      lock: {
        file: `${i}/.terraform.lock.hcl`,
        providers: Object.entries(providers).map(([source, version]) => ({ source, version })),
      },
    })),
  } as unknown as Report;
}

test('new and fixed are a multiset difference that ignores line numbers', () => {
  const previous = scannedResult(
    'r1',
    'repo',
    's1',
    report([finding('a', 3), finding('a', 9), finding('b', 1)]),
    null,
  );
  expect(previous.compared).toBe(false);
  // One "a" moved lines, one "a" went away, "b" is unchanged, "c" is new, and a second "c".
  const current = scannedResult(
    'r2',
    'repo',
    's2',
    report([finding('a', 30), finding('b', 1), finding('c', 2), finding('c', 5)]),
    previous,
  );
  expect(current.compared).toBe(true);
  expect(current.new.map((f) => f.ruleId)).toEqual(['c', 'c']);
  expect(current.fixed.map((f) => f.ruleId)).toEqual(['a']);
  expect(current.counts).toEqual({ error: 0, warning: 4, notice: 0, total: 4 });
  // A changed message is a different finding.
  const reworded = scannedResult('r3', 'repo', 's3', report([finding('b', 1, 'other text')]), previous);
  expect(reworded.new.map((f) => f.message)).toEqual(['other text']);
  // Compared only with a previous scan, not with a previous failure.
  const afterFailure = scannedResult(
    'r4',
    'repo',
    's4',
    report([finding('a', 1)]),
    unscannedResult('r3', 'repo', 'failed', 'x'),
  );
  expect(afterFailure).toMatchObject({ compared: false, new: [], fixed: [] });
});

test('a suppressed finding is not counted, and a newly suppressed one is listed as fixed', () => {
  const previous = scannedResult(
    'r1',
    'repo',
    's1',
    report([finding('a', 3), finding('b', 1, 'b', 'error')]),
    null,
  );
  const accepted: Finding = {
    ...finding('b', 1, 'b', 'error'),
    suppressed: { reason: 'ok', file: 'main.tf', line: 1 },
  };
  const current = scannedResult('r2', 'repo', 's2', report([finding('a', 3), accepted]), previous);
  expect(current.counts).toEqual({ error: 0, warning: 1, notice: 0, total: 1 });
  expect(current.rules).toEqual({ a: { severity: 'warning', count: 1 } });
  expect(current.fixed.map((f) => f.ruleId)).toEqual(['b']);
  expect(current.findings.map((f) => f.ruleId)).toEqual(['a']);
});

test('locked versions are collected over every root and sorted newest first', () => {
  const r = report(
    [],
    [
      { 'registry.terraform.io/hashicorp/aws': '5.9.0', 'registry.terraform.io/hashicorp/null': null },
      { 'registry.terraform.io/hashicorp/aws': '5.10.0' },
      { 'registry.terraform.io/hashicorp/aws': '5.9.0' },
    ],
  );
  expect(lockedVersions(r)).toEqual({ 'registry.terraform.io/hashicorp/aws': ['5.10.0', '5.9.0'] });
  expect(lockedVersions({ roots: [{ lock: null }] } as unknown as Report)).toEqual({});
});

test("locked versions in Terraform's order, not npm semver's: pre-releases, and what Terraform cannot read last", () => {
  // go-versions (Terraform's provider versions, src/constraints/version.ts): a pre-release that runs
  // out of identifiers first is the older one without comparing its last identifier, so
  // 1.5.0-beta < 1.5.0-alpha.1; npm semver orders them the other way round.
  const r = report(
    [],
    [
      { 'example.com/acme/cloud': '1.5.0-alpha.1' },
      { 'example.com/acme/cloud': '1.5.0-beta' },
      { 'example.com/acme/cloud': 'not-a-version' },
      { 'example.com/acme/cloud': '1.10.0' },
      { 'example.com/acme/cloud': '1.5.0' },
    ],
  );
  expect(lockedVersions(r)).toEqual({
    'example.com/acme/cloud': ['1.10.0', '1.5.0', '1.5.0-alpha.1', '1.5.0-beta', 'not-a-version'],
  });
});

test('the summary totals, skew and top violations', () => {
  const entries: RepositoryEntry[] = [];
  for (let i = 0; i < 12; i++) {
    // Rule r<i> appears in (i + 1) repositories.
    const findings = Array.from({ length: 12 }, (_, j) => j)
      .filter((j) => j <= i)
      .map((j) => finding(`r${String(j).padStart(2, '0')}`, 1, 'm', j % 2 ? 'error' : 'notice'));
    entries.push(
      entryOf(
        scannedResult(
          'run',
          `repo-${i}`,
          's',
          report(findings, [{ 'x/aws': i < 6 ? '1.0.0' : '1.2.0' }]),
          null,
        ),
      ),
    );
  }
  entries.push(entryOf(unscannedResult('run', 'zz|pipe', 'missing', 'gone | deleted')));
  const summary = buildSummary(
    { runId: 'run', startedAt: '2025-01-01T00:00:00.000Z', previousRunId: null },
    [...entries].reverse(),
  );
  expect(summary.repositories.map((r) => r.repository)).toEqual([
    'repo-0',
    'repo-1',
    'repo-10',
    'repo-11',
    'repo-2',
    'repo-3',
    'repo-4',
    'repo-5',
    'repo-6',
    'repo-7',
    'repo-8',
    'repo-9',
    'zz|pipe',
  ]);
  expect(summary.totals).toMatchObject({ repositories: 13, scanned: 12, missing: 1 });
  expect(summary.totals.findings.total).toBe((12 * 13) / 2);
  expect(summary.topViolations).toHaveLength(10);
  expect(summary.topViolations[0]).toEqual({
    ruleId: 'r00',
    severity: 'notice',
    findings: 12,
    repositories: 12,
  });
  expect(summary.topViolations.map((v) => v.ruleId)).toEqual([
    'r00',
    'r01',
    'r02',
    'r03',
    'r04',
    'r05',
    'r06',
    'r07',
    'r08',
    'r09',
  ]);
  expect(summary.providers).toEqual([
    {
      source: 'x/aws',
      skew: true,
      versions: [
        { version: '1.2.0', repositories: ['repo-10', 'repo-11', 'repo-6', 'repo-7', 'repo-8', 'repo-9'] },
        { version: '1.0.0', repositories: ['repo-0', 'repo-1', 'repo-2', 'repo-3', 'repo-4', 'repo-5'] },
      ],
    },
  ]);
  const md = renderSummaryMarkdown(summary);
  expect(md).toContain('| zz\\|pipe | missing: gone \\| deleted | 0 | 0 | 0 | – | – |');
  expect(md).toContain('| `r00` | notice | 12 | 12 |');
  expect(md).toContain('- `1.2.0`: repo-10, repo-11, repo-6, repo-7, repo-8, repo-9');
  expect(md).not.toContain('## Changes since the previous audit');
});
