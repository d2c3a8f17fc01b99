import { lines, ruleTable } from '../support/rule-table';

const block = (entry: string) => lines('terraform {', '  required_providers {', `    ${entry}`, '  }', '}');

ruleTable('duplicate-required-providers', [
  {
    name: 'two blocks in one terraform block',
    files: {
      'main.tf': lines(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
        '  }',
        '  required_providers {',
        '    random = { source = "hashicorp/random" }',
        '  }',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 5,
        message:
          'duplicate required_providers block: a module may have only one, and one was already declared at main.tf:2',
      },
    ],
  },
  {
    name: 'blocks in two files (the second file in lexical order is the duplicate)',
    files: {
      'versions.tf': block('aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
      'random.tf': block('random = { source = "hashicorp/random", version = "~> 3.5" }'),
    },
    expected: [{ module: '.', file: 'versions.tf', line: 2, message: 'already declared at random.tf:2' }],
  },
  {
    name: 'passing: a required_providers block in an override file merges',
    files: {
      'versions.tf': block('aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
      'versions_override.tf': block('aws = { source = "hashicorp/aws", version = "~> 5.1" }'),
    },
    expected: [],
  },
  {
    name: 'passing: one block per module',
    files: {
      'versions.tf': block('aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
      'm/versions.tf': block('aws = { source = "hashicorp/aws", version = ">= 5.0" }'),
    },
    expected: [],
  },
  {
    name: 'JSON syntax; disabled by configuration',
    files: {
      'main.tf.json': JSON.stringify({
        terraform: [
          { required_providers: { aws: { source: 'hashicorp/aws' } } },
          { required_providers: { random: { source: 'hashicorp/random' } } },
        ],
      }),
    },
    config: 'rule "duplicate-required-providers" { enabled = false }\n',
    expected: [],
  },
]);
