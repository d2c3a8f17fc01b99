import { afterAll, describe, expect, test } from '@jest/globals';
import { closeParser, load, moduleAt } from '../support/modules';
import { withoutRanges } from '../support/ranges';

afterAll(closeParser);

describe('provider requirements', () => {
  test('declared entries: object form, legacy string form, aliases, source normalization', async () => {
    const loaded = await load({
      'versions.tf': `terraform {
  required_providers {
    aws = {
      source                = "HashiCorp/AWS"
      version               = ">= 4.0"
      configuration_aliases = [aws.east, aws.west]
    }
    random = "~> 3.1"
    tls    = { source = "example.com/Acme/TLS" }
    bad    = { source = "a/b/c/d", version = ">= 1" }
  }
}
`,
    });
    const m = moduleAt(loaded, '.');
    expect(withoutRanges(m.providers)).toEqual([
      {
        name: 'aws',
        source: 'registry.terraform.io/hashicorp/aws',
        sourceExplicit: true,
        constraints: '>= 4.0',
        constraintLocation: { file: 'versions.tf', line: 5 },
        configurationAliases: ['aws.east', 'aws.west'],
        declared: { file: 'versions.tf', line: 3 },
        implicit: false,
        legacyString: false,
      },
      {
        name: 'bad',
        source: 'a/b/c/d',
        sourceExplicit: true,
        constraints: '>= 1',
        constraintLocation: { file: 'versions.tf', line: 10 },
        configurationAliases: [],
        declared: { file: 'versions.tf', line: 10 },
        implicit: false,
        legacyString: false,
      },
      {
        name: 'random',
        source: 'registry.terraform.io/hashicorp/random',
        sourceExplicit: false,
        constraints: '~> 3.1',
        constraintLocation: { file: 'versions.tf', line: 8 },
        configurationAliases: [],
        declared: { file: 'versions.tf', line: 8 },
        implicit: false,
        legacyString: true,
      },
      {
        name: 'tls',
        source: 'example.com/acme/tls',
        sourceExplicit: true,
        sourceHost: 'example.com',
        constraints: null,
        constraintLocation: null,
        configurationAliases: [],
        declared: { file: 'versions.tf', line: 9 },
        implicit: false,
        legacyString: false,
      },
    ]);
  });

  test('OpenTofu gives sources its own registry host', async () => {
    const loaded = await load(
      {
        'main.tf':
          'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws" }\n  }\n}\nresource "null_resource" "x" {}\n',
      },
      { engine: 'opentofu' },
    );
    expect(loaded.engine).toBe('opentofu');
    expect(moduleAt(loaded, '.').providers.map((p) => p.source)).toEqual([
      'registry.opentofu.org/hashicorp/aws',
      'registry.opentofu.org/hashicorp/null',
    ]);
  });

  test('used providers that are not declared become implicit requirements, as terraform providers lists them', async () => {
    const loaded = await load({
      'main.tf': `terraform {
  required_providers {
    awsx = { source = "hashicorp/aws", version = ">= 5.0" }
    kube = { source = "acme/kubernetes" }
  }
}
resource "aws_instance" "a" {}
resource "google_thing" "g" {
  provider = kube.east
}
data "http" "h" {}
ephemeral "tls_private_key" "k" {}
data "terraform_remote_state" "s" {
  backend = "local"
}
check "health" {
  data "dns_a_record_set" "d" {
    host = "example.com"
  }
  assert {
    condition     = length(data.dns_a_record_set.d.addrs) > 0
    error_message = "no address"
  }
}
import {
  to = azurerm_thing.x
  id = "abc"
}
import {
  to       = docker_thing.y
  id       = "abc"
  provider = vault.x
}
provider "helm" {}
provider "consul" {
  alias = "dc2"
}
module "child" {
  source    = "./child"
  providers = { cloudflare = cloudflare.edge }
}
`,
      'child/main.tf': '',
    });
    const m = moduleAt(loaded, '.');
    expect(withoutRanges(m.providers.map((p) => [p.name, p.source, p.implicit, p.declared]))).toEqual([
      ['awsx', 'registry.terraform.io/hashicorp/aws', false, { file: 'main.tf', line: 3 }],
      ['azurerm', 'registry.terraform.io/hashicorp/azurerm', true, null],
      ['consul', 'registry.terraform.io/hashicorp/consul', true, null],
      ['dns', 'registry.terraform.io/hashicorp/dns', true, null],
      ['helm', 'registry.terraform.io/hashicorp/helm', true, null],
      ['http', 'registry.terraform.io/hashicorp/http', true, null],
      ['kube', 'registry.terraform.io/acme/kubernetes', false, { file: 'main.tf', line: 4 }],
      ['tls', 'registry.terraform.io/hashicorp/tls', true, null],
      ['vault', 'registry.terraform.io/hashicorp/vault', true, null],
    ]);
    // "aws" resolves to the source declared as "awsx"; "terraform" is the built-in provider;
    // "cloudflare" is only passed to a child module; "docker" is overridden by the import's provider.
    expect(
      m.providerUses.map((u) => [u.kind, u.address, u.name, u.alias, u.explicit, u.location.line]),
    ).toEqual([
      ['resource', 'aws_instance.a', 'aws', null, false, 7],
      ['resource', 'google_thing.g', 'kube', 'east', true, 9],
      ['data', 'data.http.h', 'http', null, false, 11],
      ['ephemeral', 'ephemeral.tls_private_key.k', 'tls', null, false, 12],
      ['data', 'data.terraform_remote_state.s', 'terraform', null, false, 13],
      ['data', 'data.dns_a_record_set.d', 'dns', null, false, 17],
      ['resource', 'azurerm_thing.x', 'azurerm', null, false, 25],
      ['resource', 'docker_thing.y', 'vault', 'x', true, 32],
      ['provider-block', 'provider.helm', 'helm', null, false, 34],
      ['provider-block', 'provider.consul.dc2', 'consul', 'dc2', false, 35],
      ['module-providers', 'module.child', 'cloudflare', 'edge', true, 40],
    ]);
    expect(withoutRanges(m.providerConfigs)).toEqual([
      { name: 'helm', alias: null, configured: false, location: { file: 'main.tf', line: 34 } },
      { name: 'consul', alias: 'dc2', configured: false, location: { file: 'main.tf', line: 35 } },
    ]);
  });

  test('a resource type or import target that names no valid provider implies nothing', async () => {
    const loaded = await load({
      'main.tf': 'resource "" "x" {}\nresource "-bad_thing" "y" {}\nimport {\n  to = _x.y\n  id = "1"\n}\n',
    });
    const m = moduleAt(loaded, '.');
    expect(m.providers).toEqual([]);
    expect(m.providerUses).toEqual([]);
  });

  test('more than one required_providers block: a diagnostic, and only the first counts', async () => {
    const loaded = await load({
      'a.tf':
        'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 4.0" }\n  }\n}\n',
      'b.tf': `terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 5.0" }
  }
}
terraform {
  required_providers {
    google = { source = "hashicorp/google" }
  }
}
`,
    });
    const m = moduleAt(loaded, '.');
    expect(withoutRanges(m.requiredProvidersBlocks)).toEqual([
      { file: 'a.tf', line: 2 },
      { file: 'b.tf', line: 2 },
      { file: 'b.tf', line: 7 },
    ]);
    expect(m.providers.map((p) => [p.name, p.constraints])).toEqual([['aws', '>= 4.0']]);
    expect(withoutRanges(loaded.diagnostics)).toEqual([
      {
        kind: 'duplicate-required-providers',
        module: '.',
        location: { file: 'b.tf', line: 2 },
        first: { file: 'a.tf', line: 2 },
      },
      {
        kind: 'duplicate-required-providers',
        module: '.',
        location: { file: 'b.tf', line: 7 },
        first: { file: 'a.tf', line: 2 },
      },
    ]);
  });

  test('JSON configuration files are read like HCL ones', async () => {
    const loaded = await load({
      'main.tf.json': JSON.stringify(
        {
          terraform: {
            required_version: '>= 1.5',
            required_providers: {
              aws: { source: 'hashicorp/aws', version: '>= 5.0', configuration_aliases: ['aws.east'] },
              random: '~> 3.0',
            },
            backend: { s3: {} },
          },
          resource: { aws_instance: { web: { provider: 'aws.east' } }, null_resource: { n: {} } },
          provider: { google: [{}, { alias: 'eu' }] },
          module: { net: { source: './net', providers: { 'aws.east': 'aws.east' } } },
        },
        null,
        2,
      ),
      'net/main.tf': 'resource "aws_vpc" "v" {\n  provider = aws.east\n}\n',
    });
    const m = moduleAt(loaded, '.');
    expect(m.requiredVersions.map((v) => v.value)).toEqual(['>= 1.5']);
    // "aws" starts on line 5 of the pretty-printed JSON, its "version" is on line 7.
    expect(m.providers[0]).toMatchObject({
      declared: { file: 'main.tf.json', line: 5 },
      constraintLocation: { file: 'main.tf.json', line: 7 },
    });
    expect(m.backend).toMatchObject({ kind: 'backend', type: 's3' });
    expect(
      m.providers.map((p) => [p.name, p.constraints, p.legacyString, p.configurationAliases, p.implicit]),
    ).toEqual([
      ['aws', '>= 5.0', false, ['aws.east'], false],
      ['google', null, false, [], true],
      ['null', null, false, [], true],
      ['random', '~> 3.0', true, [], false],
    ]);
    expect(m.providerConfigs.map((c) => [c.name, c.alias])).toEqual([
      ['google', null],
      ['google', 'eu'],
    ]);
    expect(m.moduleCalls).toEqual([
      expect.objectContaining({
        name: 'net',
        sourceKind: 'local',
        target: 'net',
        providers: { 'aws.east': 'aws.east' },
      }),
    ]);
    expect(m.providerUses.find((u) => u.address === 'aws_instance.web')).toMatchObject({
      alias: 'east',
      explicit: true,
    });
  });
});

