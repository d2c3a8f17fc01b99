import type { ScanConfig } from '../../src/model';
import type { FileMap } from '../support/archive';
import { call, describeLockAdvice, RUN, rp } from '../support/lock-advice';
import {
  AWS,
  L,
  TOFU_AWS,
  awsTf,
  fakeH1,
  lineOf,
  lockRuleTable,
  lockScan,
  lockText,
  lockWith,
  remoteModuleCall,
  tf,
} from '../support/lock';

lockRuleTable('lock-constraints-drift', [
  (() => {
    const lock = lockWith([fakeH1('aws')]);
    return {
      name: 'the root changed its constraint',
      files: { 'main.tf': tf({ aws: { source: 'hashicorp/aws', version: '~> 5.1' } }), [L]: lock },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'constraints'),
          message: 'records constraints "~> 5.0", which differ from the configuration\'s "~> 5.1"',
          fix: '~> 5.1',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockWith([fakeH1('aws')]);
    return {
      name: 'constraints recorded but none configured',
      files: { 'main.tf': tf({ aws: { source: 'hashicorp/aws' } }), [L]: lock },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'constraints'),
          message: 'records constraints "~> 5.0", but the configuration sets no version constraint for it',
          fix: '',
        },
      ],
    };
  })(),
  (() => {
    const lock = lockText([{ source: AWS, version: '5.9.0', hashes: [fakeH1('aws')] }]);
    return {
      name: 'no constraints recorded, some configured',
      files: { 'main.tf': awsTf, [L]: lock },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'provider'),
          message:
            'the lock entry for hashicorp/aws records no constraints, but the configuration\'s are "~> 5.0"',
          fix: '~> 5.0',
        },
      ],
    };
  })(),
  {
    // The root's version reads a const variable without a default (Terraform 1.17): the lock's
    // "~> 5.1" may be its value, so only the known ">= 5.0.0" is looked for, and it is there.
    name: 'a constraint tfguard cannot evaluate is not drift',
    files: {
      'main.tf':
        'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = var.v }\n  }\n}\n' +
        'variable "v" {\n  const = true\n}\nmodule "net" {\n  source = "./net"\n}\n',
      'net/main.tf': tf({ aws: { source: 'hashicorp/aws', version: '>= 5.0' } }),
      [L]: lockText([
        { source: AWS, version: '5.9.0', constraints: '>= 5.0.0, ~> 5.1', hashes: [fakeH1('aws')] },
      ]),
    },
    expected: [],
  },
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '>= 5.0.0, ~> 5.1', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: 'a known piece missing is still drift when another is unknown',
      files: {
        'main.tf':
          'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = var.v }\n  }\n}\n' +
          'variable "v" {\n  const = true\n}\nmodule "net" {\n  source = "./net"\n}\n',
        'net/main.tf': tf({ aws: { source: 'hashicorp/aws', version: '>= 5.2' } }),
        [L]: lock,
      },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'constraints'),
          message:
            'records constraints ">= 5.0.0, ~> 5.1", which lack ">= 5.2.0" from the archive\'s modules (the constraint of "." reads a value tfguard could not evaluate)',
        },
      ],
    };
  })(),
  {
    name: 'with remote modules, extra recorded constraints are theirs',
    files: {
      'main.tf': `${awsTf}${remoteModuleCall}`,
      [L]: lockText([
        { source: AWS, version: '5.9.0', constraints: '>= 4.0.0, ~> 5.0', hashes: [fakeH1('aws')] },
      ]),
    },
    expected: [],
  },
  (() => {
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '>= 4.0.0', hashes: [fakeH1('aws')] },
    ]);
    return {
      name: 'with remote modules, a missing local constraint still drifts',
      files: { 'main.tf': `${awsTf}${remoteModuleCall}`, [L]: lock },
      expected: [
        {
          file: L,
          line: lineOf(lock, 'constraints'),
          message:
            'records constraints ">= 4.0.0", which lack "~> 5.0" from the archive\'s modules (remote modules may add constraints of their own)',
        },
      ],
    };
  })(),
]);

describe('rule lock-constraints-drift: notes', () => {
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
});

describeLockAdvice(
  'lock-constraints-drift',
  [
    {
      name: 'drift: the root changed its constraint; the locked version is still the newest allowed',
      initial: { 'main.tf': rp('~> 1.0') },
      changed: { 'main.tf': rp('~> 1.2') },
      steps: [
        { from: /plain "([^"]+)" leaves the line unchanged/, expect: 'unchanged' },
        { from: { control: 'terraform init -upgrade' }, expect: 'unchanged' },
        { from: RUN, expect: 'fixes' },
      ],
    },
    {
      name: 'drift: a child module adds a minimum',
      initial: { 'main.tf': rp('~> 1.0') + call('m', './m'), 'm/main.tf': rp(null) },
      changed: { 'main.tf': rp('~> 1.0') + call('m', './m'), 'm/main.tf': rp('>= 1.1') },
      steps: [
        { from: /installed by "([^"]+)" first/, expect: 'unchanged' },
        { from: /plain "([^"]+)" leaves the line unchanged/, expect: 'unchanged' },
        { from: RUN, expect: 'fixes' },
      ],
    },
    {
      name: 'drift: the constraint was removed',
      initial: { 'main.tf': rp('~> 1.2') },
      changed: { 'main.tf': rp(null) },
      steps: [
        { from: /plain "([^"]+)" leaves the line unchanged/, expect: 'unchanged' },
        { from: RUN, expect: 'fixes' },
      ],
    },
  ],
  (results) => {
    it('drift advice never points at plain "terraform init" as the fix', () => {
      const drift = results();
      expect(drift.length).toBeGreaterThanOrEqual(3);
      for (const r of drift) {
        const fix = r.outcomes.find((o) => o.expect === 'fixes');
        expect(fix?.command).toMatch(/^terraform providers lock\b/);
      }
    });
  },
);
