import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readDirectory, readInput } from '../../src/archive';
import { expectInputError } from '../support/expect-input-error';
import { buildTarGz } from '../support/archive';

const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

let scratch: string;
beforeEach(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'tfguard-dir-'));
});
afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** Create files (string content) and directories (null) under `root`. */
function tree(root: string, spec: Record<string, string | null>): string {
  mkdirSync(root, { recursive: true });
  for (const [rel, content] of Object.entries(spec)) {
    const full = path.join(root, rel);
    if (content === null) mkdirSync(full, { recursive: true });
    else {
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }
  return root;
}

const SAMPLE = {
  'main.tf': 'terraform {}\n',
  'modules/vpc/main.tf': 'vpc',
  'modules/vpc/README.md': 'readme',
  '.terraform.lock.hcl': 'lock',
  '.git/HEAD': 'ref: refs/heads/main',
  '.terraform/providers/huge.bin': 'binary',
  '.terraform/modules/modules.json': '{}',
  '.terraform/modules/vpc/main.tf': 'installed',
  '.terraform/modules/vpc/.git/HEAD': 'ref: refs/heads/main',
  '.terraform/terraform.tfstate': '{}',
  'nested/.git': 'gitdir: ../.git/modules/nested',
  '._main.tf': 'apple double',
  empty: null,
};

describe('readDirectory', () => {
  test('lists the tree, skips .git/.terraform (but its modules)/AppleDouble, loads selected files', async () => {
    const root = tree(path.join(scratch, 'config'), SAMPLE);
    chmodSync(path.join(root, 'main.tf'), 0o600);
    const archive = await readDirectory(root);
    expect(archive.name).toBe('config');
    expect(archive.format).toBe('directory');
    expect(archive.entries.map((e) => [e.path, e.type])).toEqual([
      // Of .terraform only the installed modules and their record, as a tarball of it has them.
      ['.terraform', 'directory'],
      ['.terraform.lock.hcl', 'file'],
      ['.terraform/modules', 'directory'],
      ['.terraform/modules/modules.json', 'file'],
      ['.terraform/modules/vpc', 'directory'],
      ['.terraform/modules/vpc/main.tf', 'file'],
      ['empty', 'directory'],
      ['main.tf', 'file'],
      ['modules', 'directory'],
      ['modules/vpc', 'directory'],
      ['modules/vpc/README.md', 'file'],
      ['modules/vpc/main.tf', 'file'],
      ['nested', 'directory'],
    ]);
    expect(archive.entries.find((e) => e.path === 'main.tf')).toEqual({
      path: 'main.tf',
      type: 'file',
      size: 13,
      sha256: sha('terraform {}\n'),
      mode: 0o600,
    });
    expect([...archive.files.keys()]).toEqual([
      '.terraform.lock.hcl',
      '.terraform/modules/vpc/main.tf',
      'main.tf',
      'modules/vpc/README.md',
      'modules/vpc/main.tf',
    ]);
  });

  test('the id is the SHA-256 of the canonical listing, the same for the same tree anywhere', async () => {
    const a = await readDirectory(tree(path.join(scratch, 'a'), SAMPLE));
    const b = await readDirectory(tree(path.join(scratch, 'b'), SAMPLE));
    expect(a.sha256).toBe(b.sha256);
    const listing = a.entries
      .filter((e) => e.type === 'file')
      .map((e) => `${e.sha256}  ${e.path}\n`)
      .join('');
    expect(a.sha256).toBe(sha(listing));
    writeFileSync(path.join(scratch, 'b', 'modules', 'vpc', 'README.md'), 'changed');
    expect((await readDirectory(path.join(scratch, 'b'))).sha256).not.toBe(a.sha256);
  });

  test('relative and absolute symlinks inside are resolved; the listing records them', async () => {
    const root = tree(path.join(scratch, 'cfg'), {
      'shared/versions.tf': 'shared',
      'shared/notes.txt': 'notes',
    });
    mkdirSync(path.join(root, 'root'));
    symlinkSync('../shared/versions.tf', path.join(root, 'root', 'versions.tf'));
    symlinkSync(path.join(root, 'shared', 'notes.txt'), path.join(root, 'root', 'notes.tf'));
    symlinkSync('../shared', path.join(root, 'root', 'shared-dir'));
    const archive = await readDirectory(root);
    expect(archive.entries.find((e) => e.path === 'root/versions.tf')).toMatchObject({
      type: 'symlink',
      linkTarget: 'shared/versions.tf',
    });
    expect(archive.files.get('root/versions.tf')?.toString()).toBe('shared');
    expect(archive.entries.find((e) => e.path === 'root/notes.tf')).toMatchObject({
      type: 'symlink',
      linkTarget: 'shared/notes.txt',
    });
    expect(archive.files.get('root/notes.tf')?.toString()).toBe('notes');
    expect(archive.entries.find((e) => e.path === 'root/shared-dir')).toMatchObject({
      type: 'symlink',
      linkTarget: 'shared',
    });
    const listing = archive.entries
      .filter((e) => e.type === 'file' || e.type === 'symlink')
      .map((e) => (e.type === 'file' ? `${e.sha256}  ${e.path}\n` : `symlink:${e.linkTarget}  ${e.path}\n`))
      .join('');
    expect(archive.sha256).toBe(sha(listing));
  });

  test('a symlink pointing outside the directory is rejected', async () => {
    const root = tree(path.join(scratch, 'cfg'), { 'main.tf': 'x' });
    writeFileSync(path.join(scratch, 'secret.tf'), 'secret');
    symlinkSync('../secret.tf', path.join(root, 'secret.tf'));
    await expectInputError(readDirectory(root), 'link-outside', 'secret.tf');
  });

  test('an absolute symlink outside the directory is rejected', async () => {
    const root = tree(path.join(scratch, 'cfg'), { 'main.tf': 'x' });
    symlinkSync('/etc/passwd', path.join(root, 'sub.tf'));
    await expectInputError(readDirectory(root), 'link-outside', 'sub.tf');
  });

  test('a symlink loop is rejected', async () => {
    const root = tree(path.join(scratch, 'cfg'), { 'main.tf': 'x' });
    symlinkSync('b.tf', path.join(root, 'a.tf'));
    symlinkSync('a.tf', path.join(root, 'b.tf'));
    await expectInputError(readDirectory(root), 'invalid-path', /^[ab]\.tf$/);
  });

  test('a FIFO is rejected (and reading does not block on it)', async () => {
    const root = tree(path.join(scratch, 'cfg'), { 'main.tf': 'x' });
    execFileSync('mkfifo', [path.join(root, 'pipe.tf')]);
    await expectInputError(readDirectory(root), 'unsupported-entry-type', 'pipe.tf');
  });

  test('a file name that is not UTF-8 is rejected, hex-escaped', async () => {
    const root = tree(path.join(scratch, 'cfg'), { 'sub/main.tf': 'x' });
    writeFileSync(
      Buffer.concat([Buffer.from(`${root}/sub/caf`), Buffer.from([0xe9]), Buffer.from('.tf')]),
      'x',
    );
    await expectInputError(readDirectory(root), 'invalid-path', 'sub/caf\\xe9.tf');
  });

  test('limits apply: entries, file size, depth', async () => {
    const root = tree(path.join(scratch, 'cfg'), { 'a.tf': 'a', 'b.tf': 'bb', 'c.tf': 'ccc' });
    await expectInputError(readDirectory(root, { limits: { maxEntries: 2 } }), 'too-many-entries', 'c.tf');
    await expectInputError(readDirectory(root, { limits: { maxFileBytes: 2 } }), 'file-too-large', 'c.tf');
    await expectInputError(readDirectory(root, { limits: { maxTotalBytes: 4 } }), 'total-too-large', 'c.tf');
    const deep = tree(path.join(scratch, 'deep'), { 'x/y/z/main.tf': 'x' });
    await expectInputError(
      readDirectory(deep, { limits: { maxPathDepth: 3 } }),
      'path-too-deep',
      'x/y/z/main.tf',
    );
  });

  test('the walk meets entries in the byte order of their paths, as the entry limit shows', async () => {
    // Paths in byte order: a, a-b.tf, a/x.tf, b.tf ('-' sorts before '/'). The walk records them in
    // that order (the builder's sort then finds them sorted), so the limit is met where a tarball
    // of the tree sorted by path would meet it.
    const root = tree(path.join(scratch, 'cfg'), { 'a/x.tf': 'x', 'a-b.tf': 'ab', 'b.tf': 'b' });
    await expectInputError(readDirectory(root, { limits: { maxEntries: 2 } }), 'too-many-entries', 'a/x.tf');
    await expectInputError(readDirectory(root, { limits: { maxEntries: 3 } }), 'too-many-entries', 'b.tf');
    const nested = tree(path.join(scratch, 'nested'), {
      'm/n/y.tf': 'y',
      'm/n-o.tf': 'no',
      'm.tf': 'm',
      'm-2/z.tf': 'z',
    });
    // m, m-2, m-2/z.tf, m.tf, m/n, m/n-o.tf, m/n/y.tf: the 6th is m/n-o.tf, the 7th m/n/y.tf.
    await expectInputError(
      readDirectory(nested, { limits: { maxEntries: 5 } }),
      'too-many-entries',
      'm/n-o.tf',
    );
    await expectInputError(
      readDirectory(nested, { limits: { maxEntries: 6 } }),
      'too-many-entries',
      'm/n/y.tf',
    );
    expect((await readDirectory(nested)).entries.map((e) => e.path)).toEqual([
      'm',
      'm-2',
      'm-2/z.tf',
      'm.tf',
      'm/n',
      'm/n-o.tf',
      'm/n/y.tf',
    ]);
  });

  test('reads what GNU tar packs of the same tree: names, sizes, hashes, modes, contents', async () => {
    // Names that take the listing's slower paths (U+FFFD, a BOM, a control character, multibyte),
    // names whose order differs from their paths' ('a-b' / 'a/b'), empty files, and enough
    // loaded and unloaded content (unloaded files interleaved) to fill several read slabs, with
    // files larger than a slab's share.
    const spec: Record<string, string | null> = {
      'a/b/main.tf': 'ab',
      'a-b/main.tf': 'a-b',
      'a.b.tf': 'a.b',
      'caf\uFFFD/main.tf': 'replacement character',
      '\uFEFFbom.tf': 'bom',
      'ctl\u0001name.tf': 'control character',
      'd\u00e9j\u00e0/\u00fc.tf': 'multibyte',
      'empty.tf': '',
      'empty.bin': '',
      'nothing/here': null,
      // macOS debris: skipped at any depth (`._*`) and as the top-level `__MACOSX` only.
      '__MACOSX/._main.tf': 'debris',
      'sub/__MACOSX/kept.tf': 'kept',
      'sub/._main.tf': 'debris',
    };
    for (let i = 0; i < 48; i++) {
      const dir = `stack${String(i % 6)}`;
      spec[`${dir}/f${String(i).padStart(2, '0')}.tf`] = `# ${String(i)}\n`.repeat(4000 + 97 * i);
      spec[`${dir}/f${String(i).padStart(2, '0')}.bin`] = `${String(i)}`.repeat(3000 + 31 * i);
    }
    for (let i = 0; i < 200; i++) {
      spec[`small/s${String(i).padStart(3, '0')}.tf`] = `# ${String(i)}\n`.repeat(20 + (i % 50) * 7);
      if (i % 3 === 0) spec[`small/s${String(i).padStart(3, '0')}.bin`] = 'u'.repeat(50 + i);
    }
    spec['big/large.tf'] = 'resource "x" "y" {}\n'.repeat(20_000);
    spec['big/large.bin'] = 'b'.repeat(300_000);
    const root = tree(path.join(scratch, 'cfg'), spec);
    const file = path.join(scratch, 'cfg.tar.gz');
    execFileSync('tar', ['-C', root, '-czf', file, '.']);
    const fromDirectory = await readDirectory(root);
    // Repetitive content compresses far beyond the archive ratio limit, which is not under test.
    const fromTar = await readInput(file, { limits: { maxCompressionRatio: 1e9 } });
    expect(fromDirectory.entries).toEqual(fromTar.entries);
    expect([...fromDirectory.files.keys()]).toEqual([...fromTar.files.keys()]);
    for (const [name, content] of fromTar.files)
      expect(fromDirectory.files.get(name)?.equals(content)).toBe(true);
    expect(fromDirectory.files.get('big/large.tf')?.length).toBe(400_000);
    expect(fromDirectory.entries.map((e) => e.path)).toContain('caf\uFFFD/main.tf');
    expect(fromDirectory.entries.map((e) => e.path)).toContain('\uFEFFbom.tf');
    expect(fromDirectory.entries.map((e) => e.path)).toContain('sub/__MACOSX/kept.tf');
    expect(fromDirectory.entries.some((e) => e.path.includes('._') || e.path.startsWith('__MACOSX'))).toBe(
      false,
    );
  });

  test('path length counts UTF-8 bytes of the whole path; a control character is escaped', async () => {
    // 'ééé/a.tf': 6 + 1 + 4 = 11 bytes in 8 characters.
    const root = tree(path.join(scratch, 'cfg'), { '\u00e9\u00e9\u00e9/a.tf': 'x' });
    await expectInputError(
      readDirectory(root, { limits: { maxPathLength: 10 } }),
      'path-too-long',
      '\u00e9\u00e9\u00e9/a.tf',
    );
    expect((await readDirectory(root, { limits: { maxPathLength: 11 } })).entries).toHaveLength(2);
    const ctl = tree(path.join(scratch, 'ctl'), { 'a\u0001/b.tf': 'bb', 'a\u0001/c.tf': 'ccc' });
    await expectInputError(
      readDirectory(ctl, { limits: { maxEntries: 2 } }),
      'too-many-entries',
      'a\\x01/c.tf',
    );
  });

  test('an empty directory is rejected as empty', async () => {
    const root = tree(path.join(scratch, 'cfg'), { '.git/HEAD': 'x' });
    await expectInputError(readDirectory(root), 'empty-archive');
  });
});

describe('readInput', () => {
  test('reads a directory', async () => {
    const root = tree(path.join(scratch, 'cfg'), { 'main.tf': 'x' });
    const archive = await readInput(root);
    expect(archive.format).toBe('directory');
    expect(archive.name).toBe('cfg');
  });

  test('reads an archive file, whatever its extension', async () => {
    const file = path.join(scratch, 'upload.bin');
    writeFileSync(file, await buildTarGz([{ name: 'main.tf', data: 'x' }]));
    const archive = await readInput(file);
    expect(archive).toMatchObject({ name: 'upload.bin', format: 'tar.gz' });
    expect(archive.files.get('main.tf')?.toString()).toBe('x');
  });

  test('a missing path is not-found', async () => {
    await expectInputError(readInput(path.join(scratch, 'nope.tar.gz')), 'not-found');
    await expectInputError(readDirectory(path.join(scratch, 'nope')), 'not-found');
  });

  test('a device or a file given as a directory is refused', async () => {
    await expectInputError(readInput('/dev/null'), 'unsupported-format');
    const file = path.join(scratch, 'f.tf');
    writeFileSync(file, 'x');
    await expectInputError(readDirectory(file), 'unsupported-format');
  });
});