describe('module calls', () => {
  test('source kinds, versions, providers maps and local targets', async () => {
    const loaded = await load({
      'live/prod/main.tf': `module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"
}
module "git" {
  source = "git::https://example.com/x.git?ref=v1"
}
module "net" {
  source    = "../../modules//net/"
  providers = {
    aws.east = aws.use1
    aws      = aws
  }
}
module "outside" {
  source = "../../../elsewhere"
}
module "gone" {
  source = "./gone"
}
module "nosource" {}
`,
      'modules/net/main.tf': 'resource "aws_vpc" "v" {}\n',
    });
    const m = moduleAt(loaded, 'live/prod');
    expect(m.moduleCalls.map((c) => [c.name, c.sourceKind, c.version, c.target, c.providers])).toEqual([
      ['vpc', 'registry', '~> 5.0', null, {}],
      ['git', 'remote', null, null, {}],
      ['net', 'local', null, 'modules/net', { 'aws.east': 'aws.use1', aws: 'aws' }],
      ['outside', 'local', null, '../elsewhere', {}],
      ['gone', 'local', null, 'live/prod/gone', {}],
      ['nosource', 'unknown', null, null, {}],
    ]);
    expect(withoutRanges(loaded.diagnostics)).toEqual([
      {
        kind: 'module-missing',
        module: 'live/prod',
        call: 'outside',
        target: '../elsewhere',
        location: { file: 'live/prod/main.tf', line: 15 },
      },
      {
        kind: 'module-missing',
        module: 'live/prod',
        call: 'gone',
        target: 'live/prod/gone',
        location: { file: 'live/prod/main.tf', line: 18 },
      },
    ]);
    const tree = loaded.roots.find((r) => r.root === 'live/prod');
    expect(tree?.modules).toEqual(['live/prod', 'modules/net']);
    expect(tree?.remoteCalls).toEqual([
      { module: 'live/prod', name: 'vpc', source: 'terraform-aws-modules/vpc/aws', version: '~> 5.0' },
      { module: 'live/prod', name: 'git', source: 'git::https://example.com/x.git?ref=v1', version: null },
    ]);
  });
});
