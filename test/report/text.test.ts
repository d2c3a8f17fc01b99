/**
 * The text report groups a note repeated for several findings of one rule in one module: it is
 * printed once, after them. Over the real pipeline (inline files → tar.gz → scan).
 */
import { renderReport } from '../../src/report';
import type { Report } from '../../src/report/types';
import { scanFiles } from '../support/scan';
import { lines } from '../support/rule-table';

let report: Report;
let text: string;
beforeAll(async () => {
  report = await scanFiles({
    'main.tf': lines(
      'terraform {',
      '  required_version = ">= 1.6"',
      '  required_providers {',
      '    a = { source = "hashicorp/a", version = ">= 1.0" }', // 4: note "~> 1.0"
      '    b = { source = "hashicorp/b", version = ">= 1.0" }', // 5: note "~> 1.0"
      '    c = { source = "hashicorp/c", version = ">= 2.0" }', // 6: note "~> 2.0"
      '  }',
      '}',
      'module "m" {',
      '  source = "./m"',
      '}',
    ),
    'm/main.tf': lines(
      'terraform {',
      '  required_providers {',
      '    a = { source = "hashicorp/a", version = ">= 1.0" }',
      '    b = { source = "hashicorp/b", version = ">= 1.0" }',
      '    c = { source = "hashicorp/c", version = ">= 1.0" }',
      '  }',
      '}',
      'provider "a" {}', // 8
      'provider "b" {', // 9
      '}',
      'provider "c" {}', // 11
    ),
  });
  text = renderReport(report, 'text');
});

it('prints a note shared by consecutive findings of a rule once, after them', () => {
  const configs = report.findings.filter((f) => f.ruleId === 'shared-module-provider-config');
  expect(configs.map((f) => f.line)).toEqual([8, 9, 11]);
  const note = configs[0]?.note as string;
  expect(configs.every((f) => f.note === note)).toBe(true);
  const out = text.split('\n');
  const first = out.findIndex((l) => l.includes('m/main.tf:8 '));
  expect(out.slice(first, first + 4)).toEqual([
    expect.stringContaining('m/main.tf:8  shared module contains a provider block for "a"'),
    expect.stringContaining('m/main.tf:9  shared module contains a provider block for "b"'),
    expect.stringContaining('m/main.tf:11  shared module contains a provider block for "c"'),
    `          note (for the 3 findings above): ${note}`,
  ]);
  expect(text.split(note).length - 1).toBe(1);
});

it('keeps a fix per finding and groups only runs with the same note', () => {
  const unbounded = report.findings.filter((f) => f.ruleId === 'root-module-unbounded');
  expect(unbounded.map((f) => [f.line, f.fix?.replacement])).toEqual([
    [4, '~> 1.0'],
    [5, '~> 1.0'],
    [6, '~> 2.0'],
  ]);
  const out = text.split('\n');
  const first = out.findIndex((l) => l.includes('main.tf:4 ') && !l.includes('m/main.tf'));
  expect(out.slice(first, first + 8)).toEqual([
    expect.stringContaining('main.tf:4  root module constraint ">= 1.0" for provider "a"'),
    '          fix: ~> 1.0  (bound the version with ~>)',
    expect.stringContaining('main.tf:5  root module constraint ">= 1.0" for provider "b"'),
    '          fix: ~> 1.0  (bound the version with ~>)',
    `          note (for the 2 findings above): ${unbounded[0]?.note}`,
    expect.stringContaining('main.tf:6  root module constraint ">= 2.0" for provider "c"'),
    '          fix: ~> 2.0  (bound the version with ~>)',
    `          note: ${unbounded[2]?.note}`,
  ]);
});

it('still lists every finding with its location', () => {
  for (const f of report.findings) expect(text).toContain(`${f.file}:${f.line}  ${f.message}`);
});

describe('what matters first', () => {
  let guessed: Report;
  let out: string[];
  beforeAll(async () => {
    guessed = await scanFiles({
      // A root by its backend, with an error (a missing module) and a warning (no lock file).
      'live/main.tf': lines(
        'terraform {',
        '  backend "s3" {}',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '  }',
        '}',
        'module "gone" {',
        '  source = "../gone"',
        '}',
      ),
      // A root only by a guess (a provider block, nobody calls it): its findings are low-confidence.
      'scratch/main.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
        '    null = { source = "hashicorp/null", version = ">= 3.0" }',
        '  }',
        '}',
        'provider "aws" {}',
      ),
    });
    out = renderReport(guessed, 'text').split('\n');
  });

  it('opens with the summary, then errors, warnings and notices', () => {
    const s = guessed.summary;
    expect([s.error, s.warning > 0, s.notice > 0]).toEqual([1, true, true]);
    expect(out[1]).toBe(`1 error, ${s.warning} warning${s.warning === 1 ? '' : 's'}, ${s.notice} notices`);
    expect(out[out.length - 2]).toBe(out[1]);
    const sections = out.filter((l) => /^(errors|warnings|notices) \(\d+\)$/.test(l));
    expect(sections).toEqual(['errors (1)', `warnings (${s.warning})`, `notices (${s.notice})`]);
    expect(out.indexOf('errors (1)')).toBe(3);
    expect(out[6]).toContain('live/main.tf:7  module "gone" source "../gone"');
  });

  it("groups a module's low-confidence findings in one line that says what they assume", () => {
    const low = guessed.findings.filter((f) => f.confidence === 'low');
    expect(low.length).toBeGreaterThan(1);
    expect(new Set(low.map((f) => f.module))).toEqual(new Set(['scratch']));
    const bySeverity = new Map<string, typeof low>();
    for (const f of low) bySeverity.set(f.severity, [...(bySeverity.get(f.severity) ?? []), f]);
    for (const [severity, findings] of bySeverity) {
      const n = findings.length;
      const rules = [...new Set(findings.map((f) => f.ruleId))];
      const line = out.find((l) => l.startsWith(`  ${severity.padEnd(7)} ${n} finding`));
      expect(line).toContain(
        `${n} finding${n === 1 ? ' assumes' : 's assume'} "scratch" is a root module; confirm with \`tfguard init\``,
      );
      for (const rule of rules) expect(line).toContain(rule);
    }
    // Each one is in the JSON report, not in the text.
    for (const f of low) expect(out.join('\n')).not.toContain(f.message);
  });
});
