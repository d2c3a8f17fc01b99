import { describeLockAdvice, RUN, rp } from '../support/lock-advice';
import { AWS, L, fakeH1, fakeZh, lineOf, lockRuleTable, lockText, tf } from '../support/lock';

lockRuleTable('lock-hash-malformed', [
  (() => {
    const lock = lockText([
      {
        source: AWS,
        version: '5.9.0',
        constraints: '~> 5.0',
        hashes: ['h1:too-short=', fakeH1('ok'), 'zh:ABCDEF', 'h2:future', fakeZh('ok')],
      },
      { source: 'registry.terraform.io/hashicorp/random', version: '3.6.0' },
    ]);
    return {
      name: 'reports each malformed hash on its own line, and an entry without hashes',
      files: {
        'main.tf': tf({
          aws: { source: 'hashicorp/aws', version: '~> 5.0' },
          random: { source: 'hashicorp/random' },
        }),
        [L]: lock,
      },
      expected: [
        { file: L, line: lineOf(lock, 'h1:too-short'), message: 'base64 (with padding) of 32 bytes' },
        { file: L, line: lineOf(lock, 'zh:ABCDEF'), message: '64 lowercase hex digits' },
        { file: L, line: lineOf(lock, 'h2:future'), message: '"h2:" is not a hash scheme' },
        { file: L, line: lineOf(lock, 'hashicorp/random'), message: 'records no hashes' },
      ],
    };
  })(),
]);

describeLockAdvice('lock-hash-malformed', [
  {
    name: 'hash malformed: an entry without hashes',
    initial: { 'main.tf': rp('~> 1.0') },
    editLock: (lock) => lock.replace(/\n {2}hashes = \[[^\]]*\]/, ''),
    changed: { 'main.tf': rp('~> 1.0') },
    steps: [{ from: RUN, expect: 'fixes' }],
  },
]);
