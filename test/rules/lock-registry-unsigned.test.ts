import { L, cloudLock, fakeZh, lineOf, lockRuleTable, registryRow, useTestRegistry } from '../support/lock';

const reg = useTestRegistry();

lockRuleTable('lock-registry-unsigned', [
  {
    name: 'OpenTofu: a response without signing keys is a notice, and the checksums are still compared',
    build: () => {
      const foreign = fakeZh('foreign');
      const lock = cloudLock('1.3.0', [reg().zh('acme', 'cloud', '1.3.0').linux_amd64 as string, foreign]);
      return {
        ...registryRow(lock, reg().url, { engine: 'opentofu' }),
        expected: [
          { file: L, line: lineOf(lock, 'provider'), message: 'no signing keys', severity: 'notice' },
          {
            rule: 'lock-hash-unknown',
            file: L,
            line: lineOf(lock, foreign),
            message: 'is not in the published SHA256SUMS',
            severity: 'error',
          },
        ],
      };
    },
  },
]);
