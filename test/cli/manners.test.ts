/**
 * The CLI's manners, as tflint and trivy users expect them: per-command help, one-line usage errors
 * naming the closest valid option or command, severity and rule filters on `scan`, `rules --format
 * json`, clean errors for output paths, FORCE_COLOR=0, a hint for a single file, one exit code for
 * "nothing to check", and a directory of a repository scanned with the repository.
 */
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cli } from '../support/cli';
import { git } from '../support/git';
import { RULES } from '../../src/rules';
import type { Report } from '../../src/report/types';

const ROOT = path.resolve(__dirname, '../..');
const DEMO = path.join(ROOT, 'examples/platform-demo.tar.gz');

let tmp: string;
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-manners-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function writeTree(dir: string, files: Record<string, string>): Promise<string> {
  for (const [name, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), text);
  }
  return dir;
}

async function withEnv<T>(vars: Record<string, string | undefined>, work: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await work();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('help and usage errors', () => {
  test.each(['scan', 'fix', 'audit', 'hash', 'rules'])(
    'tfguard %s --help: its usage, exit 0',
    async (command) => {
      for (const argv of [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
      ]) {
        const r = await cli(argv);
        expect([r.code, r.stderr]).toEqual([0, '']);
        expect(r.stdout).toMatch(new RegExp(`^Usage:\\n  tfguard ${command} `));
        expect(r.stdout).toContain('Exit codes:');
      }
      // Only that command's usage.
      const other = command === 'scan' ? 'tfguard fix' : 'tfguard scan';
      expect((await cli([command, '--help'])).stdout).not.toContain(other);
    },
  );

  test.each([
    [
      ['scan', DEMO, '--formt', 'json'],
      'unknown option --formt for scan (did you mean --format?); see "tfguard scan --help"',
    ],
    [
      ['scan', DEMO, '--fail-on', 'warnings'],
      '--fail-on must be one of error, warning, notice, never, got "warnings" (did you mean warning?); see "tfguard scan --help"',
    ],
    [
      ['scan', DEMO, '--skip-rule', 'lock-mising'],
      '--skip-rule: unknown rule id "lock-mising" (did you mean lock-missing?); see "tfguard scan --help"',
    ],
    [
      ['fix', ROOT, '--dryrun'],
      'unknown option --dryrun for fix (did you mean --dry-run?); see "tfguard fix --help"',
    ],
    [
      ['rules', '--formats', 'json'],
      'unknown option --formats for rules (did you mean --format?); see "tfguard rules --help"',
    ],
    [['sacn', DEMO], 'unknown command "sacn" (did you mean scan?); see "tfguard --help"'],
    [['scan', DEMO, '--zzzzzzzz'], 'unknown option --zzzzzzzz for scan; see "tfguard scan --help"'],
  ])('%j: one line naming the closest valid one, exit 2', async (argv, message) => {
    const r = await cli(argv);
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `tfguard: ${message}\n`]);
  });
});

