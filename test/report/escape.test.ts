/**
 * The escaping functions of src/report/escape.ts, case by case (the whole-report behaviour is in
 * hostile.test.ts). Oracles we did not write where there is one: JSON.parse for `jsonForLogs`, the
 * WHATWG URL parser for `sarifUri`, cmark-gfm for code spans.
 */
import { spawnSync } from 'node:child_process';
import {
  ciSafeLines,
  jsonForLogs,
  mdCode,
  mdFence,
  mdText,
  plainText,
  sarifUri,
  visible,
  visibleStrings,
} from '../../src/report/escape';
import { describeWithExternal } from '../support/external';

describe('visible', () => {
  it.each([
    ['plain', 'modules/net/main.tf', 'modules/net/main.tf'],
    ['ESC and BEL', 'a\u001b[31mb\u0007', 'a\\x1b[31mb\\x07'],
    ['line breaks and tab', 'a\nb\r\nc\td', 'a\\x0ab\\x0d\\x0ac\\x09d'],
    ['backslash doubled', 'a\\x1b', 'a\\\\x1b'],
    ['DEL and C1 (CSI, NEL)', '\u007f\u009b\u0085', '\\x7f\\x9b\\x85'],
    ['bidi override and isolate', 'a\u202eb\u2066c', 'a\\u202eb\\u2066c'],
    ['zero-width, BOM, soft hyphen', '\u200b\u200d\ufeff\u00ad', '\\u200b\\u200d\\ufeff\\xad'],
    ['line and paragraph separators', '\u2028\u2029', '\\u2028\\u2029'],
    ['lone surrogates', 'a\ud800b\udc00', 'a\\ud800b\\udc00'],
    ['a surrogate pair stays', 'a\ud83d\ude00b', 'a\ud83d\ude00b'],
    ['non-ASCII letters stay', 'café ✓ 日本', 'café ✓ 日本'],
  ])('%s', (_name, input, shown) => {
    expect(visible(input)).toBe(shown);
  });

  it('is injective on texts that differ only by an escape', () => {
    expect(visible('\u001b')).not.toBe(visible('\\x1b'));
  });
});

describe('visibleStrings', () => {
  const shape = (leaf: string) => ({
    a: 'modules/net',
    n: 3,
    b: null,
    list: [{ m: 'x', deep: [leaf, 'y'] }, true],
  });

  it.each([['plain text: ok'], ['"quoted" and "" twice']])('leaves printable ASCII as it is: %s', (leaf) => {
    const value = shape(leaf);
    // Returned as it is: nothing to escape, no copy.
    expect(visibleStrings(value)).toBe(value);
    expect(value).toEqual(shape(leaf));
  });

  it.each([
    ['a control character', 'a\u001bb', 'a\\x1bb'],
    ['a backslash', 'a\\b', 'a\\\\b'],
    ['a backslash before a quote', 'a\\"b', 'a\\\\"b'],
    ['a quote and non-ASCII', '"café"', '"café"'],
    ['a lone surrogate', 'a\ud800', 'a\\ud800'],
    ['DEL', 'a\u007f', 'a\\x7f'],
  ])('escapes every string when one deep inside holds %s', (_name, leaf, shown) => {
    expect(visibleStrings(shape(leaf))).toEqual(shape(shown));
  });

  it('escapes a string given alone', () => {
    expect(visibleStrings('a\u0007')).toBe('a\\x07');
  });
});

describe('ciSafeLines', () => {
  it.each([
    ['a workflow command at a line start', '::error::x', '\\x3a:error::x'],
    ['after indentation', '  ::warning file=a::x', '  \\x3a:warning file=a::x'],
    ['after colour codes', '\u001b[1m::error::x\u001b[0m', '\u001b[1m\\x3a:error::x\u001b[0m'],
    ['after non-breaking and ideographic spaces', '\u00a0\u3000::x::y', '\u00a0\u3000\\x3a:x::y'],
    ['not in the middle of a line', 'a ::error::x', 'a ::error::x'],
    ['##[ anywhere', 'x ##[add-mask]y', 'x #\\x23[add-mask]y'],
    ['###[ leaves no ##[', '###[error]', '##\\x23[error]'],
    ['Azure and TeamCity', '##vso[task] ##teamcity[x]', '#\\x23vso[task] #\\x23teamcity[x]'],
    ['a plain # stays', '# heading ## two', '# heading ## two'],
    ['a colon, a colour code, a colon', ':\u001b[1m:x', '\\x3a\u001b[1m:x'],
    ['nothing to change', 'a: b\n# c\n', 'a: b\n# c\n'],
    ['a :: inside lines', 'a git::x\n  m: y ::\n', 'a git::x\n  m: y ::\n'],
    ['a colour code, then a colon at the line start', '\u001b[1m\u001b[0m::x', '\u001b[1m\u001b[0m\\x3a:x'],
  ])('%s', (_name, input, safe) => {
    expect(ciSafeLines(input)).toBe(safe);
  });

  it('works line by line', () => {
    expect(ciSafeLines('ok\n::a::b\nok')).toBe('ok\n\\x3a:a::b\nok');
  });
});

