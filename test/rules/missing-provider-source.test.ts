import { lines, ruleTable } from '../support/rule-table';

const rp = (...entries: string[]) => lines('terraform {', '  required_providers {', ...entries, '  }', '}');

ruleTable('missing-provider-source', [
  {
    name: 'legacy string form',
    files: { 'versions.tf': rp('    aws = "~> 5.0"') },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message:
          'provider "aws" uses the legacy string form (aws = "~> 5.0") without a source; "hashicorp/aws" is assumed',
        fix: 'aws = { source = "hashicorp/aws", version = "~> 5.0" }',
      },
    ],
  },
  {
    name: 'object entry without source, multi-line',
    files: { 'versions.tf': rp('    random = {', '      version = "~> 3.5"', '    }') },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message: 'required_providers entry "random" has no source; "hashicorp/random" is assumed',
        fix: 'source = "hashicorp/random"',
      },
    ],
  },
  {
    name: 'several entries, only the ones without source',
    files: {
      'versions.tf': rp(
        '    aws    = { source = "hashicorp/aws", version = "~> 5.0" }',
        '    github = { version = "~> 6.0" }',
        '    mycloud = { source = "example.com/corp/mycloud", version = "~> 1.0" }',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 4,
        message: '"github" has no source; "hashicorp/github" is assumed',
        fix: 'source = "hashicorp/github"',
      },
    ],
  },
  {
    name: 'OpenTofu engine: still shown as hashicorp/NAME',
    files: { 'modules/x/versions.tf': rp('    aws = { version = ">= 5.0" }') },
    config: 'engine = "opentofu"\n',
    expected: [
      {
        module: 'modules/x',
        file: 'modules/x/versions.tf',
        line: 3,
        message: '"hashicorp/aws" is assumed',
        fix: 'source = "hashicorp/aws"',
      },
    ],
  },
  {
    name: 'passing: explicit sources, used-only providers and the built-in terraform name',
    files: {
      'versions.tf': rp(
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '    terraform = { version = ">= 1.0" }',
      ),
      'main.tf': lines('resource "random_id" "x" {', '  byte_length = 4', '}'),
    },
    expected: [],
  },
  {
    name: 'override file supplies the source',
    files: {
      'versions.tf': rp('    aws = { version = "~> 5.0" }'),
      'versions_override.tf': rp('    aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
    },
    expected: [],
  },
  {
    name: '.tf.json legacy string; severity raised to error',
    files: {
      'versions.tf.json': lines(
        '{',
        '  "terraform": [',
        '    { "required_providers": [ { "aws": "~> 5.0" } ] }',
        '  ]',
        '}',
      ),
    },
    config: 'rule "missing-provider-source" { severity = "error" }\n',
    expected: [
      {
        module: '.',
        file: 'versions.tf.json',
        line: 3,
        message: 'legacy string form',
        fix: 'aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        severity: 'error',
      },
    ],
  },
]);
