/**
 * lock-missing, lock-parse-error, lock-provider-missing, lock-provider-stale, lock-version-mismatch
 * and lock-constraints-drift over the real pipeline (tar.gz → archive reader → HCL parser → module
 * loader → analyzeLocks → rule engine). Each row lists every lock finding expected, so a missing,
 * extra or misplaced finding fails it.
 */
import type { ScanConfig } from '../../src/model';
import type { FileMap } from '../support/archive';
import { fakeH1, lineOf, lockText, tf } from '../lockfile/fixtures';
import { closeLockParser, lockScan } from '../lockfile/pipeline';

interface Expect {
  rule: string;
  file: string;
  line: number;
  message: string;
  fix?: string;
}

interface Row {
  name: string;
  files: FileMap;
  /** Scan settings (default: DEFAULT_CONFIG). */
  config?: Partial<ScanConfig>;
  expected: Expect[];
}

const AWS = 'registry.terraform.io/hashicorp/aws';
const RANDOM = 'registry.terraform.io/hashicorp/random';
const NULL = 'registry.terraform.io/hashicorp/null';
const TOFU_AWS = 'registry.opentofu.org/hashicorp/aws';
const L = '.terraform.lock.hcl';

const goodLock = lockText([
  { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
]);
const awsTf = tf({ aws: { source: 'hashicorp/aws', version: '~> 5.0' } });

const staleLock = lockText([
  { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
  { source: NULL, version: '3.2.2', hashes: [fakeH1('null')] },
]);

const dupLock = `${goodLock}\n${lockText([{ source: AWS, version: '5.9.0', hashes: [fakeH1('aws')] }]).split('\n\n')[1]}`;

const ROWS: Row[] = [
  { name: 'a consistent lock file', files: { 'main.tf': awsTf, [L]: goodLock }, expected: [] },
  {
    name: 'lock-missing: a root requiring providers has no lock file',
    files: { 'live/prod/main.tf': awsTf, 'live/prod/variables.tf': 'variable "x" {}\n' },
    expected: [
      {
        rule: 'lock-missing',
        file: 'live/prod/main.tf',
        line: 1,
        message: 'requires provider hashicorp/aws but has no .terraform.lock.hcl',
      },
    ],
  },
  {
    name: 'lock-missing: a root that requires no provider needs no lock file',
    files: {
      'main.tf': 'locals { a = 1 }\ndata "terraform_remote_state" "x" {\n  backend = "local"\n}\n',
    },
    expected: [],
  },
  {
    name: 'lock-parse-error: duplicate blocks are reported and the first entry still counts',
    files: { 'main.tf': awsTf, [L]: dupLock },
    expected: [
      {
        rule: 'lock-parse-error',
        file: L,
        line: lineOf(dupLock, 'provider', lineOf(dupLock, 'provider')),
        message: 'duplicate lock entry for provider registry.terraform.io/hashicorp/aws',
      },
    ],
  },
  {
    name: 'lock-parse-error: an unreadable lock file silences the other lock rules',
    files: {
      'main.tf': tf({
        aws: { source: 'hashicorp/aws', version: '~> 5.0' },
        random: { source: 'hashicorp/random' },
      }),
      [L]: 'provider "x" {\n',
    },
    expected: [{ rule: 'lock-parse-error', file: L, line: 1, message: 'the lock file cannot be parsed' }],
  },
  {
    name: 'lock-provider-missing: a provider required by a child module',
    files: {
      'main.tf': `${awsTf}module "ids" {\n  source = "./modules/ids"\n}\n`,
      'modules/ids/main.tf': tf({ random: { source: 'hashicorp/random', version: '>= 3.0' } }),
      [L]: goodLock,
    },
    expected: [
      {
        rule: 'lock-provider-missing',
        file: L,
        line: 1,
        message: 'provider hashicorp/random is required (by module "modules/ids")',
      },
    ],
  },
  {
    name: 'lock-provider-missing: an implied provider used by a resource',
    files: { 'main.tf': `${awsTf}resource "random_id" "x" {\n  byte_length = 4\n}\n`, [L]: goodLock },
    expected: [
      { rule: 'lock-provider-missing', file: L, line: 1, message: 'provider hashicorp/random is required' },
    ],
  },
  {
    name: 'lock-provider-stale: an entry nothing requires',
    files: { 'main.tf': awsTf, [L]: staleLock },
    expected: [
      {
        rule: 'lock-provider-stale',
        file: L,
        line: lineOf(staleLock, 'hashicorp/null'),
        message: 'the lock entry for hashicorp/null 3.2.2 is stale',
      },
    ],
  },
  {
    name: 'lock-provider-stale: not judged when a remote module may require it',
    files: {
      'main.tf': `${awsTf}module "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.0.0"\n}\n`,
      [L]: staleLock,
    },
    expected: [],
  },
  {
    name: 'lock-provider-stale: not judged when a module of the tree does not parse',
    files: { 'main.tf': awsTf, 'broken.tf': 'resource "x" {\n', [L]: staleLock },
    expected: [],
  },
  (() => {
    const lock = lockText([
      { source: AWS, version: '4.67.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: 'lock-version-mismatch: the locked version violates the root constraint',
      files: { 'main.tf': awsTf, [L]: lock },
      expected: [
        {
          rule: 'lock-version-mismatch',
          file: L,
          line: lineOf(lock, 'version'),
          message:
            'locked version 4.67.0 of hashicorp/aws does not satisfy the configuration\'s constraints "~> 5.0" ("~> 5.0" in module ".")',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: 'lock-version-mismatch: a child module raises the minimum (and the recorded constraints drift)',
      files: {
        'main.tf': `${awsTf}module "net" {\n  source = "./net"\n}\n`,
        'net/main.tf': tf({ aws: { source: 'hashicorp/aws', version: '>= 5.10' } }),
        [L]: lock,
      },
      expected: [
        {
          rule: 'lock-constraints-drift',
          file: L,
          line: lineOf(lock, 'constraints'),
          message: 'records constraints "~> 5.0", which differ from the configuration\'s "~> 5.0, >= 5.10.0"',
          fix: '~> 5.0, >= 5.10.0',
        },
        {
          rule: 'lock-version-mismatch',
          file: L,
          line: lineOf(lock, 'version'),
          message: '">= 5.10" in module "net"',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: "lock-version-mismatch: the root's own mirror lacks the locked version",
      files: {
        'main.tf': awsTf,
        [L]: lock,
        'terraform.d/plugins/registry.terraform.io/hashicorp/aws/5.8.0/linux_amd64/terraform-provider-aws_v5.8.0':
          'x',
      },
      expected: [
        {
          rule: 'lock-version-mismatch',
          file: L,
          line: lineOf(lock, 'version'),
          message:
            'locked version 5.9.0 of hashicorp/aws is not in the provider mirror terraform.d/plugins, which only has 5.8.0',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: 'lock-constraints-drift: the root changed its constraint',
      files: { 'main.tf': tf({ aws: { source: 'hashicorp/aws', version: '~> 5.1' } }), [L]: lock },
      expected: [
        {
          rule: 'lock-constraints-drift',
          file: L,
          line: lineOf(lock, 'constraints'),
          message: 'records constraints "~> 5.0", which differ from the configuration\'s "~> 5.1"',
          fix: '~> 5.1',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: 'lock-constraints-drift: constraints recorded but none configured',
      files: { 'main.tf': tf({ aws: { source: 'hashicorp/aws' } }), [L]: lock },
      expected: [
        {
          rule: 'lock-constraints-drift',
          file: L,
          line: lineOf(lock, 'constraints'),
          message: 'records constraints "~> 5.0", but the configuration sets no version constraint for it',
          fix: '',
        },
      ],
    };
  })(),
  (() => {
    // The root's version reads a const variable without a default (Terraform 1.17): the lock's
    // "~> 5.1" may be its value, so only the known ">= 5.0.0" is looked for, and it is there.
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '>= 5.0.0, ~> 5.1', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: 'lock-constraints-drift: a constraint tfguard cannot evaluate is not drift',
      files: {
        'main.tf':
          'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = var.v }\n  }\n}\n' +
          'variable "v" {\n  const = true\n}\nmodule "net" {\n  source = "./net"\n}\n',
        'net/main.tf': tf({ aws: { source: 'hashicorp/aws', version: '>= 5.0' } }),
        [L]: lock,
      },
      expected: [],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '>= 5.0.0, ~> 5.1', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: 'lock-constraints-drift: a known piece missing is still drift when another is unknown',
      files: {
        'main.tf':
          'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = var.v }\n  }\n}\n' +
          'variable "v" {\n  const = true\n}\nmodule "net" {\n  source = "./net"\n}\n',
        'net/main.tf': tf({ aws: { source: 'hashicorp/aws', version: '>= 5.2' } }),
        [L]: lock,
      },
      expected: [
        {
          rule: 'lock-constraints-drift',
          file: L,
          line: lineOf(lock, 'constraints'),
          message:
            'records constraints ">= 5.0.0, ~> 5.1", which lack ">= 5.2.0" from the archive\'s modules (the constraint of "." reads a value tfguard could not evaluate)',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockText([{ source: AWS, version: '5.9.0', hashes: [fakeH1('aws')] }]);
    return {
      name: 'lock-constraints-drift: no constraints recorded, some configured',
      files: { 'main.tf': awsTf, [L]: lock },
      expected: [
        {
          rule: 'lock-constraints-drift',
          file: L,
          line: lineOf(lock, 'provider'),
          message:
            'the lock entry for hashicorp/aws records no constraints, but the configuration\'s are "~> 5.0"',
          fix: '~> 5.0',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '>= 4.0.0, ~> 5.0', hashes: [fakeH1('aws')] },
    ]);
    const remote = `module "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.0.0"\n}\n`;
    return {
      name: 'lock-constraints-drift: with remote modules, extra recorded constraints are theirs',
      files: { 'main.tf': `${awsTf}${remote}`, [L]: lock },
      expected: [],
    };
  })(),
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '>= 4.0.0', hashes: [fakeH1('aws')] },
    ]);
    const remote = `module "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.0.0"\n}\n`;
    return {
      name: 'lock-constraints-drift: with remote modules, a missing local constraint still drifts',
      files: { 'main.tf': `${awsTf}${remote}`, [L]: lock },
      expected: [
        {
          rule: 'lock-constraints-drift',
          file: L,
          line: lineOf(lock, 'constraints'),
          message:
            'records constraints ">= 4.0.0", which lack "~> 5.0" from the archive\'s modules (remote modules may add constraints of their own)',
        },
      ],
    };
  })(),
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
          rule: 'lock-provider-stale',
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
      expected: [
        {
          rule: 'lock-provider-stale',
          file: L,
          line: lineOf(lock, TOFU_AWS),
          message: `the lock entry for ${TOFU_AWS} 5.9.0 `,
        },
      ],
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
        {
          rule: 'lock-provider-stale',
          file: L,
          line: lineOf(lock, AWS),
          message: `the lock entry for ${AWS} 5.9.0 `,
        },
      ],
    };
  })(),
];

afterAll(async () => {
  await closeLockParser();
});

describe('lock consistency rules', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const { findings } = await lockScan(row.files, row.config === undefined ? {} : { config: row.config });
    const got = findings.map((f) => ({
      rule: f.ruleId,
      file: f.file,
      line: f.line,
      message: f.message,
      fix: f.fix?.replacement,
    }));
    expect(got).toHaveLength(row.expected.length);
    const sorted = [...row.expected].sort(
      (a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.rule.localeCompare(b.rule),
    );
    sorted.forEach((e, i) => {
      const g = got[i];
      expect({ rule: g?.rule, file: g?.file, line: g?.line }).toEqual({
        rule: e.rule,
        file: e.file,
        line: e.line,
      });
      expect(g?.message).toContain(e.message);
      expect(g?.fix).toBe(e.fix);
    });
  });

  it('drift notes name the command that rewrites the line, for the engine, and module installation when needed', async () => {
    const lock = (source: string): string =>
      lockText([{ source, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] }]);
    const changed = tf({ aws: { source: 'hashicorp/aws', version: '~> 5.1' } });
    const noteOf = async (files: FileMap, config?: Partial<ScanConfig>): Promise<string | undefined> => {
      const { findings } = await lockScan(files, config === undefined ? {} : { config });
      return findings.find((f) => f.ruleId === 'lock-constraints-drift')?.note;
    };
    expect(await noteOf({ 'main.tf': changed, [L]: lock(AWS) })).toBe(
      'Run "terraform providers lock" to rewrite the line (it keeps the locked version and hashes) and commit ' +
        'the lock file; plain "terraform init" leaves the line unchanged while the locked version satisfies the ' +
        'configuration.',
    );
    expect(
      await noteOf({
        'main.tf': `${changed}module "m" {\n  source = "./m"\n}\n`,
        'm/main.tf': '',
        [L]: lock(AWS),
      }),
    ).toContain(
      '(it keeps the locked version and hashes; it needs the modules installed by "terraform init" first)',
    );
    const tofu = await noteOf(
      { 'main.tf': changed, [L]: lock(TOFU_AWS) },
      { engine: 'opentofu', engineExplicit: true },
    );
    expect(tofu).toContain('Run "tofu providers lock"');
    expect(tofu).toContain('plain "tofu init"');
    expect(tofu).not.toContain('terraform');
  });

  it('findings carry the rule severities', async () => {
    const { findings } = await lockScan({ 'main.tf': awsTf, [L]: staleLock.replace('5.9.0', '4.0.0') });
    expect(findings.map((f) => [f.ruleId, f.severity])).toEqual([
      ['lock-version-mismatch', 'error'],
      ['lock-provider-stale', 'warning'],
    ]);
  });
});
