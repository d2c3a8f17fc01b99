import { describeLockAdvice, RUN, rp } from '../support/lock-advice';
import {
  AWS,
  L,
  RANDOM,
  TOFU_AWS,
  awsTf,
  fakeH1,
  lineOf,
  lockRuleTable,
  lockText,
  remoteModuleCall,
  staleLock,
  tf,
} from '../support/lock';

lockRuleTable('lock-provider-stale', [
  {
    name: 'an entry nothing requires',
    files: { 'main.tf': awsTf, [L]: staleLock },
    expected: [
      {
        file: L,
        line: lineOf(staleLock, 'hashicorp/null'),
        message: 'the lock entry for hashicorp/null 3.2.2 is stale',
      },
    ],
  },
  {
    name: 'not judged when a remote module may require it',
    files: { 'main.tf': `${awsTf}${remoteModuleCall}`, [L]: staleLock },
    expected: [],
  },
  {
    name: 'not judged when a module of the tree does not parse',
    files: { 'main.tf': awsTf, 'broken.tf': 'resource "x" {\n', [L]: staleLock },
    expected: [],
  },
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
      { source: RANDOM, version: '3.6.0', constraints: '>= 3.0.0', hashes: [fakeH1('random')] },
    ]);
    return {
      name: 'several roots, each judged against its own lock file',
      files: {
        'envs/a/main.tf': awsTf,
        'envs/a/.terraform.lock.hcl': lock,
        'envs/b/main.tf': tf({
          aws: { source: 'hashicorp/aws', version: '~> 5.0' },
          random: { source: 'hashicorp/random', version: '>= 3.0' },
        }),
        'envs/b/.terraform.lock.hcl': lock,
      },
      expected: [
        {
          file: 'envs/a/.terraform.lock.hcl',
          line: lineOf(lock, 'hashicorp/random'),
          message: 'no module in the tree of root "envs/a" requires it',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
      { source: TOFU_AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('tofu aws')] },
    ]);
    return {
      name: "host shown: Terraform root, an entry from OpenTofu's registry",
      files: { 'main.tf': awsTf, [L]: lock },
      config: { engine: 'terraform', engineExplicit: true },
      expected: [{ file: L, line: lineOf(lock, TOFU_AWS), message: `the lock entry for ${TOFU_AWS} 5.9.0 ` }],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: "host shown: OpenTofu root, a lock file from Terraform's registry",
      files: { 'main.tf': awsTf, [L]: lock },
      config: { engine: 'opentofu', engineExplicit: true },
      expected: [
        // The two messages name two different providers, so they must not read the same.
        { rule: 'lock-provider-missing', file: L, line: 1, message: 'provider hashicorp/aws is required' },
        { file: L, line: lineOf(lock, AWS), message: `the lock entry for ${AWS} 5.9.0 ` },
      ],
    };
  })(),
]);

describeLockAdvice('lock-provider-stale', [
  {
    name: 'stale: the configuration no longer requires a provider',
    initial: { 'main.tf': rp('~> 1.0'), 'other.tf': 'resource "other_thing" "x" {}\n' },
    changed: { 'main.tf': rp('~> 1.0') },
    steps: [
      { from: /\("([^"]+)" keeps the entry\)/, expect: 'still-reported' },
      { from: RUN, expect: 'fixes' },
    ],
  },
]);
