import { lines, ruleTable } from './table';

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
    name: 'a Terramate file that is not HCL',
    files: { 'a/stack.tm.hcl': lines('stack {'), 'a/main.tf': PLAIN },
    expected: [
      { module: 'a', file: 'a/stack.tm.hcl', line: 1, message: 'a/stack.tm.hcl is not valid HCL (' },
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
