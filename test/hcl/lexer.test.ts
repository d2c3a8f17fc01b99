import fc from 'fast-check';
import { GiveUp, lex, TOKEN } from '../../src/hcl/lexer';

/** The token stream as [type, start, end] triples (copied: strict arrays are reused per call). */
function triples(text: string, strict: boolean): [number, number, number][] {
  const { tokens } = lex(text, { strict });
  const out: [number, number, number][] = [];
  for (let k = 0; k < tokens.count; k++) {
    out.push([tokens.type[k] as number, tokens.start[k] as number, tokens.end[k] as number]);
  }
  return out;
}

function strictOrNull(text: string): [number, number, number][] | null {
  try {
    return triples(text, true);
  } catch (err) {
    if (err instanceof GiveUp) return null;
    throw err;
  }
}

const PIECES = [
  'a',
  'résumé',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\r',
  '"',
  '\\',
  '\\n',
  '\\u00e9',
  '${',
  '%{',
  '$${',
  '}',
  '{',
  '[',
  ']',
  '(',
  ')',
  '=',
  '==',
  '=>',
  '<<EOT\n',
  '<<-EOT\n',
  'EOT\n',
  '  EOT\n',
  '#',
  '//',
  '/*',
  '*/',
  '1',
  '1.5',
  '01',
  '&',
  '|',
  '~',
  '@',
  '𝒳',
];

describe('the shared lexer', () => {
  it('gives strict and tolerant modes the same tokens whenever strict mode accepts the text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        const strict = strictOrNull(text);
        const tolerant = lex(text, { strict: false });
        if (strict !== null) {
          expect(tolerant.error).toBeNull();
          expect(triples(text, false)).toEqual(strict);
        }
        // Tolerant tokens are ordered, within the text, and end with EOF.
        const t = triples(text, false);
        expect(t[t.length - 1]?.[0]).toBe(TOKEN.EOF);
        for (let k = 1; k < t.length; k++) {
          const [, s, e] = t[k] as [number, number, number];
          expect(s).toBeGreaterThanOrEqual((t[k - 1] as [number, number, number])[2]);
          expect(e).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['a = "x\ny"', 'unterminated string: a quoted string may not span lines', 4],
    ['a = "${ "b\n" }"', 'unterminated string: a quoted string may not span lines', 8],
    ['/* open', 'unterminated comment: "/*" is never closed', 0],
  ])('tolerant mode reports the first lexical error of %j', (text, message, offset) => {
    expect(lex(text).error).toEqual({ message, offset });
  });

  it.each([
    ['a = 1\r b = 2', 'carriage return'],
    ['résumé = 1', 'non-ASCII identifier'],
    ['é = 1', 'character U+00e9'],
    ['a = "\\q"', 'escape sequence'],
    ['a = "${~ b}"', 'template strip marker'],
    ['a = 1.2.3', 'number literal'],
    ['a = b & c', '"&"'],
  ])('strict mode gives up on %j (%s) and tolerant mode does not', (text, reason) => {
    expect(() => lex(text, { strict: true })).toThrow(expect.objectContaining({ reason }) as Error);
    expect(lex(text).error).toBeNull();
  });
});
