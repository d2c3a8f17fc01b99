import { callsTo, lines, ruleTable } from '../support/rule-table';

const rp = (...entries: string[]) => lines('terraform {', '  required_providers {', ...entries, '  }', '}');

ruleTable('builtin-terraform-provider', [
  {
    name: 'hashicorp/terraform declared (short source)',
    files: {
      'versions.tf': rp(
        '    terraform = {',
        '      source  = "hashicorp/terraform"',
        '      version = ">= 1.0"',
        '    }',
      ),
      'main.tf': lines('data "terraform_remote_state" "net" {', '  backend = "local"', '}'),
    },
    expected: [
      {
        module: '.',
        file: 'versions.tf',
        line: 3,
        message: 'required_providers entry "terraform" declares the legacy provider "hashicorp/terraform"',
      },
    ],
  },
  {
    name: 'fully-qualified source under another local name, in a shared module',
    files: {
      'main.tf': callsTo('m'),
      'm/versions.tf': rp('    tf = { source = "registry.terraform.io/hashicorp/terraform" }'),
    },
    expected: [
      {
        module: 'm',
        file: 'm/versions.tf',
        line: 3,
        message: 'entry "tf" declares the legacy provider "hashicorp/terraform"',
      },
    ],
  },
  {
    name: 'the legacy entry yields no other provider findings',
    files: { 'versions.tf': rp('    terraform = { source = "HashiCorp/Terraform", version = "~> 0.1.x" }') },
    expected: [{ module: '.', file: 'versions.tf', line: 3, message: 'legacy provider' }],
  },
  {
    name: 'passing: no source (Terraform maps the name to the built-in provider) or the built-in address',
    files: {
      'versions.tf': rp('    terraform = { version = ">= 1.0" }'),
      'b/versions.tf': rp('    terraform = { source = "terraform.io/builtin/terraform" }'),
    },
    expected: [],
  },
  {
    name: 'OpenTofu registry host; severity lowered',
    files: { 'versions.tf': rp('    terraform = { source = "registry.opentofu.org/hashicorp/terraform" }') },
    config: 'engine = "opentofu"\nrule "builtin-terraform-provider" { severity = "warning" }\n',
    expected: [
      { module: '.', file: 'versions.tf', line: 3, message: '"hashicorp/terraform"', severity: 'warning' },
    ],
  },
]);