describe('Markdown', () => {
  it.each([
    ['HTML', '<img src=x>', '\\<img src=x\\>'],
    ['a link', '[c](javascript:x)', '\\[c\\](javascript:x)'],
    ['emphasis, strike, math, pipes', '*a* _b_ ~c~ $d$ e|f', '\\*a\\* \\_b\\_ \\~c\\~ \\$d\\$ e\\|f'],
    ['entities and escapes', '&amp; \\', '\\&amp; \\\\\\\\'],
    ['a mention and an e-mail address', '@team a@b.c', '@&#8203;team a@&#8203;b.c'],
    ['an issue reference', '#12 #x', '\\#&#8203;12 \\#x'],
    ['control characters shown escaped', 'a\u001bb', 'a\\\\x1bb'],
  ])('mdText: %s', (_name, input, md) => {
    expect(mdText(input)).toBe(md);
  });

  it('mdText cuts at max characters before escaping', () => {
    expect(mdText('<<<<<', 3)).toBe('\\<\\<…');
  });

  it.each([
    ['plain', 'a/main.tf', '`a/main.tf`'],
    ['a backtick', 'a`b', '``a`b``'],
    ['backticks at the ends', '`a``', '``` `a`` ```'],
    ['spaces at both ends kept', ' a ', '`  a  `'],
    ['pipes in a table', 'a|b\\|c', '`a\\|b\\\\\\|c`'],
    ['control characters', 'a\nb', '`a\\x0ab`'],
    ['empty', '', '` `'],
  ])('mdCode: %s', (_name, input, md) => {
    expect(mdCode(input)).toBe(md);
  });

  it('mdCode outside a table leaves pipes alone', () => {
    expect(mdCode('a|b', false)).toBe('`a|b`');
  });

  it('mdFence: longer than any backtick run; none for a lone CR', () => {
    expect(mdFence('a')).toBe('```');
    expect(mdFence('````x')).toBe('`````');
    expect(mdFence('a\r\nb')).toBe('```');
    expect(mdFence('a\rb')).toBeNull();
  });
});

describeWithExternal(['cmark-gfm'], 'code spans as cmark-gfm renders them in a table', () => {
  const texts = ['a|b', 'a\\|b', 'a\\\\|b', '`x` | `y`', '``', ' a ', '|', '\\', 'x\\'];
  it.each(texts.map((t) => [JSON.stringify(t), t]))(
    '%s shows exactly visible(text) in one cell',
    (_s, text) => {
      const md = `| a | b |\n|---|---|\n| ${mdCode(text)} | end |\n`;
      const r = spawnSync('cmark-gfm', ['-e', 'table'], { input: md, encoding: 'utf8' });
      const cells = [...r.stdout.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((m) => m[1] as string);
      const decoded = (cells[0] ?? '')
        .replace(/^<code>|<\/code>$/g, '')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&');
      expect([decoded, cells[1]]).toEqual([visible(text), 'end']);
    },
  );
});

describe('SARIF and Code Quality', () => {
  it('plainText breaks embedded links and escapes control characters', () => {
    expect(plainText('[x](https://e.example) [y](1)\u001b')).toBe('[x]\\(https://e.example) [y]\\(1)\\x1b');
  });

  it.each([
    'modules/net/main.tf',
    'a b/c%d/main.tf',
    'a#b/c?d/main.tf',
    'javascript:alert(1)/main.tf',
    'x:y/main.tf',
    'new\nline/café/main.tf',
    "a@b/c+d/e,f;g=h&i$j/!'()*/main.tf",
  ])('sarifUri(%j) resolves under the base to exactly the path', (p) => {
    const base = 'file:///src/';
    const resolved = new URL(sarifUri(p), base).href;
    expect(resolved.startsWith(base)).toBe(true);
    expect(decodeURIComponent(resolved.slice(base.length))).toBe(p);
  });

  it('jsonForLogs keeps the JSON value and leaves no ##[', () => {
    const value = { a: 'x ##[add-mask]y ###[z] ##vso[t]', b: ['##teamcity[q]'] };
    const json = jsonForLogs(JSON.stringify(value, null, 2));
    expect(json).not.toMatch(/##(\[|vso\[|teamcity\[)/);
    expect(JSON.parse(json)).toEqual(value);
  });
});
