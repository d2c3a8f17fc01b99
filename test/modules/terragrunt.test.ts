/**
 * Terragrunt read statically: each form of unit configuration as a small tree,
 * scanned through the real path (tar.gz → archive reader → HCL parser → loader → rules → report).
 * Function semantics: https://terragrunt.gruntwork.io/docs/reference/built-in-functions/
 */
import { describe, expect, test } from '@jest/globals';
import type { Report } from '../../src/report/types';
import { lockText } from '../support/lock-fixtures';
import { lines } from '../support/rule-table';
import { findingsOf, scanFiles } from '../support/scan';
import { sharedHclParser } from '../../src/scan';

const REG = 'registry.terraform.io';

function aws(version: string): string {
  return lines(
    'terraform {',
    '  required_providers {',
    `    aws = { source = "hashicorp/aws", version = "${version}" }`,
    '  }',
    '}',
    'resource "aws_s3_bucket" "b" {}',
  );
}

function tree(report: Report, root: string): string[] | undefined {
  return report.roots.find((r) => r.path === root)?.modules;
}

function kind(report: Report, path: string): string | undefined {
  return report.modules.find((m) => m.path === path)?.kind;
}

describe('unit sources written as expressions', () => {
  test('"${get_repo_root()}/modules//app" is the module modules/app', async () => {
    const report = await scanFiles({
      'live/prod/app/terragrunt.hcl': lines(
        'terraform {',
        '  source = "${get_repo_root()}/modules//app"',
        '}',
      ),
      'modules/app/main.tf': aws('~> 5.0'),
    });
    expect(tree(report, 'live/prod/app')).toEqual(['live/prod/app', 'modules/app']);
    expect(kind(report, 'modules/app')).toBe('shared');
    expect(findingsOf(report, 'terragrunt-unresolved')).toEqual([]);
    // The unit has a provider but no lock: a root, not a module judged as reusable.
    expect(findingsOf(report, 'lock-missing').map((f) => f.module)).toEqual(['live/prod/app']);
  });

  test('get_terragrunt_dir(), dirname(), find_in_parent_folders() and path_relative_to_include()', async () => {
    const report = await scanFiles({
      'root.hcl': lines('locals {', '  stage_dir = path_relative_to_include()', '}'),
      'live/dev/app/terragrunt.hcl': lines(
        'include "root" {',
        '  path = find_in_parent_folders("root.hcl")',
        '}',
        'locals {',
        '  modules = "${dirname(find_in_parent_folders("root.hcl"))}/modules"',
        '  same    = include.root.locals.stage_dir == "live/dev/app"',
        '}',
        'terraform {',
        '  source = local.same ? "${local.modules}//app" : "${get_terragrunt_dir()}/../../../nowhere"',
        '}',
      ),
      'modules/app/main.tf': aws('~> 5.0'),
    });
    expect(tree(report, 'live/dev/app')).toEqual(['live/dev/app', 'modules/app']);
    expect(findingsOf(report, 'terragrunt-unresolved')).toEqual([]);
  });

  test('an included _envcommon file carries the source (get_parent_terragrunt_dir), beside a bare include', async () => {
    const report = await scanFiles({
      'terragrunt.hcl': lines('remote_state {', '  backend = "s3"', '}'),
      '_envcommon/app.hcl': lines(
        'locals {',
        '  base = "${get_parent_terragrunt_dir("envcommon")}/../modules"',
        '}',
        'terraform {',
        '  source = "${local.base}//app"',
        '}',
      ),
      'live/prod/app/terragrunt.hcl': lines(
        'include {',
        '  path = find_in_parent_folders()',
        '}',
        'include "envcommon" {',
        '  path   = "${dirname(find_in_parent_folders())}/_envcommon/app.hcl"',
        '  expose = true',
        '}',
      ),
      'modules/app/main.tf': aws('~> 5.0'),
    });
    // Before: the bare include beside a named one made the file unreadable and the unit vanished.
    expect(kind(report, 'live/prod/app')).toBe('root');
    expect(tree(report, 'live/prod/app')).toEqual(['live/prod/app', 'modules/app']);
    expect(report.modules.find((m) => m.path === 'live/prod/app')?.backend?.type).toBe('s3');
  });

  test('an include with merge_strategy = "no_merge" adds no blocks, but its locals are read', async () => {
    const report = await scanFiles({
      'common.hcl': lines(
        'locals {',
        '  modules = "${get_repo_root()}/modules"',
        '}',
        'terraform {',
        '  source = "${get_repo_root()}/modules//other"',
        '}',
      ),
      'live/app/terragrunt.hcl': lines(
        'include "common" {',
        '  path           = find_in_parent_folders("common.hcl")',
        '  expose         = true',
        '  merge_strategy = "no_merge"',
        '}',
        'terraform {',
        '  source = "${include.common.locals.modules}//app"',
        '}',
      ),
      'live/db/terragrunt.hcl': lines(
        'include "common" {',
        '  path           = find_in_parent_folders("common.hcl")',
        '  merge_strategy = "no_merge"',
        '}',
      ),
      'modules/app/main.tf': aws('~> 5.0'),
      'modules/other/main.tf': aws('~> 5.0'),
    });
    expect(tree(report, 'live/app')).toEqual(['live/app', 'modules/app']);
    // Without the merge, live/db runs its own directory, not modules/other.
    expect(report.modules.find((m) => m.path === 'live/db')?.terragrunt?.source).toBeNull();
  });

  test('a conditional: the local branch is the source, the remote branch is named in a notice', async () => {
    const report = await scanFiles({
      'live/app/terragrunt.hcl': lines(
        'locals {',
        '  local_modules = get_env("USE_LOCAL_MODULES", "false") == "true"',
        '}',
        'terraform {',
        '  source = local.local_modules ? "../../modules//app" : "git::https://example.com/m.git//app?ref=v1.2.0"',
        '}',
      ),
      'live/app/.terraform.lock.hcl': lockText([{ source: `${REG}/hashicorp/aws`, version: '5.1.0' }]),
      'modules/app/main.tf': aws('~> 5.0'),
    });
    expect(tree(report, 'live/app')).toEqual(['live/app', 'modules/app']);
    const notices = findingsOf(report, 'terragrunt-unresolved');
    expect(notices.map((f) => [f.file, f.line, f.severity])).toEqual([
      ['live/app/terragrunt.hcl', 5, 'notice'],
    ]);
    expect(notices[0]?.message).toContain('follows its local branch "../../modules//app"');
    expect(notices[0]?.message).toContain('git::https://example.com/m.git//app?ref=v1.2.0');
  });

  test('an unknown source is a notice, and the unit lock entries are not called stale', async () => {
    const report = await scanFiles({
      'live/app/terragrunt.hcl': lines('terraform {', '  source = "${get_env("MODULES")}/app"', '}'),
      'live/app/.terraform.lock.hcl': lockText([{ source: `${REG}/hashicorp/aws`, version: '5.1.0' }]),
      'modules/app/main.tf': aws('~> 5.0'),
    });
    const notices = findingsOf(report, 'terragrunt-unresolved');
    expect(notices).toHaveLength(1);
    expect(notices[0]?.message).toContain('get_env("MODULES") reads an environment variable');
    expect(findingsOf(report, 'lock-provider-stale')).toEqual([]);
  });

  test('a remote source whose ref alone is unknown is a remote module', async () => {
    const report = await scanFiles({
      'live/app/terragrunt.hcl': lines(
        'terraform {',
        '  source = "git::https://github.com/acme/infra//aws/api?ref=${get_env("VERSION")}"',
        '}',
      ),
    });
    expect(findingsOf(report, 'terragrunt-unresolved')).toEqual([]);
    expect(findingsOf(report, 'module-unresolved').map((f) => f.module)).toEqual(['live/app']);
  });
});

