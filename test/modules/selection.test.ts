import { matchGlob, selectConfigFiles } from '../../src/modules';
import {
  classifyModuleSource,
  cleanRelativePath,
  impliedProviderName,
  parseProviderSource,
  resolveLocalTarget,
} from '../../src/modules/sources';

describe('matchGlob', () => {
  test.each([
    ['envs/*', 'envs/prod', true],
    ['envs/*', 'envs/prod/eu', false],
    ['envs/*', 'envs', false],
    ['envs/**', 'envs', true],
    ['envs/**', 'envs/prod/eu', true],
    ['**', '.', true],
    ['**', 'a/b/c', true],
    ['.', '.', true],
    ['.', 'a', false],
    ['./live/*', 'live/x', true],
    ['live/*/', 'live/x', true],
    ['**/modules/**', 'modules', true],
    ['**/modules/**', 'a/modules/b/c', true],
    ['**/modules/**', 'a/module/b', false],
    ['modules/?', 'modules/a', true],
    ['modules/?', 'modules/ab', false],
    ['a*c', 'abbbc', true],
    ['a*c', 'a/c', false],
    ['a.c', 'abc', false],
    ['a+b', 'a+b', true],
    ['stacks/**/prod', 'stacks/prod', true],
    ['stacks/**/prod', 'stacks/eu/west/prod', true],
    ['stacks/**/prod', 'stacks/eu/west/dev', false],
  ])('%s ~ %s → %s', (pattern, path, expected) => {
    expect(matchGlob(pattern, path)).toBe(expected);
  });
});

describe('selectConfigFiles', () => {
  const files = [
    'm/main.tf',
    'm/.hidden.tf',
    'm/main.tf~',
    'm/#main.tf#',
    'm/.#main.tf',
    'm/vars.tf.json',
    'm/z_override.tf',
    'm/override.tf.json',
    'm/a_override.tf',
    'm/net.tofu',
    'm/net.tf',
    'm/data.tofu.json',
    'm/data.tf.json',
    'm/data.tf',
    'm/README.md',
    'm/.terraform.lock.hcl',
    'm/terraform.tfvars',
    'm/x_override.tofu',
  ];

  test('terraform reads .tf and .tf.json only, ignores editor leftovers, finds overrides', () => {
    const s = selectConfigFiles(files, 'terraform');
    expect(s.selected).toEqual([
      'm/a_override.tf',
      'm/data.tf',
      'm/data.tf.json',
      'm/main.tf',
      'm/net.tf',
      'm/override.tf.json',
      'm/vars.tf.json',
      'm/z_override.tf',
    ]);
    expect(s.ignored).toEqual(['m/#main.tf#', 'm/.#main.tf', 'm/.hidden.tf', 'm/main.tf~']);
    // Lexical order of application.
    expect(s.overrides).toEqual(['m/a_override.tf', 'm/override.tf.json', 'm/z_override.tf']);
  });

  test('opentofu also reads .tofu files, which shadow their .tf twin of the same syntax', () => {
    const s = selectConfigFiles(files, 'opentofu');
    expect(s.selected).toEqual([
      'm/a_override.tf',
      'm/data.tf',
      'm/data.tofu.json',
      'm/main.tf',
      'm/net.tofu',
      'm/override.tf.json',
      'm/vars.tf.json',
      'm/x_override.tofu',
      'm/z_override.tf',
    ]);
    expect(s.ignored).toEqual([
      'm/#main.tf#',
      'm/.#main.tf',
      'm/.hidden.tf',
      'm/data.tf.json',
      'm/main.tf~',
      'm/net.tf',
    ]);
    expect(s.overrides).toEqual([
      'm/a_override.tf',
      'm/override.tf.json',
      'm/x_override.tofu',
      'm/z_override.tf',
    ]);
  });

  test('an override file shadowed by its .tofu twin is not applied', () => {
    const s = selectConfigFiles(['override.tf', 'override.tofu', 'main.tf'], 'opentofu');
    expect(s.selected).toEqual(['main.tf', 'override.tofu']);
    expect(s.overrides).toEqual(['override.tofu']);
    expect(s.ignored).toEqual(['override.tf']);
  });

  test('names only differing by an override-like infix are primary files', () => {
    const s = selectConfigFiles(
      ['override_x.tf', 'my-override.tf', 'xoverride.tf', '_override.tf'],
      'terraform',
    );
    expect(s.overrides).toEqual(['_override.tf']);
  });

  test('lexical order is byte order', () => {
    const s = selectConfigFiles(['b.tf', 'B.tf', 'a.tf', 'é.tf', 'z.tf'], 'terraform');
    expect(s.selected).toEqual(['B.tf', 'a.tf', 'b.tf', 'z.tf', 'é.tf']);
  });
});

