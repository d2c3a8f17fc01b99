/**
 * src/addrs: provider source addresses and module source addresses, the behaviour of Terraform's
 * internal/addrs (`ParseProviderSourceString`, `ParseModuleSource`, `IsBuiltIn`, `ForDisplay`);
 * the parsing cases were checked with `terraform providers` / `terraform get` 1.11.
 */
import {
  classifyModuleSource,
  cleanRelativePath,
  isCleanRelativePath,
  impliedProviderName,
  impliedProviderSource,
  isBuiltinProviderSource,
  parseProviderSource,
  parseRemoteModuleSource,
  resolveLocalTarget,
  shortSource,
  splitPackageSubdir,
} from '../../src/addrs';
import { posix } from 'node:path';

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
    // terraform init: a query after the subdir moves onto the package, which is no registry address
    ['example.com/acme/vpc/aws//modules/x?ref=v1', 'remote'],
    ['terraform-aws-modules/vpc/aws//modules/x?ref=v1', 'remote'],
  ])('%s is %s', (raw, kind) => {
    expect(classifyModuleSource(raw)).toBe(kind);
  });

  test.each([
    [
      'git::https://example.com/repo.git//sub/dir?ref=v1&depth=1',
      'git::https://example.com/repo.git?ref=v1&depth=1',
      'sub/dir',
    ],
    ['https://example.com/mod.zip', 'https://example.com/mod.zip', ''],
    ['https://example.com/mod.zip?archive=zip//x', 'https://example.com/mod.zip?archive=zip//x', ''],
    ['github.com/acme/mod//sub', 'github.com/acme/mod', 'sub'],
    ['git@github.com:acme/mod.git//a//b?ref=x', 'git@github.com:acme/mod.git?ref=x', 'a/b'],
    // a `//` or `://` in the query is the query's (go-getter searches only before the first `?`)
    ['git::https://example.com/repo.git?ref=v1//sub', 'git::https://example.com/repo.git?ref=v1//sub', ''],
    ['github.com/acme/mod//sub?u=https://x', 'github.com/acme/mod?u=https://x', 'sub'],
    ['https://example.com/a?x=//y//z', 'https://example.com/a?x=//y//z', ''],
    // the subdirectory is cleaned as Go's path.Clean does (a rooted one still lands in the package)
    ['git::https://example.com/repo.git//sub/', 'git::https://example.com/repo.git', 'sub'],
    ['git::https://example.com/repo.git//./sub', 'git::https://example.com/repo.git', 'sub'],
    ['git::https://example.com/repo.git//a/../b', 'git::https://example.com/repo.git', 'b'],
    ['git::https://example.com/repo.git///sub', 'git::https://example.com/repo.git', 'sub'],
    ['git::https://example.com/repo.git///../sub', 'git::https://example.com/repo.git', 'sub'],
    ['git::https://example.com/repo.git//.', 'git::https://example.com/repo.git', ''],
    ['git::https://example.com/repo.git//', 'git::https://example.com/repo.git', ''],
    ['git::https://example.com/repo.git//../x', 'git::https://example.com/repo.git', '../x'],
    ['acme/vpc/aws//modules/x', 'acme/vpc/aws', 'modules/x'],
  ])('splitPackageSubdir(%s)', (raw, pkg, subdir) => {
    expect(splitPackageSubdir(raw)).toEqual({ pkg, subdir });
  });

  test('only remote sources parse as remote', () => {
    expect(parseRemoteModuleSource('./x')).toBeNull();
    expect(parseRemoteModuleSource('acme/vpc/aws')).toBeNull();
    expect(parseRemoteModuleSource('')).toBeNull();
    expect(parseRemoteModuleSource('git::https://example.com/r.git//m?ref=v1')).toEqual({
      getter: 'git',
      pkg: 'git::https://example.com/r.git?ref=v1',
      subdir: 'm',
      query: new Map([['ref', 'v1']]),
    });
    // Go's url.ParseQuery drops a pair it cannot unescape
    expect(parseRemoteModuleSource('git::https://example.com/r.git?ref=%zz&depth=1')?.query).toEqual(
      new Map([['depth', '1']]),
    );
    expect(parseRemoteModuleSource('git::https://example.com/r.git?ref=v1+x')?.query.get('ref')).toBe('v1 x');
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

  // The check that lets cleanRelativePath (and the Terragrunt evaluator's path functions) return a
  // path unchanged: when it says clean, cleaning and Node's posix.normalize leave the path as it is
  // (`.` and `..` are left to the full cleaning).
  test.each<[string, boolean]>([
    ['a', true],
    ['a/b/c.tf', true],
    ['a/.hidden/b', true],
    ['a/.../b', true],
    ['a/..b/c', true],
    ['a/b../c', true],
    ['', false],
    ['.', false],
    ['..', false],
    ['./a', false],
    ['../a', false],
    ['a/./b', false],
    ['a/../b', false],
    ['a/..', false],
    ['a/.', false],
    ['a//b', false],
    ['a/', false],
    ['/a', false],
  ])('isCleanRelativePath(%j) is %s', (p, clean) => {
    expect(isCleanRelativePath(p)).toBe(clean);
    if (clean) {
      expect(cleanRelativePath(p)).toBe(p);
      expect(posix.normalize(p)).toBe(p);
    }
  });
});

describe('one display form and one built-in check for provider addresses', () => {
  test.each([
    ['registry.terraform.io/hashicorp/aws', undefined, 'hashicorp/aws'],
    ['registry.opentofu.org/hashicorp/aws', undefined, 'hashicorp/aws'],
    ['Registry.Terraform.IO/hashicorp/aws', undefined, 'hashicorp/aws'],
    ['registry.terraform.io/hashicorp/aws', 'terraform', 'hashicorp/aws'],
    ['registry.opentofu.org/hashicorp/aws', 'terraform', 'registry.opentofu.org/hashicorp/aws'],
    ['registry.terraform.io/hashicorp/aws', 'opentofu', 'registry.terraform.io/hashicorp/aws'],
    ['example.com/acme/thing', undefined, 'example.com/acme/thing'],
    ['hashicorp/aws', undefined, 'hashicorp/aws'],
  ] as const)('shortSource(%s, %s) = %s', (source, engine, shown) => {
    expect(shortSource(source, engine)).toBe(shown);
  });

  test.each([
    ['terraform.io/builtin/terraform', true],
    ['Terraform.IO/builtin/terraform', true],
    ['terraform.io/builtin/other', true],
    ['registry.terraform.io/hashicorp/terraform', false],
    ['registry.terraform.io/hashicorp/aws', false],
  ] as const)('isBuiltinProviderSource(%s) = %s', (source, builtin) => {
    expect(isBuiltinProviderSource(source)).toBe(builtin);
  });

  it('the implied provider for the local name terraform is the built-in one', () => {
    expect(isBuiltinProviderSource(impliedProviderSource('terraform', 'terraform'))).toBe(true);
    expect(isBuiltinProviderSource(impliedProviderSource('aws', 'opentofu'))).toBe(false);
  });
});
