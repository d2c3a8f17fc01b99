import { findingsOf, scanFiles } from '../support/scan';
import { lines, ruleTable } from '../support/rule-table';

const SHA = 'de95e21a3bc51cd3a44b3b95a4c2f61000649ebb';

/** A root module calling one module per source (line 3*i+2 holds the i-th source). */
function calls(...sources: string[]): string {
  return lines(...sources.flatMap((s, i) => [`module "m${i}" {`, `  source = "${s}"`, '}']));
}

ruleTable('module-ref-unpinned', [
  {
    name: 'git sources without a ref, in every written form',
    files: {
      'main.tf': calls(
        'git::https://example.com/acme/net.git',
        'github.com/acme/terraform-net//modules/vpc',
        'git@github.com:acme/net.git',
        'git::ssh://git@example.com/acme/net.git?depth=1',
        'bitbucket.org/acme/net',
        'git::https://example.com/acme/net.git?ref=',
      ),
    },
    expected: [0, 1, 2, 3, 4, 5].map((i) => ({
      module: '.',
      file: 'main.tf',
      line: 3 * i + 2,
      message: `module "m${i}" uses git source "`,
      note: 'Add a release tag (?ref=v1.2.3) or a full commit SHA',
    })),
  },
  {
    name: 'refs that may be branches',
    files: {
      'main.tf': calls(
        'github.com/cds-snc/terraform-modules//S3?ref=main',
        'git@github.com:acme/net.git//sub?ref=develop',
        'git::https://example.com/acme/net.git?ref=v1',
        'git::https://example.com/acme/net.git?ref=release-1.2',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 2,
        message: 'with ref "main", which may be a branch (tfguard cannot tell',
      },
      { module: '.', file: 'main.tf', line: 5, message: 'with ref "develop", which may be a branch' },
      { module: '.', file: 'main.tf', line: 8, message: 'with ref "v1", which may be a branch' },
      {
        module: '.',
        file: 'main.tf',
        line: 11,
        message: 'with ref "release-1.2", which may be a branch',
        note: 'write it as tags/release-1.2',
      },
    ],
  },
  {
    // terraform get 1.11 downloads the ref "v1.2.0//modules/vpc" and fails
    // (test/addrs/module-source-oracle.test.ts): the subdirectory belongs before the query
    name: 'a //subdir written after the query is part of the ref',
    files: { 'main.tf': calls('git::https://example.com/acme/net.git?ref=v1.2.0//modules/vpc') },
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 2,
        message:
          'with ref "v1.2.0//modules/vpc": a //subdirectory written after the query is part of the ref',
        note: 'Write the subdirectory before the query: …//modules/vpc?ref=v1.2.0.',
      },
    ],
  },
  {
    name: 'an explicit branch and an abbreviated SHA',
    files: {
      'main.tf': calls(
        'git::https://example.com/acme/net.git?ref=refs/heads/v1.2.3',
        'github.com/acme/net?ref=d88bd90',
      ),
    },
    expected: [
      { module: '.', file: 'main.tf', line: 2, message: 'with ref "refs/heads/v1.2.3", a branch' },
      {
        module: '.',
        file: 'main.tf',
        line: 5,
        message: 'with ref "d88bd90", which may be a branch (an abbreviated commit SHA',
        note: 'full 40-character commit SHA',
      },
    ],
  },
  {
    name: 'passing: version tags, tag refnames, full SHAs, and sources that are not git',
    files: {
      'main.tf': calls(
        'git::https://example.com/acme/net.git?ref=v1.2.3',
        'github.com/acme/net?ref=1.2.3',
        'git::https://github.com/cloudposse/terraform-null-label.git?ref=tags/0.21.0',
        'git::https://example.com/acme/net.git?ref=refs%2Ftags%2Fnightly',
        `github.com/terraform-aws-modules/terraform-aws-iam//modules/iam-assumable-role?ref=${SHA}`,
        'git@github.com:acme/net.git//sub?depth=1&ref=v2.0.0-rc.1',
        'github.com/acme/net//sub?ref=V10.11.4%2Bbuild.5',
        'terraform-aws-modules/vpc/aws',
        'https://example.com/net.zip?ref=main',
        's3::https://s3-eu-west-1.amazonaws.com/bucket/net.zip',
        'hg::https://example.com/net?rev=default',
        './modules/x',
      ),
      'modules/x/main.tf': lines('locals {}'),
    },
    expected: [],
  },
  {
    name: 'module_ref_policy = "sha": tags are findings, a SHA passes',
    files: {
      'main.tf': calls(
        'git::https://example.com/acme/net.git?ref=v1.2.3',
        `git::https://example.com/acme/net.git?ref=${SHA}`,
        'git::https://github.com/cloudposse/terraform-null-label.git?ref=tags/0.21.0&depth=1',
        'github.com/acme/net?ref=main',
        'github.com/acme/net',
      ),
    },
    config: 'module_ref_policy = "sha"\n',
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 2,
        message: 'with tag "v1.2.3", but module_ref_policy = "sha" requires a full commit SHA',
        note: 'refs/tags/<tag>^{}',
      },
      { module: '.', file: 'main.tf', line: 8, message: 'with tag "tags/0.21.0"', note: 'Remove depth=' },
      {
        module: '.',
        file: 'main.tf',
        line: 11,
        message: 'with ref "main", which may be a branch',
        note: 'as module_ref_policy = "sha" asks',
      },
      {
        module: '.',
        file: 'main.tf',
        line: 14,
        message: 'without a ref',
        note: 'a full commit SHA (?ref=<40 hex digits>), as module_ref_policy',
      },
    ],
  },
  {
    name: 'checked in shared modules and examples; not in installed copies or fragments',
    files: {
      'main.tf': lines(
        'module "net" {',
        '  source = "./modules/net"',
        '}',
        'module "x" {',
        '  source = "git::https://github.com/acme/x.git?ref=v1.0.0"',
        '}',
        'module "x_sub" {',
        '  source = "./.terraform/modules/x/modules/sub"',
        '}',
        'terraform {',
        '  backend "s3" {}',
        '}',
      ),
      'modules/net/main.tf': calls('github.com/acme/subnets'),
      'examples/basic/main.tf': lines(
        'module "net" {',
        '  source = "../../modules/net"',
        '}',
        'module "extra" {',
        '  source = "github.com/acme/extra?ref=main"',
        '}',
      ),
      // installed by terraform init: third-party code, judged where it is published
      '.terraform/modules/x/modules/sub/main.tf': calls('github.com/acme/unpinned'),
      'templates/x/main.tf': calls('github.com/acme/templated'),
    },
    config: 'fragments = ["templates/**"]\n',
    expected: [
      { module: 'examples/basic', file: 'examples/basic/main.tf', line: 5, message: 'module "extra"' },
      {
        module: 'modules/net',
        file: 'modules/net/main.tf',
        line: 2,
        message: 'module "m0" uses git source "github.com/acme/subnets" without a ref',
      },
    ],
  },
  {
    name: 'an override file that pins the ref; .tf.json; severity raised',
    files: {
      'main.tf': calls('github.com/acme/net?ref=main', 'github.com/acme/dns'),
      'main_override.tf': lines('module "m0" {', '  source = "github.com/acme/net?ref=v1.0.0"', '}'),
      'extra.tf.json': lines(
        '{',
        '  "module": {',
        '    "lb": {',
        '      "source": "git::https://example.com/acme/lb.git?ref=master"',
        '    }',
        '  }',
        '}',
      ),
    },
    config: 'rule "module-ref-unpinned" { severity = "error" }\n',
    expected: [
      { module: '.', file: 'extra.tf.json', line: 4, message: 'module "lb"', severity: 'error' },
      { module: '.', file: 'main.tf', line: 5, message: 'module "m1"', severity: 'error' },
    ],
  },
  {
    name: 'Terragrunt unit sources: literal refs are checked, interpolated ones are not',
    files: {
      'modules/app/main.tf': lines('locals {}'),
      'live/prod/terragrunt.hcl': lines(
        'terraform {',
        '  source = "git::https://github.com/acme/infra.git//modules/app?ref=main"',
        '}',
      ),
      'live/staging/terragrunt.hcl': lines(
        'terraform {',
        '  source = "git::https://github.com/acme/infra.git//modules/app?ref=${get_env("VERSION")}"',
        '}',
      ),
    },
    expected: [
      {
        module: 'live/prod',
        file: 'live/prod/terragrunt.hcl',
        line: 2,
        message: 'the Terragrunt unit "live/prod" uses git source',
      },
    ],
  },
  {
    // OpenTofu 1.10 OCI module sources (opentofu/opentofu website/docs/language/modules/sources.mdx,
    // "OCI Distribution Repository"): the tag "latest" without an argument, `?tag=` a tag that can be
    // pushed again, `?digest=` one manifest; tag and digest together are rejected.
    name: 'OCI sources (OpenTofu 1.10): only a digest pins the artifact',
    files: {
      'main.tofu': calls(
        'oci://example.com/acme/net',
        'oci://example.com/acme/net//modules/vpc?tag=v1.2.0',
        `oci://example.com/acme/net?digest=sha256:${'ab'.repeat(32)}`,
        `oci://example.com/acme/net//modules/vpc?digest=sha256:${'cd'.repeat(32)}`,
        `oci://example.com/acme/net?tag=v1.2.0&digest=sha256:${'ab'.repeat(32)}`,
        'oci://example.com/acme/net?digest=v1.2.0',
      ),
    },
    expected: [
      {
        module: '.',
        file: 'main.tofu',
        line: 2,
        message:
          'module "m0" uses OCI source "oci://example.com/acme/net" without a tag or digest, so every init installs whatever the tag "latest" names then',
        note: 'Pin the artifact by its manifest digest: ?digest=sha256:<hex>',
      },
      {
        module: '.',
        file: 'main.tofu',
        line: 5,
        message: 'with tag "v1.2.0": a tag in an OCI registry can be pushed again',
        note: '?digest=sha256:<hex>',
      },
      {
        module: '.',
        file: 'main.tofu',
        line: 14,
        message: 'with both a tag and a digest, which OpenTofu rejects',
      },
      {
        module: '.',
        file: 'main.tofu',
        line: 17,
        message: 'with digest "v1.2.0", which is not an OCI digest',
      },
    ],
  },
]);

test('the finding covers the source string', async () => {
  const text = calls('github.com/acme/net?ref=main');
  const report = await scanFiles({ 'main.tf': text });
  const [f] = findingsOf(report, 'module-ref-unpinned');
  const value = '"github.com/acme/net?ref=main"';
  const start = text.indexOf(value);
  expect(f?.range).toMatchObject({
    file: 'main.tf',
    start: { line: 2, column: 12, byte: start },
    end: { line: 2, column: 12 + value.length, byte: start + value.length },
  });
});
