/**
 * The policy file (src/policy): the issue's syntax, read by tfguard's HCL parser, and every error a
 * policy can have rejected whole with the file and line (`invalid-policy`), never applied in part.
 */
import { InputError } from '../../src/errors';
import { closeSharedParser, readPolicy } from '../../src/scan';
import {
  admitsOutside,
  globMatches,
  intersectConstraints,
  moduleSourceAllowed,
  providerPolicy,
  registryAllowed,
  type PolicyProvider,
} from '../../src/policy';
import { parseConstraints } from '../../src/constraints';

afterAll(closeSharedParser);

/** The policy of issue 23, verbatim. */
export const ISSUE_POLICY = `provider "hashicorp/aws" {
  versions = ">= 5.40, < 7.0"      # what the organisation allows
}
provider "hashicorp/template" {
  deny   = true
  reason = "archived upstream; use templatefile()"
}
allowed_registries = ["registry.terraform.io", "registry.opentofu.org"]   # provider hosts
module_sources     = ["terraform-aws-modules/*", "git::https://github.com/acme/*"] # local paths always allowed
required_platforms = ["linux_amd64", "darwin_arm64"]
exception {
  repository = "acme/legacy"          # glob
  rule       = "policy-provider-version"
  provider   = "hashicorp/aws"        # optional
  reason     = "migration planned for Q1"   # required
  expires    = "2027-03-31"           # required
}
`;

const read = (text: string) => readPolicy('org/policy.hcl', Buffer.from(text));