describe('a root terragrunt.hcl that units include', () => {
  // dimagi/ocs-deploy-terraform-copilot, pingbui/terragrunt-aws-example, env0/acme-demo: the
  // older convention, a top terragrunt.hcl with the units' shared configuration, included through
  // find_in_parent_folders(). Before: a unit of its own, with lock-missing, module-source-missing
  // (its source only means something from a unit) and the generated provider reported again.
  const files = {
    'envs/terragrunt.hcl': lines(
      'generate "provider" {',
      '  path      = "provider.tf"',
      '  if_exists = "overwrite_terragrunt"',
      '  contents  = <<EOF',
      'provider "aws" {',
      '  region = "us-east-1"',
      '}',
      'EOF',
      '}',
      'terraform {',
      '  source = "${get_parent_terragrunt_dir()}/../modules/${basename(path_relative_to_include())}"',
      '}',
    ),
    'envs/prod/app/terragrunt.hcl': lines('include "root" {', '  path = find_in_parent_folders()', '}'),
    'envs/prod/app/.terraform.lock.hcl': lockText([
      { source: `${REG}/hashicorp/aws`, version: '5.40.0', constraints: '~> 5.0' },
    ]),
    'modules/app/main.tf': aws('~> 5.0'),
  };

  test("is the units' shared configuration, not a unit", async () => {
    const report = await scanFiles(files);
    expect(report.roots.map((r) => r.path)).toEqual(['envs/prod/app']);
    expect(kind(report, 'envs')).toBeUndefined();
    expect(tree(report, 'envs/prod/app')).toEqual(['envs/prod/app', 'modules/app']);
    for (const rule of ['lock-missing', 'module-source-missing', 'undeclared-provider']) {
      expect(findingsOf(report, rule)).toEqual([]);
    }
    expect(report.findings.filter((f) => f.module === 'envs')).toEqual([]);
  });

  test('a terragrunt.hcl that no unit includes is still a unit', async () => {
    const report = await scanFiles({
      ...files,
      'envs/prod/app/terragrunt.hcl': lines('terraform {', '  source = "../../../modules//app"', '}'),
    });
    expect(report.roots.map((r) => r.path).sort()).toEqual(['envs', 'envs/prod/app']);
  });
});

