import { lines, ruleTable } from '../support/rule-table';

const COMPONENT = lines('component "s3" {', '  source = "./s3"', '}');

ruleTable('stack-legacy-file', [
  {
    name: 'a beta component file beside the current ones',
    files: {
      'stack/components.tfcomponent.hcl': COMPONENT,
      'stack/old.tfstack.hcl': COMPONENT,
      'stack/s3/main.tf': lines('resource "aws_s3_bucket" "b" {}'),
    },
    expected: [
      {
        module: 'stack',
        file: 'stack/old.tfstack.hcl',
        line: 1,
        message:
          "stack/old.tfstack.hcl is a Terraform Stacks beta file that Terraform 1.14 and later ignore: its blocks are not part of the Stack. The Stack's component configuration is read from stack/components.tfcomponent.hcl.",
        note: 'Rename it to old.tfcomponent.hcl',
      },
    ],
  },
  {
    name: 'a beta Stack with no component file at all',
    files: {
      'components.tfstack.hcl': COMPONENT,
      'deployments.tfdeploy.hcl': lines('deployment "prod" {', '  inputs = {}', '}'),
    },
    expected: [
      {
        module: '.',
        file: 'components.tfstack.hcl',
        line: 1,
        message: 'This directory has no *.tfcomponent.hcl file, so Terraform finds no Stack here.',
      },
    ],
  },
  {
    name: 'passing: current file names',
    files: {
      'components.tfcomponent.hcl': COMPONENT,
      'deployments.tfdeploy.hcl': lines('deployment "prod" {', '  inputs = {}', '}'),
      's3/main.tf': lines('resource "aws_s3_bucket" "b" {}'),
    },
    expected: [],
  },
  {
    name: 'disabled by configuration',
    files: { 'components.tfstack.hcl': COMPONENT },
    config: 'rule "stack-legacy-file" { enabled = false }\n',
    expected: [],
  },
]);
