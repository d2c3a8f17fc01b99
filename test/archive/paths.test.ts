import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { portableCrc32 } from '../../src/archive/crc32';
import { DEFAULT_LIMITS, defaultShouldLoad, detectFormat } from '../../src/archive';
import { looksLikeTarHeader } from '../../src/archive/detect';
import { compareUtf8, isMacOsDebris, normaliseEntryPath } from '../../src/archive/paths';
import { InputError } from '../../src/errors';
import { rawTarHeader } from '../support/archive';

const archive = { archive: true };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err.code;
    throw err;
  }
  return undefined;
}

describe('normaliseEntryPath', () => {
  test.each([
    ['./main.tf', 'main.tf'],
    ['a//b/./c.tf', 'a/b/c.tf'],
    ['dir/', 'dir'],
    ['./dir/./', 'dir'],
    ['a/../b.tf', 'b.tf'],
    ['a\\b.tf', 'a/b.tf'],
    ['./', null],
    ['.', null],
    ['', null],
    ['a/b/main.tf', 'a/b/main.tf'],
    ['.a/..b/...', '.a/..b/...'],
    ['a/.', 'a'],
    ['a/..', null],
    ['a/b/', 'a/b'],
    ['a/b//', 'a/b'],
    ['./a/b.tf', 'a/b.tf'],
    ['./a/', 'a'],
    ['././a', 'a'],
    ['.//a', 'a'],
    ['./C:x', 'C:x'],
    ['caf\u00e9/\u{1f600}.tf', 'caf\u00e9/\u{1f600}.tf'],
  ])('%j -> %j', (name, expected) => {
    expect(normaliseEntryPath(name, DEFAULT_LIMITS, archive)).toBe(expected);
  });

  // A name already in normal form takes a shortcut when it is clearly within the limits; at and
  // past the limits it goes through the full check, which rejects it as before.
  test.each([
    ['a/b/c', 3, 100, 'a/b/c'],
    ['a/b/c/', 3, 100, 'a/b/c'],
    ['a/b/c/d', 3, 100, 'path-too-deep'],
    ['./a/b/c', 3, 100, 'a/b/c'],
    ['aaaa/bbbb/cccc', 3, 100, 'aaaa/bbbb/cccc'],
    ['aaaa/bbbb/cccc/', 3, 100, 'aaaa/bbbb/cccc'],
    ['./aaaa/bbbb/cccc/dddd', 3, 100, 'path-too-deep'],
    ['abcdefghij', 10, 10, 'abcdefghij'],
    ['abcdefghijk', 10, 10, 'path-too-long'],
    ['\u00e9\u00e9\u00e9\u00e9\u00e9', 10, 10, '\u00e9\u00e9\u00e9\u00e9\u00e9'],
    ['\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9', 10, 10, 'path-too-long'],
    ['\u20ac\u20ac\u20ac', 10, 9, '\u20ac\u20ac\u20ac'],
    ['\u20ac\u20ac\u20ac\u20ac', 10, 11, 'path-too-long'],
  ])('%j with depth limit %d and length limit %d: %s', (name, depth, length, expected) => {
    const limits = { ...DEFAULT_LIMITS, maxPathDepth: depth, maxPathLength: length };
    const code = codeOf(() => normaliseEntryPath(name, limits, archive));
    expect(code ?? normaliseEntryPath(name, limits, archive)).toBe(expected);
  });

  test.each([
    ['/etc/passwd', 'absolute-path'],
    ['//server/share', 'absolute-path'],
    ['\\\\server\\share', 'absolute-path'],
    ['C:\\x', 'absolute-path'],
    ['c:/x', 'absolute-path'],
    ['C:..', 'absolute-path'],
    ['..', 'path-traversal'],
    ['a/../../b', 'path-traversal'],
    ['./../b', 'path-traversal'],
    ['a\0b', 'invalid-path'],
  ])('%j is rejected with %s', (name, code) => {
    expect(codeOf(() => normaliseEntryPath(name, DEFAULT_LIMITS, archive))).toBe(code);
  });

  test('directory names are not subject to archive-only rules (a backslash is a character there)', () => {
    expect(normaliseEntryPath('dir/C:x\\y.tf', DEFAULT_LIMITS, { archive: false })).toBe('dir/C:x\\y.tf');
  });

  test('the error entry is the raw name with control characters escaped', () => {
    try {
      normaliseEntryPath('../\u0007bell', DEFAULT_LIMITS, archive);
      throw new Error('not rejected');
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).entry).toBe('../\\x07bell');
    }
  });
});

