/**
 * `ReleaseHashResolver` against the fake registry (real HTTP, real zips, SHA256SUMS signed with a
 * real OpenPGP key): version selection, `zh:` from every signed sums line, `h1:` from the OpenTofu
 * `packages` hashes or by downloading and hashing the package, the content cache, the size limit,
 * and refusals (tampered sums, unsigned, a download that is not the signed package).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RegistryClient, ReleaseHashResolver } from '../../src/lockfile';
import type { ReleaseHashesOptions } from '../../src/lockfile';
import { LocalObjectStore } from '../../src/storage/local';
import { generateTestKey, startRegistry } from '../support/registry-server';
import type { RegistryServer } from '../support/registry-server';

const HOST = 'registry.example.test';
const SOURCE = `${HOST}/acme/cloud`;
const PLATFORMS = ['linux_amd64', 'darwin_arm64', 'windows_amd64'];
const MANIFEST: [string, string] = ['terraform-provider-cloud_1.0.0_manifest.json', '{"version":1}\n'];

let reg: RegistryServer;
let tmp: string;

beforeAll(async () => {
  const key = await generateTestKey('Test Registry');
  const r = (version: string, extra: object = {}) => ({
    namespace: 'acme',
    type: 'cloud',
    version,
    platforms: PLATFORMS,
    ...extra,
  });
  reg = await startRegistry({
    signingKey: key,
    releases: [
      r('1.0.0', { extraFiles: [MANIFEST] }),
      r('1.1.0', { tamperSums: true }),
      r('1.3.0', { keys: 'none' }),
      r('1.4.0', { packages: true }),
      r('1.5.0', { platforms: ['linux_amd64'] }),
      r('2.0.0-beta1'),
      r('2.1.0'),
    ],
  });
});
afterAll(async () => {
  await reg?.close();
});
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-release-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

function resolver(options: Partial<ReleaseHashesOptions> = {}): ReleaseHashResolver {
  const client = new RegistryClient({ hosts: { [HOST]: reg.url }, retries: 0, timeoutMs: 5000 });
  return new ReleaseHashResolver({ client, tmpDir: tmp, ...options });
}

const downloadsOf = (version: string): string[] =>
  reg.requests.filter((p) => p.startsWith(`/files/acme/cloud/${version}/`) && p.endsWith('.zip'));

describe('ReleaseHashResolver', () => {
  it.each([
    ['~> 1.0', '1.5.0'],
    ['~> 1.0, < 1.5.0', '1.4.0'],
    ['>= 1.0.0', '2.1.0'],
    ['2.0.0-beta1', '2.0.0-beta1'],
    ['', '2.1.0'],
  ])('selects what terraform init would for "%s": %s', async (constraints, version) => {
    expect(await resolver().selectVersion(SOURCE, constraints)).toEqual({ ok: true, version });
  });

  it('asks no host the operator did not allow', async () => {
    const before = reg.requests.length;
    const r = resolver();
    expect(await r.selectVersion('evil.example/acme/cloud', '')).toEqual({
      ok: false,
      reason: expect.stringContaining('registry host evil.example is not contacted'),
    });
    expect(await r.releaseHashes('evil.example/acme/cloud', '1.0.0', 'terraform', ['linux_amd64'])).toEqual({
      ok: false,
      reason: expect.stringContaining('is not contacted'),
    });
    expect(reg.requests.length).toBe(before);
  });

  it("asks for a provider's versions once per run", async () => {
    const r = resolver();
    const lists = (): number => reg.requests.filter((p) => p === '/v1/providers/acme/cloud/versions').length;
    const before = lists();
    await r.selectVersion(SOURCE, '~> 1.0');
    await r.selectVersion(SOURCE, '~> 2.0');
    expect(lists() - before).toBe(1);
  });

  it('says when no version matches, or the provider is unknown', async () => {
    expect(await resolver().selectVersion(SOURCE, '~> 3.0')).toEqual({
      ok: false,
      reason: expect.stringContaining('matches "~> 3.0"'),
    });
    expect(await resolver().selectVersion(`${HOST}/acme/nothing`, '')).toEqual({
      ok: false,
      reason: expect.stringContaining('answered 404'),
    });
  });

  it('records a zh: for every signed SHA256SUMS line, the manifest included, and downloads for h1:', async () => {
    const r = resolver();
    const got = await r.releaseHashes(SOURCE, '1.0.0', 'terraform', ['linux_amd64', 'darwin_arm64']);
    const zh = reg.zh('acme', 'cloud', '1.0.0');
    const h1 = reg.h1('acme', 'cloud', '1.0.0');
    const { createHash } = await import('node:crypto');
    const manifestZh = `zh:${createHash('sha256').update(MANIFEST[1]).digest('hex')}`;
    expect(got).toEqual({
      ok: true,
      hashes: expect.any(Array),
      unpublished: [],
      downloaded: ['linux_amd64', 'darwin_arm64'],
    });
    if (!got.ok) return;
    expect(new Set(got.hashes)).toEqual(
      new Set([...Object.values(zh), manifestZh, h1.linux_amd64, h1.darwin_arm64]),
    );
    expect(downloadsOf('1.0.0')).toHaveLength(2);
    // The same resolver never downloads a package twice.
    await r.releaseHashes(SOURCE, '1.0.0', 'terraform', ['linux_amd64']);
    expect(downloadsOf('1.0.0')).toHaveLength(2);
  });

  it('keeps downloaded h1: by content in the cache, for the next run', async () => {
    const cache = new LocalObjectStore(path.join(tmp, 'cache'));
    const before = downloadsOf('2.1.0').length;
    const first = await resolver({ cache }).releaseHashes(SOURCE, '2.1.0', 'terraform', ['windows_amd64']);
    expect(first).toMatchObject({ ok: true, downloaded: ['windows_amd64'] });
    expect(downloadsOf('2.1.0')).toHaveLength(before + 1);
    const second = await resolver({ cache }).releaseHashes(SOURCE, '2.1.0', 'terraform', ['windows_amd64']);
    expect(second).toMatchObject({ ok: true, downloaded: [] });
    expect(downloadsOf('2.1.0')).toHaveLength(before + 1);
    expect(second.ok && second.hashes).toContain(reg.h1('acme', 'cloud', '2.1.0').windows_amd64);
  });

  it('takes h1: from the OpenTofu packages hashes without downloading', async () => {
    const got = await resolver().releaseHashes(SOURCE, '1.4.0', 'terraform', PLATFORMS);
    expect(got).toMatchObject({ ok: true, downloaded: [], unpublished: [] });
    expect(got.ok && new Set(got.hashes)).toEqual(
      new Set([
        ...Object.values(reg.zh('acme', 'cloud', '1.4.0')),
        ...Object.values(reg.h1('acme', 'cloud', '1.4.0')),
      ]),
    );
    expect(downloadsOf('1.4.0')).toEqual([]);
  });

  it('lists the platforms a release has no package for', async () => {
    const got = await resolver().releaseHashes(SOURCE, '1.5.0', 'terraform', PLATFORMS);
    expect(got).toMatchObject({ ok: true, unpublished: ['darwin_arm64', 'windows_amd64'] });
  });

  it('stops a download over the size limit', async () => {
    const got = await resolver({ maxPackageBytes: 10 }).releaseHashes(SOURCE, '2.1.0', 'terraform', [
      'linux_amd64',
    ]);
    expect(got).toEqual({ ok: false, reason: expect.stringContaining('larger than the limit of 10 bytes') });
  });

  it('refuses a download that is not the signed package', async () => {
    reg.faults.push({
      path: /^\/files\/acme\/cloud\/2\.1\.0\/.*darwin_arm64\.zip$/,
      kind: 'garbage',
      times: 1,
    });
    const got = await resolver().releaseHashes(SOURCE, '2.1.0', 'terraform', ['darwin_arm64']);
    expect(got).toEqual({
      ok: false,
      reason: expect.stringMatching(/has SHA-256 [0-9a-f]{64}, not [0-9a-f]{64}/),
    });
  });

  it('refuses checksums that are tampered with or not signed', async () => {
    expect(await resolver().releaseHashes(SOURCE, '1.1.0', 'terraform', ['linux_amd64'])).toEqual({
      ok: false,
      reason: expect.stringContaining('signature'),
    });
    expect(await resolver().releaseHashes(SOURCE, '1.3.0', 'opentofu', ['linux_amd64'])).toEqual({
      ok: false,
      reason: expect.stringContaining('signs no checksums'),
    });
  });
});
