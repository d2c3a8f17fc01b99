/**
 * Differential test against the real `terraform` CLI (1.11, offline): for each configuration, the
 * providers every module requires with its own normalized constraints (`terraform providers`), the
 * modules of the tree (`init`'s modules.json) and the combined constraints of the whole
 * configuration (`init`'s "Finding ... versions matching") must equal what tfguard computes.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDirectory } from '../../src/archive';
import type { ModuleInfo, RootTree } from '../../src/modules';
import { combineConstraints, moduleRequirements } from '../../src/modules';
import type { LoadedModules } from '../../src/modules';
import { loadModules } from '../../src/modules';
import { buildRootTree } from '../../src/modules/tree';
import type { Mirror } from '../support/terraform';
import { mapLimit, withMirror, writeTree } from '../support/terraform';
import { corpusFile, describeWithExternal } from '../support/external';
import { BASE_CONFIG, closeParser, sharedParser } from '../support/modules';
import { terraformView } from '../support/module-oracle';

const rp = (entries: string) => `terraform {\n  required_providers {\n${entries}\n  }\n}\n`;

/** Own trees: each exercises one part of module loading; the root is the top directory. */
const OWN_TREES: Record<string, Record<string, string>> = {
  'override-hcl': {
    'main.tf': `terraform {
  required_version = ">= 1.0"
  required_providers {
    aws = {
      source  = "acme/aws"
      version = ">= 4.0"
    }
    random = { source = "hashicorp/random", version = "~> 3.1" }
  }
  backend "s3" {
    bucket = "state"
    key    = "x"
    region = "eu-west-1"
  }
}
provider "aws" {}
resource "aws_instance" "web" {}
resource "random_id" "r" {
  byte_length = 4
}
module "child" {
  source = "./old"
}
`,
    'old/main.tf':
      rp('    null = { source = "hashicorp/null", version = ">= 3.0" }') +
      'resource "null_resource" "x" {}\n',
    'new/main.tf':
      rp('    null = { source = "hashicorp/null", version = ">= 3.2" }') +
      'resource "null_resource" "x" {}\n',
    'override.tf': `terraform {
  required_providers {
    aws = { version = ">= 5.0" }
  }
}
provider "aws" {
  version = "< 6.0"
}
module "child" {
  source = "./new"
}
`,
  },
  'override-json': {
    'main.tf.json': JSON.stringify(
      {
        terraform: {
          required_providers: {
            aws: { source: 'hashicorp/aws', version: '>= 4.0' },
            google: { source: 'hashicorp/google', version: '~> 5.0' },
          },
        },
        resource: { aws_instance: { a: {} }, google_storage_bucket: { b: { name: 'x', location: 'EU' } } },
      },
      null,
      2,
    ),
    'override.tf.json': JSON.stringify(
      {
        terraform: { required_providers: { google: { source: 'hashicorp/google-beta', version: '>= 5.1' } } },
        resource: { aws_instance: { a: { provider: 'awsalt.x' } } },
      },
      null,
      2,
    ),
    'z_override.tf': rp('    aws = { source = "hashicorp/aws", version = "~> 5.9" }'),
  },
  'legacy-string': {
    'main.tf': rp('    random = "~> 3.1"\n    aws    = ">= 4"') + 'module "c" {\n  source = "./child"\n}\n',
    'child/main.tf':
      rp('    random = { version = ">= 3.0, < 4" }') +
      'resource "random_id" "x" {\n  byte_length = 4\n}\nresource "tls_private_key" "k" {\n  algorithm = "RSA"\n}\n',
  },
  implied: {
    'main.tf': `terraform {
  required_providers {
    awsx = { source = "hashicorp/aws", version = ">= 5.0" }
    kube = { source = "acme/kubernetes", version = "~> 2.0" }
  }
}
resource "aws_instance" "a" {}
resource "google_thing" "g" {
  provider = kube.east
}
provider "kube" {
  alias = "east"
}
data "http" "h" {
  url = "https://example.com"
}
ephemeral "tls_private_key" "k" {
  algorithm = "RSA"
}
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
  alias   = "dc2"
  version = "~> 1.0"
}
module "child" {
  source    = "./child"
  providers = { cloudflare = cloudflare.edge }
}
`,
    'child/main.tf': rp('    cloudflare = { source = "hashicorp/cloudflare", version = ">= 4.0" }'),
  },
  aliases: {
    'main.tf':
      rp('    aws = { source = "hashicorp/aws", version = "~> 5.0" }') +
      `provider "aws" {
  region = "eu-west-1"
}
provider "aws" {
  alias  = "use1"
  region = "us-east-1"
}
module "edge" {
  source = "./modules/edge"
  providers = {
    aws      = aws
    aws.east = aws.use1
  }
}
`,
    'modules/edge/main.tf': `terraform {
  required_providers {
    aws = {
      source                = "hashicorp/aws"
      version               = ">= 5.2"
      configuration_aliases = [aws.east]
    }
  }
}
resource "aws_acm_certificate" "c" {
  provider          = aws.east
  domain_name       = "example.com"
  validation_method = "DNS"
}
resource "aws_route53_zone" "z" {
  name = "example.com"
}
`,
  },
  nested: {
    'main.tf':
      rp(
        '    aws    = { source = "hashicorp/aws", version = "~> 2" }\n    random = { source = "hashicorp/random", version = "= 1.2.3" }',
      ) +
      'module "a" {\n  source = "./modules/a"\n}\nmodule "b" {\n  source = "./modules/b"\n}\nmodule "b2" {\n  source = "./modules//b/"\n}\n',
    'modules/a/main.tf':
      rp(
        '    aws    = { source = "hashicorp/aws", version = ">= 1.0, < 2.0.0" }\n    random = { source = "hashicorp/random", version = "1.2.3" }',
      ) + 'module "c" {\n  source = "./c"\n}\n',
    'modules/b/main.tf':
      rp(
        '    aws  = { source = "hashicorp/aws", version = "!= 2.0.1" }\n    null = { source = "hashicorp/null", version = ">= 3" }',
      ) + 'module "c" {\n  source = "../a/c"\n}\n',
    'modules/a/c/main.tf':
      rp('    aws = { source = "hashicorp/aws", version = "~> 2.1.0" }') +
      'module "d" {\n  source = "../../../deep/d"\n}\n',
    'deep/d/main.tf':
      rp('    random = { source = "hashicorp/random", version = "~> 1.2.3, != 1.2.4" }') +
      'resource "time_sleep" "w" {}\n',
  },
  sources: {
    'main.tf':
      rp(
        [
          '    aws    = { source = "HashiCorp/AWS", version = ">= 5.0" }',
          '    tls    = { source = "registry.terraform.io:443/hashicorp/tls", version = "~> 4.0" }',
          '    foo    = { source = "example.com/Acme/Foo", version = "1.0.0" }',
          '    random = { source = "random", version = ">= 3" }',
          '    http2  = { source = "hashicorp/http", version = ">= 3.4" }',
        ].join('\n'),
      ) + 'resource "http_thing" "x" {}\nmodule "m" {\n  source = "./m"\n}\n',
    'm/main.tf':
      rp('    foo = { source = "example.com/acme/foo", version = ">= 0.9" }') + 'resource "foo_bar" "x" {}\n',
  },
  'many-overrides': {
    'main.tf': `terraform {
  required_version = ">= 1.0"
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 3.0" }
  }
  cloud {
    organization = "acme"
    workspaces {
      name = "x"
    }
  }
}
resource "aws_s3_bucket" "b" {}
`,
    'a_override.tf': rp('    aws = { source = "hashicorp/aws", version = ">= 4.0" }'),
    'override.tf': rp(
      '    aws = { source = "hashicorp/aws", version = ">= 5.0" }\n    null = { source = "hashicorp/null" }',
    ),
    'z_override.tf.json': JSON.stringify({
      terraform: {
        required_providers: { aws: { source: 'hashicorp/aws', version: '~> 5.5' } },
        backend: { s3: {} },
      },
    }),
  },
  'ignored-files': {
    'main.tf': rp('    aws = { source = "hashicorp/aws", version = ">= 5.0" }'),
    '.hidden.tf': 'resource "google_x" "y" {}\n',
    'main.tf~': 'resource "null_resource" "z" {}\n',
    '#notes.tf#': 'resource "random_id" "r" {}\n',
    'README.md': '# not configuration\n',
  },
};

