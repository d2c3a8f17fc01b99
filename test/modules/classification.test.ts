/**
 * The real-world layouts of docs/classification.md, each a small tree built from the
 * pattern and scanned through the real pipeline: what each directory is, and which findings follow.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { scanPath } from '../../src/scan';
import type { Report } from '../../src/report/types';
import { findingsOf, scanFiles } from '../support/scan';

const kinds = (r: Report): Record<string, string> =>
  Object.fromEntries(r.modules.map((m) => [m.path, `${m.kind}/${m.kindEvidence}`]));
const rules = (r: Report): string[] => r.findings.map((f) => `${f.ruleId} ${f.severity} ${f.file}:${f.line}`);

const VERSIONS_MIN =
  'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 5.0" }\n  }\n}\n';
const VERSIONS_CAPPED =
  'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.0" }\n  }\n}\n';
const RESOURCE = 'resource "aws_s3_bucket" "b" {}\n';
const PROVIDER = 'provider "aws" {\n  region = "eu-west-2"\n}\n';
const lock = (host: string, version = '5.9.0', constraints = '>= 5.0.0'): string =>
  `provider "${host}/hashicorp/aws" {\n  version     = "${version}"\n  constraints = "${constraints}"\n  hashes = [\n    "h1:${'A'.repeat(43)}=",\n  ]\n}\n`;

test('terraform-aws-modules wrappers (source = "../", for_each) are reusable, not roots', async () => {
  const r = await scanFiles({
    'main.tf': VERSIONS_MIN + RESOURCE,
    'modules/sub/main.tf': VERSIONS_MIN + RESOURCE,
    'wrappers/main.tf': `${VERSIONS_MIN}module "wrapper" {\n  source   = "../"\n  for_each = var.items\n}\n`,
    'wrappers/sub/main.tf': `${VERSIONS_MIN}module "wrapper" {\n  source   = "../../modules/sub"\n  for_each = var.items\n}\n`,
    'examples/complete/main.tf': `${VERSIONS_MIN}${PROVIDER}module "this" {\n  source = "../../"\n}\n`,
  });
  expect(kinds(r)).toEqual({
    '.': 'shared/strong',
    'examples/complete': 'example/strong',
    'modules/sub': 'shared/strong',
    wrappers: 'shared/strong',
    'wrappers/sub': 'shared/strong',
  });
  expect(r.modules.find((m) => m.path === 'wrappers')?.kindReason).toMatch(/wrapper/);
  // No root-module-unbounded (the fix would cap a reusable module) and no lock-missing.
  expect(rules(r)).toEqual([]);
  expect(r.summary.roots).toBe(0);
  // The example is still checked for consistency: it has a tree of its own.
  expect(r.roots.map((t) => [t.path, t.kind])).toEqual([['examples/complete', 'example']]);
});

test('examples are checked for consistency, not held to lock files and pinning (unless strict_examples)', async () => {
  const files = {
    'main.tf': VERSIONS_CAPPED.replace('~> 5.0', '>= 5.0') + RESOURCE,
    'examples/basic/main.tf': `${VERSIONS_MIN.replace('>= 5.0', '~> 4.0')}${PROVIDER}module "this" {\n  source = "../../"\n}\n`,
  };
  const r = await scanFiles(files);
  // ~> 4.0 in the example and >= 5.0 in the module cannot both hold: a real inconsistency.
  expect(rules(r)).toEqual(['incompatible-constraints error examples/basic/main.tf:3']);
  const strict = await scanFiles(files, { config: 'strict_examples = true\n' });
  expect(findingsOf(strict, 'lock-missing').map((f) => f.module)).toEqual(['examples/basic']);
});

test('a module library outside modules/: README placeholder source, sibling calls, no backend anywhere', async () => {
  const r = await scanFiles({
    'README.md':
      'Use a module:\n\n```hcl\nmodule "x" {\n  source = "github.com/org/lib//<<Module Name>>?ref=v1"\n}\n```\n',
    'dns/main.tf': VERSIONS_CAPPED + RESOURCE + 'provider "aws" {\n  alias = "peer"\n}\n',
    'vpc/main.tf': VERSIONS_MIN + RESOURCE,
    'terraform/main.tf': `terraform {\n  backend "s3" {}\n}\n${PROVIDER}module "dns" {\n  source = "github.com/org/lib//dns?ref=v1.0.0"\n}\n`,
  });
  expect(kinds(r)).toEqual({ dns: 'shared/strong', terraform: 'root/strong', vpc: 'shared/strong' });
  expect(r.modules.find((m) => m.path === 'dns')?.kindReason).toMatch(/README/);
  // dns is reusable: its upper bound is a finding; its empty aliased block is a proxy, not a config.
  expect(rules(r)).toEqual([
    'shared-module-upper-bound error dns/main.tf:3',
    'lock-missing warning terraform/main.tf:1',
    'required-version-missing notice terraform/main.tf:1',
    'undeclared-provider warning terraform/main.tf:4',
    // The remote call stays unresolved without --remote-modules: said once.
    'module-unresolved notice terraform/main.tf:7',
  ]);
});

test('library modules nothing calls are reusable on weak evidence: notices that say what they assume', async () => {
  const r = await scanFiles({
    'terraform/a/main.tf': `${VERSIONS_MIN}module "b" {\n  source = "../b"\n}\nmodule "c" {\n  source = "../c"\n}\n`,
    'terraform/b/main.tf': VERSIONS_MIN + RESOURCE,
    'terraform/c/main.tf': VERSIONS_MIN + RESOURCE,
    'terraform/d/main.tf': VERSIONS_CAPPED + RESOURCE,
  });
  expect(kinds(r)['terraform/d']).toBe('shared/weak');
  const [f] = findingsOf(r, 'shared-module-upper-bound');
  expect(f).toMatchObject({ severity: 'notice', confidence: 'low', module: 'terraform/d' });
  expect(f?.message).toMatch(
    /\(if "terraform\/d" is a reusable module; tfguard's guess, because: it sits in the module library "terraform"/,
  );
  expect(f?.fix).toBeUndefined();
  // Settled in the settings, the same finding is certain, with its fix.
  const settled = await scanFiles(
    { 'terraform/d/main.tf': VERSIONS_CAPPED + RESOURCE },
    { config: 'shared = ["terraform/*"]\n' },
  );
  expect(findingsOf(settled, 'shared-module-upper-bound')[0]).toMatchObject({
    severity: 'error',
    fix: { replacement: '>= 5.0' },
  });
});

test('a path into .terraform/modules belongs to the installed remote module: a notice, not an error', async () => {
  const r = await scanFiles({
    'main.tf':
      `terraform {\n  backend "s3" {}\n}\n${PROVIDER}` +
      'module "eks" {\n  source  = "terraform-aws-modules/eks/aws"\n  version = "~> 20.0"\n}\n' +
      'module "nodes" {\n  source = "./.terraform/modules/eks/modules/node-group"\n}\n',
    '.terraform.lock.hcl':
      lock('registry.terraform.io') + lock('registry.terraform.io').replace(/aws/g, 'tls'),
  });
  expect(findingsOf(r, 'module-source-missing')).toEqual([]);
  // The registry module itself (line 7, not fetched without --remote-modules) and the path into it.
  expect(findingsOf(r, 'module-unresolved').map((f) => [f.severity, f.line])).toEqual([
    ['notice', 7],
    ['notice', 11],
  ]);
  // tls may be what the installed module needs: not called stale.
  expect(findingsOf(r, 'lock-provider-stale')).toEqual([]);
  expect(r.roots[0]?.remoteModules.map((c) => [c.name, c.installed ?? false])).toEqual([
    ['eks', false],
    ['nodes', true],
  ]);
});

test('Terragrunt: units are roots with their own lock; the source module is reusable; snippets are fragments', async () => {
  const r = await scanFiles({
    'modules/app/main.tf': RESOURCE + 'resource "random_id" "x" {\n  byte_length = 4\n}\n',
    'live/root.hcl':
      'generate "provider" {\n  path      = "provider.tf"\n  if_exists = "overwrite"\n  contents  = file("./common/provider.tf")\n}\n' +
      'remote_state {\n  backend = "s3"\n  config = {}\n}\n',
    'live/common/provider.tf': `terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.0" }\n  }\n}\n${PROVIDER}`,
    'live/prod/app/terragrunt.hcl':
      'terraform {\n  source = "../../../modules//app"\n}\ninclude "root" {\n  path = find_in_parent_folders("root.hcl")\n}\n',
    'live/prod/app/.terraform.lock.hcl': lock('registry.terraform.io', '5.9.0', '~> 5.0'),
  });
  expect(kinds(r)).toEqual({
    'live/common': 'fragment/strong',
    'live/prod/app': 'root/strong',
    'modules/app': 'shared/strong',
  });
  expect(r.modules.find((m) => m.path === 'live/prod/app')).toMatchObject({
    backend: { type: 's3' },
    terragrunt: {
      file: 'live/prod/app/terragrunt.hcl',
      source: '../../../modules//app',
      generated: ['provider.tf'],
    },
  });
  // aws is declared by the generated provider.tf; random is not, and the lock lacks it.
  expect(rules(r)).toEqual([
    'lock-provider-missing error live/prod/app/.terraform.lock.hcl:1',
    'undeclared-provider warning modules/app/main.tf:2',
  ]);
  expect(findingsOf(r, 'lock-missing')).toEqual([]);
});

test('terraform test run-block helpers are test configurations; their providers belong to the root', async () => {
  const r = await scanFiles({
    'main.tf': `terraform {\n  backend "s3" {}\n  required_version = ">= 1.6"\n}\n${VERSIONS_CAPPED}${PROVIDER}${RESOURCE}`,
    '.terraform.lock.hcl':
      lock('registry.terraform.io', '5.9.0', '~> 5.0') +
      'provider "registry.terraform.io/hashicorp/random" {\n  version = "3.6.0"\n  hashes = [\n    "h1:' +
      'B'.repeat(43) +
      '=",\n  ]\n}\n',
    'tests/main.tftest.hcl':
      'run "setup" {\n  module {\n    source = "./tests/setup"\n  }\n}\nrun "main" {}\n',
    'tests/setup/main.tf': 'resource "random_id" "x" {\n  byte_length = 4\n}\n',
  });
  expect(kinds(r)['tests/setup']).toBe('test/strong');
  expect(r.modules.find((m) => m.path === 'tests/setup')?.kindReason).toBe(
    'test helper: run "setup" in tests/main.tftest.hcl',
  );
  expect(r.roots.find((t) => t.path === '.')?.modules).toEqual(['.', 'tests/setup']);
  expect(findingsOf(r, 'lock-provider-stale')).toEqual([]);
  expect(findingsOf(r, 'lock-missing')).toEqual([]);
});

test('deployable roots under modules/ (backend, lock file) stay roots', async () => {
  const r = await scanFiles({
    'provision/modules/rosa/main.tf': `terraform {\n  backend "s3" {}\n}\n${VERSIONS_MIN}${PROVIDER}`,
    'provision/modules/rosa/.terraform.lock.hcl': lock('registry.opentofu.org'),
    'provision/modules/recipe-a/main.tf': `${VERSIONS_MIN}${PROVIDER}${RESOURCE}`,
    'provision/modules/recipe-a/.terraform.lock.hcl': lock('registry.terraform.io'),
  });
  expect(kinds(r)).toEqual({
    'provision/modules/recipe-a': 'root/strong',
    'provision/modules/rosa': 'root/strong',
  });
  // Each root runs under the engine its lock file was written by: no contradicting messages.
  expect(r.roots.map((t) => [t.path, t.engine])).toEqual([
    ['provision/modules/recipe-a', 'terraform'],
    ['provision/modules/rosa', 'opentofu'],
  ]);
  expect(findingsOf(r, 'lock-provider-missing')).toEqual([]);
  expect(findingsOf(r, 'lock-provider-stale')).toEqual([]);
});

test('templates and files linked into roots are fragments, not modules', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-layout-'));
  try {
    const write = async (p: string, text: string): Promise<void> => {
      await fs.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
      await fs.writeFile(path.join(dir, p), text);
    };
    await write('shared-vars/variables.tf', 'variable "region" {\n  type = string\n}\n');
    await write('live/prod/main.tf', `terraform {\n  backend "s3" {}\n}\n${PROVIDER}${RESOURCE}`);
    await fs.symlink('../../shared-vars/variables.tf', path.join(dir, 'live/prod/variables.tf'));
    await write(
      'templates/pipeline/main.tf',
      'module "x" {\n  source = "{{ module_source }}"\n  {% extra %}\n}\n',
    );
    const r = await scanPath(dir);
    expect(kinds(r)).toEqual({
      'live/prod': 'root/strong',
      'shared-vars': 'fragment/strong',
      'templates/pipeline': 'fragment/strong',
    });
    expect(findingsOf(r, 'parse-error').map((f) => [f.severity, f.confidence])).toEqual([['notice', 'low']]);
    expect(findingsOf(r, 'parse-error')[0]?.message).toMatch(/looks like a template/);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('an installed copy present in the archive (.terraform/modules) is read: its providers count, its code is not judged', async () => {
  const r = await scanFiles({
    'main.tf':
      `terraform {\n  backend "s3" {}\n  required_version = ">= 1.6"\n}\n${VERSIONS_CAPPED}${PROVIDER}` +
      'module "eks" {\n  source  = "terraform-aws-modules/eks/aws"\n  version = "~> 20.0"\n}\n' +
      'module "nodes" {\n  source = "./.terraform/modules/eks/modules/node-group"\n}\n',
    '.terraform.lock.hcl': lock('registry.terraform.io', '5.9.0', '~> 5.0, ~> 5.1'),
    // Third-party code with an upper bound and a nested local call: not tfguard's to judge.
    '.terraform/modules/eks/modules/node-group/main.tf': `${VERSIONS_CAPPED.replace('~> 5.0', '~> 5.1')}module "inner" {\n  source = "../inner"\n}\n`,
    '.terraform/modules/eks/modules/inner/main.tf': RESOURCE,
  });
  expect(r.modules.find((m) => m.path === '.terraform/modules/eks/modules/node-group')).toMatchObject({
    kind: 'shared',
    kindReason: 'installed copy of the remote module "eks" (terraform-aws-modules/eks/aws)',
  });
  expect(r.roots[0]?.modules).toEqual([
    '.',
    '.terraform/modules/eks/modules/node-group',
    '.terraform/modules/eks/modules/inner',
  ]);
  // The installed module's constraint joins the root's: the lock records both, so no drift.
  expect(r.roots[0]?.providers).toEqual([
    { source: 'registry.terraform.io/hashicorp/aws', constraints: '~> 5.0, ~> 5.1' },
  ]);
  // Only the registry module itself stays unresolved (no --remote-modules, no modules.json).
  expect(rules(r)).toEqual(['module-unresolved notice main.tf:13']);
});

test('settings: examples/tests/fragments globs decide, and engines globs choose a root engine', async () => {
  const r = await scanFiles(
    {
      'docs/snippet/main.tf': `${PROVIDER}${RESOURCE}`,
      'ci/plan/main.tf': `${PROVIDER}${RESOURCE}`,
      'gen/main.tf': `${PROVIDER}${RESOURCE}`,
      'tofu/main.tf': `terraform {\n  backend "s3" {}\n}\n${VERSIONS_CAPPED}${PROVIDER}`,
      'tofu/.terraform.lock.hcl': lock('registry.opentofu.org', '5.9.0', '~> 5.0'),
    },
    {
      config:
        'examples = ["docs/*"]\ntests = ["ci/**"]\nfragments = ["gen"]\nengines = { "tofu" = "opentofu" }\n',
    },
  );
  expect(kinds(r)).toEqual({
    'ci/plan': 'test/strong',
    'docs/snippet': 'example/strong',
    gen: 'fragment/strong',
    tofu: 'root/strong',
  });
  expect(r.roots.find((t) => t.path === 'tofu')?.engine).toBe('opentofu');
  // Only the tofu root is deployable; its OpenTofu lock matches its OpenTofu requirements.
  expect(r.findings.map((f) => `${f.ruleId} ${f.module}`)).toEqual([
    'undeclared-provider ci/plan',
    'undeclared-provider docs/snippet',
    'required-version-missing tofu',
  ]);
});

test('mixins (cloudposse: *.mixin.tf copied into components) are fragments; their relative calls are not checked in place', async () => {
  const r = await scanFiles({
    'mixins/infra-state.mixin.tf': 'module "iam_roles" {\n  source = "../account-map/modules/iam-roles"\n}\n',
    'components/vpc/main.tf': `${PROVIDER}${RESOURCE}`,
    'components/vpc/infra-state.mixin.tf':
      'module "iam_roles" {\n  source = "../account-map/modules/iam-roles"\n}\n',
    'components/account-map/modules/iam-roles/main.tf': VERSIONS_MIN,
  });
  expect(kinds(r).mixins).toBe('fragment/strong');
  expect(r.modules.find((m) => m.path === 'mixins')?.kindReason).toBe(
    'mixin files, copied into the modules that use them',
  );
  // Copied into components/vpc, the call resolves; left in mixins/ it would not, and is not reported.
  expect(findingsOf(r, 'module-source-missing')).toEqual([]);
});

test('uncalled modules under _modules/ are shared, not guessed roots (no lock-missing)', async () => {
  const r = await scanFiles({
    'live/app/main.tf': `terraform {\n  backend "s3" {}\n}\n${PROVIDER}module "net" {\n  source = "../../_modules/net"\n}\n`,
    '_modules/net/main.tf': VERSIONS_MIN + RESOURCE,
    '_modules/dns/main.tf': VERSIONS_MIN + RESOURCE,
  });
  expect(kinds(r)).toMatchObject({ '_modules/net': 'shared/strong', '_modules/dns': 'shared/strong' });
  expect(r.findings.filter((f) => f.module === '_modules/dns')).toEqual([]);
});

test("a landing zone's stages are not a module library; a library module with a provider is not a root", async () => {
  const stages = await scanFiles({
    '0-bootstrap/main.tf': `${VERSIONS_CAPPED}module "a" {\n  source = "../modules/a"\n}\nmodule "b" {\n  source = "../modules/b"\n}\n`,
    '1-org/main.tf': `${VERSIONS_CAPPED}module "a" {\n  source = "../modules/a"\n}\n`,
    '2-envs/main.tf': `${VERSIONS_CAPPED}module "b" {\n  source = "../modules/b"\n}\n`,
    'modules/a/main.tf': VERSIONS_MIN + RESOURCE,
    'modules/b/main.tf': VERSIONS_MIN + RESOURCE,
  });
  expect(kinds(stages)).toEqual({
    '0-bootstrap': 'root/weak',
    '1-org': 'root/weak',
    '2-envs': 'root/weak',
    'modules/a': 'shared/strong',
    'modules/b': 'shared/strong',
  });
  const library = await scanFiles({
    'a/main.tf': `${VERSIONS_MIN}module "b" {\n  source = "../b"\n}\nmodule "c" {\n  source = "../c"\n}\n`,
    'b/main.tf': VERSIONS_MIN + RESOURCE,
    'c/main.tf': VERSIONS_MIN + RESOURCE,
    'legacy/main.tf': VERSIONS_MIN + PROVIDER + RESOURCE,
  });
  expect(kinds(library)).toMatchObject({ legacy: 'shared/weak', a: 'shared/weak' });
  // The provider block is a finding about a reusable module, but only a guess: a notice.
  expect(rules(library)).toEqual(
    expect.arrayContaining(['shared-module-provider-config notice legacy/main.tf:6']),
  );
});