describe('provider source addresses', () => {
  test.each([
    ['hashicorp/aws', 'terraform', 'registry.terraform.io/hashicorp/aws'],
    ['hashicorp/aws', 'opentofu', 'registry.opentofu.org/hashicorp/aws'],
    ['AWS', 'terraform', 'registry.terraform.io/hashicorp/aws'],
    ['HashiCorp/AWS', 'terraform', 'registry.terraform.io/hashicorp/aws'],
    ['Registry.Terraform.IO/HashiCorp/AWS', 'terraform', 'registry.terraform.io/hashicorp/aws'],
    ['registry.terraform.io:443/hashicorp/aws', 'opentofu', 'registry.terraform.io/hashicorp/aws'],
    ['example.com:8443/Acme/Foo', 'terraform', 'example.com:8443/acme/foo'],
    ['terraform.io/builtin/terraform', 'terraform', 'terraform.io/builtin/terraform'],
    ['BÜCHER.example/a/b', 'terraform', 'bücher.example/a/b'],
  ] as const)('%s (%s) → %s', (raw, engine, expected) => {
    expect(parseProviderSource(raw, engine)).toEqual({ ok: true, source: expected });
  });

  test.each([
    ['a/b/c/d', /format/],
    ['', /format/],
    [' hashicorp/aws', /namespace/],
    ['hashicorp/terraform-provider-aws', /terraform-provider-/],
    ['acme/foo_bar', /type "foo_bar"/],
    ['acme/-x', /type "-x"/],
    ['xn--bcher-kva.example/a/b', /punycode/],
  ])('%s is rejected', (raw, message) => {
    const r = parseProviderSource(raw, 'terraform');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });

  test('resource types imply the lowercased first word', () => {
    expect(impliedProviderName('aws_instance')).toBe('aws');
    expect(impliedProviderName('AWS_instance')).toBe('aws');
    expect(impliedProviderName('null')).toBe('null');
    expect(impliedProviderName('aws-x_y')).toBe('aws-x');
  });
});

describe('module sources', () => {
  test.each([
    ['./mod', 'local'],
    ['../mod', 'local'],
    ['.\\mod', 'local'],
    ['terraform-aws-modules/vpc/aws', 'registry'],
    ['terraform-aws-modules/vpc/aws//modules/vpc-endpoints', 'registry'],
    ['app.terraform.io/acme/vpc/aws', 'registry'],
    ['github.com/acme/vpc/aws', 'remote'],
    ['github.com/terraform-aws-modules/terraform-aws-vpc', 'remote'],
    ['git::https://example.com/vpc.git?ref=v1.2.0', 'remote'],
    ['s3::https://s3-eu-west-1.amazonaws.com/bucket/vpc.zip', 'remote'],
    ['https://example.com/vpc-module.zip', 'remote'],
    ['acme/vpc/AWS', 'remote'],
    ['mod', 'remote'],
  ])('%s is %s', (raw, kind) => {
    expect(classifyModuleSource(raw)).toBe(kind);
  });

  test('missing sources are unknown', () => {
    expect(classifyModuleSource(null)).toBe('unknown');
    expect(classifyModuleSource('')).toBe('unknown');
  });

  test('local targets are resolved from the caller and normalized', () => {
    expect(resolveLocalTarget('.', './modules/vpc')).toBe('modules/vpc');
    expect(resolveLocalTarget('examples/complete', '../../')).toBe('.');
    expect(resolveLocalTarget('examples/complete', '../..//modules/x/')).toBe('modules/x');
    expect(resolveLocalTarget('a', '.\\b\\c')).toBe('a/b/c');
    expect(resolveLocalTarget('a', '../../outside')).toBe('../outside');
    expect(cleanRelativePath('a/./b/../../..')).toBe('..');
  });
});
