/**
 * Package checksums against the real `terraform` CLI: the h1: that `terraform init` records for
 * packages from a filesystem mirror (packed and unpacked, nested directories, names whose UTF-8
 * byte order differs from JavaScript's UTF-16 order) must equal `hashPackage`, and the zh: of a zip
 * must be its sha256. Plus the rejections the hasher must make.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EMPTY_H1,
  hashDirectory,
  hashEntries,
  hashPackage,
  hashZip,
  isWellFormedH1,
  isWellFormedZh,
  PackageHashError,
} from '../../src/lockfile';
import {
  readLockFile,
  requiredProvidersTf,
  terraformInit,
  withMirror,
  writeTree,
  writeZip,
} from '../support/terraform';
import type { Mirror, ProviderPackage, ZipEntry } from '../support/terraform';
import { describeWithTerraform } from '../support/external';

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

// Names chosen so that byte order (Go) and UTF-16 order (JS default sort) disagree: U+FF21 sorts
// before U+1F600 in UTF-8 bytes (EF.. < F0..) but after it in UTF-16 (FF21 > D83D).
const TRICKY: ZipEntry[] = [
  { name: 'terraform-provider-tricky_v1.0.0', data: '#!/bin/sh\nexit 1\n', mode: 0o755 },
  { name: '\uff21-fullwidth.txt', data: 'fullwidth' },
  { name: '\u{1f600}-emoji.txt', data: 'emoji' },
  { name: 'B-upper.txt', data: 'upper' },
  { name: 'a-lower.txt', data: 'lower' },
  { name: 'nested/deeper/file.txt', data: 'deep' },
  { name: 'nested/z.txt', data: 'z' },
  { name: 'empty.txt', data: '' },
];

const PACKAGES: ProviderPackage[] = [
  { source: 'hashicorp/packed', version: '1.2.3' },
  { source: 'hashicorp/unpacked', version: '2.0.0', layout: 'unpacked' },
  { source: 'example/tricky', version: '1.0.0', files: TRICKY },
  {
    source: 'example/trickydir',
    version: '1.0.0',
    layout: 'unpacked',
    files: TRICKY.map((f) => ({ ...f, name: f.name.replace('tricky_', 'trickydir_') })),
  },
  {
    source: 'example/withdirs',
    version: '0.1.0',
    files: [
      { name: 'bin/' },
      { name: 'bin/terraform-provider-withdirs_v0.1.0', data: 'x', mode: 0o755 },
      { name: 'terraform-provider-withdirs_v0.1.0', data: 'y', mode: 0o755 },
    ],
  },
];

describeWithTerraform('h1:/zh: against terraform init', () => {
  let mirror: Mirror;
  let work: string;
  let lock: ReturnType<typeof readLockFile>;

  beforeAll(async () => {
    mirror = await withMirror(PACKAGES);
    work = join(mirror.dir, 'work');
    await writeTree(work, {
      'main.tf': requiredProvidersTf({
        packed: { source: 'hashicorp/packed', version: '1.2.3' },
        unpacked: { source: 'hashicorp/unpacked', version: '2.0.0' },
        tricky: { source: 'example/tricky', version: '1.0.0' },
        trickydir: { source: 'example/trickydir', version: '1.0.0' },
        withdirs: { source: 'example/withdirs', version: '0.1.0' },
      }),
    });
    const r = await terraformInit(work, mirror);
    if (r.code !== 0) throw new Error(`terraform init failed:\n${r.output}`);
    lock = readLockFile(work);
  });

  afterAll(async () => {
    await mirror?.cleanup();
  });

  const recorded = (source: string): string[] => lock.get(`registry.terraform.io/${source}`)?.hashes ?? [];

  it.each(PACKAGES.map((p) => [p.source, p] as const))(
    'hashPackage(%s) equals the h1 terraform records',
    async (source, pkg) => {
      const hashes = recorded(source);
      expect(hashes).toHaveLength(1);
      const got = await hashPackage(mirror.packagePath(pkg));
      expect(got.h1).toBe(hashes[0]);
    },
  );

  it('zh: of a zip is the sha256 of its bytes', async () => {
    const p = mirror.packagePath(PACKAGES[0] as ProviderPackage);
    const { readFile } = await import('node:fs/promises');
    const got = await hashPackage(p);
    expect(got.zh).toBe(`zh:${sha(await readFile(p))}`);
  });

  it('a zip with directory entries: h1Packed (what terraform checks a packed zip with) differs from the recorded h1', async () => {
    const pkg = PACKAGES[4] as ProviderPackage;
    const z = await hashZip(mirror.packagePath(pkg));
    expect(z.h1).toBe(recorded('example/withdirs')[0]);
    expect(z.h1Packed).not.toBe(z.h1);
    // Terraform itself rejects the packed zip against the h1 it recorded (fresh install, readonly lock).
    await rm(join(work, '.terraform'), { recursive: true, force: true });
    const again = await terraformInit(work, mirror, ['-lockfile=readonly']);
    expect(again.code).not.toBe(0);
    expect(again.output).toMatch(/example\/withdirs[\s\S]*doesn't match any of the\s+checksums/);
  });

  it('hashZip accepts a buffer and a path alike', async () => {
    const p = mirror.packagePath(PACKAGES[2] as ProviderPackage);
    const { readFile } = await import('node:fs/promises');
    const fromPath = await hashZip(p);
    const fromBuffer = await hashZip(await readFile(p));
    expect(fromBuffer).toEqual(fromPath);
    expect(fromPath.entries.map((e) => e.name)).toEqual(TRICKY.map((e) => e.name));
  });
});

describe('hashEntries', () => {
  it('gives the documented empty-package hash', () => {
    expect(hashEntries([])).toBe(EMPTY_H1);
  });

  it('matches a hand-built dirhash summary', () => {
    const files = [
      { path: 'b', sha256: sha('B') },
      { path: 'a/x', sha256: sha('A') },
    ];
    const summary = `${sha('A')}  a/x\n${sha('B')}  b\n`;
    expect(hashEntries(files)).toBe(`h1:${createHash('sha256').update(summary).digest('base64')}`);
  });

  it('rejects newlines in names and bad digests', () => {
    expect(() => hashEntries([{ path: 'a\nb', sha256: sha('') }])).toThrow(/newline/);
    expect(() => hashEntries([{ path: 'a', sha256: 'XYZ' }])).toThrow(PackageHashError);
  });
});

describe('hashZip rejects unsafe or broken zips', () => {
  const exe = { name: 'terraform-provider-x_v1', data: 'x' };
  it.each([
    ['a ".." component', [exe, { name: 'a/../../etc/passwd', data: 'p' }], /escapes the package directory/],
    ['an absolute path', [exe, { name: '/etc/passwd', data: 'p' }], /absolute path/],
    ['a drive letter', [exe, { name: 'C:/x', data: 'p' }], /absolute path/],
    ['a backslash', [exe, { name: 'a\\b', data: 'p' }], /backslash/],
    [
      'duplicate names',
      [exe, { name: 'dup', data: '1' }, { name: 'dup', data: '2' }],
      /two entries named "dup"/,
    ],
    [
      'names that unpack to one file',
      [exe, { name: 'a', data: '1' }, { name: './a', data: '2' }],
      /unpack to the same file/,
    ],
    [
      'a file that is also a directory',
      [exe, { name: 'a', data: '1' }, { name: 'a/b', data: '2' }],
      /both a file and a directory/,
    ],
    ['a newline in a name', [exe, { name: 'a\nb', data: '1' }], /newline/],
  ] as const)('%s', async (_what, entries, message) => {
    await expect(hashZip(writeZip([...entries]))).rejects.toThrow(message);
  });

  it('a file that is not a zip', async () => {
    await expect(hashZip(Buffer.from('definitely not a zip file, just text'))).rejects.toThrow(
      /not a readable zip/,
    );
  });

  it('a truncated zip', async () => {
    const z = writeZip([exe, { name: 'big', data: 'x'.repeat(5000) }]);
    await expect(hashZip(z.subarray(0, z.length - 30))).rejects.toThrow(PackageHashError);
  });

  it('content over the configured limit (a zip bomb) is stopped while streaming', async () => {
    const z = writeZip([{ name: 'bomb', data: Buffer.alloc(2 * 1024 * 1024) }], { compress: true });
    expect(z.length).toBeLessThan(10 * 1024);
    await expect(hashZip(z, { maxUncompressedBytes: 1024 * 1024 })).rejects.toThrow(/larger than the limit/);
  });

  it('more entries than the configured limit', async () => {
    const z = writeZip(Array.from({ length: 20 }, (_, i) => ({ name: `f${i}`, data: 'x' })));
    await expect(hashZip(z, { maxEntries: 10 })).rejects.toThrow(/20 entries/);
  });

  it('a missing file', async () => {
    await expect(hashPackage('/nonexistent/tfguard/pkg.zip')).rejects.toThrow(/cannot read/);
  });
});

describe('hashDirectory', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tfguard-hashdir-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('counts a symlinked file as its target and ignores empty directories', async () => {
    const pkg = join(dir, 'pkg');
    await mkdir(join(pkg, 'empty'), { recursive: true });
    await writeFile(join(dir, 'outside.txt'), 'target');
    await writeFile(join(pkg, 'real.txt'), 'real');
    await symlink(join(dir, 'outside.txt'), join(pkg, 'link.txt'));
    expect(await hashDirectory(pkg)).toBe(
      hashEntries([
        { path: 'link.txt', sha256: sha('target') },
        { path: 'real.txt', sha256: sha('real') },
      ]),
    );
  });

  it('rejects a symlink to a directory and a path that is a file', async () => {
    const pkg = join(dir, 'pkg2');
    await mkdir(join(pkg, 'sub'), { recursive: true });
    await symlink(join(pkg, 'sub'), join(pkg, 'loop'));
    await expect(hashDirectory(pkg)).rejects.toThrow(/not a regular file/);
    await expect(hashDirectory(join(dir, 'outside.txt'))).rejects.toThrow(/not a directory/);
  });
});

describe('hash format checks', () => {
  it.each([
    [EMPTY_H1, true],
    ['h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU', false],
    ['h1:47DEQpj8HBSa-_TImW+5JCeuQeRkm5NMpJWZG3hSuFU=', false],
    ['h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFV=', false],
    ['h1:', false],
  ])('isWellFormedH1(%s) = %s', (h, ok) => {
    expect(isWellFormedH1(h)).toBe(ok);
  });
  it.each([
    [`zh:${sha('')}`, true],
    [`zh:${sha('').toUpperCase()}`, false],
    [`zh:${sha('').slice(1)}`, false],
  ])('isWellFormedZh(%s) = %s', (h, ok) => {
    expect(isWellFormedZh(h)).toBe(ok);
  });
});
