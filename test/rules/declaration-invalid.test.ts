import { lines, ruleTable } from '../support/rule-table';

const PLAIN = lines('resource "aws_s3_bucket" "b" {}');

ruleTable('declaration-invalid', [
  {
    name: 'atlantis.yaml that is not YAML',
    files: { 'atlantis.yaml': lines('projects:', '  - dir: [net', '  - dir: b'), 'main.tf': PLAIN },
    expected: [
      {
        module: '.',
        file: 'atlantis.yaml',
        line: 3,
        message: 'atlantis.yaml is not valid YAML (',
        note: 'other signals',
      },
    ],
  },
  {
    name: 'Spacelift stacks of the wrong shape',
    files: { '.spacelift/config.yml': lines('version: "1"', 'stacks:', '  - a', '  - b'), 'main.tf': PLAIN },
    expected: [
      {
        module: '.spacelift',
        file: '.spacelift/config.yml',
        line: 2,
        message: '.spacelift/config.yml: "stacks" is not a mapping, so the roots it declares were not read',
      },
    ],
  },
  {
    name: 'an Atmos stack manifest broken by a Go template',
    files: {
      'atmos.yaml': lines('components:', '  terraform:', '    base_path: components/terraform'),
      'stacks/dev.yaml': lines('components:', '  terraform:', '    {{ .name }}: [', ''),
      'components/terraform/vpc/main.tf': PLAIN,
    },
    expected: [
      { module: 'stacks', file: 'stacks/dev.yaml', line: 5, message: 'stacks/dev.yaml is not valid YAML (' },
    ],
  },
  {
    name: 'passing: valid declarations, and an empty file',
    files: {
      'atlantis.yaml': lines('version: 3', 'projects:', '  - dir: .'),
      'digger.yml': '',
      'main.tf': PLAIN,
    },
    expected: [],
  },
  {
    name: 'disabled by configuration',
    files: { 'atlantis.yaml': lines('projects: [') },
    config: 'rule "declaration-invalid" { enabled = false }\n',
    expected: [],
  },
]);
