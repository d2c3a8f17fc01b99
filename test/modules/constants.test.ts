/**
 * `required_providers` values that read variables and locals (Terraform 1.17,
 * hashicorp/terraform#39153): the loader evaluates what is constant and says why the rest is not.
 *
 * The expectations follow the 1.17 implementation (`nodeResolveProviderRequirements`: references
 * limited to `var.*` and `local.*`, variables must be `const = true`, "Only literal values and const
 * variables can be evaluated during init"). The terraform on this machine is 1.11, which rejects
 * every such value ("Version must be specified as a string"), so it cannot serve as the oracle here;
 * test/rules/required-version-too-old-for-feature.test.ts uses it for what it can judge: that an
 * older Terraform rejects the file.
 */
import { afterAll, describe, expect, jest, test } from '@jest/globals';
import type { ProviderRequirement } from '../../src/modules';
import { CONSTANT_PROJECTION } from '../../src/modules';
import { closeParser, load, moduleAt, provider, sharedParser } from '../support/modules';

afterAll(closeParser);

const versions = (entries: string): string => `terraform {
  required_providers {
${entries}
  }
}
`;

/** The parts of a requirement this feature decides. */
function judged(p: ProviderRequirement) {
  return {
    source: p.source,
    constraints: p.constraints,
    version: p.versionExpression && {
      status: p.versionExpression.status,
      detail: p.versionExpression.detail,
    },
  };
}

