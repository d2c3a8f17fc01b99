import { callsTo, lines, ruleTable } from '../support/rule-table';

const root = callsTo('modules/net');
const sharedWith = (version: string) =>
  lines(
    'terraform {',
    '  required_providers {',
    '    aws = {',
    '      source  = "hashicorp/aws"',
    `      version = "${version}"`,
    '    }',
    '  }',
    '}',
  );
const at5 = (message: string, fix?: string) => ({
  module: 'modules/net',
  file: 'modules/net/versions.tf',
  line: 5,
  message,
  ...(fix === undefined ? {} : { fix }),
});

ruleTable('shared-module-upper-bound', [
  {
    name: '~> in a called module',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('~> 5.0') },
    expected: [at5('shared module caps provider "aws" (hashicorp/aws) with "~> 5.0"', '>= 5.0')],
  },
  {
    name: '>= with < keeps the minimum',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('>= 4.2, < 6.0') },
    expected: [at5('(upper bound: < 6.0.0)', '>= 4.2')],
  },
  {
    name: 'bare exact version',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('5.31.0') },
    expected: [at5('with "5.31.0"', '>= 5.31.0')],
  },
  {
    name: '= exact version',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('= 5.31.0') },
    expected: [at5('with "= 5.31.0"', '>= 5.31.0')],
  },
  {
    name: '<= without a minimum has no mechanical fix',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('<= 5.0') },
    expected: [at5('with "<= 5.0"')],
  },
  {
    name: 'passing: minimum only',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('>= 5.0') },
    expected: [],
  },
  {
    name: 'passing: != is not an upper bound',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('>= 5.0, != 5.1.0') },
    expected: [],
  },
  {
    name: 'passing: ~> in a root module',
    files: { 'main.tf': sharedWith('~> 5.0') },
    expected: [],
  },
  {
    name: 'an invalid constraint is left to invalid-version-constraint',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('~> 5.x') },
    expected: [],
  },
  {
    name: 'shared by configuration even when nothing calls it',
    files: { 'lib/net/versions.tf': sharedWith('~> 5.0') },
    config: 'shared = ["lib/**"]\n',
    expected: [
      { module: 'lib/net', file: 'lib/net/versions.tf', line: 5, message: 'with "~> 5.0"', fix: '>= 5.0' },
    ],
  },
  {
    name: 'passing: the same directory is a root without the setting',
    files: { 'lib/net/versions.tf': sharedWith('~> 5.0') },
    expected: [],
  },
  {
    name: 'legacy string form points at the entry',
    files: {
      'main.tf': root,
      'modules/net/versions.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = "~> 5.0"',
        '  }',
        '}',
      ),
    },
    expected: [
      {
        module: 'modules/net',
        file: 'modules/net/versions.tf',
        line: 3,
        message: 'with "~> 5.0"',
        fix: '>= 5.0',
      },
    ],
  },
  {
    name: '.tf.json module',
    files: {
      'main.tf': root,
      'modules/net/versions.tf.json': lines(
        '{',
        '  "terraform": {',
        '    "required_providers": {',
        '      "aws": {',
        '        "source": "hashicorp/aws",',
        '        "version": "< 6.0, >= 5.1"',
        '      }',
        '    }',
        '  }',
        '}',
      ),
    },
    expected: [
      {
        module: 'modules/net',
        file: 'modules/net/versions.tf.json',
        line: 6,
        message: 'with "< 6.0, >= 5.1"',
        fix: '>= 5.1',
      },
    ],
  },
  {
    name: 'override file sets the capped version: reported where it is written',
    files: {
      'main.tf': root,
      'modules/net/versions.tf': sharedWith('>= 5.0'),
      'modules/net/versions_override.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.2" }',
        '  }',
        '}',
      ),
    },
    expected: [
      {
        module: 'modules/net',
        file: 'modules/net/versions_override.tf',
        line: 3,
        message: '"~> 5.2"',
        fix: '>= 5.2',
      },
    ],
  },
  {
    name: 'override file removes the cap',
    files: {
      'main.tf': root,
      'modules/net/versions.tf': sharedWith('~> 5.0'),
      'modules/net/override.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
        '  }',
        '}',
      ),
    },
    expected: [],
  },
  {
    name: 'several providers, only capped ones reported; severity from .tfguard.hcl',
    files: {
      'main.tf': root,
      'modules/net/versions.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws    = { source = "hashicorp/aws", version = ">= 5.0" }',
        '    random = { source = "hashicorp/random", version = "~> 3.5.1" }',
        '    null   = { source = "hashicorp/null", version = ">= 3.0, <= 3.2.2" }',
        '  }',
        '}',
      ),
    },
    config: 'rule "shared-module-upper-bound" { severity = "warning" }\n',
    expected: [
      {
        module: 'modules/net',
        file: 'modules/net/versions.tf',
        line: 4,
        message: 'provider "random" (hashicorp/random) with "~> 3.5.1"',
        fix: '>= 3.5.1',
        severity: 'warning',
      },
      {
        module: 'modules/net',
        file: 'modules/net/versions.tf',
        line: 5,
        message: 'provider "null" (hashicorp/null) with ">= 3.0, <= 3.2.2"',
        fix: '>= 3.0',
        severity: 'warning',
      },
    ],
  },
  {
    // The cap moves to the root that would lose it; the note says so.
    name: 'the bound moves to a root that declares nothing for the provider',
    files: { 'main.tf': root, 'modules/net/versions.tf': sharedWith('~> 5.0') },
    expected: [
      {
        ...at5('with "~> 5.0"', '>= 5.0'),
        note: 'The fix moves the bound to the root module "." (~> 5.0).',
      },
    ],
  },
  {
    name: 'no root in the archive uses the module: the cap goes, the note says its roots must bound it',
    files: { 'lib/net/versions.tf': sharedWith('~> 5.0') },
    config: 'shared = ["lib/**"]\n',
    expected: [
      {
        module: 'lib/net',
        file: 'lib/net/versions.tf',
        line: 5,
        message: 'with "~> 5.0"',
        fix: '>= 5.0',
        note: 'No root module in the archive uses this module: the roots that call it from elsewhere must bound',
      },
    ],
  },
]);
