/**
 * Module `source` and `version` written as expressions, evaluated as each engine
 * does during init, through the real pipeline (tar.gz, the HCL parser, the loader, remote resolution
 * against a registry on 127.0.0.1):
 *
 * - Terraform 1.15 reads variables declared `const = true` and locals there (the release notes:
 *   https://danielmschmidt.de/posts/2026-04-29-what-s-new-in-terraform-1-15, "Use variables (with
 *   const = true set) in the module source and version fields"; hashicorp/terraform
 *   internal/command/testdata/dynamic-module-sources); a variable without it is an error. Terraform
 *   1.11, the binary here, rejects every expression there (checked below), so the 1.15 behaviour is
 *   tested from the language's sources.
 * - OpenTofu 1.8 evaluates variables and locals early in module sources and versions
 *   (opentofu/opentofu website/docs/language/modules/sources.mdx, "Support for Variable and Local
 *   Evaluation"; rfc/20240513-static-evaluation.md); since 1.12 a variable declared `const = false`
 *   may not be used there ("Unable to use variable in static context", internal/configs/
 *   static_scope.go, opentofu/opentofu#3946; website/docs/language/values/variables.mdx).
 *
 * What tfguard cannot evaluate is a hedged `module-unresolved` notice saying what and why, never an
 * error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Report } from '../../src/report/types';
import { fakeH1, lockText } from '../support/lock-fixtures';
import { describeWithTerraform } from '../support/external';
import { startRegistry } from '../support/registry-server';
import type { RegistryServer } from '../support/registry-server';
import { findingsOf, scanFiles } from '../support/scan';
import { runTerraform, writeTree } from '../support/terraform';

let registry: RegistryServer;

beforeAll(async () => {
  registry = await startRegistry({
    modules: [
      {
        namespace: 'acme',
        name: 'kms',
        system: 'aws',
        versions: [
          {
            version: '2.2.1',
            root: { providers: [{ name: 'random', source: 'hashicorp/random', version: '>= 3.1' }] },
          },
          { version: '3.0.0', root: { providers: [] } },
        ],
      },
    ],
  });
});

afterAll(async () => {
  await registry.close();
});

function scan(files: Record<string, string>, remote = true): Promise<Report> {
  return scanFiles(files, {
    ...(remote ? { remoteModules: true } : {}),
    configText: {
      name: 'ops.hcl',
      text: `registry_hosts = {\n  "registry.terraform.io" = "${registry.url}"\n  "registry.opentofu.org" = "${registry.url}"\n}\n`,
    },
  });
}

const calls = (r: Report, module = '.') =>
  r.modules
    .find((m) => m.path === module)
    ?.moduleCalls.map((c) => [c.name, c.source, c.sourceKind, c.version, c.target]);
const tree = (r: Report) => r.roots[0]?.remoteModuleTree?.map((m) => [m.key, m.resolvedVersion, m.origin]);
const unresolved = (r: Report) =>
  findingsOf(r, 'module-unresolved').map((f) => [f.severity, f.line, f.message]);

const KMS_CALL = 'module "kms" {\n  source  = var.kms_source\n  version = local.kms_version\n}\n';

describe('Terraform (1.15): const variables and locals in module source and version', () => {
  it('evaluates a const variable and a local, and resolves the module they name', async () => {
    const r = await scan({
      'main.tf':
        'variable "kms_source" {\n  type    = string\n  const   = true\n  default = "acme/kms/aws"\n}\n' +
        'locals {\n  kms_version = "~> 2.2"\n}\n' +
        KMS_CALL,
    });
    expect(r.engine).toBe('terraform');
    expect(calls(r)).toEqual([['kms', 'acme/kms/aws', 'registry', '~> 2.2', null]]);
    expect(tree(r)).toEqual([['kms', '2.2.1', 'metadata']]);
    expect(r.roots[0]?.providers.map((p) => [p.source, p.constraints])).toEqual([
      ['registry.terraform.io/hashicorp/random', '>= 3.1.0'],
    ]);
    expect(unresolved(r)).toEqual([]);
  });

  it('evaluates a local source into the archive ("./${var.word}-world")', async () => {
    const r = await scan({
      'main.tf':
        'variable "word" {\n  const   = true\n  default = "hello"\n}\n' +
        'module "word" {\n  source = "./${var.word}-world"\n}\n',
      'hello-world/main.tf':
        'terraform {\n  required_providers {\n    tls = { source = "hashicorp/tls", version = "~> 4.0" }\n  }\n}\n',
    });
    expect(calls(r)).toEqual([['word', './hello-world', 'local', null, 'hello-world']]);
    expect(r.roots.map((t) => [t.path, t.modules])).toEqual([['.', ['.', 'hello-world']]]);
    expect(findingsOf(r, 'module-source-missing')).toEqual([]);
  });

  it('a variable without const = true is not evaluated: a notice that says so, never an error', async () => {
    registry.requests.length = 0;
    const r = await scan({
      'main.tf':
        'variable "kms_source" {\n  default = "acme/kms/aws"\n}\n' +
        'locals {\n  kms_version = "~> 2.2"\n}\n' +
        KMS_CALL,
    });
    expect(calls(r)).toEqual([['kms', '${var.kms_source}', 'remote', '~> 2.2', null]]);
    expect(unresolved(r)).toEqual([
      [
        'notice',
        7,
        'remote module "kms" (source "${var.kms_source}", version "~> 2.2") was not resolved: its source is an ' +
          'expression that tfguard could not evaluate: ${var.kms_source} (var.kms_source is not declared with ' +
          'const = true; Terraform evaluates only const variables and locals during init); its provider ' +
          'requirements (and those of the modules it calls) were not checked, and lock entries it may need are ' +
          'not called stale',
      ],
    ]);
    expect(r.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(registry.requests.filter((q) => q.includes('/kms/'))).toEqual([]);
  });

  it('a const variable without a default (set by -var or .tfvars) is unknown: the notice says which', async () => {
    registry.requests.length = 0;
    const r = await scan({
      'main.tf':
        'variable "kms_source" {\n  const = true\n  default = "acme/kms/aws"\n}\n' +
        'variable "kms_version" {\n  const = true\n}\n' +
        'module "kms" {\n  source  = var.kms_source\n  version = var.kms_version\n}\n',
    });
    expect(calls(r)).toEqual([['kms', 'acme/kms/aws', 'registry', '${var.kms_version}', null]]);
    const [notice] = unresolved(r);
    expect(notice?.[0]).toBe('notice');
    expect(notice?.[2]).toContain(
      'its version is an expression that tfguard could not evaluate: ${var.kms_version} (var.kms_version has no ' +
        'default (its value comes from -var, a .tfvars file or the calling module))',
    );
    expect(findingsOf(r, 'module-version-style')).toEqual([]);
    expect(r.findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});

describe('OpenTofu (1.8 early evaluation, 1.12 const = false)', () => {
  it('evaluates any variable with a default and locals in .tofu files', async () => {
    const r = await scan({
      'main.tofu':
        'variable "kms_source" {\n  default = "acme/kms/aws"\n}\n' +
        'locals {\n  kms_version = "~> 2.2"\n}\n' +
        KMS_CALL,
    });
    expect(r.engine).toBe('opentofu');
    expect(calls(r)).toEqual([['kms', 'acme/kms/aws', 'registry', '~> 2.2', null]]);
    expect(tree(r)).toEqual([['kms', '2.2.1', 'metadata']]);
    expect(unresolved(r)).toEqual([]);
  });

  it('a variable declared const = false is refused there: a notice naming it', async () => {
    const r = await scan({
      'main.tofu':
        'variable "kms_source" {\n  const   = false\n  default = "acme/kms/aws"\n}\n' +
        'locals {\n  kms_version = "~> 2.2"\n}\n' +
        KMS_CALL,
    });
    expect(calls(r)).toEqual([['kms', '${var.kms_source}', 'remote', '~> 2.2', null]]);
    expect(unresolved(r).map(([s, , m]) => [s, m])).toEqual([
      [
        'notice',
        expect.stringContaining(
          'its source is an expression that tfguard could not evaluate: ${var.kms_source} (var.kms_source is ' +
            'declared with const = false, which OpenTofu (1.12+) does not evaluate during init)',
        ),
      ],
    ]);
  });

  it('each root by its own engine: the .tofu root evaluates, the .tf root beside it does not', async () => {
    const body =
      'variable "kms_source" {\n  default = "acme/kms/aws"\n}\n' +
      'locals {\n  kms_version = "~> 2.2"\n}\n' +
      KMS_CALL;
    const r = await scan({
      'live/tf/main.tf': body + 'terraform {\n  backend "s3" {}\n}\n',
      // Its lock file records registry.terraform.io: a Terraform root (docs/classification.md).
      'live/tf/.terraform.lock.hcl': lockText([
        { source: 'registry.terraform.io/hashicorp/random', version: '3.6.0', hashes: [fakeH1('random')] },
      ]),
      'live/tofu/main.tofu': body + 'terraform {\n  backend "s3" {}\n}\n',
    });
    expect(r.roots.map((t) => [t.path, t.engine])).toEqual([
      ['live/tf', 'terraform'],
      ['live/tofu', 'opentofu'],
    ]);
    expect(calls(r, 'live/tf')).toEqual([['kms', '${var.kms_source}', 'remote', '~> 2.2', null]]);
    expect(calls(r, 'live/tofu')).toEqual([['kms', 'acme/kms/aws', 'registry', '~> 2.2', null]]);
    expect(
      r.roots.find((t) => t.path === 'live/tofu')?.remoteModuleTree?.map((m) => m.resolvedVersion),
    ).toEqual(['2.2.1']);
  });

  it('the same files read by Terraform (.tf) need const = true', async () => {
    const r = await scan({
      'main.tf':
        'variable "kms_source" {\n  default = "acme/kms/aws"\n}\n' +
        'locals {\n  kms_version = "~> 2.2"\n}\n' +
        KMS_CALL,
    });
    expect(r.engine).toBe('terraform');
    expect(calls(r)?.[0]?.[1]).toBe('${var.kms_source}');
  });
});

describeWithTerraform('terraform 1.11 (before 1.15) rejects expressions in module source', () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tfguard-source-expr-'));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('even a local with a literal value', async () => {
    await writeTree(work, {
      'main.tf': 'locals {\n  where = "./child"\n}\nmodule "c" {\n  source = local.where\n}\n',
      'child/main.tf': '',
    });
    const r = await runTerraform(['get', '-no-color'], work);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('Error: Variables not allowed');
    expect(r.output).toContain('Variables may not be used here.');
  });
});
