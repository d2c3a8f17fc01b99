/**
 * `templateParts` reads values as hcl2json renders them: the native-syntax cases go through
 * hcl2json itself (the reference parse, not tfguard's fast path), so a change in how it renders a
 * template breaks these rows, not just the expectations written here.
 */
import { hasInterpolation, templateParts } from '../../src/hcl';
import type { TemplatePart } from '../../src/hcl';
import { closeReference, referenceParse } from '../support/hcl2json';

const lit = (text: string): TemplatePart => ({ kind: 'literal', text });
const expr = (e: string): TemplatePart => ({ kind: 'interpolation', expr: e });

/** hcl2json's rendering of the expression `source` (as the value of `v`). */
async function rendered(source: string): Promise<unknown> {
  const json = (await referenceParse(`v = ${source}\n`)) as Record<string, unknown>;
  return json.v;
}

afterAll(closeReference);

describe('templateParts over hcl2json renderings', () => {
  const rows: [string, TemplatePart[] | null][] = [
    ['"~> 5.0"', [lit('~> 5.0')]],
    ['var.aws_version', [expr('var.aws_version')]],
    ['"${ var.aws_version }"', [expr('var.aws_version')]],
    ['"~> ${local.major}.0"', [lit('~> '), expr('local.major'), lit('.0')]],
    ['"${local.a}${local.b}"', [expr('local.a'), expr('local.b')]],
    ['"${~ local.a ~}"', [expr('local.a')]],
    ['"$${x}"', [lit('${x}')]],
    ['"%%{x}"', [lit('%{x}')]],
    ['format(">= %s", "1.0")', [expr('format(">= %s", "1.0")')]],
    ['"${local.m == "" ? "a" : "}"}"', [expr('local.m == "" ? "a" : "}"')]],
    ['"%{ if true }x%{ endif }"', null],
    // Several interpolations that need the lexer in one string (it is lexed once for all of them).
    [
      '"a/${f("x")}/b${g("}", [1])}${local.c}-${h({ k = "${i("y")}" })}"',
      [
        lit('a/'),
        expr('f("x")'),
        lit('/b'),
        expr('g("}", [1])'),
        expr('local.c'),
        lit('-'),
        expr('h({ k = "${i("y")}" })'),
      ],
    ],
    ['"${f("x")}$${y}%%{z}${g("(")}"', [expr('f("x")'), lit('${y}%{z}'), expr('g("(")')]],
  ];
  it.each(rows)('%s', async (source, parts) => {
    const value = await rendered(source);
    expect(typeof value).toBe('string');
    expect(templateParts(value as string)).toEqual(parts);
  });
});

describe('templateParts on JSON-syntax strings', () => {
  it('reads Terraform JSON templates the same way', () => {
    expect(templateParts('${var.v}')).toEqual([expr('var.v')]);
    expect(templateParts('var.v')).toEqual([lit('var.v')]);
    expect(templateParts('')).toEqual([]);
    expect(templateParts('${var.v')).toBeNull();
  });
});

describe('templateParts answers repeated strings from its memo', () => {
  it('gives the same frozen split for the same string, and each string its own', () => {
    const a = 'git::https://example.com/x?ref=${get_env("V")}';
    const b = 'git::https://example.com/y?ref=${get_env("V")}';
    const first = templateParts(a);
    expect(templateParts(a)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first?.[0])).toBe(true);
    expect(templateParts(b)).toEqual([lit('git::https://example.com/y?ref='), expr('get_env("V")')]);
    expect(first).toEqual([lit('git::https://example.com/x?ref='), expr('get_env("V")')]);
    expect(templateParts('${unclosed("x"')).toBeNull();
    expect(templateParts('${unclosed("x"')).toBeNull();
  });
});

describe('hasInterpolation', () => {
  it('tells expressions from literals', () => {
    expect(hasInterpolation('${var.v}')).toBe(true);
    expect(hasInterpolation('>= ${local.v}')).toBe(true);
    expect(hasInterpolation('%{ if x }y%{ endif }')).toBe(true);
    expect(hasInterpolation('$${var.v}')).toBe(false);
    expect(hasInterpolation('>= 1.0')).toBe(false);
    expect(hasInterpolation(5)).toBe(false);
    expect(hasInterpolation('${unclosed')).toBe(true);
  });
});
