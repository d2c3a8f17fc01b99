/**
 * Roots declared by deployment tooling (src/modules/declarations), each format as a small tree
 * scanned through the real pipeline (tar.gz, archive reader, parsers, loader, classification,
 * rules): what each declared directory becomes, the `kindReason` naming the declaration, and a
 * missing declared directory reported at the declaring file and line.
 */
import type { Report } from '../../src/report/types';
import { findingsOf, scanFiles } from '../support/scan';

const kinds = (r: Report): Record<string, string> =>
  Object.fromEntries(r.modules.map((m) => [m.path, `${m.kind}/${m.kindEvidence}`]));
const reason = (r: Report, path: string): string | undefined =>
  r.modules.find((m) => m.path === path)?.kindReason;
const missing = (r: Report): string[] =>
  findingsOf(r, 'declared-root-missing').map((f) => `${f.severity} ${f.file}:${f.line} ${f.message}`);

const MIN =
  'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 5.0" }\n  }\n}\n';
const RESOURCE = 'resource "aws_s3_bucket" "b" {}\n';
/** A directory with resources and nothing that says it is a root: the guess alone would say
 * `shared` under `modules/`, `root` (weak) elsewhere. */
const PLAIN = MIN + RESOURCE;

describe('Atlantis', () => {
  const atlantis = [
    'version: 3',
    'automerge: true',
    'projects:',
    '  - name: net',
    '    dir: modules/net',
    '    workspace: default',
    '  - dir: apps/web',
    '    autoplan:',
    '      when_modified: ["*.tf"]',
    '  - name: gone',
    '    dir: envs/gone',
    '',
  ].join('\n');

  it('makes each project dir a strong root named by file and line; a missing dir is an error there', async () => {
    const r = await scanFiles({
      'atlantis.yaml': atlantis,
      'modules/net/main.tf': PLAIN,
      'apps/web/main.tf': PLAIN,
      'modules/other/main.tf': PLAIN,
    });
    expect(kinds(r)).toEqual({
      'apps/web': 'root/strong',
      'modules/net': 'root/strong',
      'modules/other': 'shared/weak',
    });
    expect(reason(r, 'modules/net')).toBe('declared by Atlantis: atlantis.yaml:5 project "net"');
    expect(reason(r, 'apps/web')).toBe('declared by Atlantis: atlantis.yaml:7 project dir "apps/web"');
    expect(missing(r)).toEqual([
      'error atlantis.yaml:11 Atlantis project "gone" (atlantis.yaml:11) declares directory "envs/gone", which is not in the archive',
    ]);
  });

  it('reports a declared directory without configuration, and Terragrunt units count as configuration', async () => {
    const r = await scanFiles({
      'repo/atlantis.yml': 'projects:\n- dir: docs\n- dir: live/vpc\n',
      'repo/docs/README.md': '# docs\n',
      'repo/live/vpc/terragrunt.hcl': 'terraform {\n  source = "../../modules/vpc"\n}\n',
      'repo/modules/vpc/main.tf': PLAIN,
    });
    expect(kinds(r)['repo/live/vpc']).toBe('root/strong');
    expect(reason(r, 'repo/live/vpc')).toBe(
      'declared by Atlantis: repo/atlantis.yml:3 project dir "live/vpc"',
    );
    expect(kinds(r)['repo/modules/vpc']).toBe('shared/strong');
    expect(missing(r)).toEqual([
      'error repo/atlantis.yml:2 Atlantis project dir "docs" (repo/atlantis.yml:2) declares directory "repo/docs", which holds no Terraform configuration',
    ]);
  });

  it('malformed YAML is a declaration-invalid finding at its line, and the rest is still scanned', async () => {
    const r = await scanFiles({
      'atlantis.yaml': 'version: 3\nprojects:\n  - dir: [a\n  - dir: b\n',
      'b/main.tf': PLAIN,
    });
    const f = findingsOf(r, 'declaration-invalid');
    expect(f.map((x) => `${x.severity} ${x.file}:${x.line}`)).toEqual(['warning atlantis.yaml:4']);
    expect(f[0]?.message).toMatch(
      /^atlantis\.yaml is not valid YAML \(.+\), so the roots it declares were not read$/,
    );
    expect(kinds(r)).toEqual({ b: 'root/weak' });
  });

  it('a wrong shape is a finding too, never a crash', async () => {
    const r = await scanFiles({ 'atlantis.yaml': 'projects: net\n', 'main.tf': PLAIN });
    expect(findingsOf(r, 'declaration-invalid').map((x) => `${x.file}:${x.line} ${x.message}`)).toEqual([
      'atlantis.yaml:1 atlantis.yaml: "projects" is not a list, so the roots it declares were not read',
    ]);
  });
});