describe('constant versions', () => {
  test('const variable defaults, nested locals, templates, numbers and object access', async () => {
    const loaded = await load({
      'variables.tf': `variable "aws_version" {
  type    = string
  const   = true
  default = "~> 5.0"
}
`,
      'locals.tf': `locals {
  major    = 5
  aws      = "~> \${local.major}.0"
  nested   = local.aws
  versions = { google = ">= 6.1", list = ["~> 1.0"] }
}
`,
      'versions.tf': versions(`    aws    = { source = "hashicorp/aws", version = var.aws_version }
    random = { source = "hashicorp/random", version = local.nested }
    google = { source = "hashicorp/google", version = local.versions.google }
    null   = { source = "hashicorp/null", version = local.versions.list[0] }
    tls    = { source = "hashicorp/tls", version = ">= \${local.major}.\${local.major}" }`),
    });
    const m = moduleAt(loaded, '.');
    const aws = provider(m, 'aws');
    expect(judged(aws)).toEqual({
      source: 'registry.terraform.io/hashicorp/aws',
      constraints: '~> 5.0',
      version: { status: 'known', detail: 'var.aws_version (its default, variables.tf:4)' },
    });
    expect(aws.versionExpression?.text).toBe('${var.aws_version}');
    expect(aws.versionExpression?.references).toEqual(['var.aws_version']);
    // The finding location is the reference in required_providers, not the default.
    expect(aws.constraintLocation).toMatchObject({
      file: 'versions.tf',
      line: 3,
      range: { start: { line: 3, column: 52 }, end: { line: 3, column: 67 } },
    });
    expect(judged(provider(m, 'random'))).toEqual({
      source: 'registry.terraform.io/hashicorp/random',
      constraints: '~> 5.0',
      version: {
        status: 'known',
        detail: 'local.nested (locals.tf:4), local.aws (locals.tf:3), local.major (locals.tf:2)',
      },
    });
    expect(provider(m, 'random').versionExpression?.references).toEqual([
      'local.nested',
      'local.aws',
      'local.major',
    ]);
    expect(provider(m, 'google').constraints).toBe('>= 6.1');
    expect(provider(m, 'null').constraints).toBe('~> 1.0');
    expect(provider(m, 'tls').constraints).toBe('>= 5.5');
  });

  test('a literal version has no expression; modules without expressions are not read again', async () => {
    const parser = sharedParser();
    const spy = jest.spyOn(parser, 'extract');
    try {
      const loaded = await load({
        'plain/main.tf': versions('    aws = { source = "hashicorp/aws", version = "~> 5.0" }'),
        'plain/vars.tf': 'variable "v" {\n  const   = true\n  default = "1"\n}\n',
        'dyn/main.tf': versions('    aws = { source = "hashicorp/aws", version = var.v }'),
        'dyn/vars.tf': 'variable "v" {\n  const   = true\n  default = "~> 5.1"\n}\n',
      });
      expect(provider(moduleAt(loaded, 'plain'), 'aws').versionExpression).toBeUndefined();
      expect(provider(moduleAt(loaded, 'dyn'), 'aws').constraints).toBe('~> 5.1');
      const second = spy.mock.calls.filter((c) => c[2] === CONSTANT_PROJECTION).map((c) => c[0]);
      expect(second.sort()).toEqual(['dyn/main.tf', 'dyn/vars.tf']);
    } finally {
      spy.mockRestore();
    }
  });

  test('override files: variable defaults and locals merged, entries replaced', async () => {
    const loaded = await load({
      'main.tf': `variable "v" {
  const   = true
  default = ">= 1.0"
}
locals {
  l = ">= 2.0"
}
${versions(`    aws    = { source = "hashicorp/aws", version = var.v }
    random = { source = "hashicorp/random", version = "~> 3.0" }`)}`,
      'override.tf': `variable "v" {
  default = "~> 1.5"
}
locals {
  l = "~> 2.5"
}
`,
      'z_override.tf': versions('    random = { source = "hashicorp/random", version = local.l }'),
    });
    const m = moduleAt(loaded, '.');
    expect(judged(provider(m, 'aws'))).toEqual({
      source: 'registry.terraform.io/hashicorp/aws',
      constraints: '~> 1.5',
      version: { status: 'known', detail: 'var.v (its default, override.tf:2)' },
    });
    expect(judged(provider(m, 'random'))).toEqual({
      source: 'registry.terraform.io/hashicorp/random',
      constraints: '~> 2.5',
      version: { status: 'known', detail: 'local.l (override.tf:5)' },
    });
    expect(provider(m, 'random').constraintLocation).toMatchObject({ file: 'z_override.tf', line: 3 });
  });

  test('JSON syntax: templates in required_providers, literal defaults', async () => {
    const loaded = await load({
      'main.tf.json': JSON.stringify({
        variable: { v: { const: true, default: '~> 4.0' }, lit: { const: true, default: '${x}' } },
        locals: { major: 3, random: '~> ${local.major}.1' },
        terraform: {
          required_providers: {
            aws: { source: 'hashicorp/aws', version: '${var.v}' },
            random: { source: 'hashicorp/random', version: '${local.random}' },
            null: { source: 'hashicorp/null', version: '${var.lit}' },
            tls: { source: 'hashicorp/tls', version: 'var.v' },
          },
        },
      }),
    });
    const m = moduleAt(loaded, '.');
    expect(provider(m, 'aws').constraints).toBe('~> 4.0');
    expect(provider(m, 'random').constraints).toBe('~> 3.1');
    // A JSON default is read as written, so "${x}" is the (invalid) constraint itself.
    expect(judged(provider(m, 'null'))).toMatchObject({ constraints: '${x}', version: { status: 'known' } });
    // A JSON string without "${" is a literal, not a reference.
    expect(judged(provider(m, 'tls'))).toEqual({
      source: 'registry.terraform.io/hashicorp/tls',
      constraints: 'var.v',
      version: undefined,
    });
  });
});

describe('values tfguard cannot know', () => {
  test.each([
    [
      'a const variable without a default',
      'variable "v" {\n  const = true\n}\n',
      'var.v',
      'var.v has no default (its value comes from -var, a .tfvars file or the calling module)',
    ],
    [
      'a function call',
      'locals {\n  l = format(">= %s", "1.0")\n}\n',
      'local.l',
      'format(">= %s", "1.0") is an expression tfguard does not evaluate (a function call, an operator or a conditional)',
    ],
    [
      'a function call over a const variable',
      'variable "v" {\n  const   = true\n  default = "1"\n}\nlocals {\n  l = "${var.v == "1" ? ">= 1.0" : ">= 2.0"}"\n}\n',
      'local.l',
      'var.v == "1" ? ">= 1.0" : ">= 2.0" is an expression tfguard does not evaluate',
    ],
    ['a null default', 'variable "v" {\n  const   = true\n  default = null\n}\n', 'var.v', 'is null'],
    [
      'a template directive',
      'locals {\n  l = "%{ if true }>= 1.0%{ endif }"\n}\n',
      'local.l',
      'template directive',
    ],
  ])('%s', async (_name, decls, ref, detail) => {
    const loaded = await load({
      'vars.tf': decls,
      'main.tf': versions(`    aws = { source = "hashicorp/aws", version = ${ref} }`),
    });
    const aws = provider(moduleAt(loaded, '.'), 'aws');
    expect(aws.constraints).toBeNull();
    expect(aws.versionExpression?.status).toBe('unknown');
    expect(aws.versionExpression?.detail).toContain(detail);
    expect(aws.constraintLocation).toMatchObject({ file: 'main.tf', line: 3 });
  });
});

