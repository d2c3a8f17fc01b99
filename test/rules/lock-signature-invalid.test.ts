import { L, cloudLock, fakeZh, lineOf, lockRuleTable, registryRow, useTestRegistry } from '../support/lock';

const reg = useTestRegistry();

lockRuleTable('lock-signature-invalid', [
  {
    name: 'a tampered SHA256SUMS is lock-signature-invalid, and its hashes are not judged',
    build: () => {
      const lock = cloudLock('1.1.0', [fakeZh('whatever')]);
      return {
        ...registryRow(lock, reg().url),
        expected: [{ file: L, line: lineOf(lock, 'provider'), message: 'signature does not verify' }],
      };
    },
  },
  {
    name: 'a signature by a key the registry does not publish is lock-signature-invalid',
    build: () => {
      const lock = cloudLock('1.2.0', [fakeZh('whatever')]);
      return {
        ...registryRow(lock, reg().url),
        expected: [{ file: L, line: lineOf(lock, 'provider'), message: 'unknown issuer' }],
      };
    },
  },
  {
    name: 'Terraform: a response without signing keys is lock-signature-invalid',
    build: () => {
      const lock = cloudLock('1.3.0', [reg().zh('acme', 'cloud', '1.3.0').linux_amd64 as string]);
      return {
        ...registryRow(lock, reg().url),
        expected: [{ file: L, line: lineOf(lock, 'provider'), message: 'no signing keys' }],
      };
    },
  },
]);
