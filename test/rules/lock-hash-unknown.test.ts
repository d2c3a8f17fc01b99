import {
  CLOUD,
  CLOUD_PLATFORMS,
  L,
  REGISTRY_HOST,
  cloudLock,
  cloudTf,
  fakeH1,
  fakeZh,
  lineOf,
  lockRuleTable,
  lockScan,
  registryRow,
  useTestRegistry,
} from '../support/lock';

const reg = useTestRegistry();

lockRuleTable('lock-hash-unknown', [
  {
    name: 'passing: a lock that matches the signed checksums has no findings',
    build: () => {
      const zh = reg().zh('acme', 'cloud', '1.0.0');
      const lock = cloudLock('1.0.0', [fakeH1('linux'), ...CLOUD_PLATFORMS.map((p) => zh[p] as string)]);
      return {
        ...registryRow(lock, reg().url, { platforms: ['linux_amd64', 'darwin_arm64'] }),
        expected: [],
      };
    },
  },
  {
    name: 'a foreign zh: is lock-hash-unknown on its own line',
    build: () => {
      const foreign = fakeZh('not from the registry');
      const lock = cloudLock('1.0.0', [reg().zh('acme', 'cloud', '1.0.0').linux_amd64 as string, foreign]);
      return {
        ...registryRow(lock, reg().url),
        expected: [
          {
            file: L,
            line: lineOf(lock, foreign),
            message: `${foreign} is not in the signed SHA256SUMS that ${REGISTRY_HOST} publishes for ${CLOUD} 1.0.0`,
          },
        ],
      };
    },
  },
  {
    name: 'h1: hashes are checked against the packages hashes of the download response',
    build: () => {
      const foreign = fakeH1('foreign');
      const lock = cloudLock('1.4.0', [
        reg().h1('acme', 'cloud', '1.4.0').darwin_arm64 as string,
        foreign,
        reg().zh('acme', 'cloud', '1.4.0').linux_amd64 as string,
      ]);
      return {
        ...registryRow(lock, reg().url),
        expected: [{ file: L, line: lineOf(lock, foreign), message: 'is none of the package hashes' }],
      };
    },
  },
  {
    name: 'a version the registry does not publish is lock-hash-unknown on the version line',
    build: () => {
      const lock = cloudLock('1.9.9', [fakeZh('x')]);
      return {
        ...registryRow(lock, reg().url),
        expected: [{ file: L, line: lineOf(lock, 'version'), message: 'does not publish version 1.9.9' }],
      };
    },
  },
]);

describe('rule lock-hash-unknown: when the registry is asked', () => {
  it('the registry is found through registryHosts from the configuration (no registry: no request)', async () => {
    const before = reg().requests.length;
    const zh = reg().zh('acme', 'cloud', '1.0.0');
    const { findings } = await lockScan(
      { 'main.tf': cloudTf, [L]: cloudLock('1.0.0', [fakeZh('foreign')]) },
      { config: { registry: false, registryHosts: { [REGISTRY_HOST]: reg().url } } },
    );
    expect(findings).toEqual([]);
    expect(reg().requests.length).toBe(before);
    // with registry = true and only the configuration (no client given), the mapping is used
    const { findings: online } = await lockScan(
      { 'main.tf': cloudTf, [L]: cloudLock('1.0.0', [zh.linux_amd64 as string, fakeZh('foreign')]) },
      { config: { registry: true, registryHosts: { [REGISTRY_HOST]: reg().url } } },
    );
    expect(online.map((f) => f.ruleId)).toEqual(['lock-hash-unknown']);
    expect(reg().requests.length).toBeGreaterThan(before);
  });
});