describe('Digger', () => {
  it('reads projects and generate_projects blocks (include/exclude, first directory down a path)', async () => {
    const r = await scanFiles({
      'digger.yml': [
        'projects:',
        '  - name: core',
        '    dir: modules/core',
        'generate_projects:',
        '  blocks:',
        '    - include: "environments/**"',
        '      exclude: "environments/dev/local-tests/**"',
        '    - include: "nothing/**"',
        '',
      ].join('\n'),
      'modules/core/main.tf': PLAIN,
      'environments/dev/app/main.tf': PLAIN,
      'environments/dev/app/nested/main.tf': PLAIN,
      'environments/dev/local-tests/x/main.tf': PLAIN,
      'modules/lib/main.tf': PLAIN,
    });
    expect(kinds(r)['modules/core']).toBe('root/strong');
    expect(kinds(r)['environments/dev/app']).toBe('root/strong');
    expect(reason(r, 'environments/dev/app')).toBe(
      'declared by Digger: digger.yml:6 generate_projects include "environments/**"',
    );
    // Not generated: nested under a generated project (traverse_to_nested_projects is false),
    // excluded. Digger deploys only its projects, so these are not taken for roots either.
    for (const dir of ['environments/dev/app/nested', 'environments/dev/local-tests/x']) {
      expect(kinds(r)[dir]).toBe('example/weak');
      expect(reason(r, dir)).toBe(
        'not among the projects (digger.yml lists the 2 directories Digger deploys), and nothing calls it',
      );
    }
    expect(kinds(r)['modules/lib']).toBe('shared/weak');
    expect(missing(r)).toEqual([
      'error digger.yml:8 Digger generate_projects include "nothing/**" (digger.yml:8) matches no directory with Terraform configuration, so it generates no project',
    ]);
  });

  it('a project or generate_projects block with opentofu: true runs OpenTofu; a pulumi: true project is no Terraform root', async () => {
    // ProjectYaml and BlockYaml of https://github.com/diggerhq/digger/blob/develop/libs/digger_config/yaml.go
    const r = await scanFiles({
      'digger.yml': [
        'projects:',
        '  - name: dev',
        '    dir: dev',
        '    opentofu: true',
        '  - name: prod',
        '    dir: prod',
        '  - name: infra',
        '    dir: pulumi/infra',
        '    pulumi: true',
        'generate_projects:',
        '  blocks:',
        '    - include: "tofu/*"',
        '      opentofu: true',
        '',
      ].join('\n'),
      'dev/main.tf': PLAIN,
      'prod/main.tf': PLAIN,
      'tofu/a/main.tf': PLAIN,
      'pulumi/infra/Pulumi.yaml': 'name: infra\nruntime: go\n',
    });
    const engines = Object.fromEntries(r.roots.map((t) => [t.path, t.engine]));
    expect(engines).toEqual({ dev: 'opentofu', prod: 'terraform', 'tofu/a': 'opentofu' });
    // OpenTofu roots resolve implied provider sources on OpenTofu's registry.
    expect(r.roots.find((t) => t.path === 'dev')?.providers.map((p) => p.source)).toEqual([
      'registry.opentofu.org/hashicorp/aws',
    ]);
    const command = (m: string): string | undefined => /\((\w+) init -lockfile=readonly fails\)/.exec(m)?.[1];
    expect(findingsOf(r, 'lock-missing').map((f) => `${f.module}: ${command(f.message)}`)).toEqual([
      'dev: tofu',
      'prod: terraform',
      'tofu/a: tofu',
    ]);
    expect(missing(r)).toEqual([]);
  });
});

