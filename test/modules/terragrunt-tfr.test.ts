/**
 * Terragrunt's registry getter: `terraform { source = "tfr://…" }` is a registry
 * module with the `?version=` it asks for (Terragrunt 0.31.5+; gruntwork-io/terragrunt
 * internal/tfr/getter.go: `tfr://REGISTRY_DOMAIN/MODULE_PATH?version=VERSION`, an empty domain is the
 * default registry, the version query is required exactly once). Through the real path: tar.gz,
 * the HCL parser, the Terragrunt evaluator, the loader, resolution against a registry on 127.0.0.1.
 */
import { parseTerragruntRegistrySource } from '../../src/addrs';
import type { Report } from '../../src/report/types';
import { lines } from '../support/rule-table';
import { startRegistry } from '../support/registry-server';
import type { RegistryServer } from '../support/registry-server';
import { findingsOf, scanFiles } from '../support/scan';

describe('parseTerragruntRegistrySource', () => {
  it.each([
    ['tfr:///acme/kms/aws?version=2.2.1', { source: 'acme/kms/aws', version: '2.2.1' }],
    [
      'tfr://registry.example.com/acme/kms/aws//modules/x?version=1.0.0',
      { source: 'registry.example.com/acme/kms/aws//modules/x', version: '1.0.0' },
    ],
    ['tfr:///acme/kms/aws', { source: 'acme/kms/aws', version: null }],
    ['tfr:///acme/kms/aws?version=1.0.0&version=2.0.0', { source: 'acme/kms/aws', version: null }],
    ['tfr:///acme/kms/aws?version=%7E%3E+2.2', { source: 'acme/kms/aws', version: '~> 2.2' }],
  ])('%s', (raw, want) => {
    expect(parseTerragruntRegistrySource(raw)).toEqual(want);
  });

  it.each([
    // Two slashes: the first segment is the registry's host, and two segments are not a module.
    'tfr://terraform-aws-modules/eks/aws?version=19.0.0',
    'tfr:///acme/kms',
    'git::https://example.com/acme/kms.git?ref=v1',
    'acme/kms/aws',
  ])('%s is not a tfr registry address', (raw) => {
    expect(parseTerragruntRegistrySource(raw)).toBeNull();
  });
});

describe('tfr:// unit sources', () => {
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

  const scan = (files: Record<string, string>): Promise<Report> =>
    scanFiles(files, {
      remoteModules: true,
      configText: {
        name: 'ops.hcl',
        text: `registry_hosts = { "registry.terraform.io" = "${registry.url}" }\n`,
      },
    });
  const calls = (r: Report, path: string) =>
    r.modules.find((m) => m.path === path)?.moduleCalls.map((c) => [c.source, c.sourceKind, c.version]);

  it('is the registry module at its ?version=, resolved like a module block', async () => {
    const r = await scan({
      'live/prod/terragrunt.hcl': lines(
        'locals {',
        '  base = "tfr:///acme/kms/aws"',
        '}',
        'terraform {',
        '  source = "${local.base}?version=2.2.1"',
        '}',
      ),
    });
    expect(calls(r, 'live/prod')).toEqual([['acme/kms/aws', 'registry', '2.2.1']]);
    const root = r.roots.find((t) => t.path === 'live/prod');
    expect(root?.remoteModuleTree?.map((m) => [m.key, m.address, m.resolvedVersion, m.origin])).toEqual([
      ['terragrunt', 'acme/kms/aws', '2.2.1', 'metadata'],
    ]);
    expect(root?.providers.map((p) => p.source)).toEqual(['registry.terraform.io/hashicorp/random']);
    expect(findingsOf(r, 'module-unresolved')).toEqual([]);
    expect(findingsOf(r, 'module-version-missing')).toEqual([]);
  });

  it('without ?version= it is what Terragrunt refuses, said on the unit (no fix)', async () => {
    const r = await scan({
      'live/prod/terragrunt.hcl': lines('terraform {', '  source = "tfr:///acme/kms/aws"', '}'),
    });
    expect(findingsOf(r, 'module-version-missing').map((f) => [f.file, f.line, f.message, f.fix])).toEqual([
      [
        'live/prod/terragrunt.hcl',
        2,
        'the Terragrunt unit "live/prod" uses the registry module "acme/kms/aws" (tfr://) without ?version=, which Terragrunt refuses ("missing version query")',
        undefined,
      ],
    ]);
  });
});
