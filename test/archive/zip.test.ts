import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readArchiveBytes, readInput } from '../../src/archive';
import { expectInputError } from '../support/expect-input-error';
import {
  S_IFBLK,
  S_IFCHR,
  S_IFDIR,
  S_IFIFO,
  S_IFLNK,
  S_IFREG,
  unicodePathField,
  writeZip,
} from '../support/zip-writer';

const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

function findZipCli(): string | null {
  for (const dir of ['/usr/bin', '/usr/local/bin', '/bin']) {
    if (existsSync(path.join(dir, 'zip'))) return path.join(dir, 'zip');
  }
  return null;
}

describe('zip: happy paths', () => {
  test('stored and deflated entries, directories, modes, sorting and hashes', async () => {
    const bytes = writeZip([
      { name: 'modules/', unixMode: S_IFDIR | 0o755 },
      { name: 'modules/vpc/main.tf', data: 'module', method: 'deflate', unixMode: S_IFREG | 0o600 },
      { name: 'main.tf', data: 'root', unixMode: S_IFREG | 0o644 },
      { name: 'README.md', data: '# readme', method: 'deflate' },
      { name: 'win-dir', dosAttributes: 0x10 },
      { name: '__MACOSX/modules/._main.tf', data: 'debris' },
      { name: 'modules/._main.tf', data: 'debris' },
      { name: './x/.terraform.lock.hcl', data: 'lock', method: 'deflate' },
    ]);
    const archive = await readArchiveBytes('upload.zip', bytes);
    expect(archive.format).toBe('zip');
    expect(archive.sha256).toBe(sha(bytes));
    expect(archive.entries).toEqual([
      { path: 'README.md', type: 'file', size: 8, sha256: sha('# readme') },
      { path: 'main.tf', type: 'file', size: 4, sha256: sha('root'), mode: 0o644 },
      { path: 'modules', type: 'directory', size: 0, mode: 0o755 },
      { path: 'modules/vpc/main.tf', type: 'file', size: 6, sha256: sha('module'), mode: 0o600 },
      { path: 'win-dir', type: 'directory', size: 0 },
      { path: 'x/.terraform.lock.hcl', type: 'file', size: 4, sha256: sha('lock') },
    ]);
    expect([...archive.files.keys()]).toEqual([
      'README.md',
      'main.tf',
      'modules/vpc/main.tf',
      'x/.terraform.lock.hcl',
    ]);
    expect(archive.files.get('modules/vpc/main.tf')?.toString()).toBe('module');
  });

  test('backslash separators from Windows tools are normalised', async () => {
    const archive = await readArchiveBytes('w.zip', writeZip([{ name: 'mod\\sub\\main.tf', data: 'x' }]));
    expect([...archive.files.keys()]).toEqual(['mod/sub/main.tf']);
  });

  test('the Info-ZIP Unicode Path extra field gives the UTF-8 name', async () => {
    const headerName = Buffer.from('caf\x82.tf', 'latin1'); // CP437 é
    const bytes = writeZip([
      {
        name: headerName,
        utf8Flag: false,
        data: 'x',
        extraFields: [unicodePathField(headerName, 'café.tf')],
      },
    ]);
    const archive = await readArchiveBytes('u.zip', bytes);
    expect([...archive.files.keys()]).toEqual(['café.tf']);
  });

  test('a symlink (S_IFLNK in the external attributes) inside is recorded and resolved', async () => {
    const bytes = writeZip([
      { name: 'shared/versions.tf', data: 'shared versions', unixMode: S_IFREG | 0o644 },
      { name: 'root/versions.tf', data: '../shared/versions.tf', unixMode: S_IFLNK | 0o777 },
      { name: 'root/link-to-text.tf', data: '../shared/notes.txt', unixMode: S_IFLNK | 0o777 },
      { name: 'shared/notes.txt', data: 'notes', method: 'deflate', unixMode: S_IFREG | 0o644 },
    ]);
    const archive = await readArchiveBytes('l.zip', bytes);
    expect(archive.entries.find((e) => e.path === 'root/versions.tf')).toEqual({
      path: 'root/versions.tf',
      type: 'symlink',
      size: 0,
      mode: 0o777,
      linkTarget: 'shared/versions.tf',
    });
    expect(archive.files.get('root/versions.tf')?.toString()).toBe('shared versions');
    expect(archive.files.get('root/link-to-text.tf')?.toString()).toBe('notes');
    expect(archive.files.has('shared/notes.txt')).toBe(false);
  });

  const zipCli = findZipCli();
  (zipCli ? test : test.skip)(
    'archives made by the Info-ZIP `zip` CLI (with -y symlinks) are read',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'tfguard-zipcli-'));
      try {
        const src = path.join(dir, 'src');
        mkdirSync(path.join(src, 'modules', 'net'), { recursive: true });
        writeFileSync(path.join(src, 'main.tf'), 'module "net" { source = "./modules/net" }\n');
        writeFileSync(path.join(src, 'modules', 'net', 'main.tf'), 'x'.repeat(10000));
        writeFileSync(path.join(src, 'ünï.tf'), 'u');
        symlinkSync('modules/net/main.tf', path.join(src, 'alias.tf'));
        const out = path.join(dir, 'out.zip');
        execFileSync(zipCli as string, ['-q', '-r', '-y', out, '.'], { cwd: src });
        const archive = await readInput(out);
        expect(archive.format).toBe('zip');
        expect(archive.entries.map((e) => [e.path, e.type])).toEqual([
          ['alias.tf', 'symlink'],
          ['main.tf', 'file'],
          ['modules', 'directory'],
          ['modules/net', 'directory'],
          ['modules/net/main.tf', 'file'],
          ['ünï.tf', 'file'],
        ]);
        expect(archive.files.get('alias.tf')?.toString()).toBe('x'.repeat(10000));
        expect(archive.files.get('ünï.tf')?.toString()).toBe('u');
        expect(archive.sha256).toBe(sha(readFileSync(out)));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('zip rejections', () => {
  test.each([
    ['absolute path', '/etc/passwd', 'absolute-path'],
    ['drive path', 'C:\\Windows\\evil.tf', 'absolute-path'],
    ['drive-relative path', 'C:..\\evil.tf', 'absolute-path'],
    ['traversal', '../../evil.tf', 'path-traversal'],
    ['traversal with backslashes', 'a\\..\\..\\evil.tf', 'path-traversal'],
  ] as const)('%s', async (_label, name, code) => {
    await expectInputError(readArchiveBytes('x.zip', writeZip([{ name, data: 'x' }])), code, name);
  });

  test('a NUL byte in a name is rejected', async () => {
    const bytes = writeZip([{ name: Buffer.from('a\0b.tf'), data: 'x' }]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'invalid-path', 'a\\x00b.tf');
  });

  test('a non-UTF-8 name is rejected, hex-escaped', async () => {
    const bytes = writeZip([
      { name: Buffer.from([0x6d, 0xe4, 0x69, 0x6e, 0x2e, 0x74, 0x66]), utf8Flag: false, data: 'x' },
    ]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'invalid-path', 'm\\xe4in.tf');
  });

  test('a symlink pointing outside is rejected', async () => {
    const bytes = writeZip([{ name: 'evil.tf', data: '../../etc/passwd', unixMode: S_IFLNK | 0o777 }]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'link-outside', 'evil.tf');
  });

  test('an absolute symlink is rejected', async () => {
    const bytes = writeZip([{ name: 'evil.tf', data: '/etc/passwd', unixMode: S_IFLNK | 0o777 }]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'link-outside', 'evil.tf');
  });

  test.each([
    ['FIFO', S_IFIFO],
    ['character device', S_IFCHR],
    ['block device', S_IFBLK],
  ])('a %s entry is rejected', async (_label, type) => {
    const bytes = writeZip([{ name: 'dev/x', unixMode: type | 0o644 }]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'unsupported-entry-type', 'dev/x');
  });

  test('an encrypted entry is rejected', async () => {
    const bytes = writeZip([
      { name: 'plain.tf', data: 'x' },
      { name: 'secret.tf', data: 'x'.repeat(12 + 5), encrypted: true, declaredSize: 5 },
    ]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'unsupported-entry-type', 'secret.tf');
  });

  test('an unsupported compression method is rejected', async () => {
    const bytes = writeZip([{ name: 'bzip2.tf', data: 'x', methodNumber: 12 }]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'unsupported-entry-type', 'bzip2.tf');
  });

  test('duplicate entries are rejected', async () => {
    const bytes = writeZip([
      { name: 'main.tf', data: 'first' },
      { name: 'main.tf', data: 'second' },
    ]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'duplicate-entry', 'main.tf');
  });

  test('duplicates after normalisation are rejected', async () => {
    const bytes = writeZip([
      { name: 'a/main.tf', data: 'first' },
      { name: 'a//./main.tf', data: 'second' },
    ]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'duplicate-entry', 'a//./main.tf');
  });

  test('an empty zip is rejected', async () => {
    await expectInputError(readArchiveBytes('x.zip', writeZip([])), 'empty-archive');
  });

  test('a deflated entry whose declared size is a lie is rejected without inflating it all', async () => {
    const huge = Buffer.alloc(8 * 1024 * 1024, 'a');
    const bytes = writeZip([{ name: 'liar.tf', data: huge, method: 'deflate', declaredSize: 100 }]);
    const error = await expectInputError(readArchiveBytes('x.zip', bytes), 'corrupt-archive', 'liar.tf');
    // Stopped at the first inflated chunk beyond the declared 100 bytes, not after 8 MiB.
    const got = Number(/got at least (\d+)/.exec(error.message)?.[1]);
    expect(got).toBeGreaterThan(100);
    expect(got).toBeLessThan(1024 * 1024);
  });

  test('a declared size larger than the content is rejected', async () => {
    const bytes = writeZip([{ name: 'short.tf', data: 'abc', method: 'deflate', declaredSize: 10 }]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'corrupt-archive', 'short.tf');
  });

  test('a CRC-32 mismatch is rejected', async () => {
    const bytes = writeZip([{ name: 'bad.tf', data: 'content', method: 'deflate', declaredCrc: 0x12345678 }]);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'corrupt-archive', 'bad.tf');
  });

  test('a truncated zip is rejected as truncated', async () => {
    const bytes = writeZip([
      { name: 'a.tf', data: 'a'.repeat(1000) },
      { name: 'b.tf', data: 'b'.repeat(1000) },
    ]);
    await expectInputError(
      readArchiveBytes('x.zip', bytes.subarray(0, bytes.length >> 1)),
      'truncated-archive',
    );
  });

  test('a central directory pointing past the data is rejected', async () => {
    const bytes = Buffer.from(writeZip([{ name: 'a.tf', data: 'a'.repeat(1000) }]));
    // Central directory entry: compressed/uncompressed size fields claim more than the file holds.
    const central = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bytes.writeUInt32LE(50_000, central + 20);
    bytes.writeUInt32LE(50_000, central + 24);
    await expectInputError(readArchiveBytes('x.zip', bytes), 'truncated-archive', 'a.tf');
  });

  test('a corrupt central directory is rejected', async () => {
    const bytes = Buffer.from(writeZip([{ name: 'a.tf', data: 'a' }]));
    const central = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bytes.write('XX', central, 'latin1');
    await expectInputError(readArchiveBytes('x.zip', bytes), 'corrupt-archive');
  });
});
