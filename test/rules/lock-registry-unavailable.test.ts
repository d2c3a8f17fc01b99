import { closedPort } from '../support/registry-server';
import { scanFiles } from '../support/scan';
import {
  L,
  REGISTRY_HOST,
  cloudLock,
  cloudTf,
  fakeZh,
  lineOf,
  lockRuleTable,
  registryRow,
  useTestRegistry,
} from '../support/lock';

const reg = useTestRegistry();

lockRuleTable('lock-registry-unavailable', [
  {
    name: 'an unreachable registry is a notice, never lock-hash-unknown; coverage falls back to the offline check',
    build: async () => {
      const lock = cloudLock('1.0.0', [fakeZh('cannot be checked')]);
      return {
        ...registryRow(lock, await closedPort(), { platforms: ['linux_amd64'] }),
        expected: [
          {
            file: L,
            line: lineOf(lock, 'provider'),
            message: /could not check .*ECONNREFUSED/,
            severity: 'notice',
          },
          {
            rule: 'lock-platform-coverage',
            file: L,
            line: lineOf(lock, 'hashes'),
            message: 'records 0 h1: checksums',
            severity: 'warning',
          },
        ],
      };
    },
  },
]);

describe('rule lock-registry-unavailable: full scan', () => {
  it('SSRF guard: an archive cannot map registry hosts, and unmapped private hosts are never contacted', async () => {
    const body = cloudLock('1.0.0', [reg().zh('acme', 'cloud', '1.0.0').linux_amd64 as string]);
    await expect(
      scanFiles(
        { 'main.tf': cloudTf, [L]: body },
        { config: `registry = true\nregistry_hosts = { "${REGISTRY_HOST}" = "${reg().url}" }\n` },
      ),
    ).rejects.toMatchObject({ code: 'invalid-config', message: expect.stringContaining('registry_hosts') });
    const before = reg().requests.length;
    const report = await scanFiles({ 'main.tf': cloudTf, [L]: body }, { config: 'registry = true\n' });
    expect(reg().requests.length).toBe(before);
    expect(
      report.findings
        .filter((f) => f.ruleId.startsWith('lock-'))
        .map((f) => [f.ruleId, f.severity, f.message]),
    ).toEqual([
      [
        'lock-registry-unavailable',
        'notice',
        expect.stringContaining(`registry host ${REGISTRY_HOST} is not contacted`),
      ],
    ]);
  });
});
