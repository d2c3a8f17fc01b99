import { describeLockAdvice, RUN, rp } from '../support/lock-advice';
import { awsTf, lockRuleTable } from '../support/lock';

lockRuleTable('lock-missing', [
  {
    name: 'a root requiring providers has no lock file',
    files: { 'live/prod/main.tf': awsTf, 'live/prod/variables.tf': 'variable "x" {}\n' },
    expected: [
      {
        file: 'live/prod/main.tf',
        line: 1,
        message: 'requires provider hashicorp/aws but has no .terraform.lock.hcl',
      },
    ],
  },
  {
    name: 'a Terraform Stack without a lock file: terraform stacks providers-lock writes it',
    files: {
      'stack/components.tfcomponent.hcl':
        'required_providers {\n  aws = {\n    source  = "hashicorp/aws"\n    version = "~> 5.7.0"\n  }\n}\n\ncomponent "s3" {\n  source = "./s3"\n}\n',
      'stack/s3/main.tf': 'resource "aws_s3_bucket" "b" {}\n',
    },
    expected: [
      {
        file: 'stack/components.tfcomponent.hcl',
        line: 1,
        message:
          'Terraform Stack "stack" requires provider hashicorp/aws but has no .terraform.lock.hcl beside its component files',
        note: 'terraform stacks providers-lock',
      },
    ],
  },
  {
    name: 'passing: a root that requires no provider needs no lock file',
    files: {
      'main.tf': 'locals { a = 1 }\ndata "terraform_remote_state" "x" {\n  backend = "local"\n}\n',
    },
    expected: [],
  },
]);

describeLockAdvice('lock-missing', [
  {
    name: 'lock missing',
    initial: null,
    changed: { 'main.tf': rp('~> 1.0') },
    steps: [{ from: RUN, expect: 'fixes' }],
  },
]);
