import type { FileMap } from '../support/archive';
import { describeLockAdvice, pluginZip, rp } from '../support/lock-advice';
import {
  AWS,
  EXE,
  L,
  MIRROR,
  ZIP_PATH,
  awsTf,
  dirEntriesZip,
  lineOf,
  lockRuleTable,
  lockText,
  lockWith,
  packageHashes,
  providerZip,
  tamperedZip,
  unpackedH1,
} from '../support/lock';
import { writeZip } from '../support/terraform';

lockRuleTable('lock-hash-mismatch', [
  {
    name: 'a packed zip matching its zh: passes',
    build: async () => ({
      files: { 'main.tf': awsTf, [L]: lockWith([(await packageHashes()).zip.zh]), [ZIP_PATH]: providerZip },
      expected: [],
    }),
  },
  {
    name: 'a packed zip matching its h1: passes',
    build: async () => ({
      files: { 'main.tf': awsTf, [L]: lockWith([(await packageHashes()).zip.h1]), [ZIP_PATH]: providerZip },
      expected: [],
    }),
  },
  {
    name: 'an unpacked package matching its h1: passes (mirror and .terraform cache)',
    files: {
      'main.tf': awsTf,
      [L]: lockWith([unpackedH1]),
      [`terraform.d/plugins/registry.terraform.io/hashicorp/aws/5.9.0/linux_amd64/${EXE}`]: 'real provider',
      [`.terraform/providers/registry.terraform.io/hashicorp/aws/5.9.0/linux_amd64/${EXE}`]: 'real provider',
    },
    expected: [],
  },
  {
    name: 'a tampered zip matches none of the recorded hashes',
    build: async () => {
      const { zip } = await packageHashes();
      const lock = lockWith([zip.h1, zip.zh]);
      return {
        files: { 'main.tf': awsTf, [L]: lock, [ZIP_PATH]: tamperedZip },
        expected: [
          {
            file: L,
            line: lineOf(lock, 'provider'),
            message: [
              `provider mirror packed package ${ZIP_PATH} (hashicorp/aws 5.9.0, linux_amd64) hashes to`,
              'none of the 2 checksums recorded',
            ],
            note: '"terraform providers lock -fs-mirror=terraform.d/plugins"',
          },
        ],
      };
    },
  },
  (() => {
    const lock = lockWith([unpackedH1]);
    return {
      name: 'a tampered file in a .terraform/providers cache is reported',
      files: {
        'main.tf': awsTf,
        [L]: lock,
        [`.terraform/providers/registry.terraform.io/hashicorp/aws/5.9.0/linux_amd64/${EXE}`]: 'tampered',
      },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'provider'),
          message: 'provider cache unpacked package .terraform/providers/',
        },
      ],
    };
  })(),
  {
    name: 'a zip with directory entries never matches the h1 terraform records (explained in the note)',
    build: async () => {
      const lock = lockWith([(await packageHashes()).dirEntries.h1]);
      return {
        files: { 'main.tf': awsTf, [L]: lock, [ZIP_PATH]: dirEntriesZip },
        expected: [{ file: L, line: lineOf(lock, 'provider'), message: ZIP_PATH, note: 'zip -D' }],
      };
    },
  },
  {
    name: 'a zip that cannot be read safely is reported',
    build: async () => {
      const lock = lockWith([(await packageHashes()).zip.zh]);
      const evil = writeZip([
        { name: EXE, data: 'x' },
        { name: '../../escape', data: 'x' },
      ]);
      return {
        files: { 'main.tf': awsTf, [L]: lock, [ZIP_PATH]: evil },
        expected: [{ file: L, line: lineOf(lock, 'provider'), message: 'escapes the package directory' }],
      };
    },
  },
  (() => {
    const noHashes = lockText([{ source: AWS, version: '5.9.0', constraints: '~> 5.0' }]);
    return {
      name: 'as in terraform: no hashes accept any package',
      files: { 'main.tf': awsTf, [L]: noHashes, [ZIP_PATH]: tamperedZip },
      expected: [
        {
          rule: 'lock-hash-malformed',
          file: L,
          line: lineOf(noHashes, 'provider'),
          message: 'records no hashes',
        },
      ],
    };
  })(),
  {
    name: 'as in terraform: zh:-only entries do not check unpacked directories',
    build: async () => {
      const zhOnly = lockWith([(await packageHashes()).zip.zh]);
      return {
        files: {
          'main.tf': awsTf,
          [L]: zhOnly,
          [`terraform.d/plugins/registry.terraform.io/hashicorp/aws/5.9.0/linux_amd64/${EXE}`]:
            'anything at all',
        },
        expected: [
          {
            rule: 'lock-platform-coverage',
            file: L,
            line: lineOf(zhOnly, 'hashes'),
            message: 'records only zh: checksums, so the unpacked package',
            note: '-platform=linux_amd64',
          },
        ],
      };
    },
  },
  {
    name: 'packages for other versions are not compared with the entry',
    build: async () => ({
      files: {
        'main.tf': awsTf,
        [L]: lockWith([(await packageHashes()).zip.zh]),
        [ZIP_PATH]: providerZip,
        [`${MIRROR}/terraform-provider-aws_5.8.0_linux_amd64.zip`]: tamperedZip,
      },
      expected: [],
    }),
  },
  {
    name: "plugin_dirs serve every root; a root-level mirror serves every root; another root's mirror does not",
    build: async () => {
      const lock = lockWith([(await packageHashes()).zip.zh]);
      const vendor =
        'vendor/providers/registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.9.0_darwin_arm64.zip';
      const rootMirror =
        'terraform.d/plugins/registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.9.0_windows_amd64.zip';
      const bMirror = `envs/b/${rootMirror.replace('windows_amd64', 'linux_amd64')}`;
      const files: FileMap = {
        'envs/a/main.tf': awsTf,
        'envs/a/.terraform.lock.hcl': lock,
        'envs/b/main.tf': awsTf,
        'envs/b/.terraform.lock.hcl': lock,
        // the team's mirror, declared in .tfguard.hcl
        [vendor]: tamperedZip,
        // a mirror at the archive root serves every root
        [rootMirror]: tamperedZip,
        // b's own mirror: judged only for b
        [bMirror]: tamperedZip,
      };
      const at = (file: string, message: string) => ({ file, line: lineOf(lock, 'provider'), message });
      return {
        files,
        config: { pluginDirs: ['vendor/providers'] },
        expected: [
          at('envs/a/.terraform.lock.hcl', `the plugin directory packed package ${vendor} `),
          at('envs/a/.terraform.lock.hcl', `the provider mirror packed package ${rootMirror} `),
          at('envs/b/.terraform.lock.hcl', `the plugin directory packed package ${vendor} `),
          at('envs/b/.terraform.lock.hcl', `the provider mirror packed package ${bMirror} `),
          at('envs/b/.terraform.lock.hcl', `the provider mirror packed package ${rootMirror} `),
        ],
      };
    },
  },
]);

describeLockAdvice('lock-hash-mismatch', [
  {
    name: "hash mismatch: the root's own mirror holds other content than was locked",
    installation: 'implied',
    initial: { 'main.tf': rp('~> 1.0'), ...pluginZip('1.2.0', 'first build') },
    changed: { 'main.tf': rp('~> 1.0'), ...pluginZip('1.2.0', 'second build') },
    steps: [{ from: /add its checksums with "([^"]+)"/, expect: 'fixes' }],
  },
]);
