/**
 * Threat model, "Archives" rows (docs/security.md §4): every hostile archive is rejected as a whole
 * with one specific `InputError` (code, entry, message), through the public `scanBytes` entry point,
 * and nothing is ever written to disk.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { runCli } from '../../src/cli/main';
import { scanBytes } from '../../src/scan';
import {
  buildTar,
  buildTarGz,
  paxHeader,
  rawTar,
  rawTarHeader,
  tarData,
  type TarEntrySpec,
} from '../support/archive';
import {
  S_IFBLK,
  S_IFCHR,
  S_IFIFO,
  S_IFLNK,
  unicodePathField,
  writeZip,
  type ZipEntrySpec,
} from '../support/zip-writer';
import { expectScanRejected, rejection } from '../support/security';

const MiB = 1024 * 1024;
const MAIN_TF = 'terraform {\n  required_version = ">= 1.6"\n}\n';

/** The same entries as a tar, a tar.gz and a zip (zip entries have no link types). */
async function inEveryFormat(files: { name: string; data: string }[]): Promise<[string, Buffer][]> {
  const specs: TarEntrySpec[] = files.map((f) => ({ name: f.name, data: f.data }));
  const zipSpecs: ZipEntrySpec[] = files.map((f) => ({ name: f.name, data: f.data, method: 'deflate' }));
  return [
    ['upload.tar', await buildTar(specs)],
    ['upload.tar.gz', await buildTarGz(specs)],
    ['upload.zip', writeZip(zipSpecs)],
  ];
}

