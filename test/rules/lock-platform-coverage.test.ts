import { describeLockAdvice, OTHER_PLATFORM, PLATFORM, RUN, rp } from '../support/lock-advice';
import {
  L,
  awsTf,
  cloudLock,
  fakeH1,
  fakeZh,
  lineOf,
  lockRuleTable,
  lockWith,
  registryRow,
  useTestRegistry,
} from '../support/lock';

const reg = useTestRegistry();

lockRuleTable('lock-platform-coverage', [
  (() => {
    const lock = lockWith([fakeH1('linux'), fakeZh('a'), fakeZh('b')]);
    return {
      name: 'offline: fewer h1: hashes than configured platforms',
      files: { 'main.tf': awsTf, [L]: lock },
      config: { platforms: ['linux_amd64', 'darwin_arm64'] },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'hashes'),
          message: 'records 1 h1: checksum for 2 configured platforms (linux_amd64, darwin_arm64)',
          note: 'terraform providers lock -platform=linux_amd64 -platform=darwin_arm64',
        },
      ],
    };
  })(),
  {
    name: 'offline: one h1: per platform is enough',
    files: { 'main.tf': awsTf, [L]: lockWith([fakeH1('linux'), fakeH1('darwin')]) },
    config: { platforms: ['linux_amd64', 'darwin_arm64'] },
    expected: [],
  },
  {
    name: 'offline: no platforms configured means no check',
    files: { 'main.tf': awsTf, [L]: lockWith([fakeZh('x')]) },
    expected: [],
  },
  {
    // OpenTofu 1.12 writes every platform's h1: from the registry's `packages` (CHANGELOG v1.12;
    // opentofu/opentofu internal/getproviders/package_authentication.go at v1.12.6,
    // registryPackageAuthentication), and a lock from a trusted mirror may hold only those: each
    // platform is covered by its h1:, no zh: needed.
    name: 'registry with packages (OpenTofu 1.12): each platform covered by its h1:',
    build: () => {
      const h1 = reg().h1('acme', 'cloud', '1.4.0');
      const lock = cloudLock('1.4.0', Object.values(h1).sort());
      return {
        ...registryRow(lock, reg().url, { platforms: ['linux_amd64', 'darwin_arm64'] }),
        expected: [],
      };
    },
  },
  {
    name: 'registry with packages: a platform with neither its zh: nor its h1: fails for certain',
    build: () => {
      const lock = cloudLock('1.4.0', [reg().h1('acme', 'cloud', '1.4.0').linux_amd64 as string]);
      return {
        ...registryRow(lock, reg().url, { platforms: ['linux_amd64', 'darwin_arm64'] }),
        expected: [
          {
            file: L,
            line: lineOf(lock, 'hashes'),
            message: 'has no zh: or h1: checksum for darwin_arm64; terraform init on that platform fails',
          },
        ],
      };
    },
  },
  {
    name: 'registry without packages and no h1: at all: a missing zh: fails for certain',
    build: () => {
      const lock = cloudLock('1.0.0', [reg().zh('acme', 'cloud', '1.0.0').linux_amd64 as string]);
      return {
        ...registryRow(lock, reg().url, { platforms: ['linux_amd64', 'darwin_arm64'] }),
        expected: [
          {
            file: L,
            line: lineOf(lock, 'hashes'),
            message: 'has no zh: checksum for darwin_arm64; terraform init on that platform fails',
          },
        ],
      };
    },
  },
  {
    name: 'platform coverage with the registry: each configured platform needs its zh:',
    build: () => {
      const zh = reg().zh('acme', 'cloud', '1.0.0');
      const lock = cloudLock('1.0.0', [fakeH1('a'), fakeH1('b'), fakeH1('c'), zh.linux_amd64 as string]);
      return {
        ...registryRow(lock, reg().url, {
          platforms: ['linux_amd64', 'darwin_arm64', 'windows_amd64', 'freebsd_amd64'],
        }),
        expected: [
          {
            file: L,
            line: lineOf(lock, 'hashes'),
            // Three h1: the registry does not attribute: one may be darwin_arm64's (hedged).
            message:
              'has no zh: checksum for darwin_arm64, windows_amd64; unless one of its 3 h1: checksums is the package for those platforms',
            // A finding that may be wrong is a low-confidence notice.
            severity: 'notice',
          },
          {
            file: L,
            line: lineOf(lock, 'hashes'),
            message:
              'the registry publishes no registry.example.test/acme/cloud 1.0.0 package for freebsd_amd64',
          },
        ],
      };
    },
  },
]);

describeLockAdvice('lock-platform-coverage', [
  {
    name: 'platform coverage: a second configured platform',
    initial: { 'main.tf': rp('~> 1.0') },
    changed: { 'main.tf': rp('~> 1.0') },
    settings: `platforms = ["${PLATFORM}", "${OTHER_PLATFORM}"]\n`,
    steps: [{ from: RUN, expect: 'fixes' }],
  },
]);
