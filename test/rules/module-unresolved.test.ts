import { lines, ruleTable } from '../support/rule-table';

ruleTable('module-unresolved', [
  {
    name: 'a path into .terraform/modules belongs to the remote module of that name',
    files: {
      'main.tf': lines(
        'module "eks" {',
        '  source  = "terraform-aws-modules/eks/aws"',
        '  version = "~> 20.0"',
        '}',
        'module "nodes" {',
        '  source = "./.terraform/modules/eks/modules/eks-managed-node-group"',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 1,
        message:
          'remote module "eks" (source "terraform-aws-modules/eks/aws", version "~> 20.0") was not resolved: remote modules are fetched only with --remote-modules',
        note: 'Scan with --remote-modules',
      },
      {
        module: '.',
        file: 'main.tf',
        line: 5,
        message:
          'module "nodes" (source "./.terraform/modules/eks/modules/eks-managed-node-group") is not in the archive: it is part of the remote module "eks" (terraform-aws-modules/eks/aws)',
      },
    ],
  },
  {
    name: 'a registry module two roots reach through one shared module: one notice',
    files: {
      'envs/a/main.tf': lines('module "net" {', '  source = "../../net"', '}'),
      'envs/b/main.tf': lines('module "net" {', '  source = "../../net"', '}'),
      'net/main.tf': lines('module "vpc" {', '  source  = "acme/vpc/aws"', '  version = "~> 5.0"', '}'),
    },
    expected: [
      {
        module: 'net',
        file: 'net/main.tf',
        line: 1,
        message: 'remote module "vpc" (source "acme/vpc/aws", version "~> 5.0") was not resolved',
      },
    ],
  },
  {
    // cloudposse's components: every component calls its own label module under its own name, so
    // the call paths (Terraform's keys `a_net.vpc`, `b_net.vpc`) differ; the call site is one.
    name: 'one call site reached by three roots under three call paths: one notice, named from the site',
    files: {
      'envs/a/main.tf': lines('module "a_net" {', '  source = "../../net"', '}'),
      'envs/b/main.tf': lines('module "b_net" {', '  source = "../../net"', '}'),
      'envs/c/main.tf': lines(
        'module "first" {',
        '  source = "../../net"',
        '}',
        'module "second" {',
        '  source = "../../net"',
        '}',
      ),
      'net/main.tf': lines('module "vpc" {', '  source  = "acme/vpc/aws"', '  version = "~> 5.0"', '}'),
    },
    expected: [
      {
        module: 'net',
        file: 'net/main.tf',
        line: 1,
        message: 'remote module "vpc" (source "acme/vpc/aws", version "~> 5.0") was not resolved',
      },
    ],
  },
  {
    name: 'a git source on a host nobody allowed, a local path, an s3 bucket',
    files: {
      'main.tf': lines(
        'module "a" {',
        '  source = "git::https://git.example.com/acme/a.git?ref=v1"',
        '}',
        'module "b" {',
        '  source = "s3::https://s3.amazonaws.com/bucket/b.zip"',
        '}',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 1,
        message: 'remote module "a" (source "git::https://git.example.com/acme/a.git?ref=v1")',
      },
      {
        module: '.',
        file: 'main.tf',
        line: 4,
        message: 'remote module "b" (source "s3::https://s3.amazonaws.com/bucket/b.zip")',
      },
    ],
  },
  {
    name: 'a vendored package path with a // subdirectory (DFE-Digital layout)',
    files: {
      'terraform/application/main.tf': lines(
        'terraform {',
        '  backend "azurerm" {}',
        '}',
        'module "postgres" {',
        '  source = "./vendor/modules/aks//aks/postgres"',
        '}',
      ),
    },
    expected: [
      {
        module: 'terraform/application',
        file: 'terraform/application/main.tf',
        line: 4,
        message: 'its "//" marks a subdirectory of a package copied in before init',
      },
    ],
  },
  {
    name: 'a vendor directory without //',
    files: { 'main.tf': lines('module "x" {', '  source = "./vendor/x"', '}') },
    expected: [{ module: '.', file: 'main.tf', line: 1, message: 'it points into a vendor directory' }],
  },
  {
    name: 'passing: a plain missing directory is module-source-missing, not this rule',
    files: { 'main.tf': lines('module "a" {', '  source = "./modules/a"', '}') },
    expected: [],
  },
  {
    name: 'passing: the installed copy is in the archive',
    files: {
      'main.tf': lines('module "a" {', '  source = "./vendor/a"', '}'),
      'vendor/a/main.tf': lines('locals {}'),
    },
    expected: [],
  },
  {
    name: 'disabled by configuration',
    files: { 'main.tf': lines('module "x" {', '  source = "./vendor/x"', '}') },
    config: 'rule "module-unresolved" { enabled = false }\n',
    expected: [],
  },
]);