describe('scan filters', () => {
  let all: Report;
  beforeAll(async () => {
    all = JSON.parse((await cli(['scan', DEMO, '--format', 'json'])).stdout) as Report;
  });

  test('--min-severity leaves lower findings out of the report, its counts and the exit code', async () => {
    expect(all.summary.notice).toBeGreaterThan(0);
    const r = await cli(['scan', DEMO, '--format', 'json', '--min-severity', 'warning']);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.findings).toEqual(all.findings.filter((f) => f.severity !== 'notice'));
    expect(report.summary).toEqual({
      ...all.summary,
      notice: 0,
      total: all.summary.total - all.summary.notice,
    });
    const text = await cli(['scan', DEMO, '--min-severity', 'error', '--fail-on', 'warning']);
    expect(text.stdout).toContain(`${all.summary.error} errors, 0 warnings, 0 notices`);
    expect(text.code).toBe(1);
    // Nothing at or above --fail-on is left once warnings are out and only notices fail.
    const notices = await cli([
      'scan',
      DEMO,
      '--min-severity',
      'warning',
      '--fail-on',
      'notice',
      '--skip-rule',
      'shared-module-upper-bound',
    ]);
    expect(notices.code).toBe(1);
  });

  test('--rule keeps only those rules, --skip-rule drops them (both repeatable)', async () => {
    const only = JSON.parse(
      (await cli(['scan', DEMO, '--format', 'json', '--rule', 'lock-missing', '--rule', 'module-unresolved']))
        .stdout,
    ) as Report;
    expect(only.findings.map((f) => f.ruleId).sort()).toEqual(
      all.findings
        .filter((f) => ['lock-missing', 'module-unresolved'].includes(f.ruleId))
        .map((f) => f.ruleId)
        .sort(),
    );
    expect(only.findings.length).toBeGreaterThan(0);
    const skipped = JSON.parse(
      (
        await cli([
          'scan',
          DEMO,
          '--format',
          'json',
          '--skip-rule',
          'lock-missing',
          '--skip-rule',
          'module-unresolved',
        ])
      ).stdout,
    ) as Report;
    expect(skipped.findings).toEqual(
      all.findings.filter((f) => !['lock-missing', 'module-unresolved'].includes(f.ruleId)),
    );
    expect(skipped.summary.total).toBe(all.summary.total - only.summary.total);
  });
});

test('tfguard rules --format json: every rule with its severity, summary and documentation link', async () => {
  const r = await cli(['rules', '--format', 'json']);
  expect([r.code, r.stderr]).toEqual([0, '']);
  const rules = JSON.parse(r.stdout) as Array<{
    id: string;
    severity: string;
    summary: string;
    docs: string;
  }>;
  expect(rules.map((x) => [x.id, x.severity, x.summary])).toEqual(
    RULES.map((x) => [x.id, x.defaultSeverity, x.summary]),
  );
  for (const rule of rules) {
    expect(rule.docs).toBe(`https://github.com/tfguard/tfguard/blob/v0.1.0/docs/rules/${rule.id}.md`);
    expect(existsSync(path.join(ROOT, 'docs', 'rules', `${rule.id}.md`))).toBe(true);
  }
});

test('an --output path that cannot be written is one line naming it, exit 2', async () => {
  const missing = path.join(tmp, 'no-such-dir', 'report.sarif');
  const r = await cli(['scan', DEMO, '--format', 'sarif', '--output', missing]);
  expect([r.code, r.stdout]).toEqual([2, '']);
  expect(r.stderr).toBe(
    `tfguard: cannot write --output ${missing}: directory ${path.dirname(missing)} does not exist\n`,
  );
  const dir = await cli(['scan', DEMO, '--output', tmp]);
  expect(dir.code).toBe(2);
  expect(dir.stderr.split('\n')).toHaveLength(2);
  expect(dir.stderr).toMatch(/^tfguard: cannot write --output /);
});

test('FORCE_COLOR=0 turns colour off even on a terminal; FORCE_COLOR=1 turns it on', async () => {
  const off = await withEnv({ FORCE_COLOR: '0', NO_COLOR: undefined }, () => cli(['scan', DEMO], true));
  expect(off.stdout).not.toContain('\u001b[');
  const on = await withEnv({ FORCE_COLOR: '1', NO_COLOR: undefined }, () => cli(['scan', DEMO], false));
  expect(on.stdout).toContain('\u001b[');
});

test('a single configuration file: a hint to pass its directory', async () => {
  const dir = await writeTree(path.join(tmp, 'single'), { 'main.tf': 'variable "x" {}\n' });
  const r = await cli(['scan', path.join(dir, 'main.tf')]);
  expect([r.code, r.stdout]).toEqual([2, '']);
  expect(r.stderr).toContain(`is a file; tfguard scans a directory`);
  expect(r.stderr).toContain(`tfguard scan ${dir}`);
});

