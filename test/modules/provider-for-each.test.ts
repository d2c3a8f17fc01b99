/**
 * Issue 21, item 7: provider `for_each` (OpenTofu 1.9: "Provider for_each", opentofu/opentofu
 * CHANGELOG v1.9; website/docs/language/providers/configuration.mdx "for_each: Multiple instances of a
 * provider configuration" and meta-arguments/module-providers.mdx "Module instances with differing
 * provider instances"). An aliased `provider` block may take `for_each`; resources select an instance
 * with `provider = aws.by_region[each.key]` and module calls with
 * `providers = { aws = aws.by_region[each.key] }`. The configuration is the static `aws.by_region`.
 * Terraform reserves the argument: terraform 1.11 says "Reserved argument name in provider block"
 * (checked below), so these roots are OpenTofu's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { describeWithTerraform } from '../support/external';
import { runTerraform, writeTree } from '../support/terraform';
import { findingsOf, scanFiles } from '../support/scan';
import { closeParser } from '../support/modules';

afterAll(closeParser);

const ROOT = [
  'terraform {',
  '  required_version = ">= 1.9"',
  '  backend "s3" {}',
  '  required_providers {',
  '    aws         = { source = "hashicorp/aws", version = "~> 5.0" }',
  '    google-beta = { source = "hashicorp/google-beta", version = "~> 6.0" }',
  '  }',
  '}',
  'variable "regions" {',
  '  type = set(string)',
  '}',
  'provider "aws" {',
  '  alias    = "by_region"',
  '  for_each = var.regions',
  '  region   = each.key',
  '}',
  'provider "google-beta" {',
  '  alias    = "by_region"',
  '  for_each = var.regions',
  '  region   = each.key',
  '}',
  'resource "aws_vpc" "this" {',
  '  for_each = var.regions',
  '  provider = aws.by_region[each.key]',
  '}',
  'resource "google_compute_network" "this" {',
  '  for_each = var.regions',
  '  provider = google-beta.by_region[each.key]',
  '}',
  'module "net" {',
  '  source    = "./modules/net"',
  '  for_each  = var.regions',
  '  providers = { aws = aws.by_region[each.key] }',
  '}',
  '',
].join('\n');
const SHARED = [
  'terraform {',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
  '  }',
  '}',
  'resource "aws_subnet" "this" {}',
  '',
].join('\n');

test('instance references bind resources and module calls to the aliased configuration', async () => {
  const r = await scanFiles({ 'main.tofu': ROOT, 'modules/net/main.tf': SHARED });
  expect(r.engine).toBe('opentofu');
  const root = r.modules.find((m) => m.path === '.');
  // google_compute_network uses google-beta.by_region, not an implied "google" provider.
  expect(root?.providers.map((p) => [p.name, p.source, p.implicit])).toEqual([
    ['aws', 'registry.opentofu.org/hashicorp/aws', false],
    ['google-beta', 'registry.opentofu.org/hashicorp/google-beta', false],
  ]);
  expect(root?.moduleCalls[0]?.providers).toEqual({ aws: 'aws.by_region[each.key]' });
  expect(r.roots[0]?.providers.map((p) => p.source)).toEqual([
    'registry.opentofu.org/hashicorp/aws',
    'registry.opentofu.org/hashicorp/google-beta',
  ]);
  for (const id of ['undeclared-provider', 'missing-configuration-alias', 'shared-module-provider-config'])
    expect(findingsOf(r, id)).toEqual([]);
});

test('JSON syntax: the same instance references', async () => {
  const json = {
    terraform: [
      { required_providers: [{ 'google-beta': { source: 'hashicorp/google-beta', version: '~> 6.0' } }] },
    ],
    provider: { 'google-beta': [{ alias: 'by_region', for_each: '${var.regions}', region: '${each.key}' }] },
    resource: {
      google_compute_network: {
        this: { for_each: '${var.regions}', provider: 'google-beta.by_region[each.key]' },
      },
    },
  };
  const r = await scanFiles({ 'main.tofu.json': JSON.stringify(json) });
  expect(findingsOf(r, 'undeclared-provider')).toEqual([]);
  expect(r.modules[0]?.providers.map((p) => p.name)).toEqual(['google-beta']);
});

test('a shared module with a for_each provider block is told to take one instance per call', async () => {
  const r = await scanFiles({
    'main.tofu': 'module "net" {\n  source = "./modules/net"\n}\n',
    'modules/net/main.tf': `${SHARED}provider "aws" {\n  alias    = "by_region"\n  for_each = toset(["a"])\n  region   = each.key\n}\nresource "aws_eip" "x" {\n  provider = aws.by_region["a"]\n}\n`,
  });
  const found = findingsOf(r, 'shared-module-provider-config');
  expect(found.map((f) => [f.module, f.line])).toEqual([['modules/net', 7]]);
  expect(found[0]?.note).toContain('providers = { aws = aws.by_region[each.key] }');
  // The use of the local aliased configuration is the provider block's finding, not a missing alias.
  expect(findingsOf(r, 'missing-configuration-alias')).toEqual([]);
});

describeWithTerraform('terraform 1.11 reserves for_each in provider blocks', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tfguard-provider-for-each-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  test('it refuses the argument', async () => {
    await writeTree(dir, {
      'main.tf':
        'variable "r" {\n  type    = set(string)\n  default = []\n}\nprovider "aws" {\n  alias    = "x"\n  for_each = var.r\n}\n',
    });
    const r = await runTerraform(['validate', '-no-color'], dir);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/Reserved argument name in provider block/);
  });
});
