import { lines, ruleTable } from '../support/rule-table';

/** A root whose only finding is root-module-unbounded for aws (line 5) when `aws` is unbounded. */
const root = (awsVersion: string, annotation: string): string =>
  lines(
    'terraform {',
    '  required_version = ">= 1.6"',
    '  required_providers {',
    `    ${annotation}`,
    `    aws = { source = "hashicorp/aws", version = "${awsVersion}" }`,
    '  }',
    '}',
  );
const LOCK = lines(
  'provider "registry.terraform.io/hashicorp/aws" {',
  '  version     = "5.9.0"',
  '  constraints = "~> 5.0"',
  '  hashes = [',
  '    "h1:Lq2zbdKEjpIWAKg5pD4O3i2bAaGXX4y9a5gqRDrOjmo=",',
  '  ]',
  '}',
);

ruleTable('suppression-unused', [
  {
    name: 'the finding was fixed: the annotation covers nothing any more',
    files: {
      'main.tf': root('~> 5.0', '# tfguard:ignore root-module-unbounded upgraded weekly by renovate'),
      '.terraform.lock.hcl': LOCK,
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 4,
        message:
          'annotation "tfguard:ignore root-module-unbounded" covered no root-module-unbounded finding on line 4 or 5 in this scan',
        note: 'remove the annotation',
      },
    ],
  },
  {
    name: 'passing: the annotation covers the finding',
    files: {
      'main.tf': root('>= 5.0', '# tfguard:ignore root-module-unbounded upgraded weekly by renovate'),
      '.terraform.lock.hcl': LOCK.replace('~> 5.0', '>= 5.0.0'),
    },
    expected: [],
  },
  {
    name: 'one of two rule ids covered nothing',
    files: {
      'main.tf': root('>= 5.0', '# tfguard:ignore root-module-unbounded,missing-version-constraint renovate'),
      '.terraform.lock.hcl': LOCK.replace('~> 5.0', '>= 5.0.0'),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 4,
        message: 'covered no missing-version-constraint finding on line 4 or 5',
      },
    ],
  },
  {
    name: 'a file annotation that covered nothing in its file',
    files: {
      'main.tf': lines(
        '# tfguard:ignore-file lock-missing, module-version-missing deployed elsewhere',
        'locals {}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 1,
        message:
          'annotation "tfguard:ignore-file lock-missing,module-version-missing" covered no finding of lock-missing, module-version-missing in this file',
      },
    ],
  },
  {
    name: 'not judged: the rule is disabled in the settings',
    files: {
      'main.tf': root('~> 5.0', '# tfguard:ignore root-module-unbounded renovate'),
      '.terraform.lock.hcl': LOCK,
    },
    config: 'rule "root-module-unbounded" { enabled = false }\n',
    expected: [],
  },
  {
    name: 'not judged: a registry-check rule in a scan without the registry check',
    files: {
      'main.tf': root('~> 5.0', ''),
      '.terraform.lock.hcl': `# tfguard:ignore lock-hash-unknown mirrored build, checked elsewhere\n${LOCK}`,
    },
    expected: [],
  },
  {
    name: 'not judged: a file of the module does not parse (rules skip such modules)',
    files: {
      'main.tf': root('~> 5.0', '# tfguard:ignore undeclared-provider renovate'),
      'broken.tf': 'resource "x" "y" {\n',
    },
    expected: [],
  },
  {
    name: 'the rule can be switched off',
    files: {
      'main.tf': root('~> 5.0', '# tfguard:ignore root-module-unbounded renovate'),
      '.terraform.lock.hcl': LOCK,
    },
    config: 'rule "suppression-unused" { enabled = false }\n',
    expected: [],
  },
]);
