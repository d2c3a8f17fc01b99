import { findingsOf, scanFiles } from '../support/scan';
import { callsTo, lines, ruleTable } from '../support/rule-table';

const versions = (...entries: string[]) =>
  lines('terraform {', '  required_version = ">= 1.5"', '  required_providers {', ...entries, '  }', '}');
const root = (message: string, line: number, fix?: string) => ({
  module: '.',
  file: 'versions.tf',
  line,
  message,
  ...(fix === undefined ? {} : { fix }),
});

ruleTable('root-module-unbounded', [
  {
    name: '>= only in the root',
    files: { 'versions.tf': versions('    aws = { source = "hashicorp/aws", version = ">= 5.0" }') },
    expected: [
      root(
        'root module constraint ">= 5.0" for provider "aws" (hashicorp/aws) has no upper bound',
        4,
        '~> 5.0',
      ),
    ],
  },
  {
    name: 'three-part minimum keeps its precision',
    files: { 'versions.tf': versions('    aws = { source = "hashicorp/aws", version = ">= 5.31.2" }') },
    expected: [root('">= 5.31.2"', 4, '~> 5.31, >= 5.31.2')],
  },
  {
    name: '> and != only',
    files: { 'versions.tf': versions('    aws = { source = "hashicorp/aws", version = "> 4.0, != 4.5.0" }') },
    expected: [root('"> 4.0, != 4.5.0"', 4, '~> 4.0, > 4.0, != 4.5.0')],
  },
  {
    name: 'version on its own line',
    files: {
      'versions.tf': versions(
        '    google = {',
        '      source  = "hashicorp/google"',
        '      version = ">= 4.80"',
        '    }',
      ),
    },
    expected: [root('provider "google" (hashicorp/google)', 6, '~> 4.80')],
  },
  {
    name: 'passing: ~>, < and exact versions are bounded',
    files: {
      'versions.tf': versions(
        '    aws    = { source = "hashicorp/aws", version = "~> 5.0" }',
        '    random = { source = "hashicorp/random", version = ">= 3.0, < 4.0" }',
        '    null   = { source = "hashicorp/null", version = "3.2.2" }',
        '    tls    = { source = "hashicorp/tls", version = "<= 4.0.5" }',
      ),
    },
    expected: [],
  },
  {
    name: 'passing: a shared module with a minimum only',
    files: {
      'main.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '  }',
        '}',
        ...callsTo('modules/net').trimEnd().split('\n'),
      ),
      'modules/net/versions.tf': versions('    aws = { source = "hashicorp/aws", version = ">= 5.0" }'),
    },
    expected: [],
  },
  {
    name: 'no constraint, undeclared and invalid constraints belong to other rules',
    files: {
      'versions.tf': versions(
        '    aws    = { source = "hashicorp/aws" }',
        '    random = { source = "hashicorp/random", version = ">= 3.x" }',
      ),
      'main.tf': lines('resource "null_resource" "x" {}'),
    },
    expected: [],
  },
  {
    name: 'the built-in terraform provider is not judged',
    files: {
      'versions.tf': versions('    terraform = { source = "terraform.io/builtin/terraform" }'),
    },
    expected: [],
  },
  {
    name: 'a module is a root by configuration even when called',
    files: {
      'main.tf': callsTo('stacks/app'),
      'stacks/app/versions.tf': versions('    aws = { source = "hashicorp/aws", version = ">= 5.0" }'),
    },
    config: lines('roots = ["stacks/*"]'),
    expected: [
      {
        module: 'stacks/app',
        file: 'stacks/app/versions.tf',
        line: 4,
        message: '">= 5.0"',
        fix: '~> 5.0',
      },
    ],
  },
  {
    name: '.tf.json root module; severity overridden to notice',
    files: {
      'main.tf.json': JSON.stringify(
        { terraform: { required_providers: { aws: { source: 'hashicorp/aws', version: '>= 5.1' } } } },
        null,
        2,
      ),
    },
    config: lines('rule "root-module-unbounded" {', '  severity = "notice"', '}'),
    expected: [
      { module: '.', file: 'main.tf.json', line: 6, message: '">= 5.1"', fix: '~> 5.1', severity: 'notice' },
    ],
  },
  {
    // Terraform 1.17 reads const variables in required_providers: the evaluated default is judged,
    // the finding points at the reference and says where the value came from.
    name: 'a const variable default without an upper bound',
    files: {
      'versions.tf': versions('    aws = { source = "hashicorp/aws", version = var.aws_version }'),
      'variables.tf': lines('variable "aws_version" {', '  const   = true', '  default = ">= 1.0"', '}'),
    },
    expected: [
      root(
        'root module constraint ">= 1.0" (from var.aws_version (its default, variables.tf:3)) for provider "aws" (hashicorp/aws) has no upper bound',
        4,
        '~> 1.0',
      ),
    ],
  },
  {
    name: 'a bounded value built from locals',
    files: {
      'versions.tf': versions('    aws = { source = "hashicorp/aws", version = "~> ${local.major}.0" }'),
      'locals.tf': lines('locals {', '  major = 5', '}'),
    },
    expected: [],
  },
  {
    name: 'a value tfguard cannot evaluate is not judged',
    files: {
      'versions.tf': versions('    aws = { source = "hashicorp/aws", version = var.aws_version }'),
      'variables.tf': lines('variable "aws_version" {', '  const = true', '}'),
    },
    expected: [],
  },
]);