describe('Spacelift', () => {
  it('reads .spacelift/config.yml stacks (with stack_defaults) and spacelift_stack resources', async () => {
    const r = await scanFiles({
      '.spacelift/config.yml': [
        'version: "1"',
        'stack_defaults:',
        '  terraform_version: 1.5.7',
        'stacks:',
        '  prod-vpc:',
        '    project_root: modules/vpc',
        '  prod-gone:',
        '    project_root: infra/gone',
        '',
      ].join('\n'),
      'modules/vpc/main.tf': PLAIN,
      'admin/main.tf': [
        'resource "spacelift_stack" "app" {',
        '  name         = "app"',
        '  repository   = "infra"',
        '  branch       = "main"',
        '  project_root = "modules/app"',
        '}',
        'resource "spacelift_stack" "elsewhere" {',
        '  name         = "x"',
        '  repository   = "other"',
        '  branch       = "main"',
        '  project_root = "services/x"',
        '}',
        '',
      ].join('\n'),
      'modules/app/main.tf': PLAIN,
    });
    expect(kinds(r)['modules/vpc']).toBe('root/strong');
    expect(reason(r, 'modules/vpc')).toBe('declared by Spacelift: .spacelift/config.yml:6 stack "prod-vpc"');
    expect(kinds(r)['modules/app']).toBe('root/strong');
    expect(reason(r, 'modules/app')).toBe(
      'declared by Spacelift: admin/main.tf:5 spacelift_stack.app project_root "modules/app"',
    );
    expect(missing(r)).toEqual([
      'error .spacelift/config.yml:8 Spacelift stack "prod-gone" (.spacelift/config.yml:8) declares directory "infra/gone", which is not in the archive',
      'notice admin/main.tf:11 Spacelift spacelift_stack.elsewhere project_root "services/x" (admin/main.tf:11) declares directory "services/x", which is not in the archive (if it names this repository; it may name another one)',
    ]);
  });
});

describe('HCP Terraform', () => {
  it('reads tfe_workspace working_directory', async () => {
    const r = await scanFiles({
      'workspaces/main.tf': [
        'resource "tfe_workspace" "net" {',
        '  name              = "net"',
        '  working_directory = "modules/net"',
        '  vcs_repo {',
        '    identifier = "org/infra"',
        '  }',
        '}',
        '',
      ].join('\n'),
      'modules/net/main.tf': PLAIN,
    });
    expect(kinds(r)['modules/net']).toBe('root/strong');
    expect(reason(r, 'modules/net')).toBe(
      'declared by HCP Terraform: workspaces/main.tf:3 tfe_workspace.net working_directory "modules/net"',
    );
    expect(missing(r)).toEqual([]);
  });
});

