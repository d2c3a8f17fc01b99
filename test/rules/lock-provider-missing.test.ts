import { describeLockAdvice, RUN, rp } from '../support/lock-advice';
import { L, awsTf, goodLock, lockRuleTable, tf } from '../support/lock';

lockRuleTable('lock-provider-missing', [
  {
    name: 'a provider required by a child module',
    files: {
      'main.tf': `${awsTf}module "ids" {\n  source = "./modules/ids"\n}\n`,
      'modules/ids/main.tf': tf({ random: { source: 'hashicorp/random', version: '>= 3.0' } }),
      [L]: goodLock,
    },
    expected: [
      { file: L, line: 1, message: 'provider hashicorp/random is required (by module "modules/ids")' },
    ],
  },
  {
    name: 'a provider only an installed remote module requires (read from .terraform/modules)',
    files: {
      'main.tf': `${awsTf}module "ids" {\n  source  = "acme/ids/random"\n  version = "~> 1.0"\n}\n`,
      '.terraform/modules/modules.json': JSON.stringify({
        Modules: [
          { Key: '', Source: '', Dir: '.' },
          {
            Key: 'ids',
            Source: 'registry.terraform.io/acme/ids/random',
            Version: '1.2.0',
            Dir: '.terraform/modules/ids',
          },
        ],
      }),
      '.terraform/modules/ids/main.tf': 'resource "random_id" "x" {\n  byte_length = 4\n}\n',
      [L]: goodLock,
    },
    expected: [
      {
        file: L,
        line: 1,
        message: 'provider hashicorp/random is required (by remote module "ids" (acme/ids/random 1.2.0))',
      },
    ],
  },
  {
    name: 'an implied provider used by a resource',
    files: { 'main.tf': `${awsTf}resource "random_id" "x" {\n  byte_length = 4\n}\n`, [L]: goodLock },
    expected: [{ file: L, line: 1, message: 'provider hashicorp/random is required' }],
  },
]);

describeLockAdvice('lock-provider-missing', [
  {
    name: 'provider missing: a new resource type',
    initial: { 'main.tf': rp('~> 1.0') },
    changed: { 'main.tf': rp('~> 1.0'), 'other.tf': 'resource "other_thing" "x" {}\n' },
    steps: [{ from: RUN, expect: 'fixes' }],
  },
]);
