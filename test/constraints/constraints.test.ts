/**
 * Table and property tests for every export of src/constraints. Terraform's own behaviour is
 * checked by oracle.test.ts; the tables here pin the details and the best-practice helpers.
 */
import fc from 'fast-check';
import semver from 'semver';
import {
  ConstraintSyntaxError,
  compareVersions,
  findConflict,
  formatConstraint,
  formatVersion,
  hasUpperBound,
  isNormalized,
  isSatisfiable,
  maxSatisfying,
  normalizeConstraints,
  parseConstraints,
  parseVersion,
  satisfies,
  suggestMinimumOnly,
  suggestUpperBound,
  suggestUpperBoundAt,
  upperBounding,
  validateConstraints,
  type Constraint,
} from '../../src/constraints';

describe('parseVersion / formatVersion', () => {
  test.each([
    ['1.2.3', { major: 1, minor: 2, patch: 3, prerelease: '', metadata: '', parts: 3 }, '1.2.3'],
    ['1', { major: 1, minor: 0, patch: 0, prerelease: '', metadata: '', parts: 1 }, '1.0.0'],
    ['1.2', { major: 1, minor: 2, patch: 0, prerelease: '', metadata: '', parts: 2 }, '1.2.0'],
    ['01.002.3', { major: 1, minor: 2, patch: 3, prerelease: '', metadata: '', parts: 3 }, '1.2.3'],
    [
      '2.0.0-rc.1+build.5',
      { major: 2, minor: 0, patch: 0, prerelease: 'rc.1', metadata: 'build.5', parts: 3 },
      '2.0.0-rc.1+build.5',
    ],
    ['1.0.0-', { major: 1, minor: 0, patch: 0, prerelease: '', metadata: '', parts: 3 }, '1.0.0'],
    ['1.0.0--1', { major: 1, minor: 0, patch: 0, prerelease: '-1', metadata: '', parts: 3 }, '1.0.0--1'],
  ])('%s', (input, expected, canonical) => {
    const v = parseVersion(input);
    expect(v).toEqual(expected);
    expect(formatVersion(v)).toBe(canonical);
  });

  test.each([
    ['', /empty/],
    [' 1.0.0', /white space/],
    ['1.0.0 ', /white space/],
    ['v1.0.0', /"v" prefix/],
    ['>= 1.0.0', /operator ">="/],
    ['~> 1.0', /operator "~>"/],
    ['1.0.0.0', /only three are allowed/],
    ['1.0.0, 2.0.0', /one exact version/],
    ['abc', /expected a version number/],
    ['1.x', /wildcards/],
    ['1.0.0-+x', /unexpected/],
    ['99999999999999999999.0.0', /too large/],
  ])('rejects %j', (input, message) => {
    expect(() => parseVersion(input)).toThrow(message);
    expect(() => parseVersion(input)).toThrow(ConstraintSyntaxError);
  });

  test('the error carries the input', () => {
    try {
      parseVersion('v1');
      throw new Error('not thrown');
    } catch (err) {
      expect(err).toBeInstanceOf(ConstraintSyntaxError);
      expect((err as ConstraintSyntaxError).input).toBe('v1');
      expect((err as Error).name).toBe('ConstraintSyntaxError');
    }
  });
});

