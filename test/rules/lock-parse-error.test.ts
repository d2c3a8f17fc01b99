import { AWS, L, awsTf, fakeH1, goodLock, lineOf, lockRuleTable, lockText, tf } from '../support/lock';

/** `goodLock` with a second block for the same provider. */
const dupLock = `${goodLock}\n${lockText([{ source: AWS, version: '5.9.0', hashes: [fakeH1('aws')] }]).split('\n\n')[1]}`;

lockRuleTable('lock-parse-error', [
  {
    name: 'duplicate blocks are reported and the first entry still counts',
    files: { 'main.tf': awsTf, [L]: dupLock },
    expected: [
      {
        file: L,
        line: lineOf(dupLock, 'provider', lineOf(dupLock, 'provider')),
        message: 'duplicate lock entry for provider registry.terraform.io/hashicorp/aws',
      },
    ],
  },
  {
    name: 'an unreadable lock file silences the other lock rules',
    files: {
      'main.tf': tf({
        aws: { source: 'hashicorp/aws', version: '~> 5.0' },
        random: { source: 'hashicorp/random' },
      }),
      [L]: 'provider "x" {\n',
    },
    expected: [{ file: L, line: 1, message: 'the lock file cannot be parsed' }],
  },
]);
