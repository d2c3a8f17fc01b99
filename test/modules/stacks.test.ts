/**
 * Terraform Stacks as a first-class shape (src/modules/declarations/stacks.ts), from HashiCorp's
 * documentation: the component configuration of
 * https://developer.hashicorp.com/terraform/language/stacks/create/declare-providers
 * (`required_providers` at the top level, `provider "aws" "this" { config { … } }`) and
 * https://developer.hashicorp.com/terraform/language/block/stack/tfcomponent/component
 * (`component "…" { source, inputs, providers }`), the deployment configuration of
 * https://developer.hashicorp.com/terraform/language/files/stack, and the lock file
 * `terraform stacks providers-lock` writes beside them
 * (https://developer.hashicorp.com/terraform/cli/commands/stacks/providers-lock). Terraform 1.11,
 * the oracle installed here, has no Stacks support, so these trees follow the documentation.
 */
import type { Report } from '../../src/report/types';
import { findingsOf, scanFiles } from '../support/scan';

const kinds = (r: Report): Record<string, string> =>
  Object.fromEntries(r.modules.map((m) => [m.path, `${m.kind}/${m.kindEvidence}`]));
const rules = (r: Report): string[] =>
  r.findings.map((f) => `${f.ruleId} ${f.severity} ${f.file}:${f.line}`).sort();

const COMPONENTS = [
  'required_providers {',
  '  aws = {',
  '    source  = "hashicorp/aws"',
  '    version = "~> 5.7.0"',
  '  }',
  '  random = {',
  '    source  = "hashicorp/random"',
  '    version = "~> 3.5.1"',
  '  }',
  '}',
  '',
  'provider "aws" "this" {',
  '  config {',
  '    region = var.region',
  '    assume_role_with_web_identity {',
  '      role_arn           = var.role_arn',
  '      web_identity_token = var.identity_token',
  '    }',
  '  }',
  '}',
  '',
  'provider "random" "this" {}',
  '',
  'variable "region" {',
  '  type = string',
  '}',
  'variable "role_arn" {',
  '  type = string',
  '}',
  'variable "identity_token" {',
  '  type      = string',
  '  ephemeral = true',
  '}',
  '',
  'component "s3" {',
  '  source = "./s3"',
  '  inputs = {',
  '    region = var.region',
  '  }',
  '  providers = {',
  '    aws    = provider.aws.this',
  '    random = provider.random.this',
  '  }',
  '}',
  '',
].join('\n');

const DEPLOYMENTS = [
  'identity_token "aws" {',
  '  audience = ["aws.workload.identity"]',
  '}',
  'deployment "production" {',
  '  inputs = {',
  '    region         = "us-west-1"',
  '    role_arn       = "arn:aws:iam::123456789012:role/stacks"',
  '    identity_token = identity_token.aws.jwt',
  '  }',
  '}',
  '',
].join('\n');

/** The component's module: minimum versions only, no provider blocks (a Stack passes them in). */
const S3 = [
  'terraform {',
  '  required_providers {',
  '    aws    = { source = "hashicorp/aws", version = ">= 5.0" }',
  '    random = { source = "hashicorp/random", version = ">= 3.0" }',
  '  }',
  '}',
  'resource "random_pet" "name" {}',
  'resource "aws_s3_bucket" "b" {',
  '  bucket = random_pet.name.id',
  '}',
  '',
].join('\n');

const entry = (name: string, version: string, constraints: string): string =>
  `provider "registry.terraform.io/hashicorp/${name}" {\n  version     = "${version}"\n  constraints = "${constraints}"\n  hashes = [\n    "h1:${'A'.repeat(43)}=",\n  ]\n}\n`;
const LOCK = entry('aws', '5.7.0', '>= 5.0.0, ~> 5.7.0') + entry('random', '3.5.1', '>= 3.0.0, ~> 3.5.1');

