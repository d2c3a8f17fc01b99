import { lockText, fakeH1 } from '../support/lock-fixtures';
import { lines, ruleTable } from '../support/rule-table';

const AWS = 'registry.terraform.io/hashicorp/aws';
/** A root whose only finding besides the annotations is root-module-unbounded on line 4. */
const unbounded = (annotation: string): string =>
  lines(
    'terraform {',
    '  required_providers {',
    `    ${annotation}`,
    '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
    '  }',
    '}',
  );

ruleTable('suppression-invalid', [
  {
    name: 'an annotation without a reason',
    files: { 'main.tf': unbounded('# tfguard:ignore root-module-unbounded') },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 3,
        message:
          'annotation "tfguard:ignore root-module-unbounded" suppresses nothing: gives no reason: write why the finding is accepted',
        note: 'tfguard:ignore <rule-id>[,<rule-id>...] <reason>',
      },
    ],
  },
  {
    name: 'a reason made only of punctuation is no reason',
    files: { 'main.tf': unbounded('// tfguard:ignore root-module-unbounded -- ...') },
    expected: [{ module: '.', file: 'main.tf', line: 3, message: 'gives no reason' }],
  },
  {
    name: 'an unknown rule id (one of several)',
    files: {
      'main.tf': unbounded('# tfguard:ignore root-module-unbounded, root-module-unbound upgraded weekly'),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 3,
        message:
          'annotation "tfguard:ignore root-module-unbounded,root-module-unbound" suppresses nothing: unknown rule id "root-module-unbound"',
      },
    ],
  },
  {
    name: 'no rule id at all, and an unknown directive',
    files: {
      'main.tf': lines('# tfguard:ignore', '# tfguard:disable root-module-unbounded reason', 'locals {}'),
    },
    expected: [
      { module: '.', file: 'main.tf', line: 1, message: 'names no rule id' },
      {
        module: '.',
        file: 'main.tf',
        line: 2,
        message: 'annotation "tfguard:disable" suppresses nothing: unknown annotation "tfguard:disable"',
      },
    ],
  },
  {
    name: '"all" and the suppression rules themselves cannot be named',
    files: {
      'main.tf': lines(
        '# tfguard:ignore all everything here is fine',
        '# tfguard:ignore suppression-unused keep it',
        'locals {}',
      ),
    },
    expected: [
      { module: '.', file: 'main.tf', line: 1, message: '"all" is not accepted' },
      {
        module: '.',
        file: 'main.tf',
        line: 2,
        message: '"suppression-unused" cannot be suppressed inline',
      },
    ],
  },
  {
    name: 'tfguard:ignore-file after the first block',
    files: {
      'main.tf': lines(
        '# header comment',
        'locals {}',
        '# tfguard:ignore-file root-module-unbounded the whole file is generated',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 3,
        message: "must come before the file's first block or attribute",
      },
    ],
  },
  {
    name: 'a line annotation in a JSON configuration file (JSON has no comments)',
    files: {
      'main.tf.json': JSON.stringify(
        {
          terraform: {
            '//': 'tfguard:ignore root-module-unbounded upgraded weekly',
            required_providers: { aws: { source: 'hashicorp/aws', version: '>= 5.0' } },
          },
        },
        null,
        2,
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf.json',
        line: 3,
        message: 'JSON configuration files have no comments: only a top-level "//" property',
      },
    ],
  },
  {
    name: 'in a lock file: the module is the root that owns it',
    files: {
      'live/main.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '  }',
        '}',
      ),
      'live/.terraform.lock.hcl': lockText([
        { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
      ]).replace('provider', '# tfguard:ignore lock-platform-coverage\nprovider'),
    },
    expected: [{ module: 'live', file: 'live/.terraform.lock.hcl', line: 4, message: 'gives no reason' }],
  },
  {
    name: 'in an OpenTofu .tofu file',
    files: { 'main.tofu': unbounded('# tfguard:ignore root-module-unbounded') },
    config: 'engine = "opentofu"\n',
    expected: [{ module: '.', file: 'main.tofu', line: 3, message: 'gives no reason' }],
  },
  {
    name: 'passing: valid annotations; text in strings and heredocs is not a comment',
    files: {
      'main.tf': lines(
        '# tfguard:ignore-file required-version-missing the CLI version is pinned by the CI image',
        'terraform {',
        '  required_providers {',
        '    # tfguard:ignore root-module-unbounded upgraded weekly by renovate',
        '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
        '  }',
        '}',
        'locals {',
        '  a = "# tfguard:ignore"',
        '  b = <<EOT',
        '# tfguard:ignore',
        'EOT',
        '}',
      ),
    },
    expected: [],
  },
  {
    name: 'severity raised in .tfguard.hcl',
    files: { 'main.tf': unbounded('# tfguard:ignore root-module-unbounded') },
    config: 'rule "suppression-invalid" { severity = "error" }\n',
    expected: [{ module: '.', file: 'main.tf', line: 3, message: 'gives no reason', severity: 'error' }],
  },
]);
