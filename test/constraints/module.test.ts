/**
 * Module version constraints as Terraform reads them: hashicorp/go-version alone (constraint.go
 * `constraintPessimistic`, version.go `NewVersion`/`Compare`), as internal/initwd/module_install.go
 * `installRegistryModule` applies it; provider constraints keep apparentlymart/go-versions'
 * semantics (test/constraints/constraints.test.ts, oracle.test.ts). The `~> 5` rows are the ones that differ, and
 * they are checked against `terraform init` in test/modules/remote-module-version-oracle.test.ts.
 */
import {
  moduleConstraintBounded,
  moduleVersionAllowed,
  satisfies,
  selectModuleRelease,
  unboundedPessimistic,
  validateModuleConstraints,
} from '../../src/constraints';

describe('go-version checks (module versions)', () => {
  // [constraint, version, allowed for a module, allowed for a provider (null: not a provider constraint)]
  test.each<[string, string, boolean, boolean | null]>([
    // constraintPessimistic holds the segments before the last one written: with one written, none
    ['~> 5', '5.0.0', true, true],
    ['~> 5', '5.21.0', true, true],
    ['~> 5', '6.0.0', true, false],
    ['~> 5', '7.3.1', true, false],
    ['~> 5', '4.9.9', false, false],
    ['~> 5.0', '5.21.0', true, true],
    ['~> 5.0', '6.0.0', false, false],
    ['~> 5.2', '5.1.9', false, false],
    ['~> 5.2.3', '5.2.9', true, true],
    ['~> 5.2.3', '5.3.0', false, false],
    ['~> 5.2.3', '5.2.2', false, false],
    ['~>5', '9.0.0', true, false],
    // the rest agrees with the provider semantics on releases
    ['>= 5.0, < 6.0', '5.99.0', true, true],
    ['>= 5.0, < 6.0', '6.0.0', false, false],
    ['5.8.1', '5.8.1', true, true],
    ['= 5.8', '5.8.0', true, true],
    ['!= 5.8.3', '5.8.3', false, false],
    ['> 5', '5.0.1', true, true],
    ['<= 5.1', '5.1.0', true, true],
    // go-version's grammar: a "v" prefix, four segments
    ['v5.8.1', '5.8.1', true, null],
    ['~> 1.2.3.4', '1.2.3.9', true, null],
    ['~> 1.2.3.4', '1.2.4.0', false, null],
    // pre-releases only when requested exactly
    ['~> 5', '6.0.0-beta1', false, false],
    ['>= 5.0', '6.0.0-rc1', false, false],
    ['6.0.0-rc1', '6.0.0-rc1', true, true],
    ['=6.0.0-rc1', '6.0.0-rc1', true, true],
    // go-versions' canonical syntax, which Terraform also applies to pre-releases, reads a space
    // after the operator as a separator: terraform 1.11 does not install it
    ['= 6.0.0-rc1', '6.0.0-rc1', false, true],
    // metadata is ignored by "="
    ['5.8.1', '5.8.1+build', true, null],
  ])('%s allows %s: %s', (constraint, version, module, provider) => {
    expect(moduleVersionAllowed(version, constraint)).toBe(module);
    if (provider !== null) expect(satisfies(version, constraint)).toBe(provider);
  });

  test('an empty constraint allows every release', () => {
    expect(moduleVersionAllowed('9.9.9', '')).toBe(true);
    expect(moduleVersionAllowed('9.9.9-rc1', '')).toBe(false);
  });
});

describe('selection (terraform init installs the newest allowed release)', () => {
  const published = ['4.9.0', '5.0.0', '5.21.0', '6.0.0-beta1', '6.0.0', '6.4.0', 'not-a-version'];
  test.each([
    ['~> 5', '6.4.0'],
    ['~> 5.0', '5.21.0'],
    ['~> 5.0.0', '5.0.0'],
    ['>= 5, < 6', '5.21.0'],
    ['', '6.4.0'],
    ['6.0.0-beta1', '6.0.0-beta1'],
    ['~> 7', null],
  ])('%s selects %s', (constraint, expected) => {
    expect(selectModuleRelease(published, constraint)).toBe(expected);
  });
});

describe('grammar and bounds', () => {
  test.each([
    ['~> 5', null],
    ['v1.2', null],
    ['>=1.0,<2', null],
    ['1.2.3.4', null],
    ['>> 1', 'malformed'],
    ['', 'malformed'],
    ['1.0,', 'malformed'],
    ['~> x', 'malformed'],
  ])('%s', (constraint, error) => {
    const got = validateModuleConstraints(constraint);
    if (error === null) expect(got).toBeNull();
    else expect(got).toContain(error);
  });

  test.each([
    ['~> 5', false, ['~> 5']],
    ['~> 5, != 5.1.0', false, ['~> 5']],
    ['~> 5, < 6', true, ['~> 5']],
    ['~> 5.0', true, []],
    ['>= 5', false, []],
    ['5.8.1', true, []],
  ])('%s: bounded %s, unbounded ~> %j', (constraint, bounded, loose) => {
    expect(moduleConstraintBounded(constraint)).toBe(bounded);
    expect(unboundedPessimistic(constraint).map((c) => c.raw)).toEqual(loose);
  });
});
