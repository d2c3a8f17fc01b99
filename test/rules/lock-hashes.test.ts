/**
 * lock-hash-malformed, lock-hash-mismatch and (offline) lock-platform-coverage over the real
 * pipeline, with real provider zips and unpacked packages inside the archive.
 */
import { createHash } from 'node:crypto';
import { hashEntries, hashZip } from '../../src/lockfile';
import type { FileMap } from '../support/archive';
import { writeZip } from '../support/terraform';
import { fakeH1, fakeZh, lineOf, lockText, tf } from '../lockfile/fixtures';
import { closeLockParser, lockScan } from '../lockfile/pipeline';

const AWS = 'registry.terraform.io/hashicorp/aws';
const L = '.terraform.lock.hcl';
const awsTf = tf({ aws: { source: 'hashicorp/aws', version: '~> 5.0' } });
const MIRROR = 'terraform.d/plugins/registry.terraform.io/hashicorp/aws';
const ZIP_PATH = `${MIRROR}/terraform-provider-aws_5.9.0_linux_amd64.zip`;
const EXE = 'terraform-provider-aws_v5.9.0';

const zip = writeZip([{ name: EXE, data: 'real provider', mode: 0o755 }]);
const tampered = writeZip([{ name: EXE, data: 'tampered provider', mode: 0o755 }]);
const withDirs = writeZip([{ name: 'bin/' }, { name: `bin/${EXE}`, data: 'real provider', mode: 0o755 }]);
const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const unpackedH1 = hashEntries([{ path: EXE, sha256: sha('real provider') }]);

let zipHashes: Awaited<ReturnType<typeof hashZip>>;
let dirZipHashes: Awaited<ReturnType<typeof hashZip>>;

beforeAll(async () => {
  zipHashes = await hashZip(zip);
  dirZipHashes = await hashZip(withDirs);
});

afterAll(async () => {
  await closeLockParser();
});

const lockWith = (hashes: string[], version = '5.9.0'): string =>
  lockText([{ source: AWS, version, constraints: '~> 5.0', hashes }]);

async function run(files: FileMap, config: Parameters<typeof lockScan>[1] = {}) {
  const { findings } = await lockScan(files, config);
  return findings.map((f) => ({
    rule: f.ruleId,
    line: f.line,
    file: f.file,
    message: f.message,
    note: f.note,
  }));
}

describe('lock-hash-malformed', () => {
  it('reports each malformed hash on its own line, and an entry without hashes', async () => {
    const lock = lockText([
      {
        source: AWS,
        version: '5.9.0',
        constraints: '~> 5.0',
        hashes: ['h1:too-short=', fakeH1('ok'), 'zh:ABCDEF', 'h2:future', fakeZh('ok')],
      },
      { source: 'registry.terraform.io/hashicorp/random', version: '3.6.0' },
    ]);
    const got = await run({
      'main.tf': tf({
        aws: { source: 'hashicorp/aws', version: '~> 5.0' },
        random: { source: 'hashicorp/random' },
      }),
      [L]: lock,
    });
    expect(got.map((g) => [g.rule, g.line, g.message])).toEqual([
      [
        'lock-hash-malformed',
        lineOf(lock, 'h1:too-short'),
        expect.stringContaining('base64 (with padding) of 32 bytes'),
      ],
      ['lock-hash-malformed', lineOf(lock, 'zh:ABCDEF'), expect.stringContaining('64 lowercase hex digits')],
      [
        'lock-hash-malformed',
        lineOf(lock, 'h2:future'),
        expect.stringContaining('"h2:" is not a hash scheme'),
      ],
      ['lock-hash-malformed', lineOf(lock, 'hashicorp/random'), expect.stringContaining('records no hashes')],
    ]);
  });
});

