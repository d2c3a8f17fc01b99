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
