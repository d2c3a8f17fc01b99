/**
 * Issue 21, item 7: which engine runs a root whose provider sources name `registry.opentofu.org`.
 *
 * A source with an explicit host keeps it under either engine (Terraform's and OpenTofu's
 * `ParseProviderSourceString`), so `registry.opentofu.org/hashicorp/aws` is a provider of OpenTofu's
 * registry; a two-part `hashicorp/aws` means the engine's default registry (registry.terraform.io
 * under Terraform, registry.opentofu.org under OpenTofu: opentofu/opentofu internal/addrs/provider.go,
 * `DefaultProviderRegistryHost`). Read as Terraform, such a tree requires two different providers
 * and every lock and constraint rule speaks of Terraform; read as OpenTofu, it requires one.
 */
import { afterAll, expect, test } from '@jest/globals';
import { findingsOf, scanFiles } from '../support/scan';
import { closeParser } from '../support/modules';

afterAll(closeParser);

const ROOT_TOFU_HOST = [
  'terraform {',
  '  required_providers {',
  '    aws = { source = "registry.opentofu.org/hashicorp/aws", version = "~> 5.0" }',
  '  }',
  '}',
  'module "net" {',
  '  source = "./modules/net"',
  '}',
  '',
].join('\n');
const SHARED_TWO_PART = [
  'terraform {',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
  '  }',
  '}',
  'resource "aws_vpc" "this" {}',
  '',
].join('\n');

test('sources that name registry.opentofu.org make the root (and the report) OpenTofu', async () => {
  const r = await scanFiles({ 'main.tf': ROOT_TOFU_HOST, 'modules/net/main.tf': SHARED_TWO_PART });
  expect(r.engine).toBe('opentofu');
  expect(r.roots.map((t) => [t.path, t.engine])).toEqual([['.', 'opentofu']]);
  // One provider, not registry.opentofu.org/hashicorp/aws plus registry.terraform.io/hashicorp/aws.
  expect(r.roots[0]?.providers).toEqual([
    { source: 'registry.opentofu.org/hashicorp/aws', constraints: '>= 5.0.0, ~> 5.0' },
  ]);
  const missing = findingsOf(r, 'lock-missing');
  expect(missing).toHaveLength(1);
  expect(missing[0]?.note).toMatch(/tofu init/);
  expect(r.findings.map((f) => f.message).join('\n')).not.toMatch(/registry\.terraform\.io|Terraform/);
});

test('a tree that also names registry.terraform.io explicitly stays with the archive engine', async () => {
  const r = await scanFiles({
    'main.tf': ROOT_TOFU_HOST.replace(
      '  }\n}',
      '    null = { source = "registry.terraform.io/hashicorp/null", version = "~> 3.0" }\n  }\n}',
    ),
    'modules/net/main.tf': SHARED_TWO_PART,
  });
  expect(r.roots.map((t) => t.engine)).toEqual(['terraform']);
  expect(r.engine).toBe('terraform');
});

test('the lock file still decides first, and settings before it', async () => {
  const lock = [
    'provider "registry.terraform.io/hashicorp/aws" {',
    '  version     = "5.9.0"',
    '  constraints = "~> 5.0"',
    '  hashes = [',
    '    "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",',
    '  ]',
    '}',
    '',
  ].join('\n');
  const r = await scanFiles({ 'main.tf': ROOT_TOFU_HOST, '.terraform.lock.hcl': lock });
  expect(r.roots.map((t) => t.engine)).toEqual(['terraform']);
  const explicit = await scanFiles(
    { 'main.tf': ROOT_TOFU_HOST, 'modules/net/main.tf': SHARED_TWO_PART },
    { config: 'engine = "terraform"\n' },
  );
  expect(explicit.roots.map((t) => t.engine)).toEqual(['terraform']);
});
