import { lines, ruleTable } from '../support/rule-table';

const PLAIN = lines('resource "aws_s3_bucket" "b" {}');

ruleTable('declared-root-missing', [
  {
    name: 'Atlantis project dir not in the archive',
    files: {
      'atlantis.yaml': lines('version: 3', 'projects:', '  - name: net', '    dir: envs/net'),
      'main.tf': PLAIN,
    },
    expected: [
      {
        module: '.',
        file: 'atlantis.yaml',
        line: 4,
        message:
          'Atlantis project "net" (atlantis.yaml:4) declares directory "envs/net", which is not in the archive',
        note: 'Atlantis runs plan and apply there',
      },
    ],
  },
  {
    name: 'declared directory without configuration, declared twice',
    files: {
      'digger.yml': lines('projects:', '  - name: a', '    dir: docs', '  - name: b', '    dir: ./docs/'),
      'docs/README.md': '# docs\n',
      'main.tf': PLAIN,
    },
    expected: [
      {
        module: '.',
        file: 'digger.yml',
        line: 3,
        message:
          'Digger project "a" (digger.yml:3) declares directory "docs", which holds no Terraform configuration (and 1 more declaration of it)',
      },
    ],
  },
  {
    name: 'a generate_projects glob that matches nothing',
    files: {
      'digger.yml': lines('generate_projects:', '  include: "envs/*"', '  exclude: "envs/skip"'),
      'envs/skip/main.tf': PLAIN,
    },
    expected: [
      {
        module: '.',
        file: 'digger.yml',
        line: 2,
        message: 'Digger generate_projects include "envs/*" (digger.yml:2) matches no directory',
      },
    ],
  },
  {
    name: 'tfe_workspace working_directory: a low-confidence notice (the VCS repository may be another)',
    files: {
      'main.tf': lines(
        'resource "tfe_workspace" "w" {',
        '  name              = "w"',
        '  working_directory = "services/w"',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 3,
        severity: 'notice',
        message: '(if it names this repository; it may name another one)',
      },
    ],
  },
  {
    name: 'an Atmos component that a vendor.yaml may pull: a low-confidence notice',
    files: {
      'atmos.yaml': lines('components:', '  terraform:', '    base_path: components/terraform'),
      'vendor.yaml': lines('apiVersion: atmos/v1', 'kind: AtmosVendorConfig'),
      'stacks/dev.yaml': lines('components:', '  terraform:', '    vpc:', '      vars: {}'),
    },
    expected: [
      {
        module: 'stacks',
        file: 'stacks/dev.yaml',
        line: 3,
        severity: 'notice',
        message:
          'Atmos component "vpc" (stacks/dev.yaml:3) declares directory "components/terraform/vpc", which is not in the archive (unless atmos vendor pull fetches it, as vendor.yaml may say)',
      },
    ],
  },
  {
    name: 'passing: every declared directory has configuration (a Terragrunt unit counts)',
    files: {
      'atlantis.yaml': lines('projects:', '  - dir: net', '  - dir: live/app'),
      'net/main.tf': PLAIN,
      'live/app/terragrunt.hcl': lines('terraform {', '  source = "../../modules/app"', '}'),
      'modules/app/main.tf': PLAIN,
    },
    expected: [],
  },
  {
    name: 'disabled by configuration',
    files: { 'atlantis.yaml': lines('projects:', '  - dir: gone') },
    config: 'rule "declared-root-missing" { enabled = false }\n',
    expected: [],
  },
]);
