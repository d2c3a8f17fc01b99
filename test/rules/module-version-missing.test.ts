import { callsTo, lines, ruleTable } from '../support/rule-table';

ruleTable('module-version-missing', [
  {
    name: 'registry module without version',
    files: {
      'main.tf': lines(
        'locals {}',
        '',
        'module "vpc" {',
        '  source = "terraform-aws-modules/vpc/aws"',
        '  cidr   = "10.0.0.0/16"',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 3,
        message:
          'module "vpc" uses registry source "terraform-aws-modules/vpc/aws" without a version constraint',
      },
    ],
  },
  {
    name: 'private registry host, inside a shared module',
    files: {
      'main.tf': callsTo('modules/app'),
      'modules/app/main.tf': lines('module "db" {', '  source = "app.terraform.io/acme/rds/aws"', '}'),
    },
    expected: [
      {
        module: 'modules/app',
        file: 'modules/app/main.tf',
        line: 1,
        message: '"app.terraform.io/acme/rds/aws"',
      },
    ],
  },
  {
    name: 'registry source with a subdirectory; a query after it makes a remote source, as terraform reads it',
    files: {
      'main.tf': lines(
        'module "role" {',
        '  source = "terraform-aws-modules/iam/aws//modules/iam-role"',
        '}',
        'module "odd" {',
        '  source = "terraform-aws-modules/iam/aws//modules/iam-role?ref=v1"',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 1,
        message: 'registry source "terraform-aws-modules/iam/aws//modules/iam-role" without a version',
      },
    ],
  },
  {
    name: 'empty version string counts as missing',
    files: {
      'main.tf': lines(
        'module "vpc" {',
        '  source  = "terraform-aws-modules/vpc/aws"',
        '  version = ""',
        '}',
      ),
    },
    expected: [{ module: '.', file: 'main.tf', line: 1, message: 'module "vpc"' }],
  },
  {
    name: 'passing: versioned registry modules and non-registry sources',
    files: {
      'main.tf': lines(
        'module "vpc" {',
        '  source  = "terraform-aws-modules/vpc/aws"',
        '  version = "~> 5.8"',
        '}',
        'module "git" {',
        '  source = "git::https://github.com/acme/mod.git?ref=v1.2.0"',
        '}',
        'module "gh" {',
        '  source = "github.com/acme/mod"',
        '}',
        'module "s3" {',
        '  source = "s3::https://s3-eu-west-1.amazonaws.com/bucket/mod.zip"',
        '}',
        'module "local" {',
        '  source = "./modules/x"',
        '}',
      ),
      'modules/x/main.tf': lines('locals {}'),
    },
    expected: [],
  },
  {
    name: 'override file adds the version',
    files: {
      'main.tf': lines('module "vpc" {', '  source = "terraform-aws-modules/vpc/aws"', '}'),
      'main_override.tf': lines('module "vpc" {', '  version = "~> 5.8"', '}'),
    },
    expected: [],
  },
  {
    name: '.tf.json module; severity raised',
    files: {
      'main.tf.json': lines(
        '{',
        '  "module": {',
        '    "vpc": {',
        '      "source": "terraform-aws-modules/vpc/aws"',
        '    }',
        '  }',
        '}',
      ),
    },
    config: 'rule "module-version-missing" { severity = "error" }\n',
    expected: [{ module: '.', file: 'main.tf.json', line: 3, message: 'module "vpc"', severity: 'error' }],
  },
]);