describe('one root configuration read for many units', () => {
  // Each unit evaluates the included file's expressions in its own scope: template splits are
  // shared between the units (src/hcl/template.ts), values never are.
  const stages = ['dev', 'prod', 'qa', 'stage', 'test'];
  const files: Record<string, string> = {
    'live/root.hcl': lines(
      'generate "provider" {',
      '  path     = "provider.tf"',
      '  contents = "# ${path_relative_to_include()}\\nprovider \\"aws\\" {}\\n"',
      '}',
      'terraform {',
      '  source = "${get_repo_root()}/modules//${basename(dirname(get_terragrunt_dir()))}"',
      '}',
    ),
  };
  for (const stage of stages) {
    files[`live/${stage}/app/terragrunt.hcl`] = lines(
      'include "root" {',
      '  path = find_in_parent_folders("root.hcl")',
      '}',
    );
    files[`modules/${stage}/main.tf`] = aws('~> 5.0');
  }

  test('the same template gives each unit its own value, read in one batch', async () => {
    const parser = sharedHclParser();
    const before = parser.stats.snippetBatches;
    const report = await scanFiles(files);
    expect(report.roots.map((r) => [r.path, r.modules])).toEqual(
      stages.map((stage) => [`live/${stage}/app`, [`live/${stage}/app`, `modules/${stage}`]]),
    );
    expect(findingsOf(report, 'terragrunt-unresolved')).toEqual([]);
    // The values the parser's fast path leaves to hcl2json (the include paths) of all the units
    // went to its worker together, not one round trip per file.
    expect(parser.stats.snippetBatches - before).toBeLessThanOrEqual(1);
  });
});