describe('policy file', () => {
  test("the issue's policy is read in full", async () => {
    const p = await read(ISSUE_POLICY);
    expect(p.file).toBe('org/policy.hcl');
    expect(
      p.providers.map((x) => [
        x.pattern.name,
        x.pattern.host,
        x.versions?.text ?? null,
        x.deny,
        x.reason,
        x.line,
      ]),
    ).toEqual([
      ['hashicorp/aws', null, '>= 5.40, < 7.0', false, null, 1],
      ['hashicorp/template', null, null, true, 'archived upstream; use templatefile()', 4],
    ]);
    expect(p.allowedRegistries).toEqual(['registry.terraform.io', 'registry.opentofu.org']);
    expect(p.moduleSources).toEqual(['terraform-aws-modules/*', 'git::https://github.com/acme/*']);
    expect(p.requiredPlatforms).toEqual(['linux_amd64', 'darwin_arm64']);
    expect(p.exceptions).toEqual([
      {
        repository: 'acme/legacy',
        rule: 'policy-provider-version',
        provider: { text: 'hashicorp/aws', host: null, name: 'hashicorp/aws' },
        reason: 'migration planned for Q1',
        expires: '2027-03-31',
        line: 11,
      },
    ]);
  });

  test.each([
    [
      'an unknown block',
      'providers "hashicorp/aws" {\n  versions = ">= 5.0"\n}\n',
      1,
      'unknown block "providers"',
    ],
    [
      'an unknown top-level attribute',
      'allowed_registry = ["registry.terraform.io"]\n',
      1,
      'unknown setting "allowed_registry"',
    ],
    [
      'an unknown attribute in a provider',
      'provider "hashicorp/aws" {\n  version = ">= 5.0"\n}\n',
      2,
      'unknown argument "version" in provider "hashicorp/aws"',
    ],
    [
      'a bad version constraint',
      '\nprovider "hashicorp/aws" {\n  versions = ">= five"\n}\n',
      3,
      '"versions" is not a valid version constraint',
    ],
    [
      'a bad date',
      'exception {\n  repository = "a/*"\n  rule = "policy-provider-version"\n  reason = "r"\n  expires = "2027-02-30"\n}\n',
      5,
      '"expires" must be a date written YYYY-MM-DD',
    ],
    [
      'a date in another format',
      'exception {\n  repository = "a/*"\n  rule = "policy-provider-version"\n  reason = "r"\n  expires = "31/03/2027"\n}\n',
      5,
      '"expires" must be a date',
    ],
    [
      'an exception without reason',
      '# c\nexception {\n  repository = "a/*"\n  rule = "policy-provider-version"\n  expires = "2027-03-31"\n}\n',
      2,
      'the exception has no "reason" (required)',
    ],
    [
      'an exception without expires',
      'exception {\n  repository = "a/*"\n  rule = "policy-provider-version"\n  reason = "r"\n}\n',
      1,
      'the exception has no "expires" (required)',
    ],
    [
      'an exception with an empty reason',
      'exception {\n  repository = "a/*"\n  rule = "policy-provider-version"\n  reason = " "\n  expires = "2027-03-31"\n}\n',
      4,
      '"reason" must not be empty',
    ],
    [
      'an exception naming a rule that is not a policy rule',
      'exception {\n  repository = "a/*"\n  rule = "lock-missing"\n  reason = "r"\n  expires = "2027-03-31"\n}\n',
      3,
      '"rule" must be a policy rule',
    ],
    [
      'a denied provider without a reason',
      'provider "hashicorp/template" {\n  deny = true\n}\n',
      1,
      'denied without a reason',
    ],
    [
      'a provider block with nothing to enforce',
      'provider "hashicorp/aws" {\n}\n',
      1,
      'sets neither versions nor deny',
    ],
    [
      'a provider twice',
      'provider "hashicorp/aws" {\n  versions = ">= 5.0"\n}\nprovider "hashicorp/aws" {\n  versions = ">= 5.1"\n}\n',
      4,
      'already set on line 1',
    ],
    [
      'a bad provider address',
      'provider "aws" {\n  versions = ">= 5.0"\n}\n',
      1,
      'must be written NAMESPACE/TYPE',
    ],
    ['a bad platform', 'required_platforms = ["linux-amd64"]\n', 1, 'not of the form os_arch'],
    [
      'a list of non-strings',
      'module_sources = [1]\n',
      1,
      '"module_sources" must be a list of literal strings',
    ],
    ['a syntax error', 'provider "hashicorp/aws" {\n  versions = \n}\n', 2, 'cannot be parsed'],
  ])('%s is an input error naming the file and line', async (_name, text, line, message) => {
    const err = await read(text).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('invalid-policy');
    expect((err as InputError).message).toContain(`policy org/policy.hcl:${line}: `);
    expect((err as InputError).message).toContain(message);
  });

  test('a provider block with a host wins over one without; both public registries match a bare name', async () => {
    const p = await read(
      'provider "hashicorp/aws" {\n  versions = ">= 5.0"\n}\nprovider "registry.opentofu.org/hashicorp/aws" {\n  versions = ">= 5.5"\n}\n',
    );
    expect(providerPolicy(p, 'registry.terraform.io/hashicorp/aws')?.line).toBe(1);
    expect(providerPolicy(p, 'registry.opentofu.org/hashicorp/aws')?.line).toBe(4);
    expect(providerPolicy(p, 'example.com/hashicorp/aws')).toBeUndefined();
  });

  test('module sources: globs cross "/", local paths always pass, the public host is optional', async () => {
    const p = await read(ISSUE_POLICY);
    expect(moduleSourceAllowed(p, 'terraform-aws-modules/vpc/aws')).toBe(true);
    expect(moduleSourceAllowed(p, 'registry.terraform.io/terraform-aws-modules/vpc/aws')).toBe(true);
    expect(moduleSourceAllowed(p, 'git::https://github.com/acme/net.git?ref=v1.2.0')).toBe(true);
    expect(moduleSourceAllowed(p, 'git::https://github.com/evil/net.git')).toBe(false);
    expect(moduleSourceAllowed(p, 'cloudposse/label/null')).toBe(false);
    expect(moduleSourceAllowed(p, './modules/net')).toBe(true);
    expect(moduleSourceAllowed(p, '../shared')).toBe(true);
    expect(globMatches('acme/*', 'ACME/legacy')).toBe(true);
    expect(globMatches('acme/legacy', 'acme/legacy2')).toBe(false);
  });

  test('a parsed policy is frozen, and its remembered answers are its own', async () => {
    // The rules' answers are remembered per policy object (PolicyAnswers): a policy that could
    // change after parsing, or answers shared between policies, would give stale ones.
    const p = await read(ISSUE_POLICY);
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(p.providers)).toBe(true);
    expect(Object.isFrozen(p.providers[0])).toBe(true);
    expect(Object.isFrozen(p.providers[0]?.versions?.constraints)).toBe(true);
    expect(Object.isFrozen(p.moduleSources)).toBe(true);
    expect(Object.isFrozen(p.exceptions[0])).toBe(true);
    expect(() => (p.providers as PolicyProvider[]).push(p.providers[0] as PolicyProvider)).toThrow(TypeError);
    const other = await read(
      'provider "hashicorp/aws" {\n  deny   = true\n  reason = "no"\n}\nmodule_sources = ["evil/*"]\nallowed_registries = ["example.com"]\n',
    );
    for (let round = 0; round < 2; round++) {
      expect(providerPolicy(p, 'registry.terraform.io/hashicorp/aws')?.deny).toBe(false);
      expect(providerPolicy(other, 'registry.terraform.io/hashicorp/aws')?.deny).toBe(true);
      expect(moduleSourceAllowed(p, 'terraform-aws-modules/vpc/aws')).toBe(true);
      expect(moduleSourceAllowed(other, 'terraform-aws-modules/vpc/aws')).toBe(false);
      expect(registryAllowed(p, 'registry.terraform.io/hashicorp/aws')).toBe(true);
      expect(registryAllowed(other, 'registry.terraform.io/hashicorp/aws')).toBe(false);
    }
    // Past the cap the answers are forgotten, never wrong.
    for (let i = 0; i < 5000; i++) {
      expect(moduleSourceAllowed(p, `terraform-aws-modules/m${i}/aws`)).toBe(true);
      expect(moduleSourceAllowed(p, `cloudposse/m${i}/aws`)).toBe(false);
    }
    expect(moduleSourceAllowed(p, 'terraform-aws-modules/vpc/aws')).toBe(true);
  });
});