describe('Terramate', () => {
  it('a stack {} block in a .tm.hcl or .tm file makes its directory a root', async () => {
    const r = await scanFiles({
      'terramate.tm.hcl': 'terramate {\n  config {\n  }\n}\n',
      'modules/a/stack.tm.hcl': 'stack {\n  name = "a"\n  id   = "1"\n}\n',
      'modules/a/main.tf': PLAIN,
      'modules/b/stack.tm': '\nstack {\n}\n',
      'modules/b/main.tf': PLAIN,
      'modules/c/main.tf': PLAIN,
      // Terramate reads no hidden directory.
      '.tmtriggers/modules/c/stack.tm.hcl': 'stack {\n}\n',
    });
    expect(kinds(r)).toEqual({
      'modules/a': 'root/strong',
      'modules/b': 'root/strong',
      'modules/c': 'shared/weak',
    });
    expect(reason(r, 'modules/a')).toBe('declared by Terramate: modules/a/stack.tm.hcl:1 stack "a"');
    expect(reason(r, 'modules/b')).toBe('declared by Terramate: modules/b/stack.tm:2 stack block');
  });

  it('a file only Terramate reads (globals with different label counts) still declares its stack, and an empty stack is no finding', async () => {
    // The shape of terramate-io/terramate-quickstart-aws config.tm.hcl, which tfguard's parser rejects.
    const r = await scanFiles({
      'a/stack.tm.hcl': 'globals {\n  x = 1\n}\nglobals "a" "b" {\n  y = 2\n}\n\nstack {\n  name = "a"\n}\n',
      'a/main.tf': PLAIN,
      'b/stack.tm.hcl': 'stack {\n  name = "b"\n}\n',
    });
    expect(kinds(r)).toEqual({ a: 'root/strong' });
    expect(reason(r, 'a')).toBe('declared by Terramate: a/stack.tm.hcl:8 stack block');
    expect(r.findings.filter((f) => f.ruleId.startsWith('decla'))).toEqual([]);
  });
});

describe('Atmos', () => {
  const atmos = [
    'base_path: ""',
    'components:',
    '  terraform:',
    '    base_path: "components/terraform"',
    'stacks:',
    '  base_path: "stacks"',
    '  included_paths: ["orgs/**/*"]',
    '  excluded_paths: ["**/_defaults.yaml"]',
    '',
  ].join('\n');

  it('makes the component directories that stack manifests deploy roots; abstract ones are not deployed', async () => {
    const r = await scanFiles({
      'rootfs/usr/local/etc/atmos/atmos.yaml': atmos,
      'stacks/orgs/acme/dev.yaml': [
        'import:',
        '  - catalog/vpc',
        'vars:',
        '  stage: dev',
        'components:',
        '  terraform:',
        '    vpc/defaults:',
        '      metadata:',
        '        type: abstract',
        '    vpc:',
        '      metadata:',
        '        component: vpc',
        '        inherits: [vpc/defaults]',
        '      vars:',
        '        cidr: !terraform.output network cidr',
        '    eks/cluster:',
        '      vars: {}',
        '    dns:',
        '      vars: {}',
        '',
      ].join('\n'),
      'stacks/orgs/acme/_defaults.yaml': 'components:\n  terraform:\n    ignored: {}\n',
      'stacks/catalog/vpc.yaml': 'components:\n  terraform:\n    catalog-only: {}\n',
      'components/terraform/vpc/main.tf': PLAIN,
      'components/terraform/eks/cluster/main.tf': PLAIN,
      'components/terraform/vpc/modules/subnets/main.tf': PLAIN,
      'components/terraform/unused/main.tf': PLAIN,
    });
    expect(kinds(r)['components/terraform/vpc']).toBe('root/strong');
    expect(reason(r, 'components/terraform/vpc')).toBe(
      'declared by Atmos: stacks/orgs/acme/dev.yaml:10 component "vpc"',
    );
    expect(kinds(r)['components/terraform/eks/cluster']).toBe('root/strong');
    expect(reason(r, 'components/terraform/unused')).not.toMatch(/Atmos/);
    expect(missing(r)).toEqual([
      'error stacks/orgs/acme/dev.yaml:18 Atmos component "dns" (stacks/orgs/acme/dev.yaml:18) declares directory "components/terraform/dns", which is not in the archive',
    ]);
  });

  it('a manifest broken by Go templates is reported and skipped', async () => {
    const r = await scanFiles({
      'atmos.yaml': atmos,
      'stacks/orgs/a.yaml': 'components:\n  terraform:\n    {{ .x }}: [\n',
      'components/terraform/vpc/main.tf': PLAIN,
    });
    expect(findingsOf(r, 'declaration-invalid').map((f) => f.file)).toEqual(['stacks/orgs/a.yaml']);
  });
});

