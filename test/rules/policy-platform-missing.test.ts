import {
  CLOUD,
  L,
  REGISTRY_HOST,
  cloudLock,
  cloudTf,
  fakeH1,
  lineOf,
  useTestRegistry,
} from '../support/lock';
import { EKS, editedRepo, lineIn, policyRuleTable, text } from '../support/policy-table';

const reg = useTestRegistry();
const platforms = (...p: string[]) =>
  `required_platforms = [${p.map((x) => JSON.stringify(x)).join(', ')}]\n`;
/** The real lock with the `zh:` checksums of its first entry (hashicorp/aws) removed. */
const awsH1Only = (lock: string) => {
  const end = lock.indexOf('}\n') + 2;
  return lock.slice(0, end).replace(/^ {4}"zh:[0-9a-f]+",\n/gm, '') + lock.slice(end);
};
const registryOptions = () => ({
  config: { registry: true, registryHosts: { [REGISTRY_HOST]: reg().url } },
  registry: true,
});

policyRuleTable('policy-platform-missing', [
  {
    name: 'offline, the real lock cannot be judged: one hedged notice for the lock file',
    files: () => editedRepo(EKS),
    policy: platforms('linux_amd64', 'darwin_arm64'),
    expected: (files) => [
      {
        module: '.',
        file: L,
        line: lineIn(text(files, L), 'provider "registry.terraform.io/hashicorp/aws"'),
        severity: 'notice',
        message:
          'could not judge whether 6 lock entries (hashicorp/aws 5.47.0, hashicorp/cloudinit 2.3.4, hashicorp/null 3.2.2, ...) cover the platforms the policy requires (linux_amd64, darwin_arm64): which platform a checksum is for is known only from the registry, and the registry check is off',
      },
    ],
  },
  {
    name: 'offline, an entry with one h1: and no zh: certainly misses a platform',
    files: () => editedRepo(EKS, { [L]: awsH1Only }),
    policy: platforms('linux_amd64', 'darwin_arm64'),
    expected: (files) => [
      {
        module: '.',
        file: L,
        line: lineIn(text(files, L), 'hashes', lineIn(text(files, L), 'hashicorp/aws')),
        message:
          'the lock entry for hashicorp/aws 5.47.0 records 1 h1: checksum and no zh:, so it covers at most 1 of the 2 platforms the policy requires (linux_amd64, darwin_arm64)',
      },
      {
        module: '.',
        file: L,
        line: lineIn(text(files, L), 'provider "registry.terraform.io/hashicorp/cloudinit"'),
        severity: 'notice',
        message: 'could not judge whether 5 lock entries (hashicorp/cloudinit 2.3.4',
      },
    ],
  },
  {
    name: 'offline, one required platform and one h1: cannot be judged either',
    files: () => editedRepo(EKS, { [L]: awsH1Only }),
    policy: platforms('linux_amd64'),
    expected: (files) => [
      {
        module: '.',
        file: L,
        line: lineIn(text(files, L), 'provider "registry.terraform.io/hashicorp/aws"'),
        severity: 'notice',
        message: 'could not judge whether 6 lock entries',
      },
    ],
  },
  (() => {
    let lock = '';
    return {
      name: 'with the registry, each platform is known from the signed SHA256SUMS: the one missing is an error',
      files: async () => {
        lock = cloudLock('1.0.0', [
          fakeH1('linux'),
          reg().zh('acme', 'cloud', '1.0.0').linux_amd64 as string,
        ]);
        return { 'main.tf': cloudTf, [L]: lock };
      },
      policy: platforms('linux_amd64', 'darwin_arm64'),
      options: registryOptions,
      expected: () => [
        {
          module: '.',
          file: L,
          line: lineOf(lock, 'hashes'),
          message: `the lock entry for ${CLOUD} 1.0.0 records no checksum for darwin_arm64, which the policy requires: terraform init on that platform refuses the package`,
        },
      ],
    };
  })(),
  (() => {
    let lock = '';
    return {
      name: 'with the registry: every platform covered passes; one the registry does not publish is an error of its own',
      files: async () => {
        const zh = reg().zh('acme', 'cloud', '1.0.0');
        lock = cloudLock('1.0.0', [zh.linux_amd64 as string, zh.darwin_arm64 as string]);
        return { 'main.tf': cloudTf, [L]: lock };
      },
      policy: platforms('linux_amd64', 'darwin_arm64', 'freebsd_amd64'),
      options: registryOptions,
      expected: () => [
        {
          module: '.',
          file: L,
          line: lineOf(lock, 'hashes'),
          message: `the registry publishes no ${CLOUD} 1.0.0 package for freebsd_amd64, which the policy requires`,
        },
      ],
    };
  })(),
  (() => {
    let lock = '';
    return {
      name: "with the registry's OpenTofu-style packages list, an h1: names its platform too",
      files: async () => {
        // darwin_arm64 covered only by its h1: (listed in the download's packages), linux by its zh:.
        lock = cloudLock('1.4.0', [
          reg().h1('acme', 'cloud', '1.4.0').darwin_arm64 as string,
          reg().zh('acme', 'cloud', '1.4.0').linux_amd64 as string,
        ]);
        return { 'main.tf': cloudTf, [L]: lock };
      },
      policy: platforms('linux_amd64', 'darwin_arm64', 'windows_amd64'),
      options: registryOptions,
      expected: () => [
        {
          module: '.',
          file: L,
          line: lineOf(lock, 'hashes'),
          message: `the lock entry for ${CLOUD} 1.4.0 records no checksum for windows_amd64, which the policy requires`,
        },
      ],
    };
  })(),
  {
    name: 'no required_platforms: nothing',
    files: () => editedRepo(EKS),
    policy: 'allowed_registries = ["registry.terraform.io"]\n',
    expected: [],
  },
]);
