import { callsTo, lines, ruleTable } from '../support/rule-table';

ruleTable('shared-module-provider-config', [
  {
    name: 'default and aliased provider blocks in a called module',
    files: {
      'main.tf': callsTo('modules/bucket'),
      'modules/bucket/main.tf': lines(
        'provider "aws" {',
        '  region = "eu-west-1"',
        '}',
        '',
        'provider "aws" {',
        '  alias  = "east"',
        '  region = "us-east-1"',
        '}',
      ),
    },
    expected: [
      {
        module: 'modules/bucket',
        file: 'modules/bucket/main.tf',
        line: 1,
        message:
          'shared module contains a provider block for "aws"; provider configurations belong in the root module',
      },
      {
        module: 'modules/bucket',
        file: 'modules/bucket/main.tf',
        line: 5,
        message: 'provider block for "aws" (alias "east")',
        note: 'configuration_aliases = [aws.east]',
      },
    ],
  },
  {
    name: 'passing: provider blocks in the root module',
    files: {
      'main.tf': lines(
        'provider "aws" {',
        '  region = "eu-west-1"',
        '}',
        ...callsTo('modules/bucket').trimEnd().split('\n'),
      ),
      'modules/bucket/main.tf': lines('resource "aws_s3_bucket" "b" {', '  bucket = "x"', '}'),
    },
    expected: [],
  },
  {
    name: 'shared by configuration; .tf.json provider block',
    files: {
      'lib/dns/providers.tf.json': lines(
        '{',
        '  "provider": {',
        '    "cloudflare": { "api_token": "x" }',
        '  }',
        '}',
      ),
    },
    config: 'shared = ["lib/*"]\n',
    expected: [
      {
        module: 'lib/dns',
        file: 'lib/dns/providers.tf.json',
        line: 3,
        message: 'provider block for "cloudflare"',
      },
    ],
  },
  {
    name: 'an empty provider block still counts; severity lowered',
    files: {
      'main.tf': callsTo('m'),
      'm/main.tf': lines('provider "google" {}'),
    },
    config: 'rule "shared-module-provider-config" { severity = "warning" }\n',
    expected: [{ module: 'm', file: 'm/main.tf', line: 1, message: '"google"', severity: 'warning' }],
  },
  {
    name: 'a provider block added by an override file is reported in the override',
    files: {
      'main.tf': callsTo('m'),
      'm/main.tf': lines('resource "aws_s3_bucket" "b" {', '  bucket = "x"', '}'),
      'm/override.tf': lines('# added', 'provider "aws" {', '  region = "eu-west-1"', '}'),
    },
    expected: [{ module: 'm', file: 'm/override.tf', line: 2, message: 'provider block for "aws"' }],
  },
]);