describe('compareVersions', () => {
  test.each([
    ['1.0.0', '1.0.0', 0],
    ['1.0.0', '1.0.0+meta', 0],
    ['1.0.0', '1.0.1', -1],
    ['1.10.0', '1.9.0', 1],
    ['1.0.0-beta', '1.0.0', -1],
    ['1.0.0-rc.10', '1.0.0-rc.9', 1],
    ['1.0.0-1', '1.0.0-alpha', -1],
    // go-versions, unlike SemVer: a pre-release that runs out of parts first is older, whatever it says.
    ['1.5.0-beta', '1.5.0-alpha.1', -1],
    ['1.5.0-rc2', '1.5.0-rc1.x', -1],
    // numbers by length, so leading zeros count
    ['1.0.0-2', '1.0.0-01', -1],
  ])('%s vs %s', (a, b, expected) => {
    expect(compareVersions(parseVersion(a), parseVersion(b))).toBe(expected);
    expect(compareVersions(parseVersion(b), parseVersion(a))).toBe(-expected || 0);
  });

  test('agrees with npm semver wherever go-versions does not deviate from SemVer', () => {
    const ident = fc.oneof(
      fc.integer({ min: 0, max: 30 }).map(String),
      fc.constantFrom('alpha', 'beta', 'rc', 'a1', 'x-y', 'Z'),
    );
    const triple = fc.tuple(fc.nat(3), fc.nat(3), fc.nat(3));
    const pair = fc
      .integer({ min: 0, max: 3 })
      .chain((k) =>
        fc.tuple(
          triple,
          triple,
          fc.array(ident, { minLength: k, maxLength: k }),
          fc.array(ident, { minLength: k, maxLength: k }),
          fc.boolean(),
        ),
      );
    fc.assert(
      fc.property(pair, ([ta, tb, pa, pb, releaseB]) => {
        const a = `${ta.join('.')}${pa.length > 0 ? `-${pa.join('.')}` : ''}`;
        const b = `${tb.join('.')}${pb.length > 0 && !releaseB ? `-${pb.join('.')}` : ''}`;
        expect(compareVersions(parseVersion(a), parseVersion(b))).toBe(semver.compare(a, b));
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseConstraints', () => {
  test.each<[string, Array<Partial<Constraint> & { parts?: number }>]>([
    ['>= 1.0', [{ op: '>=', explicitOp: true, raw: '>= 1.0', parts: 2 }]],
    ['1.2.3', [{ op: '=', explicitOp: false, raw: '1.2.3', parts: 3 }]],
    ['= 1', [{ op: '=', explicitOp: true, raw: '= 1', parts: 1 }]],
    [
      ' ~>2 ,  != 2.1.0-beta+x ',
      [
        { op: '~>', explicitOp: true, raw: '~>2', parts: 1 },
        { op: '!=', explicitOp: true, raw: '!= 2.1.0-beta+x', parts: 3 },
      ],
    ],
    ['<1,<=2,>3', [{ op: '<' }, { op: '<=' }, { op: '>' }]],
  ])('%j', (input, expected) => {
    const got = parseConstraints(input);
    expect(got).toHaveLength(expected.length);
    got.forEach((c, i) => {
      const e = expected[i] as Partial<Constraint> & { parts?: number };
      if (e.op !== undefined) expect(c.op).toBe(e.op);
      if (e.explicitOp !== undefined) expect(c.explicitOp).toBe(e.explicitOp);
      if (e.raw !== undefined) expect(c.raw).toBe(e.raw);
      if (e.parts !== undefined) expect(c.version.parts).toBe(e.parts);
    });
  });

  test('missing parts are zero and pre-release/metadata are kept', () => {
    const [c] = parseConstraints('~> 2-beta+m');
    expect(c?.version).toEqual({ major: 2, minor: 0, patch: 0, prerelease: 'beta', metadata: 'm', parts: 1 });
  });

  test('the lock grammar (go-versions alone) differs where Terraform differs', () => {
    expect(parseConstraints('', { grammar: 'lock' })).toEqual([]);
    expect(parseConstraints('>= 1.0.0,', { grammar: 'lock' })).toHaveLength(1);
    expect(parseConstraints('1.0.0-a..b', { grammar: 'lock' })[0]?.version.prerelease).toBe('a..b');
    expect(() => parseConstraints('')).toThrow(/empty/);
    expect(() => parseConstraints('>= 1.0.0,')).toThrow(/ends with a comma/);
    expect(() => parseConstraints('1.0.0-a..b')).toThrow(/pre-release/);
    expect(() => parseConstraints('>= 1,, < 2', { grammar: 'lock' })).toThrow(ConstraintSyntaxError);
  });
});

describe('validateConstraints', () => {
  test.each([
    ['~> 1.0', null],
    ['>= 1.0, < 2.0, != 1.5.0', null],
    ['1.0-', null],
    ['', /empty/],
    ['  ', /white space/],
    ['>= 1.0,', /ends with a comma/],
    [',>= 1.0', /starts with a comma/],
    ['>= 1, , < 2', /between two commas/],
    ['1.0.0.0', /only three are allowed/],
    ['=> 1', /did you mean ">="/],
    ['=< 1', /did you mean "<="/],
    ['== 1', /use "="/],
    ['^1.0', /caret/],
    ['~1.0', /"~>"/],
    ['!1.0', /did you mean "!="/],
    ['<> 1.0', /"!="/],
    ['>>= 1', /invalid operator ">>="/],
    ['v1.0', /"v" prefix/],
    ['>= v1.0', /"v" prefix/],
    ['>=  1.0', /only one space/],
    ['>=\t1.0', /only one space/],
    ['1.x', /wildcards/],
    ['*', /wildcards/],
    ['>= 1.0 < 2.0', /missing comma/],
    ['>= 1.0 || < 2.0', /"\|\|" is not supported/],
    ['1.0 - 2.0', /range syntax/],
    ['1.0beta', /must follow a "-"/],
    ['1.0-a..b', /pre-release/],
    ['1.0+a..b', /build metadata/],
    ['1.0+', /build metadata/],
    ['1.0-a~b', /unexpected "~b"/],
    ['>=', /not followed by a version/],
    ['latest', /expected a version number/],
    ['>= 1.0\v', /white-space|unexpected/],
    ['>= 99999999999999999999', /too large/],
  ])('%j', (input, expected) => {
    const got = validateConstraints(input);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toMatch(expected);
  });

  test('messages quote the offending constraint', () => {
    expect(validateConstraints('>= 1.0, => 2')).toBe(
      'invalid constraint "=> 2": invalid operator "=>"; did you mean ">="?',
    );
  });
});

describe('satisfies', () => {
  test.each<[string, string, boolean]>([
    ['1.2.0', '~> 1.0', true],
    ['2.0.0', '~> 1.0', false],
    ['1.3.0', '~> 1.2.0', false],
    ['1.2.9', '~> 1.2.0', true],
    ['1.9.0', '~> 1', true],
    ['1.0.0', '= 1', true],
    ['1.0.1', '= 1', false],
    ['1.0.0', '!= 1.0', false],
    ['1.0.0+b', '!= 1.0.0', true],
    ['1.0.0+b', '1.0.0', false],
    ['1.0.0+b', '>= 1.0.0+zzz', true],
    ['1.0.0', '> 1.0.0-rc1', true],
    ['1.0.0-rc1', '> 1.0.0-beta', false], // pre-release not pinned
    ['1.0.0-rc1', '1.0.0-rc1', true],
    ['1.0.0-rc1', '1.0.0-rc1, >= 0.9', true],
    ['1.0.0-rc1', '1.0.0-rc1, > 1.0.0-rc1', false],
    ['1.2.0-beta1', '~> 1.2.0-beta1', false],
    ['1.2.5', '~> 1.2.0-beta1', true],
    ['1.3.0-a', '~> 1.2.0-beta1', false],
    ['0.9.0', '< 1', true],
  ])('%s satisfies %j: %s', (v, c, expected) => {
    expect(satisfies(v, c)).toBe(expected);
    expect(satisfies(parseVersion(v), parseConstraints(c))).toBe(expected);
  });

  test('includePrerelease gives plain set membership', () => {
    expect(satisfies('1.0.0-rc1', '> 1.0.0-beta', { includePrerelease: true })).toBe(true);
    expect(satisfies('1.0.0-rc1', '> 1.0.0-rc2', { includePrerelease: true })).toBe(false);
  });

  test('an empty list allows every release, not pre-releases', () => {
    expect(satisfies('9.9.9', [])).toBe(true);
    expect(satisfies('9.9.9-x', [])).toBe(false);
  });

  test('invalid input throws', () => {
    expect(() => satisfies('v1', '>= 1')).toThrow(ConstraintSyntaxError);
    expect(() => satisfies('1.0.0', '>> 1')).toThrow(ConstraintSyntaxError);
  });
});

describe('maxSatisfying', () => {
  const versions = ['0.9.0', '1.0.0', '1.2.0-beta1', '1.2.0', '2.0.0-rc1', '2.0.0', '3.0.0'];
  test.each<[string, string | null]>([
    ['>= 1.0', '3.0.0'],
    ['~> 1.0', '1.2.0'],
    ['~> 2.0.0-rc1', '2.0.0'],
    ['1.2.0-beta1', '1.2.0-beta1'],
    ['< 1.2.0, >= 1.2.0-beta1', null],
    ['> 3.0.0', null],
    ['!= 3.0.0, != 2.0.0', '1.2.0'],
  ])('%j → %s', (c, expected) => {
    expect(maxSatisfying(versions, c)).toBe(expected);
  });

  test('takes parsed constraints, and [] picks the newest release', () => {
    expect(maxSatisfying(versions, [])).toBe('3.0.0');
    expect(maxSatisfying(versions, parseConstraints('< 2'))).toBe('1.2.0');
  });

  test('returns the string as given, in any input order', () => {
    expect(maxSatisfying(['2', '10', '1.5'], '>= 1')).toBe('10');
  });

  test('an invalid available version is an error naming it', () => {
    expect(() => maxSatisfying(['1.0.0', 'v2.0.0'], '>= 1')).toThrow(/available version "v2.0.0" is invalid/);
  });

  test('picks the newest version that satisfies (property)', () => {
    const version = fc
      .tuple(fc.nat(3), fc.nat(3), fc.nat(3), fc.constantFrom('', '-rc1', '-beta'))
      .map(([a, b, c, p]) => `${a}.${b}.${c}${p}`);
    const op = fc.constantFrom('', '= ', '!= ', '> ', '>= ', '< ', '<= ', '~> ');
    const constraint = fc.tuple(op, version).map(([o, v]) => `${o}${v}`);
    fc.assert(
      fc.property(
        fc.array(version, { maxLength: 8 }),
        fc.array(constraint, { minLength: 1, maxLength: 3 }),
        (vs, cs) => {
          const c = cs.join(', ');
          const got = maxSatisfying(vs, c);
          const ok = vs.filter((v) => satisfies(v, c));
          if (got === null) expect(ok).toEqual([]);
          else {
            expect(satisfies(got, c)).toBe(true);
            for (const v of ok)
              expect(compareVersions(parseVersion(v), parseVersion(got))).toBeLessThanOrEqual(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('hasUpperBound / upperBounding', () => {
  test.each<[string, boolean, string[]]>([
    ['>= 1.0', false, []],
    ['> 1.0, != 2.0', false, []],
    ['~> 1.0', true, ['~> 1.0']],
    ['>= 1.0, < 2.0', true, ['< 2.0.0']],
    ['<= 2', true, ['<= 2.0.0']],
    ['= 1.2.3', true, ['1.2.3']],
    ['1.2.3', true, ['1.2.3']],
    ['>= 1.0, ~> 1.2.0, < 1.5', true, ['~> 1.2.0', '< 1.5.0']],
  ])('%j', (c, bounded, caps) => {
    expect(hasUpperBound(c)).toBe(bounded);
    expect(hasUpperBound(parseConstraints(c))).toBe(bounded);
    expect(upperBounding(c).map(formatConstraint)).toEqual(caps);
  });

  test('invalid input throws', () => {
    expect(() => hasUpperBound('=> 1')).toThrow(ConstraintSyntaxError);
  });
});

describe('formatConstraint', () => {
  test.each([
    ['~> 2', '~> 2.0'],
    ['~>2.1', '~> 2.1'],
    ['~> 2.1.0', '~> 2.1.0'],
    ['~> 1-beta', '~> 1.0-beta'],
    ['= 1', '1.0.0'],
    ['1.2', '1.2.0'],
    ['>=1', '>= 1.0.0'],
    ['!= 1.0.0+abc', '!= 1.0.0+abc'],
    ['<= 01.2.3-rc.1', '<= 1.2.3-rc.1'],
  ])('%j → %j', (input, expected) => {
    expect(formatConstraint(parseConstraints(input)[0] as Constraint)).toBe(expected);
  });
});

describe('normalizeConstraints / isNormalized', () => {
  test.each<[Array<string>, string]>([
    [['>= 1.0'], '>= 1.0.0'],
    [['~> 2'], '~> 2.0'],
    [['~> 5.2', '>= 5.8'], '~> 5.2, >= 5.8.0'],
    [['~> 6.0', '>= 5.81.0'], '>= 5.81.0, ~> 6.0'],
    [['>= 1.0', '>=1.0.0', '>= 1'], '>= 1.0.0'],
    [['~> 1.0.0', '~> 1.0'], '~> 1.0.0, ~> 1.0'],
    [
      ['< 2, > 1, >= 1.5, <= 1.5, != 1.5, ~> 1.5, ~> 1.5.0, 1.5'],
      '> 1.0.0, >= 1.5.0, 1.5.0, ~> 1.5.0, ~> 1.5, <= 1.5.0, != 1.5.0, < 2.0.0',
    ],
    [['!= 3.0.0', '!= 2.1.3'], '!= 2.1.3, != 3.0.0'],
    [['>= 1.0.0+zzz', '>= 1.0.0+aaa', '>= 1.0.0'], '>= 1.0.0, >= 1.0.0+aaa, >= 1.0.0+zzz'],
    [['1.2.0-beta1', '>= 1.2.0-beta1', '!= 1.1.0'], '!= 1.1.0, >= 1.2.0-beta1, 1.2.0-beta1'],
    [['> 1.5.0-rc1.x', '> 1.5.0-rc2'], '> 1.5.0-rc2, > 1.5.0-rc1.x'],
    [[], ''],
  ])('%j → %j', (list, expected) => {
    const got = normalizeConstraints(list);
    expect(got).toBe(expected);
    expect(normalizeConstraints(list.map((s) => parseConstraints(s)))).toBe(expected);
    expect(isNormalized(got)).toBe(true);
  });

  test('an invalid input throws', () => {
    expect(() => normalizeConstraints(['~> 1.0', '=> 2'])).toThrow(/did you mean ">="/);
  });

  test.each<[string, boolean]>([
    ['', true],
    ['>= 1.0.0', true],
    ['>= 1.0.0, ~> 1.0', true],
    ['1.0.0-a..b', true],
    ['>= 1.0', false],
    ['~>1.0', false],
    ['~> 1', false],
    ['~> 1.0, >= 1.0.0', false],
    ['>= 1.0.0,  ~> 1.0', false],
    ['>= 1.0.0, >= 1.0.0', false],
    ['= 1.2.0', false],
    ['>= 1.0.0,', false],
    [' >= 1.0.0', false],
    ['>= 1.0.0-', false],
    ['=> 1.0.0', false],
  ])('isNormalized(%j) = %s', (s, expected) => {
    expect(isNormalized(s)).toBe(expected);
  });

  test('normalization is idempotent and keeps the meaning (property)', () => {
    const version = fc
      .tuple(fc.nat(3), fc.option(fc.nat(3), { nil: undefined }), fc.option(fc.nat(3), { nil: undefined }))
      .chain(([a, b, c]) =>
        fc.constantFrom('', '-rc1', '+m').map((suffix) => {
          const nums = [a, b, b === undefined ? undefined : c].filter((x) => x !== undefined);
          return nums.join('.') + suffix;
        }),
      );
    const op = fc.constantFrom('', '=', '= ', '!=', '> ', '>=', '>= ', '<', '<= ', '~>', '~> ');
    const constraint = fc.tuple(op, version).map(([o, v]) => `${o}${v}`);
    const probe = fc
      .tuple(fc.nat(4), fc.nat(4), fc.nat(4), fc.constantFrom('', '-rc1'))
      .map(([a, b, c, p]) => `${a}.${b}.${c}${p}`);
    fc.assert(
      fc.property(
        fc.array(constraint, { minLength: 1, maxLength: 4 }),
        fc.array(probe, { maxLength: 10 }),
        (cs, probes) => {
          const n = normalizeConstraints(cs);
          expect(isNormalized(n)).toBe(true);
          expect(normalizeConstraints([n])).toBe(n);
          for (const v of probes) expect(satisfies(v, n)).toBe(satisfies(v, cs.join(', ')));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('findConflict / isSatisfiable', () => {
  const ids = (list: string[]) => list.map((constraints, i) => ({ id: `m${i}`, constraints }));

  test.each<[string[], string[] | null, RegExp | null]>([
    [['~> 1.0', '>= 1.5'], null, null],
    [['~> 1.0', '>= 2.0'], ['m0', 'm1'], /">= 2.0" needs >= 2.0.0 but "~> 1.0" needs < 2.0.0/],
    [['>= 1.0', '<= 1.5', '>= 2.0'], ['m1', 'm2'], /<= 1.5.0/],
    [['~> 1.2.0', '>= 1.3'], ['m0', 'm1'], /< 1.3.0/],
    [['1.2.0', '1.3.0'], ['m0', 'm1'], /pin different exact versions/],
    [['1.2.0', '1.2'], null, null],
    [['1.2.0', '!= 1.2.0'], ['m0', 'm1'], /excludes/],
    [['1.0.0+abc', '!= 1.0.0'], null, null],
    [['2.0.0-rc1', '~> 2.0'], ['m0', 'm1'], /"~> 2.0" does not allow/],
    [['2.0.0-rc1', '>= 1.0'], null, null],
    [['> 2.0.0-rc1', '< 2.0.0'], ['m0', 'm1'], /pre-release is selected only when pinned/],
    [['>= 2, < 1'], ['m0'], /needs >= 2.0.0/],
    [['~> 1.0', '>= 2, < 1'], ['m1'], null],
    [['< 0'], ['m0'], /nothing is below 0.0.0/],
    [['< 0.0.2, != 0.0.0, != 0.0.1'], ['m0'], /exclude/],
    // `!=` never exhausts a range that spans two minor lines (patch numbers are unbounded)
    [['>= 1.0.0, < 1.1.0', '!= 1.0.0', '!= 1.0.1'], null, null],
    [['>= 1.0.0, < 1.0.2', '!= 1.0.0', '!= 1.0.1'], ['m0', 'm1', 'm2'], /"!= 1.0.0", "!= 1.0.1" exclude/],
    [['>= 0.1', '>= 1.0.0, < 1.0.2', '!= 1.0.0', '!= 1.0.1'], ['m1', 'm2', 'm3'], null],
    [['> 1.0.0', '<= 1.0.0'], ['m0', 'm1'], null],
    [['> 1.0.0', '< 1.0.1'], ['m0', 'm1'], null],
    [['> 1.0.0', '<= 1.0.1'], null, null],
  ])('%j', (list, expectedIds, reason) => {
    const got = findConflict(ids(list));
    expect(isSatisfiable(list)).toBe(expectedIds === null);
    if (expectedIds === null) {
      expect(got).toBeNull();
      return;
    }
    expect(got?.ids).toEqual(expectedIds);
    expect(got?.reason).not.toBe('');
    if (reason !== null) expect(got?.reason).toMatch(reason);
  });

  test('ids are the given ones and the set is minimal', () => {
    const got = findConflict([
      { id: 'root', constraints: '~> 5.0' },
      { id: 'modules/net', constraints: '>= 4.0' },
      { id: 'modules/db', constraints: '>= 6.1' },
    ]);
    expect(got?.ids).toEqual(['root', 'modules/db']);
  });

  test('an invalid contributor throws, naming it', () => {
    expect(() => findConflict([{ id: 'modules/x', constraints: '=> 1' }])).toThrow(
      /^modules\/x: invalid constraint/,
    );
    expect(() => isSatisfiable(['>= 1', ''])).toThrow(ConstraintSyntaxError);
  });

  test('agrees with a brute-force search over a version grid (property)', () => {
    const num = fc.nat(3);
    const version = fc
      .tuple(num, num, num, fc.constantFrom('', '', '-rc1'))
      .map(([a, b, c, p]) => ({ text: `${a}.${b}.${c}${p}`, short: `${a}.${b}${p}` }));
    const op = fc.constantFrom('', '!= ', '> ', '>= ', '< ', '<= ', '~> ');
    const constraint = fc
      .tuple(op, version, fc.boolean())
      .map(([o, v, short]) => `${o}${short ? v.short : v.text}`);
    const grid: string[] = [];
    for (let a = 0; a <= 5; a++)
      for (let b = 0; b <= 5; b++) for (let c = 0; c <= 5; c++) grid.push(`${a}.${b}.${c}`);
    fc.assert(
      fc.property(fc.array(constraint, { minLength: 1, maxLength: 5 }), (cs) => {
        const all = cs.join(', ');
        const pinned = parseConstraints(all)
          .filter((c) => c.op === '=')
          .map((c) => formatVersion(c.version));
        const witness = [...grid, ...pinned].some((v) => satisfies(v, all));
        expect(isSatisfiable(cs)).toBe(witness);
        expect(findConflict(cs.map((c, i) => ({ id: String(i), constraints: c }))) === null).toBe(witness);
      }),
      { numRuns: 400 },
    );
  });
});

describe('suggestUpperBoundAt (bounded to the locked version)', () => {
  test.each<[string, string, string | null]>([
    ['>= 5.1', '5.40.3', '~> 5.40'],
    ['>= 5.40', '5.40.3', '~> 5.40'],
    ['> 5.39.9', '5.40.3', '~> 5.40'],
    ['>= 5.40.2, != 5.41.0', '5.40.3', '~> 5.40, >= 5.40.2, != 5.41.0'],
    ['>= 5.1, != 5.2.0', '5.40.3', '~> 5.40'],
    ['> 5.40.0', '5.40.3', '~> 5.40, > 5.40.0'],
    ['>= 0.12', '0.15.4', '~> 0.15'],
    // The lock disagrees with the minimum, or is a pre-release: no suggestion.
    ['>= 5.41', '5.40.3', null],
    ['>= 5.1', '5.40.3-beta1', null],
    ['~> 5.0', '5.40.3', null],
  ])('%j locked at %s → %j', (input, locked, expected) => {
    const got = suggestUpperBoundAt(input, locked);
    expect(got).toBe(expected);
    if (got === null) return;
    expect(validateConstraints(got)).toBeNull();
    expect(hasUpperBound(got)).toBe(true);
    // The locked version is still allowed, and nothing the original excluded is allowed now.
    expect(satisfies(locked, got)).toBe(true);
    for (const v of ['5.0.0', '5.1.0', '5.2.0', '5.40.0', '5.40.2', '5.41.0', '6.0.0', '0.12.0', '0.15.0']) {
      if (satisfies(v, got)) expect([v, satisfies(v, input)]).toEqual([v, true]);
    }
  });
});

describe('suggestUpperBound', () => {
  test.each<[string, string | null]>([
    ['>= 4.0', '~> 4.0'],
    ['>= 4', '~> 4.0'],
    ['>=4.2', '~> 4.2'],
    ['>= 4.2.1', '~> 4.2, >= 4.2.1'],
    ['> 4.2.0', '~> 4.2, > 4.2.0'],
    ['>= 1.0, != 1.3.0', '~> 1.0, != 1.3.0'],
    ['>= 4.0, >= 4.5', '>= 4.0, ~> 4.5'],
    ['>= 0.12', '~> 0.12'],
    ['>= 2.0.0-beta1', '~> 2.0, >= 2.0.0-beta1'],
    ['~> 4.0', null],
    ['>= 4.0, < 5.0', null],
    ['1.2.3', null],
    ['!= 1.0', null],
    ['>= 0', null],
    ['>= 0.0.0', null],
  ])('%j → %j', (input, expected) => {
    const got = suggestUpperBound(input);
    expect(got).toBe(expected);
    if (got === null) return;
    expect(validateConstraints(got)).toBeNull();
    expect(hasUpperBound(got)).toBe(true);
    // Caps below the next major version of the minimum, keeps the minimum.
    const min = parseVersion(
      normalizeConstraints([input])
        .replace(/^.*?>=? /, '')
        .split(',')[0] as string,
    );
    expect(satisfies(`${min.major + 1}.0.0`, got)).toBe(false);
    expect(isSatisfiable([got])).toBe(true);
  });

  test('never widens the original (property)', () => {
    const lower = fc
      .tuple(
        fc.constantFrom('>= ', '> ', '>='),
        fc.nat(5),
        fc.nat(5),
        fc.option(fc.nat(5), { nil: undefined }),
      )
      .map(([o, a, b, c]) => `${o}${a}.${b}${c === undefined ? '' : `.${c}`}`);
    const extra = fc.array(
      fc.tuple(fc.constantFrom('!= ', '>= '), fc.nat(5), fc.nat(5)).map(([o, a, b]) => `${o}${a}.${b}.0`),
      { maxLength: 2 },
    );
    const probe = fc.tuple(fc.nat(7), fc.nat(7), fc.nat(7)).map(([a, b, c]) => `${a}.${b}.${c}`);
    fc.assert(
      fc.property(lower, extra, fc.array(probe, { maxLength: 10 }), (lo, more, probes) => {
        const s = [lo, ...more].join(', ');
        const got = suggestUpperBound(s);
        if (got === null) return;
        expect(hasUpperBound(got)).toBe(true);
        for (const v of probes) if (satisfies(v, got)) expect(satisfies(v, s)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('suggestMinimumOnly', () => {
  test.each<[string, string | null]>([
    ['~> 4.0', '>= 4.0'],
    ['~> 4', '>= 4.0'],
    ['~> 4.2.1', '>= 4.2.1'],
    ['= 1.2.3', '>= 1.2.3'],
    ['1.2.3', '>= 1.2.3'],
    ['>= 4.0, < 6.0', '>= 4.0'],
    ['>= 4.0, ~> 4.2', '>= 4.2'],
    ['> 2.0, <= 3', '> 2.0'],
    ['~> 4.2.1, != 4.2.3, != 4.1.0', '>= 4.2.1, != 4.2.3'],
    ['2.0.0-rc1', '>= 2.0.0-rc1'],
    ['>= 4.0', '>= 4.0'],
    ['< 6.0', null],
    ['!= 1.0', null],
    ['<= 2, != 1.5', null],
  ])('%j → %j', (input, expected) => {
    const got = suggestMinimumOnly(input);
    expect(got).toBe(expected);
    if (got === null) return;
    expect(validateConstraints(got)).toBeNull();
    expect(hasUpperBound(got)).toBe(false);
  });

  test('every version the original allows is still allowed (property)', () => {
    const version = fc.tuple(fc.nat(4), fc.nat(4), fc.nat(4)).map(([a, b, c]) => `${a}.${b}.${c}`);
    const op = fc.constantFrom('', '!= ', '> ', '>= ', '< ', '<= ', '~> ');
    const constraint = fc.tuple(op, version).map(([o, v]) => `${o}${v}`);
    const probe = fc.tuple(fc.nat(6), fc.nat(6), fc.nat(6)).map(([a, b, c]) => `${a}.${b}.${c}`);
    fc.assert(
      fc.property(
        fc.array(constraint, { minLength: 1, maxLength: 3 }),
        fc.array(probe, { maxLength: 10 }),
        (cs, probes) => {
          const s = cs.join(', ');
          const got = suggestMinimumOnly(s);
          if (got === null) return;
          expect(hasUpperBound(got)).toBe(false);
          for (const v of probes) if (satisfies(v, s)) expect(satisfies(v, got)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