interface Case {
  name: string;
  /** Directory holding the whole tree (own tree, or an extracted corpus repository). */
  tree: string;
  root: string;
  loaded: LoadedModules;
}

/** `registry.terraform.io/hashicorp/aws` → `hashicorp/aws`, the way terraform displays it. */
function display(source: string): string {
  return source.startsWith('registry.terraform.io/') ? source.slice('registry.terraform.io/'.length) : source;
}

/** What tfguard says one module requires: source → that module's normalized constraints. */
function tfguardModule(m: ModuleInfo, loaded: LoadedModules): Map<string, string> {
  const req = moduleRequirements(m, loaded.engine);
  const out = new Map<string, string>();
  for (const source of req.sources) {
    const combined = combineConstraints(
      req.constraints.filter((c) => c.source === source).map((c) => c.constraints),
    );
    out.set(source, combined ?? `<invalid: ${req.constraints.map((c) => c.constraints).join(' & ')}>`);
  }
  return out;
}

let work: string;
let mirror: Mirror;
const cases: Case[] = [];

describeWithExternal(['terraform', 'corpus'], 'module loading vs terraform', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tfguard-modules-diff-'));
    mirror = await withMirror([]);
    const parser = sharedParser();
    const load = async (dir: string): Promise<LoadedModules> =>
      loadModules({ archive: await readDirectory(dir), config: BASE_CONFIG, parser });

    for (const [name, files] of Object.entries(OWN_TREES)) {
      const tree = join(work, 'own', name);
      await writeTree(tree, files);
      cases.push({ name, tree, root: '.', loaded: await load(tree) });
    }

    const corpus: Record<string, string[]> = {
      'terraform-aws-modules_terraform-aws-vpc': [
        'examples/simple',
        'examples/complete',
        'examples/ipv6-dualstack',
        'examples/network-acls',
        'examples/secondary-cidr-blocks',
      ],
      'terraform-aws-modules_terraform-aws-eks': [
        'modules/eks-managed-node-group',
        'modules/self-managed-node-group',
        'modules/karpenter',
      ],
      'ministryofjustice_cloud-platform-infrastructure': [
        'terraform/aws-accounts/cloud-platform-aws/vpc/transit-gateway-routes',
        'terraform/aws-accounts/cloud-platform-dsd',
      ],
    };
    for (const [repo, roots] of Object.entries(corpus)) {
      const tree = join(work, 'corpus', repo);
      await mkdir(tree, { recursive: true });
      const tar = spawnSync('tar', ['-xzf', corpusFile(`${repo}.tar.gz`), '-C', tree], {
        encoding: 'utf8',
      });
      if (tar.status !== 0) throw new Error(`cannot extract ${repo}: ${tar.stderr}`);
      const loaded = await load(tree);
      for (const root of roots) cases.push({ name: `${repo}:${root}`, tree, root, loaded });
    }
  }, 60_000);

  afterAll(async () => {
    await closeParser();
    await mirror?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  describe('module loading agrees with terraform providers / init', () => {
    test('at least 8 own trees and several corpus roots are compared', () => {
      expect(Object.keys(OWN_TREES).length).toBeGreaterThanOrEqual(8);
      expect(cases.filter((c) => c.name.includes(':')).length).toBeGreaterThanOrEqual(8);
    });

    test('per module requirements, tree membership and combined constraints', async () => {
      const results = await mapLimit(cases, 2, async (c, i) => {
        const view = await terraformView(c.tree, c.root, join(work, 'runs', String(i)), mirror);
        const modules = new Map(c.loaded.modules.map((m) => [m.path, m]));
        const tree: RootTree =
          c.loaded.roots.find((r) => r.root === c.root) ?? buildRootTree(c.root, modules, c.loaded.engine);

        const tfModules = new Map<string, Map<string, string>>();
        for (const [dir, reqs] of view.modules) {
          const filtered = new Map(
            [...reqs].filter(([source]) => source !== 'terraform.io/builtin/terraform'),
          );
          tfModules.set(dir, filtered);
        }
        const ours = new Map<string, Map<string, string>>();
        for (const path of tree.modules)
          ours.set(path, tfguardModule(modules.get(path) as ModuleInfo, c.loaded));

        const combined = new Map(
          tree.providers.map((p) => [display(p.source), p.constraints ?? '<invalid>'] as [string, string]),
        );
        const sortMap = <V>(m: Map<string, V>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));
        return {
          name: c.name,
          terraform: {
            modules: sortMap(tfModules).map(([k, v]) => [k, sortMap(v)]),
            combined: sortMap(view.combined),
          },
          tfguard: {
            modules: sortMap(ours).map(([k, v]) => [k, sortMap(v)]),
            combined: sortMap(combined),
          },
        };
      });
      // Every disagreement, named by configuration, so a failure says where tfguard differs.
      const mismatches = results
        .filter((r) => JSON.stringify(r.tfguard) !== JSON.stringify(r.terraform))
        .map((r) => ({ name: r.name, tfguard: r.tfguard, terraform: r.terraform }));
      expect(mismatches).toEqual([]);
      // The comparison is not vacuous: the trees have modules and constrained providers.
      expect(results.every((r) => r.terraform.modules.length > 0)).toBe(true);
      expect(results.filter((r) => r.terraform.combined.some(([, c]) => c !== '')).length).toBeGreaterThan(
        10,
      );
    }, 90_000);
  });
});