describe('archives: path traversal and absolute paths', () => {
  test.each([
    ['`..` at the start', '../evil.tf', 'path-traversal', 'path escapes the archive root'],
    ['`..` after a directory', 'modules/../../evil.tf', 'path-traversal', 'path escapes the archive root'],
    ['`..` with backslashes', '..\\..\\evil.tf', 'path-traversal', 'path escapes the archive root'],
    ['absolute POSIX path', '/etc/cron.d/evil', 'absolute-path', 'absolute path in archive'],
    ['repeated leading slashes', '////etc/cron.d/evil', 'absolute-path', 'absolute path in archive'],
    ['drive-relative `C:..`', 'C:..\\evil.tf', 'absolute-path', 'absolute path in archive'],
    ['drive-relative `c:../`', 'c:../evil.tf', 'absolute-path', 'absolute path in archive'],
    ['drive-relative `C:x`', 'C:evil.tf', 'absolute-path', 'absolute path in archive'],
    ['drive-absolute `C:\\`', 'C:\\Windows\\evil.tf', 'absolute-path', 'absolute path in archive'],
    ['UNC path', '\\\\host\\share\\evil.tf', 'absolute-path', 'absolute path in archive'],
  ] as const)('%s is rejected in tar, tar.gz and zip', async (_label, name, code, message) => {
    for (const [file, bytes] of await inEveryFormat([
      { name: 'main.tf', data: MAIN_TF },
      { name, data: 'resource "x" "y" {}\n' },
    ])) {
      const error = await expectScanRejected(file, bytes, { code, entry: name, message });
      expect(error.message).toContain(`"${name}"`);
    }
  });

  test('`..` that stays inside is normalised, not rejected (and the file is scanned at its real path)', async () => {
    const report = await scanBytes(
      'upload.tar.gz',
      await buildTarGz([{ name: 'modules/../main.tf', data: MAIN_TF }]),
    );
    expect(report.modules.map((m) => [m.path, m.files])).toEqual([['.', ['main.tf']]]);
  });

  test('nothing is written outside memory: traversal targets stay absent, a tmpdir stays empty', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-security-'));
    try {
      const up = path.relative(process.cwd(), dir).split(path.sep).join('/');
      const attempts: [string, Buffer][] = [
        ['abs.tar', await buildTar([{ name: `${dir}/pwned-abs.tf`, data: 'x' }])],
        ['rel.tar', await buildTar([{ name: `${up}/pwned-rel.tf`, data: 'x' }])],
        ['up.tar', await buildTar([{ name: `../../../../../../../../..${dir}/pwned-up.tf`, data: 'x' }])],
        [
          'link.tar',
          await buildTar([
            { name: 'l', type: 'symlink', linkname: dir },
            { name: 'l/x', data: 'x' },
          ]),
        ],
      ];
      for (const [name, bytes] of attempts) {
        await rejection(scanBytes(name, bytes));
      }
      // A valid archive is scanned in memory too: its files never appear on disk.
      await scanBytes('ok.tar.gz', await buildTarGz([{ name: 'pwned-ok.tf', data: MAIN_TF }]));
      expect(await fs.readdir(dir)).toEqual([]);
      for (const leaf of ['pwned-abs.tf', 'pwned-rel.tf', 'pwned-up.tf', 'pwned-ok.tf']) {
        await expect(fs.stat(path.join(process.cwd(), leaf))).rejects.toMatchObject({ code: 'ENOENT' });
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('archives: symlinks and hardlinks', () => {
  test.each([
    [
      'symlink with a relative target escaping the root',
      [{ name: 'a/evil.tf', type: 'symlink', linkname: '../../etc/passwd' }],
      'a/evil.tf',
      'resolves outside the archive',
    ],
    [
      'symlink to an absolute path',
      [{ name: 'evil.tf', type: 'symlink', linkname: '/etc/passwd' }],
      'evil.tf',
      'points to the absolute path "/etc/passwd", outside the archive',
    ],
    [
      'symlink to a drive-relative path',
      [{ name: 'evil.tf', type: 'symlink', linkname: 'C:../../secret' }],
      'evil.tf',
      'points to the absolute path "C:../../secret"',
    ],
    [
      'symlink escaping through another symlink',
      [
        { name: 'd/', type: 'directory' },
        { name: 'd/up', type: 'symlink', linkname: '..' },
        { name: 'evil.tf', type: 'symlink', linkname: 'd/up/../secret' },
      ],
      'evil.tf',
      'resolves outside the archive (through symlinks)',
    ],
    [
      'hardlink escaping the root',
      [{ name: 'evil.tf', type: 'link', linkname: '../secret' }],
      'evil.tf',
      'resolves outside the archive',
    ],
    [
      'hardlink to an absolute path',
      [{ name: 'evil.tf', type: 'link', linkname: '/etc/shadow' }],
      'evil.tf',
      'points to the absolute path "/etc/shadow"',
    ],
    [
      'hardlink to a path the archive does not contain',
      [{ name: 'evil.tf', type: 'link', linkname: 'secrets.auto.tfvars' }],
      'evil.tf',
      'names no earlier entry of the archive',
    ],
    [
      'hardlink to a file that only comes later',
      [
        { name: 'evil.tf', type: 'link', linkname: 'main.tf' },
        { name: 'main.tf', data: MAIN_TF },
      ],
      'evil.tf',
      'names no earlier entry of the archive',
    ],
  ] as const)('%s: link-outside', async (_label, specs, entry, message) => {
    const bytes = await buildTarGz(specs as unknown as TarEntrySpec[]);
    await expectScanRejected('links.tar.gz', bytes, { code: 'link-outside', entry, message });
  });

  test('a zip symlink (S_IFLNK) pointing outside: link-outside', async () => {
    const bytes = writeZip([{ name: 'evil.tf', data: '../../etc/passwd', unixMode: S_IFLNK | 0o777 }]);
    await expectScanRejected('links.zip', bytes, {
      code: 'link-outside',
      entry: 'evil.tf',
      message: 'resolves outside the archive',
    });
  });

  test.each([
    [
      'hardlink to a directory',
      [
        { name: 'd/', type: 'directory' },
        { name: 'evil', type: 'link', linkname: 'd' },
      ],
      'evil',
      'names a directory',
    ],
    [
      'symlink loop',
      [
        { name: 'a.tf', type: 'symlink', linkname: 'b.tf' },
        { name: 'b.tf', type: 'symlink', linkname: 'a.tf' },
      ],
      'a.tf',
      'link loop',
    ],
    [
      'an entry written through a symlinked directory',
      [
        { name: 'real/', type: 'directory' },
        { name: 'alias', type: 'symlink', linkname: 'real' },
        { name: 'alias/main.tf', data: MAIN_TF },
      ],
      'alias/main.tf',
      'is inside "alias", which is a symlink, not a directory',
    ],
  ] as const)('%s: invalid-path', async (_label, specs, entry, message) => {
    const bytes = await buildTar(specs as unknown as TarEntrySpec[]);
    await expectScanRejected('links.tar', bytes, { code: 'invalid-path', entry, message });
  });

  test('a PAX link target with a NUL byte: invalid-path', async () => {
    const bytes = rawTar(
      paxHeader({ linkpath: 'main.tf\0/etc/passwd' }),
      rawTarHeader({ name: 'evil.tf', typeflag: '2' }),
    );
    await expectScanRejected('links.tar', bytes, {
      code: 'invalid-path',
      entry: 'evil.tf',
      message: 'link "evil.tf" has a target containing a NUL byte',
    });
  });

  test('provably harmless links (inside, to earlier files) are accepted and scanned as their targets', async () => {
    const bytes = await buildTarGz([
      { name: 'shared/versions.tf', data: MAIN_TF },
      { name: 'root/versions.tf', type: 'symlink', linkname: '../shared/versions.tf' },
      { name: 'copy/versions.tf', type: 'link', linkname: 'shared/versions.tf' },
    ]);
    const report = await scanBytes('links.tar.gz', bytes);
    expect(report.modules.map((m) => [m.path, m.files, m.requiredVersion])).toEqual([
      ['copy', ['copy/versions.tf'], ['>= 1.6']],
      ['root', ['root/versions.tf'], ['>= 1.6']],
      ['shared', ['shared/versions.tf'], ['>= 1.6']],
    ]);
  });
});

describe('archives: device files and FIFOs', () => {
  test.each([
    ['fifo', 'a fifo entry'],
    ['character-device', 'a character-device entry'],
    ['block-device', 'a block-device entry'],
  ] as const)('a tar %s entry: unsupported-entry-type', async (type, message) => {
    const bytes = await buildTar([
      { name: 'main.tf', data: MAIN_TF },
      { name: 'dev/thing', type },
    ]);
    await expectScanRejected('dev.tar', bytes, {
      code: 'unsupported-entry-type',
      entry: 'dev/thing',
      message,
    });
  });

  test.each([
    ['fifo', S_IFIFO],
    ['character-device', S_IFCHR],
    ['block-device', S_IFBLK],
    ['socket', 0o140000],
  ] as const)(
    'a zip %s entry (Unix mode in the external attributes): unsupported-entry-type',
    async (type, mode) => {
      const bytes = writeZip([
        { name: 'main.tf', data: MAIN_TF },
        { name: 'dev/thing', unixMode: mode | 0o644 },
      ]);
      await expectScanRejected('dev.zip', bytes, {
        code: 'unsupported-entry-type',
        entry: 'dev/thing',
        message: `is a ${type} entry, which is not allowed`,
      });
    },
  );

  test('a GNU sparse entry (an entry type tfguard does not read): unsupported-entry-type', async () => {
    const bytes = rawTar(rawTarHeader({ name: 'sparse.tf', typeflag: 'S' }));
    await expectScanRejected('sparse.tar', bytes, {
      code: 'unsupported-entry-type',
      entry: 'sparse.tf',
      message: 'has a tar entry type tfguard does not read',
    });
  });
});

describe('archives: bombs and size limits', () => {
  /** `count` files of `size` zero bytes each: compresses ~1000:1. */
  function zeroFiles(count: number, size: number): Buffer {
    const pieces: Buffer[] = [];
    for (let i = 0; i < count; i++) {
      pieces.push(rawTarHeader({ name: `bomb/${i}.tf`, size }), Buffer.alloc(size));
    }
    return rawTar(...pieces);
  }

  test('gzip bomb: the ratio cap stops inflation while streaming, long before the end', async () => {
    const tar = zeroFiles(40, 5 * MiB); // 200 MiB of zeros
    const bomb = gzipSync(tar, { level: 9 });
    expect(bomb.length).toBeLessThan(400 * 1024);
    const error = await expectScanRejected('bomb.tar.gz', bomb, {
      code: 'compression-ratio',
      entry: expect.stringMatching(/^bomb\/\d+\.tf$/) as unknown as string,
      message: 'refusing a possible decompression bomb',
    });
    // Stopped just past the ratio (200:1 of the compressed size), not after inflating everything.
    const inflated = Number(/inflate to more than (\d+)/.exec(error.message)?.[1]);
    expect(inflated).toBeGreaterThan(200 * bomb.length);
    expect(inflated).toBeLessThan(200 * bomb.length + 2 * MiB);
    expect(inflated).toBeLessThan(tar.length / 4);
  });

  test('gzip bomb with the ratio cap disabled: the absolute cap (maxTotalBytes) stops it while streaming', async () => {
    const bomb = gzipSync(zeroFiles(12, 5 * MiB), { level: 9 });
    const error = await rejection(
      scanBytes('bomb.tar.gz', bomb, { limits: { maxCompressionRatio: 1e9, maxTotalBytes: 20 * MiB } }),
    );
    expect({ code: error.code, entry: error.entry }).toEqual({ code: 'total-too-large', entry: 'bomb/4.tf' });
    expect(error.message).toBe('total uncompressed size exceeds the limit of 20.0 MiB (at "bomb/4.tf")');
  });

  test('zip bomb: refused from the declared sizes before anything is inflated', async () => {
    const zeros = Buffer.alloc(8 * MiB);
    const bytes = writeZip([
      { name: 'a.tf', data: zeros, method: 'deflate' },
      { name: 'b.tf', data: zeros, method: 'deflate' },
    ]);
    await expectScanRejected('bomb.zip', bytes, {
      code: 'compression-ratio',
      entry: 'a.tf',
      message: /compressed bytes declare more than/,
    });
  });

  test('too many entries (tar.gz): too-many-entries at the first entry over the limit', async () => {
    const specs: TarEntrySpec[] = [];
    for (let i = 0; i < 51; i++) specs.push({ name: `m/${i}.tf`, data: '' });
    const error = await rejection(
      scanBytes('many.tar.gz', await buildTarGz(specs), { limits: { maxEntries: 50 } }),
    );
    expect({ code: error.code, entry: error.entry, message: error.message }).toEqual({
      code: 'too-many-entries',
      entry: 'm/50.tf',
      message: 'more than 50 entries (at "m/50.tf")',
    });
  });

  test('too many entries (zip): refused from the central directory count', async () => {
    const specs: ZipEntrySpec[] = [];
    for (let i = 0; i < 51; i++) specs.push({ name: `m/${i}.tf`, data: '' });
    const error = await rejection(scanBytes('many.zip', writeZip(specs), { limits: { maxEntries: 50 } }));
    expect({ code: error.code, entry: error.entry, message: error.message }).toEqual({
      code: 'too-many-entries',
      entry: undefined,
      message: 'the zip archive declares 51 entries, more than the limit of 50',
    });
  });

  test('an entry whose declared size is larger than its data (tar): truncated-archive naming it', async () => {
    const bytes = Buffer.concat([rawTarHeader({ name: 'liar.tf', size: 4000 }), tarData(MAIN_TF)]);
    await expectScanRejected('liar.tar', bytes, {
      code: 'truncated-archive',
      entry: 'liar.tf',
      message: 'tar data ends in the middle of an entry: the archive is truncated (while reading "liar.tf")',
    });
  });

  test('an entry whose declared size is smaller than its data (tar): corrupt-archive after it', async () => {
    const bytes = rawTar(rawTarHeader({ name: 'liar.tf', size: 3 }), tarData(`abc${'Z'.repeat(1500)}`));
    await expectScanRejected('liar.tar', bytes, {
      code: 'corrupt-archive',
      entry: 'liar.tf',
      message: /invalid header .* \(after "liar\.tf"\)$/,
    });
  });

  test('a PAX size record that lies is checked before reading: file-too-large', async () => {
    const bytes = rawTar(
      paxHeader({ size: '99999999999' }),
      rawTarHeader({ name: 'liar.tf', size: 1 }),
      tarData('a'),
    );
    await expectScanRejected('liar.tar', bytes, {
      code: 'file-too-large',
      entry: 'liar.tf',
      message: 'declares 95367.4 MiB, more than the per-file limit of 10.0 MiB',
    });
  });

  test('a zip entry whose declared size is a lie: corrupt-archive without inflating it all', async () => {
    const bytes = writeZip([
      { name: 'liar.tf', data: Buffer.alloc(MiB, 0x61), method: 'deflate', declaredSize: 10 },
    ]);
    await expectScanRejected('liar.zip', bytes, {
      code: 'corrupt-archive',
      entry: 'liar.tf',
      message: 'zip entry content does not match its declared size',
    });
  });

  test('a file over maxFileBytes: file-too-large from the header, before its data is read', async () => {
    const bytes = Buffer.concat([rawTarHeader({ name: 'huge.tf', size: 11 * MiB }), Buffer.alloc(512)]);
    await expectScanRejected('huge.tar', bytes, {
      code: 'file-too-large',
      entry: 'huge.tf',
      message: '"huge.tf" declares 11.0 MiB, more than the per-file limit of 10.0 MiB',
    });
  });
});

describe('archives: deep paths, long names, huge headers', () => {
  test('a path 65 directories deep: path-too-deep', async () => {
    const name = `${'d/'.repeat(65)}main.tf`;
    await expectScanRejected('deep.tar.gz', await buildTarGz([{ name, data: MAIN_TF }]), {
      code: 'path-too-deep',
      entry: name,
      message: 'path is 66 levels deep, more than the limit of 64',
    });
  });

  test('a GNU long name of 5000 bytes: path-too-long', async () => {
    const long = `${'n'.repeat(4996)}.tf`;
    const bytes = rawTar(
      rawTarHeader({ name: '././@LongLink', size: long.length + 1, typeflag: 'L' }),
      tarData(`${long}\0`),
      rawTarHeader({ name: 'short.tf', size: 0 }),
    );
    await expectScanRejected('long.tar', bytes, {
      code: 'path-too-long',
      entry: long,
      message: 'path is 4999 bytes long, more than the limit of 4096',
    });
  });

  test('a 3 MiB PAX path: path-too-long, and the error stays small (entry shortened)', async () => {
    const huge = 'p/'.repeat(1.5 * MiB);
    const bytes = rawTar(paxHeader({ path: huge }), rawTarHeader({ name: 'x.tf', size: 0 }));
    const error = await expectScanRejected('pax.tar', bytes, {
      code: 'path-too-long',
      entry: expect.stringMatching(/^(p\/)+…(p\/)+$/) as unknown as string,
      message: 'more than the limit of 4096',
    });
    expect((error.entry ?? '').length).toBeLessThanOrEqual(8193);
    expect(error.message.length).toBeLessThan(1000);
  });

  test("a PAX header over tar-stream's 4 MiB cap: corrupt-archive, not buffered", async () => {
    const bytes = rawTar(
      paxHeader({ comment: 'c'.repeat(5 * MiB) }),
      rawTarHeader({ name: 'x.tf', size: 0 }),
    );
    await expectScanRejected('pax.tar', bytes, {
      code: 'corrupt-archive',
      entry: null,
      message: "an extended header (PAX or GNU long name) is larger than tar-stream's limit of 4 MiB",
    });
  });
});

describe('archives: malformed containers', () => {
  test('a tar.gz cut in half: truncated-archive', async () => {
    const whole = await buildTarGz([{ name: 'main.tf', data: MAIN_TF.repeat(200) }]);
    await expectScanRejected('cut.tar.gz', whole.subarray(0, Math.floor(whole.length / 2)), {
      code: 'truncated-archive',
      entry: null,
      message: 'gzip data ends unexpectedly: the archive is truncated',
    });
  });

  test('a tar cut at an entry boundary (no end-of-archive marker): truncated-archive', async () => {
    const whole = await buildTar([{ name: 'main.tf', data: MAIN_TF }]);
    await expectScanRejected('cut.tar', whole.subarray(0, 1024), {
      code: 'truncated-archive',
      entry: null,
      message: 'the tar archive has no end-of-archive marker: it is truncated',
    });
  });

  test('a zip without its central directory: truncated-archive', async () => {
    const whole = writeZip([{ name: 'main.tf', data: MAIN_TF }]);
    await expectScanRejected('cut.zip', whole.subarray(0, whole.length - 30), {
      code: 'truncated-archive',
      entry: null,
      message: 'the zip archive has no end-of-central-directory record: it is truncated',
    });
  });

  test('a .zip renamed .tar.gz is read as the zip it is (format from content) and scanned', async () => {
    const report = await scanBytes('upload.tar.gz', writeZip([{ name: 'main.tf', data: MAIN_TF }]));
    expect(report.source).toMatchObject({ name: 'upload.tar.gz', format: 'zip', files: 1 });
    expect(report.modules.map((m) => m.files)).toEqual([['main.tf']]);
  });

  test('a gzip that holds no tar (a .gz renamed .tar.gz): unsupported-format', async () => {
    await expectScanRejected('notes.tar.gz', gzipSync(Buffer.from('just text, no tar\n'.repeat(50))), {
      code: 'unsupported-format',
      entry: null,
      message: 'the gzip stream does not contain a tar archive',
    });
  });

  test.each([
    ['0 bytes', Buffer.alloc(0), 'empty.tar.gz', '"empty.tar.gz" is empty (0 bytes)'],
    ['an empty gzip stream', gzipSync(Buffer.alloc(0)), 'empty.tar.gz', 'the gzip stream is empty'],
    [
      'a tar of end-of-archive blocks only',
      Buffer.alloc(10240),
      'empty.tar',
      'archive "empty.tar" has no entries',
    ],
    ['a zip with no entries', writeZip([]), 'empty.zip', 'archive "empty.zip" has no entries'],
  ])('an empty archive (%s): empty-archive', async (_label, bytes, name, message) => {
    await expectScanRejected(name, bytes, { code: 'empty-archive', entry: null, message });
  });

  test('an entry after the end-of-archive marker (tar stops there): corrupt-archive', async () => {
    const first = await buildTar([{ name: 'main.tf', data: MAIN_TF }]);
    const hidden = await buildTar([{ name: 'versions.tf', data: MAIN_TF }]);
    await expectScanRejected('two.tar', Buffer.concat([first, hidden]), {
      code: 'corrupt-archive',
      entry: 'versions.tf',
      message: '"versions.tf" comes after the end-of-archive block at byte 1024',
    });
    // Concatenated .tar.gz files are the same thing (gzip members are concatenated transparently).
    await expectScanRejected('two.tar.gz', Buffer.concat([gzipSync(first), gzipSync(hidden)]), {
      code: 'corrupt-archive',
      entry: 'versions.tf',
      message: 'comes after the end-of-archive block',
    });
  });

  test('zero padding after the end-of-archive marker (a 10 KiB tar record) is accepted', async () => {
    const tar = await buildTar([{ name: 'main.tf', data: MAIN_TF }]);
    const padded = Buffer.concat([tar, Buffer.alloc(10240 - (tar.length % 10240))]);
    const report = await scanBytes('padded.tar', padded);
    expect(report.modules.map((m) => m.files)).toEqual([['main.tf']]);
  });
});

describe('archives: names', () => {
  test('a non-UTF-8 name (tar): invalid-path, hex-escaped', async () => {
    const bytes = rawTar(rawTarHeader({ name: Buffer.from([0x6d, 0xe9, 0x2e, 0x74, 0x66]), size: 0 }));
    await expectScanRejected('latin1.tar', bytes, {
      code: 'invalid-path',
      entry: 'm\\xe9.tf',
      message: 'entry name is not valid UTF-8: "m\\xe9.tf"',
    });
  });

  test('a non-UTF-8 name (zip, no Unicode Path field): invalid-path, hex-escaped', async () => {
    const bytes = writeZip([{ name: Buffer.from([0x6d, 0x81, 0x2e, 0x74, 0x66]), data: 'x' }]);
    await expectScanRejected('cp437.zip', bytes, {
      code: 'invalid-path',
      entry: 'm\\x81.tf',
      message: 'entry name is not valid UTF-8',
    });
  });

  test('a legacy zip name with a matching Info-ZIP Unicode Path field is read as that UTF-8 name', async () => {
    const raw = Buffer.from([0x6d, 0x81, 0x2e, 0x74, 0x66]);
    const bytes = writeZip([{ name: raw, data: MAIN_TF, extraFields: [unicodePathField(raw, 'mü.tf')] }]);
    const report = await scanBytes('unicode.zip', bytes);
    expect(report.modules.map((m) => m.files)).toEqual([['mü.tf']]);
  });

  test.each([
    ['letter case', 'main.tf', 'MAIN.tf', 'MAIN.tf', 'main.tf', ''],
    [
      'Unicode normalisation (NFC / NFD)',
      'caf\u00e9.tf',
      'cafe\u0301.tf',
      'cafe\u0301.tf',
      'caf\u00e9.tf',
      ' ("cafe\\u0301.tf" and "caf\\u00e9.tf")',
    ],
    ['ß / ss (APFS)', 'stra\u00dfe.tf', 'strasse.tf', 'strasse.tf', 'stra\u00dfe.tf', ''],
    ['a directory in another case', 'net/main.tf', 'NET/extra.tf', 'NET', 'net', ''],
  ])('names that collide by %s: duplicate-entry naming both', async (_l, first, second, a, b, spelled) => {
    for (const [file, bytes] of await inEveryFormat([
      { name: first, data: MAIN_TF },
      { name: second, data: MAIN_TF },
    ])) {
      await expectScanRejected(file, bytes, {
        code: 'duplicate-entry',
        entry: second,
        message: `"${second}" collides with the earlier "${b}": "${a}" and "${b}"${spelled} differ only in letter case or Unicode normalisation`,
      });
    }
  });

  test.each([
    ['the same name twice', 'main.tf', 'main.tf'],
    ['the same name after normalisation', 'main.tf', './main.tf'],
    ['the same name with a doubled slash', 'm/main.tf', 'm//main.tf'],
    ['the same name with backslashes', 'm/main.tf', 'm\\main.tf'],
  ])('duplicate entries (%s): duplicate-entry, the later one named', async (_l, first, second) => {
    for (const [file, bytes] of await inEveryFormat([
      { name: first, data: MAIN_TF },
      { name: second, data: 'terraform {}\n' },
    ])) {
      await expectScanRejected(file, bytes, {
        code: 'duplicate-entry',
        entry: second,
        message: 'a later entry may not shadow an earlier one',
      });
    }
  });

  test('macOS `._*` AppleDouble files and `__MACOSX/` are skipped; the rest is scanned', async () => {
    const bytes = await buildTarGz([
      { name: '._main.tf', data: '\0\u0005\u0016\u0007 binary resource fork' },
      { name: 'main.tf', data: MAIN_TF },
      { name: '__MACOSX/._main.tf', data: 'binary' },
      { name: 'modules/._vpc.tf', data: 'binary' },
    ]);
    const report = await scanBytes('mac.tar.gz', bytes);
    expect(report.source.files).toBe(1);
    expect(report.modules.map((m) => [m.path, m.files])).toEqual([['.', ['main.tf']]]);
    expect(report.findings.filter((f) => f.ruleId === 'parse-error')).toEqual([]);
  });
});

describe('what a rejection looks like at the CLI', () => {
  test('exit 2, "tfguard: <message>" on stderr, nothing on stdout', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-security-cli-'));
    try {
      const file = path.join(dir, 'evil.tar.gz');
      await fs.writeFile(file, await buildTarGz([{ name: '../evil.tf', data: MAIN_TF }]));
      let stdout = '';
      let stderr = '';
      const code = await runCli(['scan', file], {
        stdout: (t) => (stdout += t),
        stderr: (t) => (stderr += t),
        isTTY: false,
      });
      expect({ code, stdout, stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: 'tfguard: path escapes the archive root: "../evil.tf"\n',
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
