/**
 * Threat model, "HCL and lock files" rows (docs/security.md §5): a hostile configuration or lock file
 * becomes exactly one finding (rule, file, line), never a crash, and the rest of the archive is still
 * scanned. Every archive here also carries `other/main.tf`, whose three findings prove that.
 */
import type { Finding } from '../../src/rules';
import type { Report } from '../../src/report/types';
import { scanBytes } from '../../src/scan';
import type { ScanOptions } from '../../src/scan/types';
import { makeTarGz, type FileMap } from '../support/archive';
import { rejection } from '../support/security';

const VERSIONS = [
  'terraform {',
  '  required_version = ">= 1.6"',
  '  required_providers {',
  '    aws = {',
  '      source  = "hashicorp/aws"',
  '      version = ">= 5.0, < 6.0"',
  '    }',
  '  }',
  '}',
  '',
].join('\n');

const OTHER: FileMap = { 'other/main.tf': 'resource "aws_s3_bucket" "b" {}\n' };

/** The findings `other/main.tf` always produces: the proof that the rest of the archive was scanned. */
const OTHER_FINDINGS = [
  { ruleId: 'lock-missing', module: 'other', file: 'other/main.tf', line: 1 },
  { ruleId: 'required-version-missing', module: 'other', file: 'other/main.tf', line: 1 },
  { ruleId: 'undeclared-provider', module: 'other', file: 'other/main.tf', line: 1 },
];

async function scan(files: FileMap, options: ScanOptions = {}): Promise<Report> {
  return scanBytes('hostile.tar.gz', await makeTarGz({ ...files, ...OTHER }), options);
}

function located(report: Report, ruleId: string): Pick<Finding, 'module' | 'file' | 'line' | 'message'>[] {
  return report.findings
    .filter((f) => f.ruleId === ruleId)
    .map((f) => ({ module: f.module, file: f.file, line: f.line, message: f.message }));
}

function expectRestScanned(report: Report): void {
  const other = report.findings
    .filter((f) => f.module === 'other')
    .map((f) => ({ ruleId: f.ruleId, module: f.module, file: f.file, line: f.line }));
  expect(other).toEqual(OTHER_FINDINGS);
  expect(report.modules.map((m) => m.path)).toContain('other');
}

/** One parse-error finding for `file` at `line`, whose message contains `detail`. */
async function expectParseError(files: FileMap, file: string, line: number, detail: string): Promise<Report> {
  const report = await scan(files);
  const findings = located(report, 'parse-error');
  expect(findings).toEqual([{ module: '.', file, line, message: expect.stringContaining(detail) as string }]);
  expect(findings[0]?.message).toMatch(
    new RegExp(`^syntax error in ${file.replace('.', '\\.')} at line ${line}, column \\d+: `),
  );
  expectRestScanned(report);
  return report;
}

describe('hostile HCL: one parse-error finding, the rest still scanned', () => {
  test('invalid UTF-8', async () => {
    const bytes = Buffer.concat([
      Buffer.from(`${VERSIONS}locals {\n  name = "caf`),
      Buffer.from([0xe9]),
      Buffer.from('"\n}\n'),
    ]);
    await expectParseError(
      { 'main.tf': bytes },
      'main.tf',
      11,
      'invalid UTF-8: the bytes 0xe9 0x22 0x0a 0x7d at byte offset 175 are not a valid UTF-8 sequence',
    );
  });

  test('a byte order mark in the middle of the file (a leading one is fine)', async () => {
    await expectParseError(
      { 'main.tf': `${VERSIONS}locals {\n  a = 1\n}\n\ufefflocals {\n  b = 2\n}\n` },
      'main.tf',
      13,
      'byte order mark (U+FEFF) in the middle of the file; only a leading one is allowed',
    );
    const leading = await scan({ 'main.tf': `\ufeff${VERSIONS}` });
    expect(located(leading, 'parse-error')).toEqual([]);
    expect(leading.modules.find((m) => m.path === '.')?.requiredVersion).toEqual(['>= 1.6']);
  });

  test('CRLF heredocs (valid, as in Terraform): no finding, and later lines keep their numbers', async () => {
    const text = [
      'locals {',
      '  policy = <<EOT',
      '{ "Statement": [] }',
      'EOT',
      '  indented = <<-EOT',
      '    hello',
      '      world',
      '    EOT',
      '}',
      VERSIONS,
    ]
      .join('\n')
      .replace(/\n/g, '\r\n');
    const report = await scan({ 'main.tf': text });
    expect(located(report, 'parse-error')).toEqual([]);
    const root = report.modules.find((m) => m.path === '.');
    expect(root?.requiredVersion).toEqual(['>= 1.6']);
    expect(root?.providers.map((p) => [p.name, p.constraints, p.declared])).toEqual([
      ['aws', '>= 5.0, < 6.0', { file: 'main.tf', line: 13 }],
    ]);
    expectRestScanned(report);
  });

  test('an unterminated string', async () => {
    await expectParseError(
      { 'main.tf': `${VERSIONS}locals {\n  name = "abc\n}\n` },
      'main.tf',
      11,
      'Invalid multi-line string',
    );
  });

  test('an unterminated heredoc', async () => {
    await expectParseError(
      { 'main.tf': `${VERSIONS}locals {\n  doc = <<EOT\nabc\n}\n` },
      'main.tf',
      14,
      'Unterminated template string; No closing marker was found for the string.',
    );
  });

  test('curly quotes', async () => {
    await expectParseError(
      { 'main.tf': VERSIONS.replace('"hashicorp/aws"', '\u201chashicorp/aws\u201d') },
      'main.tf',
      5,
      'Invalid character; "Curly quotes" are not valid here.',
    );
  });

  test('a duplicate argument', async () => {
    await expectParseError(
      { 'main.tf': `${VERSIONS}locals {\n  x = 1\n  x = 2\n}\n` },
      'main.tf',
      12,
      'Attribute redefined; The argument "x" was already set at main.tf:11,3-4.',
    );
  });

  test('5,000 levels of nested brackets, braces and template interpolations', async () => {
    const deep = {
      brackets: `${'['.repeat(5000)}${']'.repeat(5000)}`,
      braces: `${'{a='.repeat(5000)}1${'}'.repeat(5000)}`,
      templates: `"${'${'.repeat(5000)}1${'}'.repeat(5000)}"`,
      unclosed: '('.repeat(5000),
    };
    for (const expression of Object.values(deep)) {
      await expectParseError(
        { 'main.tf': `${VERSIONS}locals {\n  x = ${expression}\n}\n` },
        'main.tf',
        11,
        'exceeds the limit of 128',
      );
    }
  });

  test('a .tf.json whose root is not an object', async () => {
    for (const json of ['[1, 2, 3]', '"terraform"', 'null', '42']) {
      await expectParseError(
        { 'main.tf': VERSIONS, 'extra.tf.json': json },
        'extra.tf.json',
        1,
        'the root of a .tf.json file must be an object',
      );
    }
  });
});

