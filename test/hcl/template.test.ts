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
