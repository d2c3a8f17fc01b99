import { lines, ruleTable } from '../support/rule-table';

ruleTable('parse-error', [
  {
    // terraform validate 1.11: "Unclosed configuration block ... on versions.tf line 1".
    name: 'unclosed block in HCL (reported where Terraform reports it: the unclosed block)',
    files: {
      'versions.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws"',
        '  }',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 1,
        message: 'syntax error in versions.tf at line 1, column 11: Unclosed configuration block',
      },
    ],
  },
  {
    name: 'invalid JSON in a .tf.json file of a nested module',
    files: {
      'main.tf': lines('locals {}'),
      'modules/x/main.tf.json': lines('{', '  "locals": {', '    "a": 1,', '  }', '}'),
    },
    expected: [
      {
        module: 'modules/x',
        file: 'modules/x/main.tf.json',
        line: 4,
        message: 'syntax error in modules/x/main.tf.json',
      },
    ],
  },
  {
    name: 'a broken override file',
    files: { 'main.tf': lines('locals {}'), 'main_override.tf': lines('locals {', '  a = ', '}') },
    expected: [{ module: '.', file: 'main_override.tf', line: 2, message: 'main_override.tf' }],
  },
  {
    name: 'one finding per broken file',
    files: {
      'a.tf': lines('resource "x" {'),
      'b.tf': lines('locals {', '  = 1', '}'),
      'c.tf': lines('locals {}'),
    },
    expected: [
      { module: '.', file: 'a.tf', line: 1, message: 'a.tf' },
      { module: '.', file: 'b.tf', line: 2, message: 'b.tf' },
    ],
  },
  {
    name: 'passing: valid files, and files Terraform ignores',
    files: {
      'main.tf': lines('locals {}'),
      '.hidden.tf': 'broken {',
      'main.tf~': 'broken {',
      '#main.tf#': 'broken {',
    },
    expected: [],
  },
  {
    name: 'severity lowered',
    files: { 'a.tf': lines('locals {', '  x = [', '}') },
    config: 'rule "parse-error" { severity = "warning" }\n',
    expected: [{ module: '.', file: 'a.tf', line: 3, message: 'a.tf', severity: 'warning' }],
  },
]);