describe('env0 and CDKTF', () => {
  it('reads env0 workflow vcs paths (templateName entries declare no directory)', async () => {
    const r = await scanFiles({
      'env0.workflow.yml': [
        'environments:',
        '  vpc:',
        '    name: VPC',
        '    templateName: VPC',
        '  app:',
        '    name: App',
        '    vcs:',
        '      type: terraform',
        '      repository: https://github.com/org/infra',
        '      path: modules/app',
        '',
      ].join('\n'),
      'modules/app/main.tf': PLAIN,
    });
    expect(kinds(r)['modules/app']).toBe('root/strong');
    expect(reason(r, 'modules/app')).toBe('declared by env0: env0.workflow.yml:10 environment "app"');
  });

  it('reads env0_template path and env0_environment without_template_settings path, by type', async () => {
    // https://registry.terraform.io/providers/env0/env0/latest/docs/resources/template
    const r = await scanFiles({
      'env0/main.tf': [
        'resource "env0_template" "vpc" {',
        '  name       = "vpc"',
        '  repository = "https://github.com/org/infra"',
        '  path       = "stacks/vpc"',
        '}',
        'resource "env0_template" "tofu" {',
        '  repository = "https://github.com/org/infra"',
        '  path       = "stacks/tofu"',
        '  type       = "opentofu"',
        '}',
        'resource "env0_template" "chart" {',
        '  path = "charts/web"',
        '  type = "helm"',
        '}',
        'resource "env0_template" "many" {',
        '  for_each = local.templates',
        '  path     = each.value.path',
        '  type     = each.value.type',
        '}',
        'resource "env0_environment" "adhoc" {',
        '  name = "adhoc"',
        '  without_template_settings {',
        '    repository = "https://github.com/org/infra"',
        '    path       = "stacks/adhoc"',
        '    type       = "terraform"',
        '  }',
        '}',
        '',
      ].join('\n'),
      'stacks/vpc/main.tf': PLAIN,
      'stacks/tofu/main.tf': PLAIN,
      'stacks/adhoc/main.tf': PLAIN,
    });
    expect(reason(r, 'stacks/vpc')).toBe(
      'declared by env0: env0/main.tf:4 env0_template.vpc path "stacks/vpc"',
    );
    expect(reason(r, 'stacks/adhoc')).toBe(
      'declared by env0: env0/main.tf:24 env0_environment.adhoc without_template_settings.path "stacks/adhoc"',
    );
    expect(kinds(r)['stacks/tofu']).toBe('root/strong');
    const engines = Object.fromEntries(r.roots.map((t) => [t.path, t.engine]));
    expect(engines['stacks/tofu']).toBe('opentofu');
    expect(engines['stacks/vpc']).toBe('terraform');
    // A Helm chart path is not Terraform: no declared-root-missing for it.
    expect(missing(r)).toEqual([]);
  });

  it('a synthesized CDKTF stack is a root', async () => {
    const r = await scanFiles({
      'cdktf.out/stacks/dev/cdk.tf.json': JSON.stringify({
        terraform: { required_providers: { aws: { source: 'hashicorp/aws', version: '5.9.0' } } },
        resource: { aws_s3_bucket: { b: {} } },
      }),
      'modules/x/main.tf': PLAIN,
    });
    expect(kinds(r)['cdktf.out/stacks/dev']).toBe('root/strong');
    expect(reason(r, 'cdktf.out/stacks/dev')).toBe(
      'declared by CDKTF: cdktf.out/stacks/dev/cdk.tf.json:1 synthesized stack "dev"',
    );
  });
});
