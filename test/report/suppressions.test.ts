/**
 * How suppressed findings are rendered: a real tar.gz with annotations through the real scan, then
 * every output format, each checked against what we did not write (the report schema, the official
 * SARIF 2.1.0 schema) and through the CLI's exit code.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Ajv from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import type { Log } from 'sarif';
import { runCli } from '../../src/cli/main';
import { renderReport } from '../../src/report';
import type { Report } from '../../src/report/types';
import reportSchema from '../../docs/report.schema.json';
import { makeTarGz } from '../support/archive';
import { scanFiles } from '../support/scan';
import { lines } from '../support/rule-table';

const sarifSchemaPath = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');

/** A root (lock-missing on line 1, unbounded aws on line 5) and a shared module with a provider block. */
const FILES = {
  'live/main.tf': lines(
    '# tfguard:ignore lock-missing locked by the deploy pipeline',
    'terraform {',
    '  required_version = ">= 1.6"',
    '  required_providers {',
    '    aws = { source = "hashicorp/aws", version = ">= 5.0" } # tfguard:ignore root-module-unbounded renovate',
    '    random = { source = "hashicorp/random", version = ">= 3.0" }',
    '  }',
    '}',
    'module "net" {',
    '  source = "../modules/net"',
    '}',
  ),
  'modules/net/main.tf': lines(
    '// tfguard:ignore-file shared-module-provider-config | only live/ calls it',
    'terraform {',
    '  required_providers {',
    '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
    '  }',
    '}',
    'provider "aws" {',
    '  region = "eu-west-1"',
    '}',
  ),
};

