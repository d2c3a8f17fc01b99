import { lines, ruleTable } from '../support/rule-table';

/** Terraform 1.17 (hashicorp/terraform#39153) reads const variables and locals in required_providers;
 * terraform 1.11, the CLI on the test machines, rejects them all, so it cannot judge these rows. */
const root = (entries: string, decls: string): string =>
  lines(
    'terraform {',
    '  required_version = ">= 1.17"',
    '  backend "local" {}',
    '  required_providers {',
    entries,
    '  }',
    '}',
    decls,
  );

ruleTable('provider-version-unknown', [
  {
    name: 'a const variable without a default: one notice at the reference, nothing else claimed',
    files: {
      'main.tf': root(
        '    aws = { source = "hashicorp/aws", version = var.aws_version }',
        'variable "aws_version" {\n  type  = string\n  const = true\n}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 5,
        message:
          'version of provider "aws" (hashicorp/aws) comes from var.aws_version, which has no constant value tfguard can read (var.aws_version has no default (its value comes from -var, a .tfvars file or the calling module)); its constraint was not checked',
      },
    ],
  },
  {
    name: 'a local built with a function call',
    files: {
      'main.tf': root(
        '    random = { source = "hashicorp/random", version = local.v }',
        'locals {\n  v = format("~> %s", "3.1")\n}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 5,
        message:
          'version of provider "random" (hashicorp/random) comes from local.v, which has no constant value',
      },
    ],
  },
  {
    name: 'a source from a const variable without a default',
    files: {
      'main.tf': root(
        '    widget = { source = "${var.ns}/widget", version = "~> 1.0" }',
        'variable "ns" {\n  const = true\n}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 5,
        message:
          'source of provider "widget" comes from var.ns, which has no constant value tfguard can read',
      },
    ],
  },
  {
    name: 'a constant value: no notice',
    files: {
      'main.tf': root(
        '    aws = { source = "hashicorp/aws", version = local.v }',
        'locals {\n  major = 5\n  v     = "~> ${local.major}.0"\n}',
      ),
    },
    expected: [],
  },
  {
    name: 'a value Terraform rejects is invalid-version-constraint, not a notice',
    files: {
      'main.tf': root(
        '    aws = { source = "hashicorp/aws", version = var.v }',
        'variable "v" {\n  default = "~> 5.0"\n}',
      ),
    },
    expected: [],
  },
]);