describe('generate blocks', () => {
  test('contents with ${…}: static parts read, a finding points at the generate block', async () => {
    const report = await scanFiles({
      'root.hcl': lines(
        'locals {',
        '  aws_version = ">= 5.0"',
        '}',
        'generate "versions" {',
        '  path      = "versions.tf"',
        '  if_exists = "overwrite"',
        '  contents  = <<EOF',
        'provider "aws" {',
        '  region = "${get_env("AWS_REGION")}"',
        '}',
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "${local.aws_version}" }',
        '  }',
        '}',
        'EOF',
        '}',
      ),
      'live/app/terragrunt.hcl': lines(
        'include "root" {',
        '  path = find_in_parent_folders("root.hcl")',
        '}',
        'terraform {',
        '  source = "../../modules//app"',
        '}',
      ),
      'modules/app/main.tf': lines('resource "aws_s3_bucket" "b" {}'),
    });
    const unbounded = findingsOf(report, 'root-module-unbounded');
    expect(unbounded.map((f) => [f.module, f.file, f.line])).toEqual([['live/app', 'root.hcl', 13]]);
    expect(unbounded[0]?.message).toContain('">= 5.0"');
    // Its range is not a span of root.hcl: the fix is advice, without edits.
    expect(unbounded[0]?.fix?.edits).toBeUndefined();
    // Every finding names a file of the archive.
    const files = new Set(['root.hcl', 'live/app/terragrunt.hcl', 'modules/app/main.tf']);
    for (const f of report.findings) if (f.file !== null) expect(files).toContain(f.file);
    // The region is unknown but changes no requirement: no notice.
    expect(findingsOf(report, 'terragrunt-unresolved')).toEqual([]);
  });

  test('run_cmd makes the generated file unknown: lock entries it may explain are not stale', async () => {
    const files = {
      'live/app/terragrunt.hcl': lines(
        'terraform {',
        '  source = "../../modules//app"',
        '}',
        'generate "providers" {',
        '  path     = "providers.tf"',
        '  if_exists = "overwrite"',
        '  contents = <<EOF',
        '${run_cmd("--terragrunt-quiet", "./providers.sh")}',
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '  }',
        '}',
        'EOF',
        '}',
      ),
      'live/app/.terraform.lock.hcl': lockText([
        { source: `${REG}/hashicorp/aws`, version: '5.1.0', constraints: '~> 5.0' },
        { source: `${REG}/hashicorp/random`, version: '3.6.0' },
      ]),
      'modules/app/main.tf': lines('resource "aws_s3_bucket" "b" {}'),
    };
    const report = await scanFiles(files);
    expect(findingsOf(report, 'lock-provider-stale')).toEqual([]);
    const notices = findingsOf(report, 'terragrunt-unresolved');
    expect(notices.map((f) => [f.file, f.line])).toEqual([['live/app/terragrunt.hcl', 4]]);
    expect(notices[0]?.message).toContain('run_cmd("--terragrunt-quiet") runs a command');
    // The static part was still read: aws is declared, bounded, and locked.
    expect(findingsOf(report, 'root-module-unbounded')).toEqual([]);
    expect(findingsOf(report, 'lock-provider-missing')).toEqual([]);

    // The same unit without run_cmd: the random entry is stale (control).
    const without = { ...files };
    without['live/app/terragrunt.hcl'] = (files['live/app/terragrunt.hcl'] as string).replace(
      '${run_cmd("--terragrunt-quiet", "./providers.sh")}\n',
      '',
    );
    const control = await scanFiles(without);
    expect(findingsOf(control, 'lock-provider-stale').map((f) => f.message)).toEqual([
      expect.stringContaining('hashicorp/random'),
    ]);
  });
});

describe('the live example layout: read_terragrunt_config and a provider generated into the source', () => {
  const files = (source: string) => ({
    'root.hcl': lines(
      'locals {',
      '  region_vars = read_terragrunt_config(find_in_parent_folders("region.hcl"))',
      '  aws_region  = local.region_vars.locals.aws_region',
      '}',
      'generate "provider" {',
      '  path      = "provider.tf"',
      '  if_exists = "overwrite_terragrunt"',
      '  contents  = <<EOF',
      'provider "aws" {',
      '  region = "${local.aws_region}"',
      '}',
      'EOF',
      '}',
    ),
    'live/us-east-1/region.hcl': lines('locals {', '  aws_region = "us-east-1"', '}'),
    'live/us-east-1/app/terragrunt.hcl': lines(
      'include "root" {',
      '  path = find_in_parent_folders("root.hcl")',
      '}',
      'terraform {',
      `  source = "${source}"`,
      '}',
    ),
    'modules/app/main.tf': aws('~> 5.0'),
  });

  test('a local source declares what the generated provider block configures', async () => {
    const report = await scanFiles(files('../../../modules//app'));
    expect(findingsOf(report, 'undeclared-provider')).toEqual([]);
    expect(findingsOf(report, 'terragrunt-unresolved')).toEqual([]);
    expect(findingsOf(report, 'lock-missing').map((f) => f.module)).toEqual(['live/us-east-1/app']);
  });

  test('a remote source may declare it: no undeclared-provider on what tfguard did not read', async () => {
    const report = await scanFiles(files('git::git@github.com:acme/modules.git//app?ref=v1.0.0'));
    expect(findingsOf(report, 'undeclared-provider')).toEqual([]);
    expect(findingsOf(report, 'module-unresolved').map((f) => f.module)).toEqual(['live/us-east-1/app']);
  });
});