describe('defaultShouldLoad', () => {
  test.each([
    ['main.tf', true],
    ['a/b/main.tf.json', true],
    ['x.tofu', true],
    ['x.tofu.json', true],
    ['m/.terraform.lock.hcl', true],
    ['.tfguard.hcl', true],
    ['terraform.tfvars', false],
    ['main.tf.bak', false],
    // What says what a directory is (docs/classification.md): READMEs, Terragrunt and test files.
    ['README.md', true],
    ['modules/x/readme.md', true],
    ['CHANGELOG.md', false],
    ['tf', false],
    ['live/app/terragrunt.hcl', true],
    ['root.hcl', true],
    ['tests/main.tftest.hcl', true],
    ['tests/main.tftest.json', true],
    ['x.hcl', true],
    ['a.tf/readme', false],
    // Deployment declarations (src/modules/declarations) and Terraform Stacks.
    ['atlantis.yaml', true],
    ['repo/atlantis.yml', true],
    ['digger.yml', true],
    ['.spacelift/config.yml', true],
    ['a/.spacelift/config.yaml', true],
    ['config.yml', false],
    ['atmos.yaml', true],
    ['stacks/orgs/acme/dev.yaml', true],
    ['stacks/catalog/vpc.yml', true],
    ['charts/app/values.yaml', false],
    ['env0.workflow.yml', true],
    ['stack.tm', true],
    ['terramate.tm.hcl', true],
    ['components.tfcomponent.json', true],
    ['deployments.tfdeploy.hcl', true],
  ])('%s -> %s', (p, expected) => {
    expect(defaultShouldLoad(p)).toBe(expected);
  });
});

test('isMacOsDebris', () => {
  expect(isMacOsDebris('._main.tf')).toBe(true);
  expect(isMacOsDebris('a/._main.tf')).toBe(true);
  expect(isMacOsDebris('__MACOSX')).toBe(true);
  expect(isMacOsDebris('__MACOSX/a/main.tf')).toBe(true);
  expect(isMacOsDebris('a/__MACOSX/main.tf')).toBe(false);
  expect(isMacOsDebris('a._b.tf')).toBe(false);
});

test('compareUtf8 orders by UTF-8 bytes, not UTF-16 code units', () => {
  // U+FF5E (3 UTF-8 bytes starting 0xEF) sorts before U+1F600 (4 bytes starting 0xF0) in UTF-8,
  // but after it in UTF-16 (0xFF5E > 0xD83D).
  const names = ['\u{1F600}.tf', '\uFF5E.tf', 'Z.tf', 'a.tf'];
  expect([...names].sort(compareUtf8)).toEqual(['Z.tf', 'a.tf', '\uFF5E.tf', '\u{1F600}.tf']);
  expect([...names].sort()).not.toEqual([...names].sort(compareUtf8));
});

test('compareUtf8 agrees with comparing the UTF-8 encodings (property)', () => {
  const bytewise = (a: string, b: string): number =>
    Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  // Strings over an alphabet that mixes ASCII, BMP above the surrogates, astral characters and
  // lone surrogates, sharing prefixes often.
  const unit = fc.constantFrom(
    'a',
    'b',
    '/',
    '\u00e9',
    '\uFF5E',
    '\uE000',
    '\u{1F600}',
    '\u{10FFFF}',
    '\uD800',
    '\uDFFF',
  );
  const str = fc.array(unit, { maxLength: 6 }).map((u) => u.join(''));
  fc.assert(
    fc.property(str, str, str, (prefix, a, b) => {
      expect(Math.sign(compareUtf8(prefix + a, prefix + b))).toBe(bytewise(prefix + a, prefix + b));
    }),
    { numRuns: 5000 },
  );
});

describe('detectFormat', () => {
  test('by magic bytes', () => {
    expect(detectFormat(Buffer.from([0x1f, 0x8b, 8, 0]), 'x')).toBe('tar.gz');
    expect(detectFormat(Buffer.from('PK\x03\x04rest', 'latin1'), 'x')).toBe('zip');
    expect(detectFormat(Buffer.from('PK\x05\x06rest', 'latin1'), 'x')).toBe('zip');
    expect(detectFormat(Buffer.concat([rawTarHeader({ name: 'a' }), Buffer.alloc(1024)]), 'x.zip')).toBe(
      'tar',
    );
    expect(
      detectFormat(Buffer.concat([rawTarHeader({ name: 'a', ustar: false }), Buffer.alloc(1024)]), 'x'),
    ).toBe('tar');
  });

  test('a v7 header needs a matching checksum', () => {
    const header = rawTarHeader({ name: 'a.tf', ustar: false });
    expect(looksLikeTarHeader(header)).toBe(true);
    header[0] = 0x62; // change the name; the stored checksum no longer matches
    expect(looksLikeTarHeader(header)).toBe(false);
  });

  test.each([
    [Buffer.alloc(0), 'empty-archive'],
    [Buffer.from('BZh91AY&SY'), 'unsupported-format'],
    [Buffer.alloc(700, 0x41), 'unsupported-format'],
  ])('rejects %#', (bytes, code) => {
    expect(codeOf(() => detectFormat(bytes, 'x'))).toBe(code);
  });
});

test('the portable CRC-32 matches zlib (incrementally too)', () => {
  const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) & 0xff));
  expect(portableCrc32(data)).toBe(crc32(data));
  expect(portableCrc32(data.subarray(1234), portableCrc32(data.subarray(0, 1234)))).toBe(crc32(data));
  expect(portableCrc32(Buffer.from('123456789'))).toBe(0xcbf43926);
});
