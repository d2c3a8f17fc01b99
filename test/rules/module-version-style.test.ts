import { findingsOf, scanFiles } from '../support/scan';
import { lines, ruleTable } from '../support/rule-table';

const BACKEND = ['terraform {', '  backend "s3" {}', '}'];

/** A root module (it has a backend) calling one registry module per version: the i-th version's
 * line is 4*i+5 (`version` follows `source`); null writes no version. */
function root(...versions: (string | null)[]): string {
  return lines(
    ...BACKEND,
    ...versions.flatMap((v, i) => [
      `module "m${i}" {`,
      '  source  = "terraform-aws-modules/vpc/aws"',
      v === null ? '  # no version' : `  version = "${v}"`,
      '}',
    ]),
  );
}

const EVERY_SHAPE = root(
  '5.8.1',
  '= 5.8.1',
  '~> 5.8',
  '~> 5.8, != 5.8.3',
  '>= 5.0',
  '>= 5.0, < 6.0',
  null,
  'latest',
);

ruleTable('module-version-style', [
  {
    name: 'off by default (module_version_style = "any")',
    files: { 'main.tf': EVERY_SHAPE },
    expected: [],
  },
  {
    name: '"any" set explicitly',
    files: { 'main.tf': EVERY_SHAPE },
    config: 'module_version_style = "any"\n',
    expected: [],
  },
  {
    name: '"pessimistic": exact versions and ranges without ~> are findings',
    files: { 'main.tf': EVERY_SHAPE },
    config: 'module_version_style = "pessimistic"\n',
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 6,
        message:
          'module "m0" (registry source "terraform-aws-modules/vpc/aws") has exact version "5.8.1", but module_version_style = "pessimistic" asks root modules for a ~> constraint',
        note: 'Use "~> 5.8.1" (patch releases of 5.8) or "~> 5.8" (minor releases of 5).',
      },
      { module: '.', file: 'main.tf', line: 10, message: 'has exact version "= 5.8.1"', note: '"~> 5.8.1"' },
      {
        module: '.',
        file: 'main.tf',
        line: 22,
        message: 'has version constraint ">= 5.0", but',
        note: 'Use "~> 5.0" (the release line of its lower bound)',
      },
      {
        module: '.',
        file: 'main.tf',
        line: 26,
        message: 'has version constraint ">= 5.0, < 6.0"',
        note: '"~> 5.0"',
      },
    ],
  },
  {
    // go-version (constraint.go constraintPessimistic) holds the segments before the last one
    // written: for a module, "~> 5" is ">= 5" and terraform init installs 6.x
    // (test/modules/remote-module-version-oracle.test.ts); "~> 5, < 6" and "~> 5.0" hold the major.
    name: '"pessimistic": "~> 5" admits every later major version of a module',
    files: { 'main.tf': root('~> 5', '~> 5, < 6', '~> 5.0', '~>5, != 5.1.0', 'v5.8.1') },
    config: 'module_version_style = "pessimistic"\n',
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 6,
        message:
          'module "m0" (registry source "terraform-aws-modules/vpc/aws") has version constraint "~> 5", which admits every later major version (for a module version Terraform reads "~> 5" as ">= 5", hashicorp/go-version; init -upgrade installs the next major release), but module_version_style = "pessimistic" asks root modules for a ~> constraint that holds the major version',
        note: 'Write "~> 5.0" (releases of that major version) or "~> 5.0.0" (patch releases only)',
      },
      {
        module: '.',
        file: 'main.tf',
        line: 18,
        message: 'has version constraint "~>5, != 5.1.0", which admits every later major version',
      },
      { module: '.', file: 'main.tf', line: 22, message: 'has exact version "v5.8.1"', note: '"~> 5.8.1"' },
    ],
  },
  {
    name: '"exact": a "~> 5" says what it admits',
    files: { 'main.tf': root('~> 5') },
    config: 'module_version_style = "exact"\n',
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 6,
        message: 'has version constraint "~> 5", which admits every later major version',
        note: 'Write the release you have tested',
      },
    ],
  },
  {
    name: '"exact": constraints are findings; a bare, "=" or "v" version passes',
    files: {
      'main.tf': root('~> 5.8', '5.8.1', '= 5.8.1', 'v5.8.1', '>= 5.0', '!= 5.8.3'),
    },
    config: 'module_version_style = "exact"\n',
    expected: [
      {
        module: '.',
        file: 'main.tf',
        line: 6,
        message:
          'module "m0" (registry source "terraform-aws-modules/vpc/aws") has version constraint "~> 5.8", but module_version_style = "exact" asks root modules for one exact version',
        note: 'Write the release you have tested',
      },
      { module: '.', file: 'main.tf', line: 22, message: 'module "m4"' },
      {
        module: '.',
        file: 'main.tf',
        line: 26,
        message: 'module "m5"',
        note: 'Write the release you have tested',
      },
    ],
  },
  {
    name: 'only root modules: not shared modules or examples, nor git and local sources',
    files: {
      'main.tf': lines(
        ...BACKEND,
        'module "app" {',
        '  source = "./modules/app"',
        '}',
        'module "git" {',
        '  source = "git::https://example.com/acme/net.git?ref=v1.2.3"',
        '}',
      ),
      'modules/app/main.tf': lines(
        'module "vpc" {',
        '  source  = "terraform-aws-modules/vpc/aws"',
        '  version = ">= 5.0"',
        '}',
      ),
      'examples/basic/main.tf': lines(
        'module "app" {',
        '  source = "../../modules/app"',
        '}',
        'module "sg" {',
        '  source  = "terraform-aws-modules/security-group/aws"',
        '  version = "5.1.0"',
        '}',
      ),
    },
    config: 'module_version_style = "pessimistic"\n',
    expected: [],
  },
  {
    name: 'strict_examples holds examples to it',
    files: {
      'modules/app/main.tf': lines('locals {}'),
      'examples/basic/main.tf': lines(
        'module "app" {',
        '  source = "../../modules/app"',
        '}',
        'module "sg" {',
        '  source  = "terraform-aws-modules/security-group/aws//modules/http-80"',
        '  version = "5.1.0"',
        '}',
      ),
    },
    config: 'module_version_style = "pessimistic"\nstrict_examples = true\n',
    expected: [{ module: 'examples/basic', file: 'examples/basic/main.tf', line: 6, message: 'module "sg"' }],
  },
  {
    name: 'a root decided on weak evidence: a low-confidence notice that says so',
    files: {
      'main.tf': root(),
      'misc/app/main.tf': lines(
        'module "vpc" {',
        '  source  = "app.terraform.io/acme/vpc/aws"',
        '  version = "1.0.0"',
        '}',
      ),
    },
    config: 'module_version_style = "pessimistic"\n',
    expected: [
      {
        module: 'misc/app',
        file: 'misc/app/main.tf',
        line: 3,
        message: `has exact version "1.0.0", but module_version_style = "pessimistic" asks root modules for a ~> constraint (if "misc/app" is a root module; tfguard's guess`,
        severity: 'notice',
      },
    ],
  },
  {
    name: 'the version from an override file; .tf.json',
    files: {
      'main.tf': root('~> 5.8'),
      'main_override.tf': lines('module "m0" {', '  version = "5.8.1"', '}'),
      'extra.tf.json': lines(
        '{',
        '  "module": {',
        '    "sg": {',
        '      "source": "terraform-aws-modules/security-group/aws",',
        '      "version": "5.1.0"',
        '    }',
        '  }',
        '}',
      ),
    },
    config: 'module_version_style = "pessimistic"\n',
    expected: [
      { module: '.', file: 'extra.tf.json', line: 5, message: 'module "sg"' },
      { module: '.', file: 'main_override.tf', line: 2, message: 'module "m0"' },
    ],
  },
]);

test('the finding covers the version string', async () => {
  const text = root('5.8.1');
  const report = await scanFiles({ 'main.tf': text }, { config: 'module_version_style = "pessimistic"\n' });
  const [f] = findingsOf(report, 'module-version-style');
  const start = text.indexOf('"5.8.1"');
  expect(f?.range).toMatchObject({
    file: 'main.tf',
    start: { line: 6, column: 13, byte: start },
    end: { line: 6, column: 20, byte: start + '"5.8.1"'.length },
  });
});
