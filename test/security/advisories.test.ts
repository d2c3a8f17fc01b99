/**
 * One test per vulnerability class of node-tar and tar-fs that applies to an in-memory reader,
 * named after the advisory (ids checked against the CVE records / GitHub advisories). tfguard never
 * extracts, so the question for each is: does the archive that exploited the extractor get
 * rejected with a specific error (or, for the DoS classes, stopped early), rather than read into a
 * view that differs from what an extraction would produce?
 */
import { gzipSync } from 'node:zlib';
import { scanBytes } from '../../src/scan';
import { buildTar, buildTarGz, paxHeader, rawTar, rawTarHeader, type TarEntrySpec } from '../support/archive';
import { expectScanRejected, rejection } from '../support/security';

const MiB = 1024 * 1024;

function tar(specs: TarEntrySpec[]): Promise<Buffer> {
  return buildTar(specs);
}

describe('node-tar advisories', () => {
  test('CVE-2018-20834 (hardlink to an existing file, then a plain file of the same name)', async () => {
    const bytes = await tar([
      { name: 'main.tf', data: 'terraform {}\n' },
      { name: 'passwd', type: 'link', linkname: '/etc/passwd' },
      { name: 'passwd', data: 'root::0:0::/:/bin/sh\n' },
    ]);
    await expectScanRejected('cve-2018-20834.tar', bytes, {
      code: 'link-outside',
      entry: 'passwd',
      message: 'link "passwd" points to the absolute path "/etc/passwd", outside the archive',
    });
    // With a harmless in-archive target, the later plain file is still a shadowing duplicate.
    const inside = await tar([
      { name: 'main.tf', data: 'terraform {}\n' },
      { name: 'copy.tf', type: 'link', linkname: 'main.tf' },
      { name: 'copy.tf', data: 'resource "x" "y" {}\n' },
    ]);
    await expectScanRejected('cve-2018-20834.tar', inside, {
      code: 'duplicate-entry',
      entry: 'copy.tf',
      message: 'duplicate entry "copy.tf": "copy.tf" (file) repeats the earlier "copy.tf" (hardlink)',
    });
  });

  test('CVE-2021-32803 / GHSA-r628-mhmh-qjhw (a directory, then a symlink of the same name, then a file through it)', async () => {
    const bytes = await tar([
      { name: 'foo/', type: 'directory' },
      { name: 'foo', type: 'symlink', linkname: '../../../etc' },
      { name: 'foo/cron.tf', data: 'x' },
    ]);
    await expectScanRejected('cve-2021-32803.tar', bytes, {
      code: 'duplicate-entry',
      entry: 'foo',
      message: 'duplicate entry "foo": "foo" (symlink) repeats the earlier "foo/" (directory)',
    });
  });

  test('CVE-2021-32804 / GHSA-3jfq-g458-7qm9 (absolute paths with repeated roots, `////home/user/.bashrc`)', async () => {
    await expectScanRejected(
      'cve-2021-32804.tar',
      await tar([{ name: '////home/user/.bashrc', data: 'x' }]),
      {
        code: 'absolute-path',
        entry: '////home/user/.bashrc',
        message: 'absolute path in archive: "////home/user/.bashrc"',
      },
    );
  });

  test('CVE-2021-37701 (directory and symlink names with backslash separators; case-insensitive twins)', async () => {
    const backslash = await tar([
      { name: 'foo\\bar/', type: 'directory' },
      { name: 'foo\\bar', type: 'symlink', linkname: '/etc' },
      { name: 'foo\\bar\\x.tf', data: 'x' },
    ]);
    await expectScanRejected('cve-2021-37701.tar', backslash, {
      code: 'duplicate-entry',
      entry: 'foo\\bar',
      message: 'duplicate entry "foo/bar": "foo\\bar" (symlink) repeats the earlier "foo\\bar/" (directory)',
    });
    const cased = await tar([
      { name: 'FOO/', type: 'directory' },
      { name: 'foo', type: 'symlink', linkname: '.' },
      { name: 'FOO/x.tf', data: 'x' },
    ]);
    await expectScanRejected('cve-2021-37701.tar', cased, {
      code: 'duplicate-entry',
      entry: 'foo',
      message: '"foo" collides with the earlier "FOO"',
    });
  });

  test('CVE-2021-37712 / GHSA-qq89-hq3f-393p (directory and symlink names that normalise to the same Unicode)', async () => {
    const bytes = await tar([
      { name: 'caf\u00e9/', type: 'directory' },
      { name: 'cafe\u0301', type: 'symlink', linkname: '.' },
      { name: 'caf\u00e9/x.tf', data: 'x' },
    ]);
    await expectScanRejected('cve-2021-37712.tar', bytes, {
      code: 'duplicate-entry',
      entry: 'cafe\u0301',
      message: '("cafe\\u0301" and "caf\\u00e9") differ only in letter case or Unicode normalisation',
    });
  });

  test('CVE-2021-37713 (Windows drive-relative paths, `C:../foo` and `C:some\\path`)', async () => {
    for (const name of ['C:../foo.tf', 'C:some\\path.tf']) {
      await expectScanRejected('cve-2021-37713.tar', await tar([{ name, data: 'x' }]), {
        code: 'absolute-path',
        entry: name,
        message: `absolute path in archive: "${name}"`,
      });
    }
  });

  test('CVE-2024-28863 / GHSA-f5x3-32g6-xq36 (denial of service through excessively deep folders)', async () => {
    const deep = `${'d/'.repeat(65)}x.tf`;
    await expectScanRejected('cve-2024-28863.tar', await tar([{ name: deep, data: 'x' }]), {
      code: 'path-too-deep',
      entry: deep,
      message: 'path is 66 levels deep, more than the limit of 64',
    });
    // A million levels in a PAX path: refused on length first, in milliseconds, with a bounded error.
    const million = `${'d/'.repeat(1_000_000)}x.tf`;
    const started = Date.now();
    const error = await rejection(
      scanBytes('cve-2024-28863.tar', rawTar(paxHeader({ path: million }), rawTarHeader({ name: 'x.tf' }))),
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error.code).toBe('path-too-long');
    expect(error.message).toContain('path is 2000004 bytes long, more than the limit of 4096');
    expect((error.entry ?? '').length).toBeLessThanOrEqual(8193);
  });

  test('CVE-2026-23745 / GHSA-8qq5-rm4j-mr97 (absolute linkpath of hardlinks and symlinks)', async () => {
    for (const type of ['link', 'symlink'] as const) {
      await expectScanRejected(
        'cve-2026-23745.tar',
        await tar([{ name: 'x.tf', type, linkname: '/etc/passwd' }]),
        {
          code: 'link-outside',
          entry: 'x.tf',
          message: 'link "x.tf" points to the absolute path "/etc/passwd", outside the archive',
        },
      );
    }
  });

  test('CVE-2026-23950 / GHSA-r6q2-hw4h-h46w (Unicode path collisions on APFS: `ß` and `ss`)', async () => {
    const bytes = await tar([
      { name: 'stra\u00dfe/', type: 'directory' },
      { name: 'strasse', type: 'symlink', linkname: '.' },
    ]);
    await expectScanRejected('cve-2026-23950.tar', bytes, {
      code: 'duplicate-entry',
      entry: 'strasse',
      message: '"strasse" collides with the earlier "stra\u00dfe"',
    });
  });

  test('CVE-2026-24842 / GHSA-34x7-hfp2-rc4v (hardlink targets checked from the entry directory, created from the root)', async () => {
    const bytes = await tar([
      { name: 'a/b/c/d/', type: 'directory' },
      { name: 'a/b/c/d/x', type: 'link', linkname: '../../../../etc/passwd' },
    ]);
    // Hardlink targets are resolved from the archive root, as extractors create them.
    await expectScanRejected('cve-2026-24842.tar', bytes, {
      code: 'link-outside',
      entry: 'a/b/c/d/x',
      message: 'link "a/b/c/d/x" -> "../../../../etc/passwd" resolves outside the archive',
    });
  });

  test('CVE-2026-26960 (hardlink target escaping through a chain of symlinks)', async () => {
    // The advisory's chain: two in-archive symlinks, then a hardlink through them.
    const chain = await tar([
      { name: 'a/b/c/', type: 'directory' },
      { name: 'a/b/c/up', type: 'symlink', linkname: '../..' },
      { name: 'a/b/escape', type: 'symlink', linkname: 'c/up/../..' },
      { name: 'exfil', type: 'link', linkname: 'a/b/escape/etc/passwd' },
    ]);
    await expectScanRejected('cve-2026-26960.tar', chain, {
      code: 'link-outside',
      entry: 'exfil',
      message: 'hardlink "exfil" -> "a/b/escape/etc/passwd" names no earlier entry of the archive',
    });
    // The same chain with a target the archive does provide lexically: the symlink walk catches it.
    const lexical = await tar([
      { name: 'a/b/c/', type: 'directory' },
      { name: 'a/b/secret.tf', data: 'x' },
      { name: 'a/b/c/up', type: 'symlink', linkname: '../..' },
      { name: 'exfil', type: 'link', linkname: 'a/b/c/up/../../secret.tf' },
    ]);
    await expectScanRejected('cve-2026-26960.tar', lexical, {
      code: 'link-outside',
      entry: 'exfil',
      message: 'link "exfil" -> "a/b/c/up/../../secret.tf" resolves outside the archive (through symlinks)',
    });
  });

  test('CVE-2026-29786 / GHSA-qffp-2rhf-9h96 (hardlink to a drive-relative linkpath, `C:../target`)', async () => {
    await expectScanRejected(
      'cve-2026-29786.tar',
      await tar([{ name: 'x.tf', type: 'link', linkname: 'C:../target.txt' }]),
      {
        code: 'link-outside',
        entry: 'x.tf',
        message: 'link "x.tf" points to the absolute path "C:../target.txt", outside the archive',
      },
    );
  });

  test('CVE-2026-31802 / GHSA-9ppj-qmqm-q256 (symlink to a drive-relative linkpath, `C:../../../target`)', async () => {
    const bytes = await tar([{ name: 'x.tf', type: 'symlink', linkname: 'C:../../../target.txt' }]);
    await expectScanRejected('cve-2026-31802.tar', bytes, {
      code: 'link-outside',
      entry: 'x.tf',
      message: 'link "x.tf" points to the absolute path "C:../../../target.txt", outside the archive',
    });
  });

  test('CVE-2026-59873 / GHSA-23hp-3jrh-7fpw (decompression / parse DoS through unlimited input)', async () => {
    // Nothing but end-of-archive blocks, 100 MiB of them: no entry ever arrives; the ratio stops it.
    const zeros = gzipSync(Buffer.alloc(100 * MiB), { level: 9 });
    await expectScanRejected('cve-2026-59873.tar.gz', zeros, {
      code: 'compression-ratio',
      entry: null,
      message: 'refusing a possible decompression bomb',
    });
    // Entry count: refused at the first entry over the limit, not after reading the rest.
    const specs: TarEntrySpec[] = [];
    for (let i = 0; i < 30; i++) specs.push({ name: `e/${i}`, type: 'directory' });
    const error = await rejection(
      scanBytes('cve-2026-59873.tar.gz', await buildTarGz(specs), { limits: { maxEntries: 20 } }),
    );
    expect({ code: error.code, entry: error.entry }).toEqual({ code: 'too-many-entries', entry: 'e/20' });
  });

  test('CVE-2026-59874 / GHSA-8x88-c5mf-7j5w (negative base-256 entry size: no infinite loop)', async () => {
    const header = rawTarHeader({ name: 'neg.tf' });
    // A negative base-256 size (0xFF marks a negative number; tar-stream reads this one as -1).
    header.fill(0xff, 124, 135);
    header[135] = 0xfe;
    header.fill(0x20, 148, 156);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
    const started = Date.now();
    await expectScanRejected('cve-2026-59874.tar', rawTar(header), {
      code: 'corrupt-archive',
      entry: null,
      message: 'tar archive has an invalid header',
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('CVE-2026-59875 / GHSA-gvwx-54wh-qm9j (NUL bytes in PAX path and linkpath records)', async () => {
    await expectScanRejected(
      'cve-2026-59875.tar',
      rawTar(paxHeader({ path: 'main.tf\0.evil' }), rawTarHeader({ name: 'x' })),
      {
        code: 'invalid-path',
        entry: 'main.tf\\x00.evil',
        message: 'entry name contains a NUL byte',
      },
    );
    const link = rawTar(
      paxHeader({ linkpath: 'main.tf\0/etc/passwd' }),
      rawTarHeader({ name: 'l.tf', typeflag: '2' }),
    );
    await expectScanRejected('cve-2026-59875.tar', link, {
      code: 'invalid-path',
      entry: 'l.tf',
      message: 'link "l.tf" has a target containing a NUL byte',
    });
  });
});

describe('tar-fs advisories', () => {
  test('CVE-2018-20834 / GHSA-x2mc-8fgj-3wmr (tar-fs: hardlink to an existing file, then a plain file over it)', async () => {
    const bytes = await tar([
      { name: 'config', type: 'link', linkname: '../../home/user/.ssh/authorized_keys' },
      { name: 'config', data: 'ssh-ed25519 AAAA attacker\n' },
    ]);
    await expectScanRejected('ghsa-x2mc-8fgj-3wmr.tar', bytes, {
      code: 'link-outside',
      entry: 'config',
      message: 'link "config" -> "../../home/user/.ssh/authorized_keys" resolves outside the archive',
    });
  });

  test('CVE-2024-12905 / GHSA-pq67-2wwv-3xjx (link following and path traversal: files written through a symlink)', async () => {
    const outside = await tar([
      { name: 'out', type: 'symlink', linkname: '/tmp' },
      { name: 'out/planted.tf', data: 'x' },
    ]);
    await expectScanRejected('cve-2024-12905.tar', outside, {
      code: 'link-outside',
      entry: 'out',
      message: 'link "out" points to the absolute path "/tmp", outside the archive',
    });
    // Even a symlink that stays inside may not be written through: the file would land elsewhere.
    const inside = await tar([
      { name: 'real/', type: 'directory' },
      { name: 'alias', type: 'symlink', linkname: 'real' },
      { name: 'alias/planted.tf', data: 'x' },
    ]);
    await expectScanRejected('cve-2024-12905.tar', inside, {
      code: 'invalid-path',
      entry: 'alias/planted.tf',
      message: '"alias/planted.tf" is inside "alias", which is a symlink, not a directory',
    });
  });

  test('CVE-2025-48387 / GHSA-8cj5-5rvv-wf4v (extraction outside the directory through link entries)', async () => {
    for (const [type, linkname] of [
      ['link', '../outside.tf'],
      ['symlink', 'a/../../outside.tf'],
    ] as const) {
      await expectScanRejected('cve-2025-48387.tar', await tar([{ name: 'x.tf', type, linkname }]), {
        code: 'link-outside',
        entry: 'x.tf',
        message: `link "x.tf" -> "${linkname}" resolves outside the archive`,
      });
    }
  });

  test('CVE-2025-59343 / GHSA-vj76-c3g6-qr5v (symlink check bypass with a predictable sibling of the destination)', async () => {
    // tar-fs compared path prefixes: "/srv/upload-evil" starts with "/srv/upload". Here the target
    // is resolved segment by segment, so a sibling with the archive's name as a prefix is outside.
    const bytes = await tar([{ name: 'x.tf', type: 'symlink', linkname: '../upload.tar-evil/x.tf' }]);
    await expectScanRejected('upload.tar', bytes, {
      code: 'link-outside',
      entry: 'x.tf',
      message: 'link "x.tf" -> "../upload.tar-evil/x.tf" resolves outside the archive',
    });
  });
});
