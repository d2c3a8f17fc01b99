import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeWithTerraform } from '../support/external';
import { runTerraform, writeTree } from '../support/terraform';
import { lines, ruleTable } from '../support/rule-table';

const FEATURE = lines(
  'variable "aws_version" {',
  '  type    = string',
  '  const   = true',
  '  default = "~> 5.0"',
  '}',
  'terraform {',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = var.aws_version }',
  '  }',
  '}',
);
const MODULE_FEATURE = lines(
  'variable "kms_source" {',
  '  const   = true',
  '  default = "acme/kms/aws"',
  '}',
  'module "kms" {',
  '  source  = var.kms_source',
  '  version = "~> 2.2"',
  '}',
);
const requiredVersion = (v: string): string => lines('terraform {', `  required_version = "${v}"`, '}');

ruleTable('required-version-too-old-for-feature', [
  {
    name: 'no required_version: older Terraform is admitted',
    files: { 'main.tf': FEATURE },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 8,
        message:
          'required_providers reads variables or locals (version of "aws" is var.aws_version), which Terraform older than 1.17 rejects, but the module has no terraform { required_version }',
      },
    ],
  },
  {
    name: 'a minimum below 1.17',
    files: { 'main.tf': FEATURE, 'versions.tf': requiredVersion('>= 1.5') },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 8,
        message: 'but required_version ">= 1.5" (versions.tf:2) admits such versions',
      },
    ],
  },
  {
    name: 'a pessimistic constraint within 1.x that still admits 1.16',
    files: { 'main.tf': FEATURE, 'versions.tf': requiredVersion('~> 1.16') },
    expected: [{ module: '.', file: 'main.tf', line: 8, message: 'required_version "~> 1.16"' }],
  },
  {
    name: 'requires 1.17',
    files: { 'main.tf': FEATURE, 'versions.tf': requiredVersion('>= 1.17') },
    expected: [],
  },
  {
    name: 'two required_version settings whose conjunction excludes older versions',
    files: {
      'main.tf': FEATURE,
      'a.tf': requiredVersion('>= 1.5'),
      'b.tf': requiredVersion('>= 1.17.0, < 2.0.0'),
    },
    expected: [],
  },
  {
    name: 'an override file replaces required_version',
    files: {
      'main.tf': FEATURE,
      'versions.tf': requiredVersion('>= 1.17'),
      'override.tf': requiredVersion('>= 1.10'),
    },
    expected: [{ module: '.', file: 'main.tf', line: 8, message: '">= 1.10" (override.tf:2)' }],
  },
  {
    name: 'a shared module is judged on its own required_version',
    files: {
      'main.tf': lines(
        'terraform {',
        '  required_version = ">= 1.17"',
        '}',
        'module "net" {',
        '  source = "./net"',
        '}',
      ),
      'net/main.tf': FEATURE,
    },
    expected: [
      { module: 'net', file: 'net/main.tf', line: 8, message: 'has no terraform { required_version }' },
    ],
  },
  {
    name: 'an unknown value uses the feature too',
    files: {
      'main.tf': lines(
        'variable "v" {',
        '  const = true',
        '}',
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = var.v }',
        '  }',
        '}',
      ),
    },
    expected: [{ module: '.', file: 'main.tf', line: 6, message: 'version of "aws" is var.v' }],
  },
  {
    name: 'literals only: not the feature',
    files: {
      'main.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '  }',
        '}',
      ),
    },
    expected: [],
  },
  {
    name: 'a value Terraform rejects anyway is left to invalid-version-constraint',
    files: {
      'main.tf': lines(
        'variable "v" {',
        '  default = "~> 5.0"',
        '}',
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = var.v }',
        '  }',
        '}',
      ),
    },
    expected: [],
  },
  {
    name: 'OpenTofu does not have the feature: invalid-version-constraint reports it instead',
    files: { 'main.tofu': FEATURE },
    expected: [],
  },
  // Module sources and versions: Terraform 1.15 (const variables, locals; terraform 1.11
  // answers "Variables not allowed", test/modules/module-source-expressions.test.ts), OpenTofu 1.8
  // (early evaluation, opentofu/opentofu website/docs/language/modules/sources.mdx).
  {
    name: 'a module source read from a const variable, no required_version (Terraform 1.15)',
    files: { 'main.tf': MODULE_FEATURE },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 6,
        message:
          'module "kms" reads variables or locals in its source (var.kms_source), which Terraform older than 1.15 rejects, but the module has no terraform { required_version }',
        note: 'required_version = ">= 1.15"',
      },
    ],
  },
  {
    name: 'a module source read from a const variable, required_version >= 1.15',
    files: { 'main.tf': MODULE_FEATURE, 'versions.tf': requiredVersion('>= 1.15') },
    expected: [],
  },
  {
    name: 'a module source evaluated by a variable Terraform refuses (no const) is not the feature',
    files: { 'main.tf': MODULE_FEATURE.replace('  const   = true\n', '') },
    expected: [],
  },
  {
    name: 'both features: the newer one (1.17) is asked for',
    files: {
      'main.tf': FEATURE,
      'modules.tf': MODULE_FEATURE,
      'versions.tf': requiredVersion('>= 1.15'),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 8,
        message:
          'required_providers reads variables or locals (version of "aws" is var.aws_version, and 1 more), which Terraform older than 1.17 rejects, but required_version ">= 1.15"',
      },
    ],
  },
  {
    name: 'OpenTofu: a module version read from a local, required_version admits 1.7',
    files: {
      'main.tofu': lines(
        'locals {',
        '  kms_version = "~> 2.2"',
        '}',
        'module "kms" {',
        '  source  = "acme/kms/aws"',
        '  version = local.kms_version',
        '}',
      ),
      'versions.tofu': requiredVersion('>= 1.6'),
    },
    expected: [
      {
        module: '.',
        file: 'main.tofu',
        line: 6,
        message:
          'module "kms" reads variables or locals in its version (local.kms_version), which OpenTofu older than 1.8 rejects, but required_version ">= 1.6" (versions.tofu:2) admits such versions',
      },
    ],
  },
]);

// What the rule claims about older Terraform, judged by an older Terraform: the CLI on the test
// machines (1.11) rejects the file the rule warns about. (No 1.17 binary is available to show the
// other half, that 1.17 accepts it; see test/modules/constants.test.ts.)
describeWithTerraform('terraform older than 1.17 rejects the file', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tfguard-tf117-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  it('reports an invalid version constraint for a local in required_providers', async () => {
    await writeTree(dir, {
      'main.tf': lines(
        'locals {',
        '  v = "~> 3.0"',
        '}',
        'terraform {',
        '  required_providers {',
        '    null = { source = "hashicorp/null", version = local.v }',
        '  }',
        '}',
      ),
    });
    const r = await runTerraform(['providers', '-no-color'], dir);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('Invalid version constraint');
    expect(r.output).toContain('Version must be specified as a string');
  });
});
