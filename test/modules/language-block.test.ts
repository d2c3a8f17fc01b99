/**
 * Issue 21, item 7: the `language` block.
 *
 * It exists in one released tool: OpenTofu 1.12 added a top-level block
 * `language { compatible_with { opentofu = ">= 1.12" } }` (CHANGELOG v1.12 "A new configuration block
 * type `language`", opentofu/opentofu#3300; commit 551579f5eb; internal/configs/language.go and
 * website/docs/language/settings/index.mdx at v1.12.6). OpenTofu checks the `opentofu` constraint like
 * `required_version` and ignores anything else in `compatible_with`. No Terraform release has it:
 * Terraform's `terraform` block has only a `language` *argument* (`TF2021`), and a top-level `language`
 * block is "Unsupported block type" (terraform 1.11, checked below; hashicorp/terraform
 * internal/configs/parser_config.go at v1.17.0-alpha20260812 has no such block either). So a module
 * with one is OpenTofu's, and its constraint is an OpenTofu version constraint.
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

const LANGUAGE = ['language {', '  compatible_with {', '    opentofu = ">= 1.12"', '  }', '}', ''].join('\n');
const ROOT = [
  'terraform {',
  '  backend "s3" {}',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
  '  }',
  '}',
  'resource "aws_vpc" "this" {}',
  '',
].join('\n');

test.each<[string, Record<string, string>]>([
  ['in main.tf', { 'main.tf': ROOT, 'language.tf': LANGUAGE }],
  ['in versions.tofu', { 'main.tf': ROOT, 'versions.tofu': LANGUAGE }],
  [
    'in JSON',
    {
      'main.tf': ROOT,
      'language.tf.json': JSON.stringify({
        language: { compatible_with: { opentofu: '>= 1.12', other: 'x' } },
      }),
    },
  ],
])('a language block %s parses, is not reported, and constrains OpenTofu', async (_name, files) => {
  const r = await scanFiles(files);
  expect(findingsOf(r, 'parse-error')).toEqual([]);
  expect(r.findings.map((f) => f.message).join('\n')).not.toMatch(/language/);
  expect(r.roots.map((t) => [t.path, t.engine])).toEqual([['.', 'opentofu']]);
  const root = r.modules.find((m) => m.path === '.');
  expect(root?.requiredVersion).toEqual(['>= 1.12']);
  // OpenTofu reads compatible_with.opentofu as its version constraint: nothing is missing.
  expect(findingsOf(r, 'required-version-missing')).toEqual([]);
});

test('without it, the same root has no version constraint (control)', async () => {
  const r = await scanFiles({ 'main.tf': ROOT });
  expect(findingsOf(r, 'required-version-missing').map((f) => f.module)).toEqual(['.']);
  expect(r.roots.map((t) => t.engine)).toEqual(['terraform']);
});

test('a language block without compatible_with.opentofu constrains nothing, but is still OpenTofu', async () => {
  const r = await scanFiles({
    'main.tf': ROOT,
    'language.tf': 'language {\n  compatible_with {\n    othertool = ">= 2"\n  }\n}\n',
  });
  expect(r.roots.map((t) => t.engine)).toEqual(['opentofu']);
  expect(findingsOf(r, 'required-version-missing').map((f) => f.message)).toEqual([
    expect.stringContaining('any OpenTofu version may run it'),
  ]);
});

describeWithTerraform('terraform 1.11 has no language block', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tfguard-language-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  test('it refuses the block, so a module with one is not Terraform configuration', async () => {
    await writeTree(dir, { 'main.tf': ROOT.replace('  backend "s3" {}\n', ''), 'language.tf': LANGUAGE });
    const r = await runTerraform(['validate', '-no-color'], dir);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/Unsupported block type[\s\S]*Blocks of type "language" are not expected here/);
  });
});
