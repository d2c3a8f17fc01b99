import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { readArchiveBytes, readInput } from '../../src/archive';
import { expectInputError } from '../support/expect-input-error';
import { buildTar, buildTarGz, paxHeader, rawTar, rawTarHeader, tarData, TAR_END } from '../support/archive';
import { writeZip } from '../support/zip-writer';

const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

describe('tar and tar.gz: happy paths', () => {
  const entries = [
    { name: './', type: 'directory' as const },
    { name: './main.tf', data: 'terraform {}\n', mode: 0o640 },
    { name: './modules/', type: 'directory' as const },
    { name: './modules/vpc/', type: 'directory' as const },
    { name: './modules/vpc/versions.tf.json', data: '{}' },
    { name: './modules//vpc/./README.md', data: '# vpc' },
    { name: './.terraform.lock.hcl', data: '# lock' },
    { name: './Zeta.tofu', data: 'z' },
    { name: './ä.tf', data: 'umlaut' },
    { name: './._main.tf', data: 'apple double' },
    { name: '__MACOSX/._main.tf', data: 'apple double' },
    { name: './b.tf~', data: 'backup' },
  ];

  test.each(['tar', 'tar.gz'] as const)(
    '%s: entries, sorting, hashes, modes and loaded files',
    async (format) => {
      const bytes = format === 'tar' ? await buildTar(entries) : await buildTarGz(entries);
      const archive = await readArchiveBytes(`upload.${format}`, bytes);
      expect(archive.format).toBe(format);
      expect(archive.name).toBe(`upload.${format}`);
      expect(archive.sha256).toBe(sha(bytes));
      // Byte order: '.' (0x2e) < 'Z' (0x5a) < 'b' < 'm' < 'ä' (0xc3 0xa4); './' itself and macOS
      // debris are not listed; `a//b`, `a/./b` and trailing `/` are normalised.
      expect(archive.entries.map((e) => [e.path, e.type])).toEqual([
        ['.terraform.lock.hcl', 'file'],
        ['Zeta.tofu', 'file'],
        ['b.tf~', 'file'],
        ['main.tf', 'file'],
        ['modules', 'directory'],
        ['modules/vpc', 'directory'],
        ['modules/vpc/README.md', 'file'],
        ['modules/vpc/versions.tf.json', 'file'],
        ['ä.tf', 'file'],
      ]);
      const main = archive.entries.find((e) => e.path === 'main.tf');
      expect(main).toEqual({
        path: 'main.tf',
        type: 'file',
        size: 13,
        sha256: sha('terraform {}\n'),
        mode: 0o640,
      });
      expect(archive.entries.find((e) => e.path === 'modules')).toEqual({
        path: 'modules',
        type: 'directory',
        size: 0,
        mode: 0o755,
      });
      expect(archive.entries.find((e) => e.path === 'modules/vpc/README.md')?.sha256).toBe(sha('# vpc'));
      expect([...archive.files.keys()]).toEqual([
        '.terraform.lock.hcl',
        'Zeta.tofu',
        'main.tf',
        'modules/vpc/README.md',
        'modules/vpc/versions.tf.json',
        'ä.tf',
      ]);
      expect(archive.files.get('ä.tf')?.toString()).toBe('umlaut');
    },
  );

  test('shouldLoad decides which files are kept in memory', async () => {
    const bytes = await buildTarGz(entries);
    const archive = await readArchiveBytes('x.tgz', bytes, { shouldLoad: (p) => p.endsWith('.md') });
    expect([...archive.files.keys()]).toEqual(['modules/vpc/README.md']);
    expect(archive.entries.filter((e) => e.type === 'file')).toHaveLength(7);
  });

  test('a zip renamed .tar.gz is read as a zip (the format comes from the content)', async () => {
    const zip = writeZip([{ name: 'main.tf', data: 'x', method: 'deflate' }]);
    const archive = await readArchiveBytes('upload.tar.gz', zip);
    expect(archive.format).toBe('zip');
    expect(archive.files.get('main.tf')?.toString()).toBe('x');
  });

  test('a tar.gz renamed .zip is read as tar.gz', async () => {
    const archive = await readArchiveBytes('upload.zip', await buildTarGz([{ name: 'a.tf', data: 'a' }]));
    expect(archive.format).toBe('tar.gz');
  });

  test('an old v7 tar header (no ustar magic) is recognised by its checksum', async () => {
    const bytes = rawTar(rawTarHeader({ name: 'v7.tf', size: 3, ustar: false }), tarData('abc'));
    const archive = await readArchiveBytes('old.tar', bytes);
    expect(archive.format).toBe('tar');
    expect(archive.files.get('v7.tf')?.toString()).toBe('abc');
  });

  test('old-style directories (type 0 with a trailing slash) are directories', async () => {
    const bytes = rawTar(
      rawTarHeader({ name: 'mod/', ustar: false }),
      rawTarHeader({ name: 'mod/a.tf', size: 1, ustar: false }),
      tarData('a'),
    );
    const archive = await readArchiveBytes('old.tar', bytes);
    expect(archive.entries.map((e) => [e.path, e.type])).toEqual([
      ['mod', 'directory'],
      ['mod/a.tf', 'file'],
    ]);
  });

  test('PAX long names and non-ASCII names from tar-stream are read', async () => {
    const long = `${'d'.repeat(120)}/${'e'.repeat(120)}/main.tf`;
    const archive = await readArchiveBytes(
      'x.tar',
      await buildTar([
        { name: long, data: 'x' },
        { name: 'ü/ö.tf', data: 'y' },
      ]),
    );
    expect([...archive.files.keys()]).toEqual([long, 'ü/ö.tf']);
  });

  test('GNU tar archives (long names, links) made by the tar CLI are read', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tfguard-gnutar-'));
    try {
      const deep = path.join(dir, 'src', 'a'.repeat(90), 'b'.repeat(90));
      mkdirSync(deep, { recursive: true });
      writeFileSync(path.join(deep, 'main.tf'), 'resource "x" "y" {}\n');
      writeFileSync(path.join(dir, 'src', 'ünïcode.tf'), 'u');
      execFileSync('ln', [
        '-s',
        `${'a'.repeat(90)}/${'b'.repeat(90)}/main.tf`,
        path.join(dir, 'src', 'link.tf'),
      ]);
      const out = path.join(dir, 'out.tar.gz');
      execFileSync('tar', ['--format=gnu', '-czf', out, '-C', path.join(dir, 'src'), '.']);
      const archive = await readInput(out);
      const longPath = `${'a'.repeat(90)}/${'b'.repeat(90)}/main.tf`;
      expect(archive.format).toBe('tar.gz');
      expect(archive.files.get(longPath)?.toString()).toBe('resource "x" "y" {}\n');
      expect(archive.files.get('ünïcode.tf')?.toString()).toBe('u');
      expect(archive.entries.find((e) => e.path === 'link.tf')).toMatchObject({
        type: 'symlink',
        linkTarget: longPath,
      });
      expect(archive.files.get('link.tf')?.toString()).toBe('resource "x" "y" {}\n');
      expect(archive.sha256).toBe(sha(readFileSync(out)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('tar links', () => {
  test('a symlink inside the archive is recorded and a loaded link gets its target content', async () => {
    const archive = await readArchiveBytes(
      'x.tar.gz',
      await buildTarGz([
        { name: 'shared/versions.tf', data: 'terraform { required_version = ">= 1.5" }' },
        { name: 'shared/notes.txt', data: 'not loaded by default' },
        { name: 'root/versions.tf', type: 'symlink', linkname: '../shared/versions.tf' },
        { name: 'root/notes.tf', type: 'symlink', linkname: '../shared/notes.txt' },
        { name: 'root/dangling.tf', type: 'symlink', linkname: 'missing.tf' },
        { name: 'root/hard.tf', type: 'link', linkname: 'shared/versions.tf' },
      ]),
    );
    expect(archive.entries.find((e) => e.path === 'root/versions.tf')).toEqual({
      path: 'root/versions.tf',
      type: 'symlink',
      size: 0,
      mode: 0o644,
      linkTarget: 'shared/versions.tf',
    });
    expect(archive.files.get('root/versions.tf')?.toString()).toContain('required_version');
    // The target is not selected by shouldLoad, yet the loaded link gets its content.
    expect(archive.files.get('root/notes.tf')?.toString()).toBe('not loaded by default');
    expect(archive.files.has('shared/notes.txt')).toBe(false);
    expect(archive.entries.find((e) => e.path === 'root/dangling.tf')?.linkTarget).toBe('root/missing.tf');
    expect(archive.files.has('root/dangling.tf')).toBe(false);
    expect(archive.entries.find((e) => e.path === 'root/hard.tf')).toMatchObject({
      type: 'hardlink',
      linkTarget: 'shared/versions.tf',
    });
    expect(archive.files.get('root/hard.tf')?.toString()).toContain('required_version');
  });

  test('link chains through symlinked directories resolve inside', async () => {
    const archive = await readArchiveBytes(
      'x.tar',
      await buildTar([
        { name: 'real/', type: 'directory' },
        { name: 'real/main.tf', data: 'real' },
        { name: 'alias', type: 'symlink', linkname: 'real' },
        { name: 'entry.tf', type: 'symlink', linkname: 'alias/main.tf' },
      ]),
    );
    expect(archive.files.get('entry.tf')?.toString()).toBe('real');
  });

  test.each([
    ['absolute target', [{ name: 'evil.tf', type: 'symlink' as const, linkname: '/etc/passwd' }], 'evil.tf'],
    [
      'relative escape',
      [{ name: 'a/evil.tf', type: 'symlink' as const, linkname: '../../etc/passwd' }],
      'a/evil.tf',
    ],
    [
      'Windows drive target',
      [{ name: 'evil.tf', type: 'symlink' as const, linkname: 'C:\\Windows\\win.ini' }],
      'evil.tf',
    ],
    ['hardlink outside', [{ name: 'evil.tf', type: 'link' as const, linkname: '../outside.tf' }], 'evil.tf'],
    [
      'escape through a symlinked directory',
      [
        { name: 'd/', type: 'directory' as const },
        { name: 'd/up', type: 'symlink' as const, linkname: '..' },
        { name: 'evil.tf', type: 'symlink' as const, linkname: 'd/up/../x.tf' },
      ],
      'evil.tf',
    ],
  ])('symlink rejected: %s', async (_label, specs, entry) => {
    await expectInputError(readArchiveBytes('x.tar', await buildTar(specs)), 'link-outside', entry);
  });

  test('a symlink loop is rejected, not followed forever', async () => {
    const bytes = await buildTar([
      { name: 'a.tf', type: 'symlink', linkname: 'b.tf' },
      { name: 'b.tf', type: 'symlink', linkname: 'a.tf' },
    ]);
    await expectInputError(readArchiveBytes('x.tar', bytes), 'invalid-path', /^(a|b)\.tf$/);
  });

  test('an entry below a symlink is rejected (writes through links)', async () => {
    const bytes = await buildTar([
      { name: 'real/', type: 'directory' },
      { name: 'alias', type: 'symlink', linkname: 'real' },
      { name: 'alias/main.tf', data: 'x' },
    ]);
    await expectInputError(readArchiveBytes('x.tar', bytes), 'invalid-path', 'alias/main.tf');
  });
});

describe('tar rejections', () => {
  test.each([
    ['absolute path', '/etc/passwd', 'absolute-path'],
    ['Windows drive path', 'C:\\evil.tf', 'absolute-path'],
    ['drive-relative path', 'C:..\\evil.tf', 'absolute-path'],
    ['backslash-rooted path', '\\evil.tf', 'absolute-path'],
    ['traversal', '../evil.tf', 'path-traversal'],
    ['traversal after normalisation', 'a/./../../evil.tf', 'path-traversal'],
    ['traversal with backslashes', 'a\\..\\..\\evil.tf', 'path-traversal'],
  ] as const)('%s', async (_label, name, code) => {
    await expectInputError(readArchiveBytes('x.tar.gz', await buildTarGz([{ name, data: 'x' }])), code, name);
  });

  test('a file entry that names the archive root is invalid', async () => {
    const bytes = rawTar(rawTarHeader({ name: './', size: 1, typeflag: '0' }), tarData('x'));
    // tar-stream turns a type-0 entry ending in '/' into a directory, so use '.'.
    const dot = rawTar(rawTarHeader({ name: '.', size: 1 }), tarData('x'));
    await expectInputError(readArchiveBytes('x.tar', dot), 'invalid-path', '.');
    await expectInputError(readArchiveBytes('x.tar', bytes), 'empty-archive');
  });

  test('`..` that stays inside is normalised, not rejected', async () => {
    const archive = await readArchiveBytes('x.tar', await buildTar([{ name: 'a/../b.tf', data: 'b' }]));
    expect([...archive.files.keys()]).toEqual(['b.tf']);
  });

  test.each(['fifo', 'character-device', 'block-device'] as const)(
    '%s entries are rejected',
    async (type) => {
      const bytes = await buildTar([
        { name: 'ok.tf', data: 'x' },
        { name: 'dev/thing', type },
      ]);
      await expectInputError(readArchiveBytes('x.tar', bytes), 'unsupported-entry-type', 'dev/thing');
    },
  );

  test('an unknown type flag (GNU volume label) is rejected', async () => {
    const bytes = rawTar(rawTarHeader({ name: 'label', typeflag: 'V' }));
    await expectInputError(readArchiveBytes('x.tar', bytes), 'unsupported-entry-type', 'label');
  });

  test('duplicate file entries are rejected (no silent shadowing)', async () => {
    const bytes = await buildTarGz([
      { name: 'main.tf', data: 'first' },
      { name: 'other.tf', data: 'o' },
      { name: './main.tf', data: 'second' },
    ]);
    await expectInputError(readArchiveBytes('x.tgz', bytes), 'duplicate-entry', './main.tf');
  });

  test('a file and a directory with the same path are a duplicate', async () => {
    const bytes = await buildTar([
      { name: 'mod', data: 'file' },
      { name: 'mod/', type: 'directory' },
    ]);
    await expectInputError(readArchiveBytes('x.tar', bytes), 'duplicate-entry', 'mod/');
  });

  test('the same directory listed twice is accepted', async () => {
    const archive = await readArchiveBytes(
      'x.tar',
      await buildTar([
        { name: 'mod/', type: 'directory' },
        { name: 'mod/', type: 'directory' },
        { name: 'mod/a.tf', data: 'a' },
      ]),
    );
    expect(archive.entries.map((e) => e.path)).toEqual(['mod', 'mod/a.tf']);
  });

  test('a non-UTF-8 name is rejected with the name hex-escaped', async () => {
    const name = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x66]); // "caf\xe9.tf" (latin1)
    const bytes = rawTar(rawTarHeader({ name, size: 1 }), tarData('x'));
    await expectInputError(readArchiveBytes('x.tar', bytes), 'invalid-path', 'caf\\xe9.tf');
  });

  test('a NUL byte inside a PAX path is rejected', async () => {
    const bytes = rawTar(
      paxHeader({ path: 'a\u0000b.tf' }),
      rawTarHeader({ name: 'ab.tf', size: 1 }),
      tarData('x'),
    );
    await expectInputError(readArchiveBytes('x.tar', bytes), 'invalid-path', 'a\\x00b.tf');
  });

  test('invalid UTF-8 inside a PAX path is rejected', async () => {
    const bytes = rawTar(
      paxHeader({ path: Buffer.from([0x78, 0xff, 0x2e, 0x74, 0x66]) }),
      rawTarHeader({ name: 'x.tf', size: 1 }),
      tarData('x'),
    );
    await expectInputError(readArchiveBytes('x.tar', bytes), 'invalid-path', 'x\ufffd.tf');
  });

  test('a PAX path is used instead of the header name', async () => {
    const bytes = rawTar(
      paxHeader({ path: 'real/näme.tf' }),
      rawTarHeader({ name: 'short.tf', size: 1 }),
      tarData('x'),
    );
    const archive = await readArchiveBytes('x.tar', bytes);
    expect([...archive.files.keys()]).toEqual(['real/näme.tf']);
  });

  test('an archive with no entries is rejected', async () => {
    await expectInputError(readArchiveBytes('x.tar', TAR_END), 'empty-archive');
    await expectInputError(readArchiveBytes('x.tar.gz', gzipSync(TAR_END)), 'empty-archive');
    await expectInputError(readArchiveBytes('x.tar.gz', Buffer.alloc(0)), 'empty-archive');
  });

  test('an archive with only macOS debris is empty', async () => {
    const bytes = await buildTarGz([{ name: '._main.tf', data: 'x' }]);
    await expectInputError(readArchiveBytes('x.tgz', bytes), 'empty-archive');
  });
});

describe('truncated and corrupt tar input', () => {
  test('a tar.gz cut in half is rejected as truncated (and does not hang)', async () => {
    const files = Array.from({ length: 40 }, (_, i) => ({
      name: `m${i}/main.tf`,
      data: createHash('sha512').update(String(i)).digest('hex').repeat(20),
    }));
    const bytes = await buildTarGz(files);
    const started = Date.now();
    await expectInputError(
      readArchiveBytes('x.tar.gz', bytes.subarray(0, bytes.length >> 1)),
      'truncated-archive',
    );
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  test('a tar cut inside an entry is truncated, naming the entry', async () => {
    const bytes = await buildTar([
      { name: 'a.tf', data: 'a' },
      { name: 'big.tf', data: 'x'.repeat(5000) },
    ]);
    await expectInputError(readArchiveBytes('x.tar', bytes.subarray(0, 2048)), 'truncated-archive', 'big.tf');
  });

  test('a tar cut at an entry boundary (no end-of-archive marker) is truncated', async () => {
    const bytes = await buildTar([
      { name: 'a.tf', data: 'a' },
      { name: 'b.tf', data: 'b' },
    ]);
    await expectInputError(readArchiveBytes('x.tar', bytes.subarray(0, 1024)), 'truncated-archive');
  });

  test('a tar whose first header is cut short is truncated', async () => {
    const bytes = await buildTar([{ name: 'a.tf', data: 'a' }]);
    await expectInputError(readArchiveBytes('x.tar', bytes.subarray(0, 300)), 'truncated-archive');
  });

  test('a header with a bad checksum in the middle is corrupt', async () => {
    const bytes = Buffer.from(
      await buildTar([
        { name: 'a.tf', data: 'a' },
        { name: 'b.tf', data: 'b' },
      ]),
    );
    bytes[1024 + 10] = 0x41; // second header's name field; checksum no longer matches
    await expectInputError(readArchiveBytes('x.tar', bytes), 'corrupt-archive');
  });

  test('gzip data with a bad CRC is corrupt', async () => {
    const gz = Buffer.from(await buildTarGz([{ name: 'a.tf', data: 'a' }]));
    gz.writeUInt32LE((gz.readUInt32LE(gz.length - 8) ^ 0xffffffff) >>> 0, gz.length - 8);
    await expectInputError(readArchiveBytes('x.tgz', gz), 'corrupt-archive');
  });

  test('gzip that does not contain a tar is an unsupported format', async () => {
    await expectInputError(
      readArchiveBytes('x.tgz', gzipSync('just some text, not a tar'.repeat(100))),
      'unsupported-format',
    );
    await expectInputError(readArchiveBytes('x.tgz', gzipSync('short')), 'unsupported-format');
    await expectInputError(
      readArchiveBytes('x.tgz', gzipSync(writeZip([{ name: 'a.tf', data: 'x' }]))),
      'unsupported-format',
    );
  });

  test.each([
    ['plain text', Buffer.from('hello world, this is not an archive')],
    ['bzip2', Buffer.concat([Buffer.from('BZh91AY&SY'), Buffer.alloc(600)])],
    ['xz', Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), Buffer.alloc(600)])],
    ['zstd', Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(600)])],
    ['random 4 KiB', createHash('sha512').update('seed').digest().subarray(0, 64).toString('hex').repeat(64)],
  ])('%s is rejected as an unsupported format', async (_label, data) => {
    await expectInputError(readArchiveBytes('x.tar.gz', Buffer.from(data)), 'unsupported-format');
  });
});