describe('root-module-unbounded fix for an evaluated constraint', () => {
  it('offers the bound as advice, without edits over the reference', async () => {
    const report = await scanFiles({
      'versions.tf': versions('    aws = { source = "hashicorp/aws", version = local.v }'),
      'locals.tf': lines('locals {', '  v = ">= 2.1"', '}'),
    });
    const [f] = findingsOf(report, 'root-module-unbounded');
    expect(f?.fix).toEqual({ description: 'bound the version with ~>', replacement: '~> 2.1' });
  });
});

// A root that gets a provider only through modules that say `>=` and bounds it nowhere.
const netWith = (version: string) =>
  lines(
    'terraform {',
    '  required_providers {',
    '    random = {',
    '      source  = "hashicorp/random"',
    `      version = "${version}"`,
    '    }',
    '  }',
    '}',
  );
const rootWithAws = lines(
  'terraform {',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
  '  }',
  '}',
  'module "net" {',
  '  source = "./modules/net"',
  '}',
);

ruleTable('root-module-unbounded', [
  {
    name: 'through modules: reported on the root’s required_providers block, naming the module',
    files: { 'main.tf': rootWithAws, 'modules/net/versions.tf': netWith('>= 3.1') },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 2,
        message:
          'root module gets provider "random" (hashicorp/random) only through module modules/net (">= 3.1") and bounds it nowhere: the combined constraint ">= 3.1.0" has no upper bound',
        fix: '~> 3.1',
      },
    ],
  },
  {
    name: 'through modules: without required_providers, on the module call; two modules named',
    files: {
      'main.tf': callsTo('modules/a', 'modules/b'),
      'modules/a/versions.tf': netWith('>= 3.1'),
      'modules/b/versions.tf': netWith('>= 3.4.2'),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 1,
        message: 'only through modules modules/a (">= 3.1"), modules/b (">= 3.4.2") and bounds it nowhere',
        fix: '~> 3.4',
      },
    ],
  },
  {
    name: 'through modules: the root’s lock sets the release line',
    files: {
      'main.tf': rootWithAws,
      'modules/net/versions.tf': netWith('>= 3.1'),
      '.terraform.lock.hcl': lines(
        'provider "registry.terraform.io/hashicorp/random" {',
        '  version     = "3.6.2"',
        '  constraints = ">= 3.1.0"',
        '}',
      ),
    },
    expected: [{ module: '.', file: 'main.tf', line: 2, message: '"random"', fix: '~> 3.6' }],
  },
  {
    name: 'through modules, passing: a module caps it, or the root bounds it',
    files: {
      'main.tf': callsTo('modules/a', 'modules/b'),
      'modules/a/versions.tf': netWith('>= 3.1'),
      'modules/b/versions.tf': netWith('~> 3.4'),
      'live/x/main.tf': lines(
        'terraform {',
        '  required_providers {',
        '    random = { source = "hashicorp/random", version = "~> 3.6" }',
        '  }',
        '}',
        'module "a" {',
        '  source = "../../modules/a"',
        '}',
      ),
    },
    expected: [],
  },
  {
    name: 'through modules: an unread remote module may bound it, so a low-confidence notice, no fix',
    files: {
      'main.tf': lines(
        ...rootWithAws.trimEnd().split('\n'),
        'module "vpc" {',
        '  source  = "terraform-aws-modules/vpc/aws"',
        '  version = "5.8.1"',
        '}',
      ),
      'modules/net/versions.tf': netWith('>= 3.1'),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 2,
        message: '(unless remote module "vpc", which tfguard did not read, bounds it)',
        severity: 'notice',
      },
    ],
  },
  {
    name: 'through modules: a called root’s own finding covers it (reported once)',
    files: {
      'main.tf': callsTo('stacks/app'),
      'stacks/app/versions.tf': netWith('>= 3.1'),
    },
    config: lines('roots = ["stacks/*"]'),
    expected: [
      { module: 'stacks/app', file: 'stacks/app/versions.tf', line: 5, message: '">= 3.1"', fix: '~> 3.1' },
    ],
  },
]);
