import { callsTo, lines, ruleTable } from '../support/rule-table';

const rp = (...entries: string[]) => lines('terraform {', '  required_providers {', ...entries, '  }', '}');

ruleTable('missing-version-constraint', [
  {
    name: 'object entry without version, in a root module',
    files: { 'versions.tf': rp('    random = {', '      source = "hashicorp/random"', '    }') },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message:
          'required_providers entry for provider "random" (hashicorp/random) has no version constraint',
        note: '~> X.Y',
      },
    ],
  },
  {
    name: 'shared module: the note asks for a minimum',
    files: {
      'main.tf': callsTo('modules/dns'),
      'modules/dns/versions.tf': rp('    cloudflare = { source = "cloudflare/cloudflare" }'),
    },
    expected: [
      {
        module: 'modules/dns',
        file: 'modules/dns/versions.tf',
        line: 3,
        message: 'provider "cloudflare" (cloudflare/cloudflare)',
        note: '>= X.Y',
      },
    ],
  },
  {
    name: 'only configuration_aliases, no version',
    files: {
      'main.tf': callsTo('modules/peer'),
      'modules/peer/versions.tf': rp(
        '    aws = {',
        '      source                = "hashicorp/aws"',
        '      configuration_aliases = [aws.peer]',
        '    }',
      ),
    },
    expected: [
      { module: 'modules/peer', file: 'modules/peer/versions.tf', line: 3, message: '"aws" (hashicorp/aws)' },
    ],
  },
  {
    name: 'override file adds the missing version',
    files: {
      'versions.tf': rp('    aws = { source = "hashicorp/aws" }'),
      'versions_override.tf': rp('    aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
    },
    expected: [],
  },
  {
    name: 'override file replaces the whole entry and drops the version (as Terraform does)',
    files: {
      'versions.tf': rp('    aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
      'override.tf': rp('    aws = { source = "hashicorp/aws" }'),
    },
    expected: [{ module: '.', file: 'override.tf', line: 3, message: '"aws" (hashicorp/aws)' }],
  },
  {
    name: 'passing: version present (object and legacy string forms)',
    files: {
      'versions.tf': rp(
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '    random = "~> 3.5"',
      ),
    },
    expected: [],
  },
  {
    name: 'passing: used but undeclared providers are undeclared-provider findings',
    files: { 'main.tf': lines('resource "aws_s3_bucket" "b" {', '  bucket = "x"', '}') },
    expected: [],
  },
  {
    name: 'passing: legacy hashicorp/terraform and built-in terraform are exempt',
    files: {
      'versions.tf': rp('    terraform = { source = "hashicorp/terraform" }'),
      'child/versions.tf': rp('    terraform = { source = "terraform.io/builtin/terraform" }'),
    },
    expected: [],
  },
  {
    name: '.tf.json entry without version; disabled rule yields nothing',
    files: {
      'versions.tf.json': JSON.stringify({
        terraform: { required_providers: { aws: { source: 'hashicorp/aws' } } },
      }),
    },
    config: 'rule "missing-version-constraint" { enabled = false }\n',
    expected: [],
  },
  {
    name: '.tf.json entry without version',
    files: {
      'versions.tf.json': lines(
        '{',
        '  "terraform": {',
        '    "required_providers": {',
        '      "aws": { "source": "hashicorp/aws" }',
        '    }',
        '  }',
        '}',
      ),
    },
    expected: [{ module: '.', file: 'versions.tf.json', line: 4, message: '"aws" (hashicorp/aws)' }],
  },
  {
    // provider-version-unknown reports it; the entry does have a version.
    name: 'a version from a const variable without a default is not missing',
    files: {
      'versions.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = var.v }',
        '  }',
        '}',
        'variable "v" {',
        '  const = true',
        '}',
      ),
    },
    expected: [],
  },
]);
