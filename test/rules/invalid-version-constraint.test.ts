import { callsTo, lines, ruleTable } from '../support/rule-table';

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
  {
    name: 'Terraform 1.17: a variable without const = true',
    files: {
      'versions.tf': rp('    aws = { source = "hashicorp/aws", version = var.v }'),
      'variables.tf': lines('variable "v" {', '  default = "~> 5.0"', '}'),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message:
          'version var.v for provider "aws" (hashicorp/aws) cannot be evaluated during Terraform init: var.v is not declared with const = true',
      },
    ],
  },
  {
    name: 'Terraform 1.17: a resource attribute',
    files: {
      'versions.tf': rp('    aws = { source = "hashicorp/aws", version = "~> ${aws_instance.x.id}" }'),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message: 'version "~> ${aws_instance.x.id}" for provider "aws" (hashicorp/aws) cannot be evaluated',
      },
    ],
  },
  {
    name: 'Terraform 1.17: an evaluated value that is not a valid constraint says where it came from',
    files: {
      'versions.tf': rp('    aws = { source = "hashicorp/aws", version = local.v }'),
      'locals.tf': lines('locals {', '  v = "~> 5.x"', '}'),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message:
          'version constraint "~> 5.x" (from local.v (locals.tf:2)) for provider "aws" (hashicorp/aws) is not valid',
      },
    ],
  },
  {
    name: 'Terraform 1.17: a const variable default is valid',
    files: {
      'versions.tf': rp('    aws = { source = "hashicorp/aws", version = var.v }'),
      'variables.tf': lines('variable "v" {', '  const   = true', '  default = "~> 5.0"', '}'),
    },
    expected: [],
  },
  {
    name: 'OpenTofu reads the value as written',
    files: {
      'versions.tofu': rp('    aws = { source = "hashicorp/aws", version = var.v }'),
      'variables.tofu': lines('variable "v" {', '  const   = true', '  default = "~> 5.0"', '}'),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tofu',
        line: 3,
        message:
          'version var.v for provider "aws" (hashicorp/aws) cannot be evaluated during OpenTofu init: OpenTofu does not evaluate variables or locals in required_providers',
      },
    ],
  },
]);
