import { callsTo, lines, ruleTable } from './table';

const rp = (...entries: string[]) => lines('terraform {', '  required_providers {', ...entries, '  }', '}');
const one = (v: string) => rp(`    aws = { source = "hashicorp/aws", version = ${JSON.stringify(v)} }`);

ruleTable('invalid-version-constraint', [
  ...['~> 5.x', '>= v5', '5.0 - 6.0', '>= 5.0 || < 4.0', '', '>= 5.0,', '=> 5.0', '1.2.3.4'].map((v) => ({
    name: `invalid: ${JSON.stringify(v)}`,
    files: { 'versions.tf': one(v) },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message: `version constraint ${JSON.stringify(v)} for provider "aws" (hashicorp/aws) is not valid: `,
      },
    ],
  })),
  {
    name: 'passing: valid forms',
    files: {
      'versions.tf': rp(
        '    a = { source = "x/a", version = "~> 5.0" }',
        '    b = { source = "x/b", version = ">= 1.2.3, < 2.0.0, != 1.5.0" }',
        '    c = { source = "x/c", version = "1.0.0-beta1" }',
        '    d = { source = "x/d", version = "= 2" }',
        '    e = { source = "x/e", version = ">=1,<=3" }',
      ),
    },
    expected: [],
  },
  {
    name: 'legacy string form in a shared module (no upper-bound finding for it either)',
    files: { 'main.tf': callsTo('m'), 'm/versions.tf': rp('    aws = "~>"') },
    expected: [
      { module: 'm', file: 'm/versions.tf', line: 3, message: '"~>" for provider "aws" (hashicorp/aws)' },
    ],
  },
  {
    name: 'the legacy hashicorp/terraform entry is left to builtin-terraform-provider',
    files: { 'versions.tf': rp('    terraform = { source = "hashicorp/terraform", version = "~> 0.1.x" }') },
    expected: [],
  },
  {
    name: 'override file fixes the constraint',
    files: { 'versions.tf': one('>= 5.x'), 'versions_override.tf': one('~> 5.0') },
    expected: [],
  },
  {
    name: 'disabled by configuration',
    files: { 'versions.tf': one('~> 5.x') },
    config: 'rule "invalid-version-constraint" { enabled = false }\n',
    expected: [],
  },
]);
