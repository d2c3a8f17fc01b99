import { callsTo, lines, ruleTable } from '../support/rule-table';

const rp = (...entries: string[]) => lines('terraform {', '  required_providers {', ...entries, '  }', '}');
const peerVersions = rp(
  '    aws = {',
  '      source  = "hashicorp/aws"',
  '      version = ">= 5.0"',
  '    }',
);

ruleTable('missing-configuration-alias', [
  {
    name: 'resource provider = NAME.ALIAS without configuration_aliases (one finding, counted uses)',
    files: {
      'main.tf': callsTo('modules/peer'),
      'modules/peer/versions.tf': peerVersions,
      'modules/peer/main.tf': lines(
        'resource "aws_vpc_peering_connection_accepter" "peer" {',
        '  provider = aws.peer',
        '}',
        'data "aws_caller_identity" "peer" {',
        '  provider = aws.peer',
        '}',
      ),
    },
    expected: [
      {
        module: 'modules/peer',
        file: 'modules/peer/main.tf',
        line: 2,
        message:
          'shared module uses provider configuration "aws.peer" (2 uses, first aws_vpc_peering_connection_accepter.peer) but the required_providers entry for "aws" does not declare it in configuration_aliases',
        fix: 'configuration_aliases = [aws.peer]',
        note: 'providers = { aws.peer = aws.<their alias> }',
      },
    ],
  },
  {
    name: 'one alias declared, another not: the fix lists both',
    files: {
      'main.tf': callsTo('modules/tunnel'),
      'modules/tunnel/versions.tf': rp(
        '    aws = {',
        '      source                = "hashicorp/aws"',
        '      version               = ">= 5.0"',
        '      configuration_aliases = [aws.src]',
        '    }',
      ),
      'modules/tunnel/main.tf': lines(
        'resource "aws_vpn_gateway" "src" {',
        '  provider = aws.src',
        '}',
        'resource "aws_vpn_gateway" "dst" {',
        '  provider = aws.dst',
        '}',
      ),
    },
    expected: [
      {
        module: 'modules/tunnel',
        file: 'modules/tunnel/main.tf',
        line: 5,
        message: '"aws.dst" (1 use, first aws_vpn_gateway.dst)',
        fix: 'configuration_aliases = [aws.src, aws.dst]',
      },
    ],
  },
  {
    name: 'passing an undeclared alias on to a nested module',
    files: {
      'main.tf': callsTo('modules/outer'),
      'modules/outer/versions.tf': peerVersions,
      'modules/outer/main.tf': lines(
        'module "inner" {',
        '  source = "../inner"',
        '  providers = {',
        '    aws = aws.peer',
        '  }',
        '}',
      ),
      'modules/inner/versions.tf': peerVersions,
    },
    expected: [
      {
        module: 'modules/outer',
        file: 'modules/outer/main.tf',
        // The `providers` argument (the loader locates the map, not its entries).
        line: 3,
        message: '"aws.peer" (1 use, first module.inner)',
        fix: 'configuration_aliases = [aws.peer]',
      },
    ],
  },
  {
    name: 'alias of a provider that is used but undeclared is left to undeclared-provider',
    files: {
      'main.tf': callsTo('m'),
      'm/main.tf': lines('resource "google_storage_bucket" "b" {', '  provider = google.eu', '}'),
    },
    expected: [],
  },
  {
    name: 'alias only passed on to a nested module, provider not declared: no mechanical fix',
    files: {
      'main.tf': callsTo('modules/outer'),
      'modules/outer/main.tf': lines(
        'module "inner" {',
        '  source    = "../inner"',
        '  providers = { aws = aws.peer }',
        '}',
      ),
      'modules/inner/versions.tf': peerVersions,
    },
    expected: [
      {
        module: 'modules/outer',
        file: 'modules/outer/main.tf',
        line: 3,
        message:
          'but the module has no required_providers entry for "aws" declaring it in configuration_aliases',
      },
    ],
  },
  {
    name: 'passing: aliases declared; the root module may use its own aliases',
    files: {
      'main.tf': lines(
        'provider "aws" {',
        '  alias = "usw2"',
        '}',
        'resource "aws_s3_bucket" "b" {',
        '  provider = aws.usw2',
        '}',
        'module "tunnel" {',
        '  source    = "./modules/tunnel"',
        '  providers = { aws.src = aws.usw2 }',
        '}',
      ),
      'modules/tunnel/versions.tf': rp(
        '    aws = {',
        '      source                = "hashicorp/aws"',
        '      version               = ">= 5.0"',
        '      configuration_aliases = [aws.src]',
        '    }',
      ),
      'modules/tunnel/main.tf': lines('resource "aws_vpn_gateway" "src" {', '  provider = aws.src', '}'),
    },
    expected: [],
  },
  {
    name: 'passing: an alias defined by a provider block in the module is shared-module-provider-config',
    files: {
      'main.tf': callsTo('m'),
      'm/main.tf': lines(
        'provider "aws" {',
        '  alias = "x"',
        '}',
        'resource "aws_s3_bucket" "b" {',
        '  provider = aws.x',
        '}',
      ),
    },
    expected: [],
  },
  {
    name: '.tf.json resource in a shared module; disabled by configuration',
    files: {
      'main.tf': callsTo('m'),
      'm/main.tf.json': JSON.stringify({ resource: { aws_s3_bucket: { b: { provider: 'aws.x' } } } }),
      'm/versions.tf.json': JSON.stringify({
        terraform: { required_providers: { aws: { source: 'hashicorp/aws', version: '>= 5.0' } } },
      }),
    },
    config: 'rule "missing-configuration-alias" { enabled = false }\n',
    expected: [],
  },
  {
    name: '.tf.json resource in a shared module',
    files: {
      'main.tf': callsTo('m'),
      'm/main.tf.json': lines(
        '{',
        '  "resource": {',
        '    "aws_s3_bucket": {',
        '      "b": {',
        '        "provider": "aws.x"',
        '      }',
        '    }',
        '  }',
        '}',
      ),
      'm/versions.tf.json': JSON.stringify({
        terraform: { required_providers: { aws: { source: 'hashicorp/aws', version: '>= 5.0' } } },
      }),
    },
    expected: [
      {
        module: 'm',
        file: 'm/main.tf.json',
        line: 5,
        message: '"aws.x"',
        fix: 'configuration_aliases = [aws.x]',
      },
    ],
  },
]);
