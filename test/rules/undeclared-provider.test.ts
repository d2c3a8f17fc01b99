import { callsTo, lines, ruleTable } from '../support/rule-table';

const rp = (...entries: string[]) => lines('terraform {', '  required_providers {', ...entries, '  }', '}');

ruleTable('undeclared-provider', [
  {
    name: 'resources of an undeclared provider: one finding at the first use, with the count',
    files: {
      'main.tf': callsTo('modules/dns'),
      'modules/dns/a.tf': lines('resource "cloudflare_record" "www" {', '  name = "www"', '}'),
      'modules/dns/b.tf': lines(
        '# api',
        'resource "cloudflare_record" "api" {',
        '  name = "api"',
        '}',
        'data "cloudflare_zone" "z" {',
        '  name = "example.com"',
        '}',
      ),
    },
    expected: [
      {
        module: 'modules/dns',
        file: 'modules/dns/a.tf',
        line: 1,
        message:
          'provider "cloudflare" is used but not declared in required_providers (3 uses, first cloudflare_record.www); "hashicorp/cloudflare" with any version is assumed',
      },
    ],
  },
  {
    name: 'a provider block of an undeclared provider',
    files: {
      'versions.tf': rp('    aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
      'providers.tf': lines(
        'provider "aws" {',
        '  region = "eu-west-1"',
        '}',
        '',
        'provider "google" {',
        '  project = "p"',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'providers.tf',
        line: 5,
        message:
          'provider "google" is used but not declared in required_providers (1 use, first provider.google)',
      },
    ],
  },
  {
    name: 'explicit provider = with a compound local name that is not declared',
    files: {
      'versions.tf': rp('    http = { source = "hashicorp/http", version = "~> 3.0" }'),
      'main.tf': lines(
        'data "http" "a" {',
        '  provider = mycorp-http',
        '  url      = "https://example.com"',
        '}',
      ),
    },
    expected: [
      { module: '.', file: 'main.tf', line: 2, message: 'provider "mycorp-http" is used but not declared' },
    ],
  },
  {
    name: 'aliases a shared module refers to are part of the suggested entry',
    files: {
      'main.tf': callsTo('m'),
      'm/main.tf': lines(
        'resource "google_storage_bucket" "a" {',
        '  provider = google.eu',
        '}',
        'resource "google_storage_bucket" "b" {}',
        'resource "google_storage_bucket" "c" {',
        '  provider = google.us',
        '}',
      ),
    },
    expected: [
      {
        module: 'm',
        file: 'm/main.tf',
        line: 2,
        message:
          'provider "google" is used but not declared in required_providers (3 uses, first google_storage_bucket.a)',
        note: 'google = { source = "hashicorp/google", version = ">= X.Y", configuration_aliases = [google.eu, google.us] }',
      },
    ],
  },
  {
    name: 'one finding per module',
    files: {
      'main.tf': lines(
        'resource "random_id" "a" {',
        '  byte_length = 2',
        '}',
        ...callsTo('modules/x').trimEnd().split('\n'),
      ),
      'modules/x/main.tf': lines('resource "random_id" "b" {', '  byte_length = 2', '}'),
    },
    expected: [
      { module: '.', file: 'main.tf', line: 1, message: 'provider "random"' },
      { module: 'modules/x', file: 'modules/x/main.tf', line: 1, message: 'provider "random"' },
    ],
  },
  {
    name: 'passing: declared providers, also when declared in another file or an override',
    files: {
      'versions.tf': rp('    aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
      'main.tf': lines(
        'resource "aws_s3_bucket" "b" {',
        '  bucket = "x"',
        '}',
        'resource "random_id" "r" {',
        '  byte_length = 2',
        '}',
      ),
      'versions_override.tf': rp('    random = { source = "hashicorp/random", version = "~> 3.5" }'),
    },
    expected: [],
  },
  {
    name: 'passing: terraform_remote_state uses the built-in provider',
    files: {
      'main.tf': lines('data "terraform_remote_state" "net" {', '  backend = "local"', '}'),
    },
    expected: [],
  },
  {
    name: 'a module with a syntax error is skipped (the declaration may be in the broken file)',
    files: {
      'main.tf': lines('resource "aws_s3_bucket" "b" {', '  bucket = "x"', '}'),
      'versions.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws"',
        '  }',
      ),
    },
    expected: [],
  },
  {
    name: '.tf.json resource; disabled by configuration',
    files: { 'main.tf.json': JSON.stringify({ resource: { aws_s3_bucket: { b: { bucket: 'x' } } } }) },
    config: 'rule "undeclared-provider" { enabled = false }\n',
    expected: [],
  },
  {
    name: '.tf.json resource',
    files: {
      'main.tf.json': lines(
        '{',
        '  "resource": {',
        '    "aws_s3_bucket": {',
        '      "b": { "bucket": "x" }',
        '    }',
        '  }',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf.json',
        line: 4,
        message:
          'provider "aws" is used but not declared in required_providers (1 use, first aws_s3_bucket.b)',
      },
    ],
  },
]);
