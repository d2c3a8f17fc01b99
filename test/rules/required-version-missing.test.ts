import { callsTo, lines, ruleTable } from '../support/rule-table';

const rpBlock = lines(
  '# versions',
  'terraform {',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
  '  }',
  '}',
);

ruleTable('required-version-missing', [
  {
    name: 'root without required_version: points at its required_providers block',
    files: { 'main.tf': lines('locals {}'), 'versions.tf': rpBlock },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message:
          'root module has no terraform { required_version } constraint, so any Terraform version may run it',
      },
    ],
  },
  {
    name: 'root without a terraform block: first file, line 1; OpenTofu wording',
    files: { 'b.tf': lines('locals {}'), 'a.tf': lines('locals {}') },
    config: 'engine = "opentofu"\n',
    expected: [{ module: '.', file: 'a.tf', line: 1, message: 'any OpenTofu version' }],
  },
  {
    name: 'passing: required_version set (in any file); shared modules are not checked',
    files: {
      'main.tf': callsTo('modules/x'),
      'versions.tf': lines('terraform {', '  required_version = ">= 1.5"', '}'),
      'modules/x/main.tf': lines('locals {}'),
    },
    expected: [],
  },
  {
    name: 'passing: set only in an override file',
    files: {
      'main.tf': lines('locals {}'),
      'override.tf': lines('terraform {', '  required_version = ">= 1.5"', '}'),
    },
    expected: [],
  },
  {
    name: 'skipped while a file of the module does not parse',
    files: {
      'main.tf': lines('locals {}'),
      'versions.tf': lines('terraform {', '  required_version = ">= 1.5"'),
    },
    expected: [],
  },
  {
    name: 'passing: a Terraform Stack (its CLI version is in .terraform-version)',
    files: {
      'stack/components.tfcomponent.hcl': lines('component "s3" {', '  source = "./s3"', '}'),
      'stack/.terraform-version': '1.14.0\n',
      'stack/s3/main.tf': lines('locals {}'),
    },
    expected: [],
  },
  {
    name: 'two roots; severity raised',
    files: { 'live/a/main.tf': lines('locals {}'), 'live/b/main.tf': lines('locals {}') },
    config: 'rule "required-version-missing" { severity = "warning" }\n',
    expected: [
      { module: 'live/a', file: 'live/a/main.tf', line: 1, message: 'root module', severity: 'warning' },
      { module: 'live/b', file: 'live/b/main.tf', line: 1, message: 'root module', severity: 'warning' },
    ],
  },
]);
