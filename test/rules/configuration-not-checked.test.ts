import { lines, ruleTable } from '../support/rule-table';
import { findingsOf, scanFiles } from '../support/scan';

// KICS's query test layout (https://github.com/Checkmarx/kics/blob/master/docs/creating-queries.md):
// each sample declares its own terraform block, and an expected-results file sits beside them.
const SAMPLE = (name: string): string =>
  lines(
    'terraform {',
    '  required_providers {',
    '    aws = {',
    '      source = "hashicorp/aws"',
    '    }',
    '  }',
    '}',
    `resource "aws_s3_bucket" "${name}" {}`,
  );
const EXPECTED =
  '[\n  {\n    "queryName": "S3 Bucket",\n    "line": 8,\n    "fileName": "positive1.tf"\n  }\n]\n';
const KICS = {
  'kics/assets/queries/terraform/aws/s3_a/test/positive1.tf': SAMPLE('positive1'),
  'kics/assets/queries/terraform/aws/s3_a/test/positive2.tf': SAMPLE('positive2'),
  'kics/assets/queries/terraform/aws/s3_a/test/negative1.tf': SAMPLE('negative1'),
  'kics/assets/queries/terraform/aws/s3_a/test/positive_expected_result.json': EXPECTED,
  'kics/assets/queries/terraform/aws/s3_b/test/positive.tf': 'resource "aws_s3_bucket" "p" {\n',
  'kics/assets/queries/terraform/aws/s3_b/test/negative.tf': 'resource "aws_s3_bucket" "n" {}\n',
  'kics/assets/queries/terraform/aws/s3_b/test/positive_expected_result.json': EXPECTED,
  'kics/assets/queries/terraform/aws/s3_c/test/positive1/main.tf':
    'module "m" {\n  source = "./nowhere"\n}\n',
  'kics/assets/queries/terraform/aws/s3_c/test/positive_expected_result.json': EXPECTED,
};
const ROOT = lines(
  'terraform {',
  '  required_version = ">= 1.5"',
  '  required_providers {',
  '    aws = {',
  '      source  = "hashicorp/aws"',
  '      version = "~> 5.0"',
  '    }',
  '  }',
  '}',
  'provider "aws" {}',
);

ruleTable('configuration-not-checked', [
  {
    name: 'a vendored KICS query tree: one notice for the whole fixture tree',
    files: { ...KICS, 'kics/main.tf': ROOT },
    expected: [
      {
        module: 'kics/assets',
        file: 'kics/assets/queries/terraform/aws/s3_a/test/positive_expected_result.json',
        line: 1,
        message:
          '"kics/assets" looks like a scanner\'s test fixtures: 6 files named positive*/negative* beside expected-results files such as kics/assets/queries/terraform/aws/s3_a/test/positive_expected_result.json; the 3 directories of samples (kics/assets/queries/terraform/aws/s3_a/test, kics/assets/queries/terraform/aws/s3_b/test, kics/assets/queries/terraform/aws/s3_c/test/positive1) are not a configuration anyone initialises, so tfguard did not check them',
        note: 'classify it in .tfguard.hcl',
      },
    ],
  },
  {
    name: 'a Terramate stack made of generate_hcl blocks whose files are not committed',
    files: {
      'stacks/app/stack.tm.hcl': lines('stack {', '  name = "app"', '}'),
      'stacks/app/main.tm.hcl': lines(
        'generate_hcl "_main.tf" {',
        '  content {',
        '    module "web" {',
        '      source = "${terramate.root.path.fs.absolute}/modules/web"',
        '    }',
        '  }',
        '}',
      ),
      'stacks/providers.tm.hcl': lines(
        'generate_hcl "_providers.tf" {',
        '  content {',
        '    provider "aws" {}',
        '  }',
        '}',
      ),
      'modules/web/main.tf': 'resource "aws_s3_bucket" "b" {}\n',
    },
    expected: [
      {
        module: 'stacks/app',
        file: 'stacks/app/stack.tm.hcl',
        line: 1,
        message:
          'Terramate stack "app" (stacks/app/stack.tm.hcl:1) generates its Terraform code with generate_hcl (_main.tf, _providers.tf), which is not in the repository: tfguard does not run Terramate, so that code, its providers and its lock file were not checked',
      },
    ],
  },
  {
    name: 'generate_hcl blocks imported from another directory count where they are imported',
    files: {
      // flannels17/terramate's layout: terramate.tm.hcl imports ./imports/*.tm.hcl.
      'terramate.tm.hcl': lines('import {', '  source = "./imports/*.tm.hcl"', '}'),
      'imports/providers.tm.hcl': lines(
        'generate_hcl "_providers.tf" {',
        '  content {',
        '    provider "aws" {}',
        '  }',
        '}',
      ),
      'stacks/a/stack.tm.hcl': lines('stack {', '  name = "a"', '}'),
      'stacks/b/stack.tm.hcl': lines('stack {', '  name = "b"', '}'),
      'stacks/b/_providers.tf': ROOT,
    },
    expected: [
      {
        module: 'stacks/a',
        file: 'stacks/a/stack.tm.hcl',
        line: 1,
        message:
          'Terramate stack "a" (stacks/a/stack.tm.hcl:1) generates its Terraform code with generate_hcl (_providers.tf)',
      },
    ],
  },
  {
    name: 'passing: generated files committed, and a positive.tf without expected results is a module',
    files: {
      'stacks/app/stack.tm.hcl': lines('stack {', '  name = "app"', '}'),
      'stacks/app/main.tm.hcl': lines('generate_hcl "_main.tf" {', '  content {', '  }', '}'),
      'stacks/app/_main.tf': ROOT,
      'checks/positive.tf': ROOT,
    },
    expected: [],
  },
  {
    name: 'disabled by configuration',
    files: KICS,
    config: 'rule "configuration-not-checked" { enabled = false }\n',
    expected: [],
  },
]);

test('nothing else is reported from the fixtures: no duplicate blocks, parse errors or missing modules', async () => {
  const report = await scanFiles({ ...KICS, 'kics/main.tf': ROOT });
  const fromFixtures = report.findings.filter((f) => (f.file ?? '').startsWith('kics/assets/'));
  expect(fromFixtures.map((f) => f.ruleId)).toEqual(['configuration-not-checked']);
  const kinds = new Map(report.modules.map((m) => [m.path, m.kind]));
  expect(kinds.get('kics/assets/queries/terraform/aws/s3_a/test')).toBe('fragment');
  expect(kinds.get('kics')).toBe('root');
  expect(findingsOf(report, 'duplicate-required-providers')).toEqual([]);
});
