import { afterAll, describe, expect, test } from '@jest/globals';
import { closeParser, load, moduleAt, provider } from '../support/modules';
import { withoutRanges } from '../support/ranges';

afterAll(closeParser);

const versions = `terraform {
  required_version = ">= 1.3"
  required_providers {
    aws = {
      source  = "acme/aws"
      version = ">= 4.0"
    }
    random = { source = "hashicorp/random", version = "~> 3.1" }
  }
  backend "s3" {}
}
`;

describe('override files', () => {
  test('a required_providers entry in an override replaces the whole entry of that name only', async () => {
    const loaded = await load({
      'versions.tf': versions,
      'override.tf': `terraform {
  required_providers {
    aws = { version = ">= 5.0" }
  }
}
`,
    });
    const m = moduleAt(loaded, '.');
    const aws = provider(m, 'aws');
    // Terraform 1.11: the original "acme/aws" source is gone with the replaced entry.
    expect(aws).toMatchObject({
      source: 'registry.terraform.io/hashicorp/aws',
      sourceExplicit: false,
      constraints: '>= 5.0',
      declared: { file: 'override.tf', line: 3 },
      constraintLocation: { file: 'override.tf', line: 3 },
      implicit: false,
    });
    expect(provider(m, 'random')).toMatchObject({
      source: 'registry.terraform.io/hashicorp/random',
      constraints: '~> 3.1',
      declared: { file: 'versions.tf', line: 8 },
    });
    // Only primary files' required_providers blocks count (an override's is no duplicate).
    expect(withoutRanges(m.requiredProvidersBlocks)).toEqual([{ file: 'versions.tf', line: 3 }]);
    expect(loaded.diagnostics).toEqual([]);
  });

  test('an override entry for a provider the module does not declare adds it', async () => {
    const loaded = await load({
      'main.tf': 'resource "tls_private_key" "k" {}\n',
      'x_override.tf':
        'terraform {\n  required_providers {\n    tls = { source = "acme/tls", version = "~> 4.0" }\n  }\n}\n',
    });
    const m = moduleAt(loaded, '.');
    expect(m.providers.map((p) => [p.name, p.source, p.constraints, p.implicit])).toEqual([
      ['tls', 'registry.terraform.io/acme/tls', '~> 4.0', false],
    ]);
    // The resource now resolves to the overridden source: no implicit hashicorp/tls.
    expect(m.requiredProvidersBlocks).toEqual([]);
  });

  test('required_version in an override file replaces every original one', async () => {
    const loaded = await load({
      'a.tf': 'terraform {\n  required_version = ">= 1.0"\n}\n',
      'b.tf': 'terraform {\n  required_version = "< 2.0"\n}\n',
      'override.tf': 'terraform {\n  required_version = ">= 1.5"\n}\n',
    });
    expect(withoutRanges(moduleAt(loaded, '.').requiredVersions)).toEqual([
      { value: '>= 1.5', location: { file: 'override.tf', line: 2 } },
    ]);
    const plain = await load({
      'a.tf': 'terraform {\n  required_version = ">= 1.0"\n}\n',
      'b.tf': 'terraform {\n  required_version = "< 2.0"\n}\n',
    });
    expect(moduleAt(plain, '.').requiredVersions.map((v) => v.value)).toEqual(['>= 1.0', '< 2.0']);
  });

  test('a cloud block in an override replaces a backend, and a backend replaces a cloud block', async () => {
    const toCloud = await load({
      'main.tf': versions,
      'override.tf': 'terraform {\n  cloud {\n    organization = "acme"\n  }\n}\n',
    });
    expect(withoutRanges(moduleAt(toCloud, '.').backend)).toEqual({
      kind: 'cloud',
      type: 'cloud',
      location: { file: 'override.tf', line: 2 },
    });
    const toBackend = await load({
      'main.tf': 'terraform {\n  cloud {\n    organization = "acme"\n  }\n}\n',
      'override.tf': 'terraform {\n  backend "gcs" {}\n}\n',
    });
    expect(withoutRanges(moduleAt(toBackend, '.').backend)).toEqual({
      kind: 'backend',
      type: 'gcs',
      location: { file: 'override.tf', line: 2 },
    });
    const untouched = await load({
      'main.tf': versions,
      'override.tf': 'terraform {\n  required_version = ">= 1.6"\n}\n',
    });
    expect(withoutRanges(moduleAt(untouched, '.').backend)).toEqual({
      kind: 'backend',
      type: 's3',
      location: { file: 'main.tf', line: 10 },
    });
  });

  test('several override files apply in lexical order; the last one wins', async () => {
    const entry = (v: string) =>
      `terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "${v}" }\n  }\n}\n`;
    const loaded = await load({
      'main.tf': entry('>= 3.0'),
      'z_override.tf': entry('>= 5.0'),
      'override.tf': entry('>= 4.0'),
      'a_override.tf': entry('>= 2.0'),
    });
    expect(provider(moduleAt(loaded, '.'), 'aws')).toMatchObject({
      constraints: '>= 5.0',
      declared: { file: 'z_override.tf', line: 3 },
    });
  });

  test('JSON override files merge like HCL ones', async () => {
    const loaded = await load({
      'main.tf': `terraform {
  required_providers {
    aws    = { source = "hashicorp/aws", version = ">= 4.0" }
    google = { source = "hashicorp/google", version = ">= 5.0" }
  }
}
resource "aws_instance" "web" {}
module "net" {
  source = "./net"
}
`,
      'net/main.tf': 'resource "null_resource" "x" {}\n',
      'net2/main.tf': 'resource "null_resource" "y" {}\n',
      'override.tf.json': JSON.stringify(
        {
          terraform: { required_providers: { aws: { source: 'hashicorp/aws', version: '~> 5.9' } } },
          resource: { aws_instance: { web: { provider: 'aws.east' } } },
          module: { net: { source: './net2' } },
        },
        null,
        2,
      ),
    });
    const m = moduleAt(loaded, '.');
    expect(provider(m, 'aws')).toMatchObject({
      constraints: '~> 5.9',
      declared: { file: 'override.tf.json' },
    });
    expect(provider(m, 'google')).toMatchObject({
      constraints: '>= 5.0',
      declared: { file: 'main.tf', line: 4 },
    });
    const use = m.providerUses.find((u) => u.address === 'aws_instance.web');
    expect(use).toMatchObject({ name: 'aws', alias: 'east', explicit: true });
    expect(use?.location.file).toBe('override.tf.json');
    expect(withoutRanges(m.moduleCalls)).toEqual([
      expect.objectContaining({
        name: 'net',
        source: './net2',
        target: 'net2',
        location: { file: 'main.tf', line: 8 },
      }),
    ]);
    expect(moduleAt(loaded, 'net2').kind).toBe('shared');
    expect(moduleAt(loaded, 'net').kind).toBe('root');
  });

  test('resource, provider and module blocks merge by header; unmatched override blocks are ignored', async () => {
    const loaded = await load({
      'main.tf': `provider "aws" {
  region = "eu-west-1"
}
provider "aws" {
  alias  = "east"
  region = "us-east-1"
}
resource "aws_instance" "web" {
  ami = "x"
  lifecycle {
    create_before_destroy = true
  }
}
module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "5.0.0"
}
`,
      'override.tf': `provider "aws" {
  alias   = "east"
  version = "~> 5.0"
}
provider "aws" {
  alias = "west"
}
provider "google" {}
resource "aws_instance" "web" {
  provider = aws.east
}
resource "aws_instance" "ghost" {}
data "http" "ghost" {}
module "vpc" {
  version = "5.1.0"
  providers = {
    aws = aws.east
  }
}
module "ghost" {
  source = "./ghost"
}
`,
    });
    const m = moduleAt(loaded, '.');
    expect(withoutRanges(m.providerConfigs)).toEqual([
      { name: 'aws', alias: null, configured: true, location: { file: 'main.tf', line: 1 } },
      {
        name: 'aws',
        alias: 'east',
        configured: true,
        location: { file: 'main.tf', line: 4 },
        version: { value: '~> 5.0', location: { file: 'override.tf', line: 3 } },
      },
      // A default provider block may be added by an override; an aliased one ("west") may not.
      { name: 'google', alias: null, configured: false, location: { file: 'override.tf', line: 8 } },
    ]);
    expect(m.providers.map((p) => [p.name, p.implicit])).toEqual([
      ['aws', true],
      ['google', true],
    ]);
    expect(m.providerUses.filter((u) => u.kind === 'resource').map((u) => [u.address, u.alias])).toEqual([
      ['aws_instance.web', 'east'],
    ]);
    expect(withoutRanges(m.moduleCalls)).toEqual([
      {
        name: 'vpc',
        source: 'terraform-aws-modules/vpc/aws',
        sourceKind: 'registry',
        version: '5.1.0',
        providers: { aws: 'aws.east' },
        target: null,
        location: { file: 'main.tf', line: 14 },
        // the override replaced version, not source: each points where it is now written
        sourceLocation: { file: 'main.tf', line: 15 },
        versionLocation: { file: 'override.tf', line: 15 },
      },
    ]);
    expect(loaded.diagnostics).toEqual([]);
  });
});
