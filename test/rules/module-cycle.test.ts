import { lines, ruleTable } from '../support/rule-table';

ruleTable('module-cycle', [
  {
    name: 'two modules calling each other',
    files: {
      'main.tf': lines('module "a" {', '  source = "./modules/a"', '}'),
      'modules/a/main.tf': lines('module "b" {', '  source = "../b"', '}'),
      'modules/b/main.tf': lines('# back', 'module "a" {', '  source = "../a"', '}'),
    },
    expected: [
      {
        module: 'modules/b',
        file: 'modules/b/main.tf',
        line: 2,
        message: 'local module calls form a cycle: "modules/a" → "modules/b" → "modules/a"',
      },
    ],
  },
  {
    name: 'a module calling itself',
    files: { 'main.tf': lines('module "self" {', '  source = "./"', '}') },
    expected: [{ module: '.', file: 'main.tf', line: 1, message: 'cycle: "." → "."' }],
  },
  {
    name: 'passing: a diamond is not a cycle',
    files: {
      'main.tf': lines('module "a" {', '  source = "./a"', '}', 'module "b" {', '  source = "./b"', '}'),
      'a/main.tf': lines('module "c" {', '  source = "../c"', '}'),
      'b/main.tf': lines('module "c" {', '  source = "../c"', '}'),
      'c/main.tf': lines('locals {}'),
    },
    expected: [],
  },
  {
    name: 'severity lowered',
    files: {
      'main.tf': lines('module "a" {', '  source = "./a"', '}'),
      'a/main.tf': lines('module "a" {', '  source = "./"', '}'),
    },
    config: 'rule "module-cycle" { severity = "warning" }\n',
    expected: [{ module: 'a', file: 'a/main.tf', line: 1, message: '"a" → "a"', severity: 'warning' }],
  },
]);
