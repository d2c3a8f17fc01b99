/**
 * One finding per location (src/rules/merge.ts): Terragrunt units sharing one generated file get
 * one finding at the `generate` block naming them all, through the real pipeline; and the merge
 * itself on findings whose fixes differ.
 */
import { findingsOf, scanFiles } from '../support/scan';
import { mergeSameLocation } from '../../src/rules/merge';
import type { Finding } from '../../src/rules';
import { lines } from '../support/rule-table';

const ROOT_HCL = lines(
  'generate "versions" {',
  '  path      = "versions.tf"',
  '  if_exists = "overwrite"',
  '  contents  = <<EOF',
  'terraform {',
  '  required_providers {',
  '    aws = {',
  '      source  = "hashicorp/aws"',
  '      version = ">= 4.40"',
  '    }',
  '  }',
  '}',
  'EOF',
  '}',
);
const UNIT = lines(
  'include "root" {',
  '  path = find_in_parent_folders("root.hcl")',
  '}',
  'terraform {',
  '  source = "${get_repo_root()}/modules//app"',
  '}',
);

test('units sharing a generated file: one root-module-unbounded naming every unit', async () => {
  const report = await scanFiles({
    'live/root.hcl': ROOT_HCL,
    'live/a/terragrunt.hcl': UNIT,
    'live/b/terragrunt.hcl': UNIT,
    'live/c/terragrunt.hcl': UNIT,
    'modules/app/main.tf': 'resource "aws_s3_bucket" "b" {}\n',
  });
  const found = findingsOf(report, 'root-module-unbounded');
  expect(found.map((f) => [f.module, f.file, f.line, f.modules])).toEqual([
    ['live/a', 'live/root.hcl', 9, ['live/a', 'live/b', 'live/c']],
  ]);
  expect(found[0]?.message).toContain(
    '(the same for the 3 modules that read this file: live/a, live/b, live/c)',
  );
});

const finding = (module: string, replacement: string | null): Finding => ({
  ruleId: 'root-module-unbounded',
  severity: 'error',
  module,
  file: 'live/root.hcl',
  line: 9,
  message: 'unbounded',
  ...(replacement === null ? {} : { fix: { description: 'bound it', replacement } }),
  note: replacement === null ? 'no lock' : `use ${replacement}`,
});

test('different fixes: no fix, and a note per group of modules', () => {
  const merged = mergeSameLocation([
    finding('b', '~> 5.40'),
    finding('a', '~> 5.40'),
    finding('c', '~> 5.44'),
    { ...finding('d', null), line: 10 },
  ]);
  expect(merged).toEqual([
    {
      ruleId: 'root-module-unbounded',
      severity: 'error',
      module: 'a',
      modules: ['a', 'b', 'c'],
      file: 'live/root.hcl',
      line: 9,
      message: 'unbounded (the same for the 3 modules that read this file: a, b, c)',
      note: 'For a, b: use ~> 5.40 For c: use ~> 5.44',
    },
    { ...finding('d', null), line: 10 },
  ]);
});

test('the same fix is kept; one module repeating a finding is left alone', () => {
  const same = mergeSameLocation([finding('a', '~> 5.40'), finding('b', '~> 5.40')]);
  expect(same.map((f) => [f.module, f.modules, f.fix?.replacement])).toEqual([['a', ['a', 'b'], '~> 5.40']]);
  const repeated = [finding('a', '~> 5.40'), finding('a', '~> 5.40')];
  expect(mergeSameLocation(repeated)).toEqual(repeated);
});