test('nothing to check (an empty directory, or one without configuration): exit 2 either way', async () => {
  const empty = path.join(tmp, 'empty');
  await fs.mkdir(empty);
  const other = await writeTree(path.join(tmp, 'docs-only'), { 'README.md': '# not terraform\n' });
  for (const dir of [empty, other]) {
    const r = await cli(['scan', dir]);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(
      new RegExp(
        `^tfguard: nothing to check: the directory ${dir} has no Terraform or OpenTofu configuration`,
      ),
    );
  }
  const hash = await cli(['hash', empty]);
  expect([hash.code, hash.stdout]).toEqual([2, '']);
  expect(hash.stderr).toContain('has no files');
});

describe('a directory of a repository', () => {
  const MAIN = (constraint: string) =>
    `terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "${constraint}" }\n  }\n}\n`;
  const FILES = {
    '.tfguard.hcl': 'rule "required-version-missing" {\n  enabled = false\n}\n',
    'live/prod/main.tf': `${MAIN('>= 5.0')}module "net" {\n  source = "../../modules/net"\n}\n`,
    'modules/net/main.tf': `${MAIN('~> 5.0')}module "dns" {\n  source = "../dns"\n}\n`,
    'modules/dns/main.tf': MAIN('~> 5.1'),
    'other/main.tf': 'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws" }\n  }\n}\n',
  };

  async function repository(name: string, withGit: boolean): Promise<string> {
    const dir = await writeTree(path.join(tmp, name), FILES);
    // Something elsewhere in the repository that a whole-repository read would reject.
    await fs.mkdir(path.join(dir, 'node_modules'));
    await fs.symlink('/etc/passwd', path.join(dir, 'node_modules', 'outside'));
    if (withGit) git(['init', '-q'], dir);
    return dir;
  }

  test.each([
    ['git top level', true],
    ['nearest .tfguard.hcl', false],
  ])(
    'found by its %s: calls resolve, its settings apply, only the directory is reported',
    async (_, withGit) => {
      const repo = await repository(withGit ? 'repo-git' : 'repo-config', withGit as boolean);
      const r = await cli(['scan', path.join(repo, 'live'), '--format', 'json', '--fail-on', 'never']);
      expect([r.code, r.stderr]).toEqual([0, '']);
      const report = JSON.parse(r.stdout) as Report;
      expect(report.source.name).toBe(path.basename(repo));
      expect(report.modules.map((m) => m.path)).toEqual(['live/prod']);
      expect(report.roots.map((x) => [x.path, x.modules])).toEqual([
        ['live/prod', ['live/prod', 'modules/net', 'modules/dns']],
      ]);
      // `../../modules/net` was read (no module-source-missing); the root's settings disabled a rule;
      // modules/* and other/ have findings of their own, which are not this directory's.
      expect(report.findings.map((f) => [f.ruleId, f.file])).toEqual([
        ['lock-missing', 'live/prod/main.tf'],
        ['root-module-unbounded', 'live/prod/main.tf'],
      ]);
      expect(report.summary).toMatchObject({ error: 1, warning: 1, notice: 0, modules: 1, roots: 1 });
      // SARIF paths are from the repository root, run from inside the directory too.
      const cwd = process.cwd();
      process.chdir(path.join(repo, 'live', 'prod'));
      try {
        const sarif = JSON.parse((await cli(['scan', '.', '--format', 'sarif'])).stdout);
        const uris = sarif.runs[0].results.map(
          (x: { locations: Array<{ physicalLocation: { artifactLocation: { uri: string } } }> }) =>
            x.locations[0]?.physicalLocation.artifactLocation.uri,
        );
        expect(uris).toEqual(['live/prod/main.tf', 'live/prod/main.tf']);
      } finally {
        process.chdir(cwd);
      }
    },
  );

  test('the repository root itself is scanned whole, as before', async () => {
    const repo = await writeTree(path.join(tmp, 'repo-root'), FILES);
    git(['init', '-q'], repo);
    const report = JSON.parse(
      (await cli(['scan', repo, '--format', 'json', '--fail-on', 'never'])).stdout,
    ) as Report;
    expect(report.modules.map((m) => m.path).sort()).toEqual([
      'live/prod',
      'modules/dns',
      'modules/net',
      'other',
    ]);
  });
});
