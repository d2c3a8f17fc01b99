import { lines, ruleTable } from '../support/rule-table';

const versions = (v: string) =>
  lines(
    'terraform {',
    '  required_providers {',
    `    aws = { source = "hashicorp/aws", version = "${v}" }`,
    '  }',
    '}',
  );

ruleTable('incompatible-constraints', [
  {
    name: 'root ~> 4.0 against a module >= 5.0: reported at the root constraint',
    files: {
      'versions.tf': versions('~> 4.0'),
      'main.tf': lines('module "network" {', '  source = "./modules/network"', '}'),
      'modules/network/versions.tf': versions('>= 5.0'),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message:
          'no version of provider hashicorp/aws satisfies every module of root ".": "." requires "~> 4.0", "modules/network" requires ">= 5.0"',
      },
    ],
  },
  {
    name: 'two modules disagree, the root is silent: reported at the root call leading to the first one',
    files: {
      'main.tf': lines(
        'module "a" {',
        '  source = "./modules/a"',
        '}',
        'module "b" {',
        '  source = "./modules/b"',
        '}',
      ),
      'modules/a/versions.tf': versions('~> 4.0'),
      'modules/b/main.tf': lines('module "c" {', '  source = "../c"', '}'),
      'modules/c/versions.tf': versions('>= 5.0'),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 1,
        message: '"modules/a" requires "~> 4.0", "modules/c" requires ">= 5.0"',
      },
    ],
  },
  {
    name: 'each root is judged separately',
    files: {
      'live/a/main.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 4.0" }',
        '  }',
        '}',
        'module "net" {',
        '  source = "../../modules/net"',
        '}',
      ),
      'live/b/main.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '  }',
        '}',
        'module "net" {',
        '  source = "../../modules/net"',
        '}',
      ),
      'modules/net/versions.tf': versions('>= 5.0'),
    },
    expected: [
      { module: 'live/a', file: 'live/a/main.tf', line: 3, message: 'every module of root "live/a"' },
    ],
  },
  {
    name: 'exact pins that differ',
    files: {
      'versions.tf': versions('5.1.0'),
      'main.tf': lines('module "m" {', '  source = "./m"', '}'),
      'm/versions.tf': versions('5.2.0'),
    },
    expected: [
      { module: '.', file: 'versions.tf', line: 3, message: '"." requires "5.1.0", "m" requires "5.2.0"' },
    ],
  },
  {
    name: 'passing: overlapping ranges',
    files: {
      'versions.tf': versions('~> 5.0'),
      'main.tf': lines('module "m" {', '  source = "./m"', '}'),
      'm/versions.tf': versions('>= 5.31, != 5.40.0'),
    },
    expected: [],
  },
  {
    name: 'passing: an invalid constraint is left to invalid-version-constraint',
    files: {
      'versions.tf': versions('~> 4.x'),
      'main.tf': lines('module "m" {', '  source = "./m"', '}'),
      'm/versions.tf': versions('>= 5.0'),
    },
    expected: [],
  },
  {
    name: 'different sources never conflict',
    files: {
      'versions.tf': versions('~> 4.0'),
      'main.tf': lines('module "m" {', '  source = "./m"', '}'),
      'm/versions.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "example.com/corp/aws", version = ">= 5.0" }',
        '  }',
        '}',
      ),
    },
    expected: [],
  },
  {
    name: 'root ~> 4.0 against an installed registry module >= 5.34: named by key, address and version',
    files: {
      'versions.tf': versions('~> 4.0'),
      'main.tf': lines(
        'module "eks" {',
        '  source  = "terraform-aws-modules/eks/aws"',
        '  version = "~> 20.0"',
        '}',
      ),
      '.terraform/modules/modules.json': JSON.stringify({
        Modules: [
          { Key: '', Source: '', Dir: '.' },
          {
            Key: 'eks',
            Source: 'registry.terraform.io/terraform-aws-modules/eks/aws',
            Version: '20.8.4',
            Dir: '.terraform/modules/eks',
          },
        ],
      }),
      '.terraform/modules/eks/versions.tf': versions('>= 5.34'),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message:
          '"." requires "~> 4.0", remote module "eks" (terraform-aws-modules/eks/aws 20.8.4) requires ">= 5.34"',
      },
    ],
  },
  {
    name: 'two remote modules disagree, the root is silent: reported at the call of the first',
    files: {
      'main.tf': lines(
        'module "a" {',
        '  source = "git::https://github.com/acme/a.git?ref=v1.0.0"',
        '}',
        'module "b" {',
        '  source = "git::https://github.com/acme/b.git?ref=v2.0.0"',
        '}',
      ),
      '.terraform/modules/modules.json': JSON.stringify({
        Modules: [
          { Key: '', Source: '', Dir: '.' },
          { Key: 'a', Source: 'git::https://github.com/acme/a.git?ref=v1.0.0', Dir: '.terraform/modules/a' },
          { Key: 'b', Source: 'git::https://github.com/acme/b.git?ref=v2.0.0', Dir: '.terraform/modules/b' },
        ],
      }),
      '.terraform/modules/a/main.tf': versions('< 5.0'),
      '.terraform/modules/b/main.tf': versions('>= 5.0'),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 1,
        message:
          'remote module "a" (git::https://github.com/acme/a.git v1.0.0) requires "< 5.0", remote module "b" (git::https://github.com/acme/b.git v2.0.0) requires ">= 5.0"',
      },
    ],
  },
  {
    name: 'severity overridden',
    files: {
      'versions.tf': versions('< 4.0'),
      'main.tf': lines('module "m" {', '  source = "./m"', '}'),
      'm/versions.tf': versions('>= 4.0'),
    },
    config: 'rule "incompatible-constraints" { severity = "warning" }\n',
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message: '"." requires "< 4.0", "m" requires ">= 4.0"',
        severity: 'warning',
      },
    ],
  },
]);