describe('modules: Terraform rejects two required_providers blocks in one module', () => {
  test('in one file: duplicate-required-providers at the second block', async () => {
    const second =
      'terraform {\n  required_providers {\n    random = {\n      source  = "hashicorp/random"\n      version = ">= 3.0, < 4.0"\n    }\n  }\n}\n';
    const report = await scan({ 'main.tf': `${VERSIONS}${second}` });
    expect(located(report, 'duplicate-required-providers')).toEqual([
      {
        module: '.',
        file: 'main.tf',
        line: 11,
        message:
          'duplicate required_providers block: a module may have only one, and one was already declared at main.tf:3',
      },
    ]);
    expectRestScanned(report);
  });

  test('in two files: reported in the later file', async () => {
    const report = await scan({
      'main.tf': VERSIONS,
      'versions.tf':
        'terraform {\n  required_providers {\n    random = {\n      source = "hashicorp/random"\n    }\n  }\n}\n',
    });
    expect(located(report, 'duplicate-required-providers')).toEqual([
      {
        module: '.',
        file: 'versions.tf',
        line: 2,
        message: expect.stringContaining('one was already declared at main.tf:3') as string,
      },
    ]);
    expectRestScanned(report);
  });
});

describe('hostile lock files: one lock-parse-error finding, the rest still scanned', () => {
  const block = (line: string): string =>
    [
      'provider "registry.terraform.io/hashicorp/aws" {',
      '  version     = "5.9.0"',
      '  constraints = ">= 5.0.0, < 6.0.0"',
      `  hashes = [${line}]`,
      '}',
      '',
    ].join('\n');
  const H1 = '"h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="';

  test('duplicate provider blocks', async () => {
    const report = await scan({ 'main.tf': VERSIONS, '.terraform.lock.hcl': `${block(H1)}\n${block(H1)}` });
    expect(located(report, 'lock-parse-error')).toEqual([
      {
        module: '.',
        file: '.terraform.lock.hcl',
        line: 7,
        message:
          'duplicate lock entry for provider registry.terraform.io/hashicorp/aws: the file already has one at line 1',
      },
    ]);
    expectRestScanned(report);
  });

  test('invalid UTF-8', async () => {
    const bytes = Buffer.concat([Buffer.from(block(H1)), Buffer.from([0xff, 0x0a])]);
    const report = await scan({ 'main.tf': VERSIONS, '.terraform.lock.hcl': bytes });
    expect(located(report, 'lock-parse-error')).toEqual([
      {
        module: '.',
        file: '.terraform.lock.hcl',
        line: 6,
        message: expect.stringContaining('the lock file cannot be parsed: invalid UTF-8') as string,
      },
    ]);
    expectRestScanned(report);
  });

  test('5,000 levels of nesting', async () => {
    const report = await scan({ 'main.tf': VERSIONS, '.terraform.lock.hcl': block('['.repeat(5000)) });
    expect(located(report, 'lock-parse-error')).toEqual([
      {
        module: '.',
        file: '.terraform.lock.hcl',
        line: 4,
        message: expect.stringContaining(
          'the lock file cannot be parsed: nesting depth 5002 exceeds the limit of 128',
        ) as string,
      },
    ]);
    expectRestScanned(report);
  });
});

describe('settings files are not findings: an unusable .tfguard.hcl rejects the input', () => {
  test('5,000 levels of nesting in .tfguard.hcl: InputError invalid-config naming the file and line', async () => {
    const error = await rejection(
      scan({ 'main.tf': VERSIONS, '.tfguard.hcl': `engine = ${'['.repeat(5000)}` }),
    );
    expect({ code: error.code, entry: error.entry, message: error.message }).toEqual({
      code: 'invalid-config',
      entry: '.tfguard.hcl',
      message: '.tfguard.hcl:1: cannot be parsed: nesting depth 5000 exceeds the limit of 128',
    });
  });
});
