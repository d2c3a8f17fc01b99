import fc from 'fast-check';
import { decodeSource } from '../../src/hcl';

const bytes = (...parts: (string | number[])[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

describe('decodeSource', () => {
  it('decodes plain UTF-8, multi-byte characters included', () => {
    expect(decodeSource('a.tf', bytes('a = "héllo 😀 中"\n'))).toEqual({
      ok: true,
      text: 'a = "héllo 😀 中"\n',
      bomBytes: 0,
    });
  });

  it('strips one leading BOM', () => {
    expect(decodeSource('a.tf', bytes([0xef, 0xbb, 0xbf], 'a = 1\n'))).toEqual({
      ok: true,
      text: 'a = 1\n',
      bomBytes: 3,
    });
  });

  it('rejects a BOM in the middle of the file, with its position', () => {
    const r = decodeSource('m/a.tf', bytes('a = 1\nb = "x', [0xef, 0xbb, 0xbf], '"\n'));
    expect(r).toEqual({
      ok: false,
      error: {
        path: 'm/a.tf',
        line: 2,
        column: 7,
        message: 'byte order mark (U+FEFF) in the middle of the file; only a leading one is allowed',
      },
    });
    // A second BOM right after the first one is a mid-file BOM too.
    expect(decodeSource('a.tf', bytes([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf], 'a = 1\n')).ok).toBe(false);
  });

  it('keeps CRLF line endings', () => {
    expect(decodeSource('a.tf', bytes('a = 1\r\nb = 2\r\n'))).toEqual({
      ok: true,
      text: 'a = 1\r\nb = 2\r\n',
      bomBytes: 0,
    });
  });

  const invalid: [string, Buffer, number, number][] = [
    ['a lone continuation byte', bytes('a = 1\nb = "', [0x80], '"\n'), 2, 6],
    ['a truncated 2-byte sequence', bytes('ab', [0xc3]), 1, 3],
    ['an invalid start byte 0xff', bytes('é\r\nx', [0xff]), 2, 2],
    ['an overlong encoding of "/"', bytes([0xc0, 0xaf]), 1, 1],
    ['an overlong 3-byte sequence', bytes('x', [0xe0, 0x80, 0xaf]), 1, 2],
    ['a UTF-16 surrogate (U+D800)', bytes('😀😀', [0xed, 0xa0, 0x80]), 1, 3],
    ['a code point above U+10FFFF', bytes([0xf4, 0x90, 0x80, 0x80]), 1, 1],
    ['a bad continuation inside a 4-byte sequence', bytes('\n\n', [0xf0, 0x9f, 0x98, 0x41]), 3, 1],
  ];
  it.each(invalid)(
    'rejects %s with the line and column of the first bad byte',
    (_name, buf, line, column) => {
      const r = decodeSource('a.tf', buf);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error).toMatchObject({ path: 'a.tf', line, column });
      expect(r.error.message).toMatch(/^invalid UTF-8/);
    },
  );

  it('agrees with the WHATWG fatal decoder on arbitrary bytes', () => {
    const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (arr) => {
        const buf = Buffer.from(arr);
        let expected: string | null;
        try {
          expected = strict.decode(buf);
        } catch {
          expected = null;
        }
        const r = decodeSource('a.tf', buf);
        if (expected === null) {
          expect(r.ok).toBe(false);
        } else {
          const withoutBom = expected.startsWith('\uFEFF') ? expected.slice(1) : expected;
          if (withoutBom.includes('\uFEFF')) expect(r.ok).toBe(false);
          else
            expect(r).toEqual({
              ok: true,
              text: withoutBom,
              bomBytes: withoutBom.length < expected.length ? 3 : 0,
            });
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with the WHATWG fatal decoder on valid text with one corrupted byte', () => {
    const strict = new TextDecoder('utf-8', { fatal: true });
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 20 }),
        fc.nat(),
        fc.integer({ min: 0x80, max: 0xff }),
        (s, pos, b) => {
          const buf = Buffer.from(s.replace(/\uFEFF/g, ''), 'utf8');
          if (buf.length === 0) return;
          buf[pos % buf.length] = b;
          let valid = true;
          try {
            strict.decode(buf);
          } catch {
            valid = false;
          }
          expect(decodeSource('a.tf', buf).ok).toBe(valid && !buf.toString('utf8').includes('\uFEFF'));
        },
      ),
      { numRuns: 500 },
    );
  });
});
