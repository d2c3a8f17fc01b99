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
