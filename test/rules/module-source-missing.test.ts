import { lines, ruleTable } from '../support/rule-table';

ruleTable('module-source-missing', [
  {
    name: 'sibling directory not in the archive',
    files: {
      'live/prod/main.tf': lines('locals {}', 'module "network" {', '  source = "../modules/network"', '}'),
    },
    expected: [
      {
        module: 'live/prod',
        file: 'live/prod/main.tf',
        line: 2,
        message:
          'module "network" source "../modules/network" points to directory "live/modules/network", which is not in the archive',
      },
    ],
  },
  {
    name: 'nested module points outside the archive',
    files: {
      'main.tf': lines('module "a" {', '  source = "./a"', '}'),
      'a/main.tf': lines('module "up" {', '  source = "../../outside"', '}'),
    },
    expected: [{ module: 'a', file: 'a/main.tf', line: 1, message: 'module "up" source "../../outside"' }],
  },
  {
    name: 'passing: present local modules and remote sources',
    files: {
      'main.tf': lines(
        'module "a" {',
        '  source = "./modules/a"',
        '}',
        'module "r" {',
        '  source  = "terraform-aws-modules/vpc/aws"',
        '  version = "~> 5.0"',
        '}',
      ),
      'modules/a/main.tf': lines('locals {}'),
    },
    expected: [],
  },
  {
    name: 'disabled by configuration',
    files: { 'main.tf': lines('module "a" {', '  source = "./nope"', '}') },
    config: 'rule "module-source-missing" { enabled = false }\n',
    expected: [],
  },
]);