let report: Report;
let tmp: string;
beforeAll(async () => {
  report = await scanFiles(FILES);
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-suppressed-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

it('the scan suppresses three findings and keeps one error', () => {
  expect(report.findings.map((f) => [f.ruleId, `${f.file}:${f.line}`, f.suppressed ?? null])).toEqual([
    [
      'lock-missing',
      'live/main.tf:1',
      { reason: 'locked by the deploy pipeline', file: 'live/main.tf', line: 1 },
    ],
    ['root-module-unbounded', 'live/main.tf:5', { reason: 'renovate', file: 'live/main.tf', line: 5 }],
    ['root-module-unbounded', 'live/main.tf:6', null],
    [
      'shared-module-provider-config',
      'modules/net/main.tf:7',
      { reason: '| only live/ calls it', file: 'modules/net/main.tf', line: 1 },
    ],
  ]);
  expect(report.summary).toMatchObject({ error: 1, warning: 0, notice: 0, total: 1, suppressed: 3 });
});

describe('JSON', () => {
  const validator = () => new Ajv({ allErrors: true, strict: true }).compile(reportSchema);

  it('validates against docs/report.schema.json with suppressed findings', () => {
    const validate = validator();
    const ok = validate(JSON.parse(renderReport(report, 'json')));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('the schema rejects a suppression without a reason or location', () => {
    const validate = validator();
    const broken = JSON.parse(renderReport(report, 'json'));
    broken.findings[0].suppressed.reason = '';
    expect(validate(broken)).toBe(false);
    delete broken.findings[0].suppressed.reason;
    delete broken.findings[0].suppressed.line;
    expect(validate(broken)).toBe(false);
  });
});

describe('SARIF', () => {
  let log: Log;
  beforeAll(() => {
    log = JSON.parse(renderReport(report, 'sarif')) as Log;
  });

  it('validates against the official SARIF 2.1.0 schema', () => {
    const ajv = new AjvDraft04({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats(ajv);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const validate = ajv.compile(require(sarifSchemaPath));
    const ok = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('suppressed results carry an inSource suppression with the reason and the annotation; the others none', () => {
    const results = log.runs[0]?.results ?? [];
    expect(results.map((r) => [r.ruleId, r.suppressions ?? null])).toEqual([
      [
        'lock-missing',
        [
          {
            kind: 'inSource',
            justification: 'locked by the deploy pipeline',
            location: {
              physicalLocation: {
                artifactLocation: { uri: 'live/main.tf', uriBaseId: '%SRCROOT%' },
                region: { startLine: 1 },
              },
            },
          },
        ],
      ],
      ['root-module-unbounded', [expect.objectContaining({ kind: 'inSource', justification: 'renovate' })]],
      ['root-module-unbounded', null],
      [
        'shared-module-provider-config',
        [
          expect.objectContaining({
            justification: '| only live/ calls it',
            location: expect.objectContaining({
              physicalLocation: expect.objectContaining({ region: { startLine: 1 } }),
            }),
          }),
        ],
      ],
    ]);
    expect(results[2]).not.toHaveProperty('suppressions');
    // The run's summary says how many were suppressed.
    expect(log.runs[0]?.properties?.summary).toMatchObject({ error: 1, suppressed: 3 });
  });
});

describe('text', () => {
  it('lists suppressed findings apart with their reasons and counts them on the summary line', () => {
    const text = renderReport(report, 'text');
    const out = text.split('\n');
    const at = out.indexOf('suppressed by inline annotations (3, not counted)');
    expect(at).toBeGreaterThan(0);
    expect(out.slice(at + 1, at + 4)).toEqual([
      '  warning live/main.tf:1  [lock-missing]  locked by the deploy pipeline  (annotation on line 1)',
      '  error   live/main.tf:5  [root-module-unbounded]  renovate  (annotation on line 5)',
      '  error   modules/net/main.tf:7  [shared-module-provider-config]  | only live/ calls it  (annotation on line 1)',
    ]);
    // Above the section, only the finding that still counts.
    expect(out.slice(0, at).filter((l) => /^ {2}(error|warning|notice) /.test(l))).toEqual([
      expect.stringContaining('live/main.tf:6  root module constraint'),
    ]);
    expect(out[out.length - 2]).toBe('1 error, 0 warnings, 0 notices; 3 suppressed');
  });
});

describe('Markdown', () => {
  it('says how many were suppressed and lists them apart, with their reasons; the findings table has the rest', () => {
    const md = renderReport(report, 'markdown');
    expect(md).toContain(
      '❌ 1 error, 0 warnings, 0 notices in 2 modules (1 root). 3 suppressed by inline annotations.',
    );
    expect(md.split('\n').filter((l) => /^\| (🔴|🟠|🔵) /.test(l))).toEqual([
      expect.stringContaining('| `root-module-unbounded` | `live/main.tf:6` |'),
    ]);
    expect(md).toContain('<details><summary>3 suppressed findings (not counted)</summary>');
    expect(md).toContain('| `lock-missing` | `live/main.tf:1` | locked by the deploy pipeline (line 1) |');
    expect(md).toContain('| `root-module-unbounded` | `live/main.tf:5` | renovate (line 5) |');
    // The reason is escaped for the table.
    expect(md).toContain(
      '| `shared-module-provider-config` | `modules/net/main.tf:7` | \\| only live/ calls it (line 1) |',
    );
    // The roll-up counts what is not suppressed.
    expect(md).toContain('| `root-module-unbounded` | 🔴 error | 1 |');
  });
});

describe('CLI', () => {
  async function cli(argv: string[]): Promise<{ code: number; stdout: string }> {
    let stdout = '';
    const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: () => undefined, isTTY: false });
    return { code, stdout };
  }

  it('suppressed findings do not set the exit code, whatever --fail-on', async () => {
    const clean = {
      ...FILES,
      'live/main.tf': (FILES['live/main.tf'] as string).replace(
        '">= 3.0" }',
        '">= 3.0" } # tfguard:ignore root-module-unbounded ok',
      ),
    };
    const archive = path.join(tmp, 'clean.tar.gz');
    await fs.writeFile(archive, await makeTarGz(clean));
    const passing = await cli(['scan', archive, '--fail-on', 'notice', '--format', 'json']);
    expect(passing.code).toBe(0);
    expect(JSON.parse(passing.stdout).summary).toMatchObject({ total: 0, suppressed: 4 });

    const failing = path.join(tmp, 'failing.tar.gz');
    await fs.writeFile(failing, await makeTarGz(FILES));
    expect((await cli(['scan', failing])).code).toBe(1);
  });
});

describe('GitLab Code Quality', () => {
  it('leaves suppressed findings out (GitLab has no suppressed issue) and keeps the others', () => {
    const issues = JSON.parse(renderReport(report, 'codequality')) as { check_name: string }[];
    const active = report.findings.filter((f) => f.suppressed === undefined);
    expect(active.length).toBeLessThan(report.findings.length);
    expect(issues.map((i) => i.check_name)).toEqual(active.map((f) => f.ruleId));
  });
});
