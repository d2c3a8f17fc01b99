import { describeLockAdvice, RUN, rp } from '../support/lock-advice';
import { L, awsTf, fakeH1, lineOf, lockRuleTable, lockWith, staleLock, tf } from '../support/lock';

lockRuleTable('lock-version-mismatch', [
  (() => {
    const lock = lockWith([fakeH1('aws')], '4.67.0');
    return {
      name: 'the locked version violates the root constraint',
      files: { 'main.tf': awsTf, [L]: lock },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'version'),
          message:
            'locked version 4.67.0 of hashicorp/aws does not satisfy the configuration\'s constraints "~> 5.0" ("~> 5.0" in module ".")',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockWith([fakeH1('aws')]);
    return {
      name: 'a child module raises the minimum (and the recorded constraints drift)',
      files: {
        'main.tf': `${awsTf}module "net" {\n  source = "./net"\n}\n`,
        'net/main.tf': tf({ aws: { source: 'hashicorp/aws', version: '>= 5.10' } }),
        [L]: lock,
      },
      expected: [
        {
          rule: 'lock-constraints-drift',
          file: L,
          line: lineOf(lock, 'constraints'),
          message: 'records constraints "~> 5.0", which differ from the configuration\'s "~> 5.0, >= 5.10.0"',
          fix: '~> 5.0, >= 5.10.0',
        },
        { file: L, line: lineOf(lock, 'version'), message: '">= 5.10" in module "net"' },
      ],
    };
  })(),
  (() => {
    const lock = lockWith([fakeH1('aws')]);
    return {
      name: "the root's own mirror lacks the locked version",
      files: {
        'main.tf': awsTf,
        [L]: lock,
        'terraform.d/plugins/registry.terraform.io/hashicorp/aws/5.8.0/linux_amd64/terraform-provider-aws_v5.8.0':
          'x',
      },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'version'),
          message:
            'locked version 5.9.0 of hashicorp/aws is not in the provider mirror terraform.d/plugins, which only has 5.8.0',
        },
      ],
    };
  })(),
  (() => {
    const lock = staleLock.replace('5.9.0', '4.0.0');
    return {
      name: 'findings carry the rule severities (beside a stale entry)',
      files: { 'main.tf': awsTf, [L]: lock },
      expected: [
        { file: L, line: lineOf(lock, '4.0.0'), message: 'locked version 4.0.0', severity: 'error' },
        {
          rule: 'lock-provider-stale',
          file: L,
          line: lineOf(lock, 'hashicorp/null'),
          message: 'hashicorp/null',
          severity: 'warning',
        },
      ],
    };
  })(),
]);

describeLockAdvice('lock-version-mismatch', [
  {
    name: 'version mismatch: the constraint moved past the locked version',
    initial: { 'main.tf': rp('1.0.0') },
    changed: { 'main.tf': rp('~> 1.2') },
    steps: [
      { from: /plain "([^"]+)" and "[^"]+" keep the locked version and fail/, expect: 'fails' },
      { from: /plain "[^"]+" and "([^"]+)" keep the locked version and fail/, expect: 'fails' },
      { from: RUN, expect: 'fixes' },
    ],
  },
]);