describe('a Terraform Stack', () => {
  it('is a root; its component sources are modules it runs; its lock file is verified', async () => {
    const r = await scanFiles({
      'stack/components.tfcomponent.hcl': COMPONENTS,
      'stack/deployments.tfdeploy.hcl': DEPLOYMENTS,
      'stack/.terraform.lock.hcl': LOCK,
      'stack/s3/main.tf': S3,
    });
    expect(kinds(r)).toEqual({ stack: 'root/strong', 'stack/s3': 'shared/strong' });
    const stack = r.modules.find((m) => m.path === 'stack');
    expect(stack?.kindReason).toBe(
      'declared by Terraform Stacks: stack/components.tfcomponent.hcl:35 Stack component configuration (1 component)',
    );
    expect(r.modules.find((m) => m.path === 'stack/s3')?.kindReason).toBe(
      'called by module "stack" (module.s3)',
    );
    // The Stack's tree: its own requirements and the component's, locked by its lock file.
    const tree = r.roots.find((t) => t.path === 'stack');
    expect(tree?.modules).toEqual(['stack', 'stack/s3']);
    expect(rules(r)).toEqual([]);
  });

  it('its lock file as `terraform stacks providers lock` writes it: no constraints, extra entries', async () => {
    // The shape of HashiCorp's learn-terraform-stacks-deploy-gcp lock file: no `constraints`, and
    // entries (hashicorp/archive) that no component requires.
    const bare = (name: string, version: string): string =>
      `provider "registry.terraform.io/hashicorp/${name}" {\n  version = "${version}"\n  hashes = [\n    "h1:${'A'.repeat(43)}=",\n  ]\n}\n`;
    const r = await scanFiles({
      'stack/components.tfcomponent.hcl': COMPONENTS,
      'stack/.terraform.lock.hcl': bare('archive', '2.7.1') + bare('aws', '5.7.0') + bare('random', '3.5.1'),
      'stack/s3/main.tf': S3,
    });
    expect(rules(r)).toEqual([]);
  });

  it('its lock file must hold what the components require, at versions its constraints allow', async () => {
    const r = await scanFiles({
      'stack/components.tfcomponent.hcl': COMPONENTS,
      'stack/deployments.tfdeploy.hcl': DEPLOYMENTS,
      'stack/.terraform.lock.hcl': entry('aws', '5.8.0', '>= 5.0.0, ~> 5.7.0'),
      'stack/s3/main.tf': S3,
    });
    const missing = findingsOf(r, 'lock-provider-missing');
    expect(missing.map((f) => [f.module, f.file, f.message.includes('hashicorp/random')])).toEqual([
      ['stack', 'stack/.terraform.lock.hcl', true],
    ]);
    const version = findingsOf(r, 'lock-version-mismatch');
    expect(version.map((f) => [f.module, f.message.includes('5.8.0')])).toEqual([['stack', true]]);
  });

  it('without a lock file gets lock-missing, and its unbounded requirement is reported at the component file', async () => {
    const r = await scanFiles({
      'stack/components.tfcomponent.hcl': COMPONENTS.replace('"~> 3.5.1"', '">= 3.5.1"'),
      'stack/s3/main.tf': S3,
    });
    expect(rules(r)).toEqual([
      'lock-missing warning stack/components.tfcomponent.hcl:1',
      'root-module-unbounded error stack/components.tfcomponent.hcl:8',
    ]);
  });

  it('a component module with provider blocks is a shared module that must not configure them', async () => {
    const r = await scanFiles({
      'components.tfcomponent.hcl': COMPONENTS,
      '.terraform.lock.hcl': LOCK,
      's3/main.tf': `${S3}provider "aws" {\n  region = "us-east-1"\n}\n`,
    });
    expect(kinds(r)).toEqual({ '.': 'root/strong', s3: 'shared/strong' });
    expect(rules(r)).toEqual(['shared-module-provider-config error s3/main.tf:11']);
  });

  it('a component file that does not parse is a parse-error, and the rest of the Stack is read', async () => {
    const r = await scanFiles({
      'stack/components.tfcomponent.hcl': COMPONENTS,
      'stack/broken.tfcomponent.hcl': 'component "x" {\n',
      'stack/.terraform.lock.hcl': LOCK,
      'stack/s3/main.tf': S3,
    });
    expect(kinds(r)).toEqual({ stack: 'root/strong', 'stack/s3': 'shared/strong' });
    expect(rules(r)).toEqual(['parse-error error stack/broken.tfcomponent.hcl:1']);
  });
});

describe('a Stack of public-beta files only (*.tfstack.hcl)', () => {
  it('its components are modules the Stack calls, not guessed roots', async () => {
    // justinclayton/learn-tf-stacks-concepts's layout: components.tfstack.hcl naming ./hello-world.
    const r = await scanFiles({
      'components.tfstack.hcl': ['component "hello" {', '  source = "./hello-world"', '}', ''].join('\n'),
      'hello-world/main.tf': [
        'terraform {',
        '  required_providers {',
        '    random = { source = "hashicorp/random", version = ">= 3.0" }',
        '  }',
        '}',
        'resource "random_string" "s" {',
        '  length = 8',
        '}',
        '',
      ].join('\n'),
    });
    expect(kinds(r)).toEqual({ 'hello-world': 'shared/strong' });
    expect(r.modules[0]?.kindReason).toBe(
      'called by component "hello" of the Terraform Stacks beta file components.tfstack.hcl (components.tfstack.hcl:2)',
    );
    expect(rules(r)).toEqual(['stack-legacy-file error components.tfstack.hcl:1']);
  });
});