describe('version ranges', () => {
  const c = (s: string) => parseConstraints(s);
  test.each([
    ['~> 5.47.0', '>= 5.40, < 7.0', false],
    ['~> 5.0', '>= 5.40, < 7.0', true],
    ['>= 5.40', '>= 5.40, < 7.0', true],
    ['>= 5.41, < 6.0', '>= 5.40, < 7.0', false],
    ['5.50.0', '>= 5.40, < 7.0', false],
    ['6.99.1', '>= 5.40, < 7.0', false],
    ['7.0.0', '>= 5.40, < 7.0', true],
    ['~> 6.0', '~> 6.1', true],
    ['~> 6.1.0', '~> 6.1', false],
    ['>= 6.0, != 6.3.0', '!= 6.3.0', false],
    ['>= 6.0', '!= 6.3.0', true],
  ])('"%s" admits versions outside "%s": %s', (constraint, allowed, expected) => {
    expect(admitsOutside(c(constraint), c(allowed))).toBe(expected);
  });

  test.each([
    ['>= 5.0', '>= 5.40, < 7.0', '>= 5.40, < 7.0'],
    ['~> 5.0', '>= 5.40, < 7.0', '~> 5.0, >= 5.40'],
    ['>=5.10,<8', '>= 5.40, < 7.0', '>= 5.40, < 7.0'],
    ['~> 5.47.0', '>= 5.50, < 7.0', null],
    ['>= 6.2', '>= 5.40, < 7.0', '>= 6.2, < 7.0'],
  ])('"%s" narrowed into "%s" is %s', (constraint, allowed, expected) => {
    expect(intersectConstraints(c(constraint), c(allowed))).toBe(expected);
  });
});