describe('terragrunt.stack.hcl', () => {
  test('a repository of only stack files gets a notice, not an empty report', async () => {
    const report = await scanFiles({
      'live/prod/terragrunt.stack.hcl': lines(
        'unit "vpc" {',
        '  source = "git::https://github.com/acme/catalog.git//units/vpc?ref=v1.0.0"',
        '  path   = "vpc"',
        '  values = { cidr = "10.0.0.0/16" }',
        '}',
        'stack "services" {',
        '  source = "../../stacks/services"',
        '  path   = "services"',
        '}',
      ),
    });
    expect(report.findings.length).toBeGreaterThan(0);
    const notices = findingsOf(report, 'terragrunt-unresolved');
    expect(notices.map((f) => [f.module, f.file, f.line])).toEqual([
      ['live/prod', 'live/prod/terragrunt.stack.hcl', 1],
    ]);
    expect(notices[0]?.message).toContain('unit "vpc"');
    expect(notices[0]?.message).toContain('stack "services"');
    expect(notices[0]?.message).toContain('live/prod/.terragrunt-stack/');
  });

  test('a catalog unit that reads values.* is a template, not a root', async () => {
    const report = await scanFiles({
      'catalog/units/app/terragrunt.hcl': lines(
        'terraform {',
        '  source = "../../modules//app"',
        '}',
        'inputs = {',
        '  name = values.name',
        '}',
      ),
      'catalog/modules/app/main.tf': aws('>= 5.0'),
      'live/terragrunt.stack.hcl': lines(
        'unit "app" {',
        '  source = "../catalog/units/app"',
        '  path = "app"',
        '}',
      ),
    });
    expect(report.roots.map((r) => r.path)).not.toContain('catalog/units/app');
    expect(findingsOf(report, 'lock-missing')).toEqual([]);
    expect(findingsOf(report, 'terragrunt-unresolved').map((f) => f.file)).toEqual([
      'catalog/units/app/terragrunt.hcl',
      'live/terragrunt.stack.hcl',
    ]);
  });
});

describe('policy: a module only units run is their configuration', () => {
  const unit = (src: string, gen?: string): string =>
    lines(
      'terraform {',
      `  source = "${src}"`,
      '}',
      ...(gen === undefined
        ? []
        : [
            'generate "versions" {',
            '  path      = "versions.tf"',
            '  if_exists = "overwrite"',
            '  contents  = <<EOF',
            'terraform {',
            '  required_providers {',
            `    aws = { source = "hashicorp/aws", version = "${gen}" }`,
            '  }',
            '}',
            'EOF',
            '}',
          ]),
    );

  test("its ~> is the units' bound: no shared-module rule, no root finding", async () => {
    const report = await scanFiles({
      'live/a/terragrunt.hcl': unit('../../modules//app'),
      'live/b/terragrunt.hcl': unit('../../modules//app'),
      'modules/app/main.tf': aws('~> 5.0') + lines('provider "aws" {', '  region = "eu-west-1"', '}'),
    });
    expect(report.modules.find((m) => m.path === 'modules/app')?.unitSourceOf).toEqual(['live/a', 'live/b']);
    expect(findingsOf(report, 'shared-module-upper-bound')).toEqual([]);
    expect(findingsOf(report, 'shared-module-provider-config')).toEqual([]);
    expect(findingsOf(report, 'root-module-unbounded')).toEqual([]);
  });

  test('unbounded in the module and in the generated files: one finding at the module, naming the units', async () => {
    const report = await scanFiles({
      'live/a/terragrunt.hcl': unit('../../modules//app', '>= 5.0'),
      'live/b/terragrunt.hcl': unit('../../modules//app'),
      'live/c/terragrunt.hcl': unit('../../modules//app', '~> 5.1'),
      'modules/app/main.tf': aws('>= 5.0'),
    });
    const found = findingsOf(report, 'root-module-unbounded');
    expect(found.map((f) => [f.module, f.file, f.line])).toEqual([['modules/app', 'modules/app/main.tf', 3]]);
    expect(found[0]?.message).toContain('Terragrunt units live/a, live/b');
    expect(found[0]?.message).not.toContain('live/c');
    expect(found[0]?.fix?.replacement).toBe('~> 5.0');
  });

  test("bounded by every unit's generated files: nothing to report", async () => {
    const report = await scanFiles({
      'live/a/terragrunt.hcl': unit('../../modules//app', '~> 5.1'),
      'modules/app/main.tf': aws('>= 5.0'),
    });
    expect(findingsOf(report, 'root-module-unbounded')).toEqual([]);
  });

  test('a module that module blocks call is shared, whoever else runs it', async () => {
    const report = await scanFiles({
      'live/a/terragrunt.hcl': unit('../../modules//app'),
      'stacks/net/main.tf': lines('module "app" {', '  source = "../../modules/app"', '}'),
      'modules/app/main.tf': aws('~> 5.0'),
    });
    expect(report.modules.find((m) => m.path === 'modules/app')?.unitSourceOf).toBeUndefined();
    expect(findingsOf(report, 'shared-module-upper-bound').map((f) => f.module)).toEqual(['modules/app']);
  });
});