describe('values Terraform rejects', () => {
  test.each([
    [
      'a variable without const = true',
      'variable "v" {\n  default = "~> 5.0"\n}\n',
      'var.v',
      'var.v is not declared with const = true',
    ],
    ['an undeclared variable', '', 'var.nope', 'var.nope is not declared in this module'],
    ['an undeclared local', '', 'local.nope', 'local.nope is not declared in this module'],
    [
      'locals in a cycle',
      'locals {\n  a = local.b\n  b = "${local.a}"\n}\n',
      'local.a',
      'locals refer to each other in a cycle (local.a → local.b → local.a)',
    ],
    [
      'a resource attribute',
      'resource "null_resource" "x" {}\n',
      'null_resource.x.id',
      'it refers to null_resource.x.id, which Terraform cannot evaluate during init',
    ],
    [
      'a resource attribute inside a function call',
      'locals {\n  l = lower(terraform.workspace)\n}\n',
      'local.l',
      'it refers to terraform.workspace, which Terraform cannot evaluate during init',
    ],
    [
      'a non-const variable inside a function call',
      'variable "v" {}\nlocals {\n  l = format(">= %s", var.v)\n}\n',
      'local.l',
      'var.v is not declared with const = true',
    ],
    ['a list', 'locals {\n  l = [">= 1.0"]\n}\n', 'local.l', 'is a list, not a string'],
    [
      'a reference in a default',
      'variable "v" {\n  const   = true\n  default = "${local.x}"\n}\nlocals {\n  x = ">= 1"\n}\n',
      'var.v',
      'the default of var.v refers to other values',
    ],
    ['a missing attribute', 'locals {\n  l = { a = "1" }\n}\n', 'local.l.b', 'local.l has no element .b'],
  ])('%s', async (_name, decls, ref, detail) => {
    const loaded = await load({
      'vars.tf': decls,
      'main.tf': versions(`    aws = { source = "hashicorp/aws", version = ${ref} }`),
    });
    const aws = provider(moduleAt(loaded, '.'), 'aws');
    expect(aws.versionExpression?.status).toBe('rejected');
    expect(aws.versionExpression?.detail).toContain(detail);
    // The text as written stays the constraint, so invalid-version-constraint reports it.
    expect(aws.constraints).toBe(aws.versionExpression?.text);
  });

  test('OpenTofu reads required_providers values as written', async () => {
    const loaded = await load({
      'main.tofu': `variable "v" {
  const   = true
  default = "~> 5.0"
}
${versions('    aws = { source = "hashicorp/aws", version = var.v }')}`,
    });
    const aws = provider(moduleAt(loaded, '.'), 'aws');
    expect(loaded.engine).toBe('opentofu');
    expect(judged(aws)).toEqual({
      source: 'registry.opentofu.org/hashicorp/aws',
      constraints: '${var.v}',
      version: {
        status: 'rejected',
        detail: 'OpenTofu does not evaluate variables or locals in required_providers',
      },
    });
  });
});

describe('constant sources', () => {
  test('a source from locals is evaluated; an unknown one keeps the implied source, flagged', async () => {
    const loaded = await load({
      'main.tf': `variable "ns" {
  const = true
}
locals {
  ns = "mycorp"
}
${versions(`    aws  = { source = "\${local.ns}/aws", version = "~> 5.0" }
    http = { source = "\${var.ns}/http", version = "~> 3.0" }`)}`,
    });
    const m = moduleAt(loaded, '.');
    const aws = provider(m, 'aws');
    expect(aws.source).toBe('registry.terraform.io/mycorp/aws');
    expect(aws.sourceExplicit).toBe(true);
    expect(aws.sourceExpression).toMatchObject({ status: 'known', text: '${local.ns}/aws' });
    const http = provider(m, 'http');
    expect(http.sourceExpression).toMatchObject({ status: 'unknown', references: ['var.ns'] });
    expect(http.source).toBe('registry.terraform.io/hashicorp/http');
    expect(http.constraints).toBe('~> 3.0');
  });
});