describe('lock-hash-mismatch', () => {
  it('a packed zip matching its zh: passes', async () => {
    expect(await run({ 'main.tf': awsTf, [L]: lockWith([zipHashes.zh]), [ZIP_PATH]: zip })).toEqual([]);
  });

  it('a packed zip matching its h1: passes', async () => {
    expect(await run({ 'main.tf': awsTf, [L]: lockWith([zipHashes.h1]), [ZIP_PATH]: zip })).toEqual([]);
  });

  it('an unpacked package matching its h1: passes (mirror and .terraform cache)', async () => {
    const files = {
      'main.tf': awsTf,
      [L]: lockWith([unpackedH1]),
      [`terraform.d/plugins/registry.terraform.io/hashicorp/aws/5.9.0/linux_amd64/${EXE}`]: 'real provider',
      [`.terraform/providers/registry.terraform.io/hashicorp/aws/5.9.0/linux_amd64/${EXE}`]: 'real provider',
    };
    expect(await run(files)).toEqual([]);
  });

  it('a tampered zip matches none of the recorded hashes', async () => {
    const lock = lockWith([zipHashes.h1, zipHashes.zh]);
    const got = await run({ 'main.tf': awsTf, [L]: lock, [ZIP_PATH]: tampered });
    expect(got).toEqual([
      {
        rule: 'lock-hash-mismatch',
        file: L,
        line: lineOf(lock, 'provider'),
        message: expect.stringContaining(
          `provider mirror packed package ${ZIP_PATH} (hashicorp/aws 5.9.0, linux_amd64) hashes to`,
        ),
        note: expect.stringContaining('"terraform providers lock -fs-mirror=terraform.d/plugins"'),
      },
    ]);
    expect(got[0]?.message).toContain('none of the 2 checksums recorded');
  });

  it('a tampered file in a .terraform/providers cache is reported', async () => {
    const lock = lockWith([unpackedH1]);
    const got = await run({
      'main.tf': awsTf,
      [L]: lock,
      [`.terraform/providers/registry.terraform.io/hashicorp/aws/5.9.0/linux_amd64/${EXE}`]: 'tampered',
    });
    expect(got.map((g) => [g.rule, g.message])).toEqual([
      [
        'lock-hash-mismatch',
        expect.stringContaining('provider cache unpacked package .terraform/providers/'),
      ],
    ]);
  });

  it('a zip with directory entries never matches the h1 terraform records (explained in the note)', async () => {
    const lock = lockWith([dirZipHashes.h1]);
    const got = await run({ 'main.tf': awsTf, [L]: lock, [ZIP_PATH]: withDirs });
    expect(got.map((g) => [g.rule, g.note])).toEqual([
      ['lock-hash-mismatch', expect.stringContaining('zip -D')],
    ]);
  });

  it('a zip that cannot be read safely is reported', async () => {
    const evil = writeZip([
      { name: EXE, data: 'x' },
      { name: '../../escape', data: 'x' },
    ]);
    const got = await run({ 'main.tf': awsTf, [L]: lockWith([zipHashes.zh]), [ZIP_PATH]: evil });
    expect(got.map((g) => [g.rule, g.message])).toEqual([
      ['lock-hash-mismatch', expect.stringContaining('escapes the package directory')],
    ]);
  });

  it('as in terraform: no hashes accept any package; zh:-only entries do not check unpacked directories', async () => {
    const noHashes = lockText([{ source: AWS, version: '5.9.0', constraints: '~> 5.0' }]);
    expect((await run({ 'main.tf': awsTf, [L]: noHashes, [ZIP_PATH]: tampered })).map((g) => g.rule)).toEqual(
      ['lock-hash-malformed'],
    );
    const zhOnly = lockWith([zipHashes.zh]);
    const got = await run({
      'main.tf': awsTf,
      [L]: zhOnly,
      [`terraform.d/plugins/registry.terraform.io/hashicorp/aws/5.9.0/linux_amd64/${EXE}`]: 'anything at all',
    });
    expect(got).toEqual([
      {
        rule: 'lock-platform-coverage',
        file: L,
        line: lineOf(zhOnly, 'hashes'),
        message: expect.stringContaining('records only zh: checksums, so the unpacked package'),
        note: expect.stringContaining('-platform=linux_amd64'),
      },
    ]);
  });

  it('packages for other versions are not compared with the entry', async () => {
    const other = `${MIRROR}/terraform-provider-aws_5.8.0_linux_amd64.zip`;
    const got = await run({
      'main.tf': awsTf,
      [L]: lockWith([zipHashes.zh]),
      [ZIP_PATH]: zip,
      [other]: tampered,
    });
    expect(got).toEqual([]);
  });

  it("plugin_dirs serve every root; a root-level mirror serves every root; another root's mirror does not", async () => {
    const lock = lockWith([zipHashes.zh]);
    const files: FileMap = {
      'envs/a/main.tf': awsTf,
      'envs/a/.terraform.lock.hcl': lock,
      'envs/b/main.tf': awsTf,
      'envs/b/.terraform.lock.hcl': lock,
      // the team's mirror, declared in .tfguard.hcl
      'vendor/providers/registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.9.0_darwin_arm64.zip':
        tampered,
      // a mirror at the archive root serves every root
      'terraform.d/plugins/registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.9.0_windows_amd64.zip':
        tampered,
      // b's own mirror: judged only for b
      'envs/b/terraform.d/plugins/registry.terraform.io/hashicorp/aws/terraform-provider-aws_5.9.0_linux_amd64.zip':
        tampered,
    };
    const got = await run(files, { config: { pluginDirs: ['vendor/providers'] } });
    expect(got.map((g) => [g.rule, g.file, g.message.slice(0, 80)])).toEqual([
      [
        'lock-hash-mismatch',
        'envs/a/.terraform.lock.hcl',
        expect.stringContaining('plugin directory packed package vendor/'),
      ],
      [
        'lock-hash-mismatch',
        'envs/a/.terraform.lock.hcl',
        expect.stringContaining('provider mirror packed package terraform.d/'),
      ],
      [
        'lock-hash-mismatch',
        'envs/b/.terraform.lock.hcl',
        expect.stringContaining('plugin directory packed package vendor/'),
      ],
      [
        'lock-hash-mismatch',
        'envs/b/.terraform.lock.hcl',
        expect.stringContaining('provider mirror packed package envs/b/'),
      ],
      [
        'lock-hash-mismatch',
        'envs/b/.terraform.lock.hcl',
        expect.stringContaining('provider mirror packed package terraform.d/'),
      ],
    ]);
  });
});

describe('lock-platform-coverage (offline)', () => {
  it('fewer h1: hashes than configured platforms', async () => {
    const lock = lockWith([fakeH1('linux'), fakeZh('a'), fakeZh('b')]);
    const got = await run(
      { 'main.tf': awsTf, [L]: lock },
      { config: { platforms: ['linux_amd64', 'darwin_arm64'] } },
    );
    expect(got).toEqual([
      {
        rule: 'lock-platform-coverage',
        file: L,
        line: lineOf(lock, 'hashes'),
        message: expect.stringContaining(
          'records 1 h1: checksum for 2 configured platforms (linux_amd64, darwin_arm64)',
        ),
        note: expect.stringContaining(
          'terraform providers lock -platform=linux_amd64 -platform=darwin_arm64',
        ),
      },
    ]);
  });

  it('one h1: per platform is enough; no platforms configured means no check', async () => {
    const two = lockWith([fakeH1('linux'), fakeH1('darwin')]);
    expect(
      await run({ 'main.tf': awsTf, [L]: two }, { config: { platforms: ['linux_amd64', 'darwin_arm64'] } }),
    ).toEqual([]);
    expect(await run({ 'main.tf': awsTf, [L]: lockWith([fakeZh('x')]) })).toEqual([]);
  });
});
