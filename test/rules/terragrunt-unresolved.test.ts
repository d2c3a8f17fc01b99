import { lines, ruleTable } from '../support/rule-table';

ruleTable('terragrunt-unresolved', [
  {
    name: 'a source read from the environment',
    files: {
      'live/app/terragrunt.hcl': lines('terraform {', '  source = "${get_env("MODULES")}/app"', '}'),
    },
    expected: [
      {
        module: 'live/app',
        file: 'live/app/terragrunt.hcl',
        line: 2,
        message:
          'Terragrunt terraform source could not be resolved statically: get_env("MODULES") reads an environment variable; tfguard never runs it; the unit may need providers',
        note: 'tfguard never runs Terragrunt',
      },
    ],
  },
  {
    name: 'an include path that is not in the archive',
    files: {
      'live/app/terragrunt.hcl': lines(
        'include "common" {',
        '  path = "${get_repo_root()}/_envcommon/app.hcl"',
        '}',
        'terraform {',
        '  source = "../../modules//app"',
        '}',
      ),
      'modules/app/main.tf': lines('resource "aws_s3_bucket" "b" {}'),
    },
    expected: [
      {
        module: 'live/app',
        file: 'live/app/terragrunt.hcl',
        line: 2,
        message:
          'Terragrunt include "common" could not be resolved statically: its path "_envcommon/app.hcl" is not a file of the archive',
      },
    ],
  },
  {
    name: 'generate contents that are a run_cmd',
    files: {
      'live/app/terragrunt.hcl': lines(
        'generate "backend" {',
        '  path     = "backend.tf"',
        '  contents = run_cmd("./backend.sh")',
        '}',
      ),
    },
    expected: [
      {
        module: 'live/app',
        file: 'live/app/terragrunt.hcl',
        line: 1,
        message:
          'Terragrunt generate "backend" (backend.tf) could not be resolved statically: run_cmd("./backend.sh") runs a command',
      },
    ],
  },
  {
    name: 'a known unit: nothing',
    files: {
      'root.hcl': lines('locals {', '  modules = "${get_repo_root()}/modules"', '}'),
      'live/app/terragrunt.hcl': lines(
        'include "root" {',
        '  path   = find_in_parent_folders("root.hcl")',
        '  expose = true',
        '}',
        'terraform {',
        '  source = "${include.root.locals.modules}//app"',
        '}',
      ),
      'modules/app/main.tf': lines('resource "aws_s3_bucket" "b" {}'),
    },
    expected: [],
  },
]);
