/**
 * The registry cross-check end to end: a real registry on 127.0.0.1 (real HTTP, real zips, SHA256SUMS
 * signed with an OpenPGP key generated here) mapped to a hostname through the scan configuration's
 * `registryHosts`, the real pipeline, and the rules lock-hash-unknown, lock-signature-invalid,
 * lock-platform-coverage, lock-registry-unavailable and lock-registry-unsigned.
 */
import type { Finding, ScanConfig } from '../../src/model';
import { RegistryClient } from '../../src/lockfile';
import { closedPort, generateTestKey, startRegistry } from '../support/registry-server';
import type { RegistryServer } from '../support/registry-server';
import { fakeH1, fakeZh, lineOf, lockText, tf } from '../lockfile/fixtures';
import { MemoryStore } from '../lockfile/memory-store';
import { closeLockParser, lockScan } from '../lockfile/pipeline';
import { scanFiles } from '../support/scan';

const HOST = 'registry.example.test';
const SOURCE = `${HOST}/acme/cloud`;
const L = '.terraform.lock.hcl';
const ALL = ['linux_amd64', 'darwin_arm64', 'windows_amd64'];
let reg: RegistryServer;

beforeAll(async () => {
  const key = await generateTestKey('Test Registry');
  const other = await generateTestKey('Somebody Else');
  const r = (version: string, extra: object = {}) => ({
    namespace: 'acme',
    type: 'cloud',
    version,
    platforms: ALL,
    ...extra,
  });
  reg = await startRegistry({
    signingKey: key,
    releases: [
      r('1.0.0'),
      r('1.1.0', { tamperSums: true }),
      r('1.2.0', { signWith: other }),
      r('1.3.0', { keys: 'none' }),
      r('1.4.0', { packages: true }),
    ],
  });
});

afterAll(async () => {
  await reg.close();
  await closeLockParser();
});

const cloudTf = tf({ cloud: { source: SOURCE, version: '~> 1.0' } });

function lock(version: string, hashes: string[]): string {
  return lockText([{ source: SOURCE, version, constraints: '~> 1.0', hashes }]);
}

async function scan(lockBody: string, config: Partial<ScanConfig> = {}, url?: string): Promise<Finding[]> {
  const { findings } = await lockScan(
    { 'main.tf': cloudTf, [L]: lockBody },
    {
      config: { registry: true, registryHosts: { [HOST]: url ?? reg.url }, ...config },
      // a fresh client per scan: nothing is remembered between rows
      registry: new RegistryClient({
        hosts: { [HOST]: url ?? reg.url },
        retries: 1,
        backoffMs: 5,
        timeoutMs: 2000,
      }),
    },
  );
  return findings;
}

const brief = (fs: Finding[]) => fs.map((f) => [f.ruleId, f.severity, f.line, f.message] as const);

describe('registry cross-check', () => {
  it('a lock that matches the signed checksums has no findings', async () => {
    const zh = reg.zh('acme', 'cloud', '1.0.0');
    const body = lock('1.0.0', [fakeH1('linux'), ...ALL.map((p) => zh[p] as string)]);
    expect(await scan(body, { platforms: ['linux_amd64', 'darwin_arm64'] })).toEqual([]);
  });

  it('the registry is found through registryHosts from the configuration (no registry: no request)', async () => {
    const before = reg.requests.length;
    const zh = reg.zh('acme', 'cloud', '1.0.0');
    const { findings } = await lockScan(
      { 'main.tf': cloudTf, [L]: lock('1.0.0', [fakeZh('foreign')]) },
      { config: { registry: false, registryHosts: { [HOST]: reg.url } } },
    );
    expect(findings).toEqual([]);
    expect(reg.requests.length).toBe(before);
    // with registry = true and only the configuration (no client given), the mapping is used
    const { findings: online } = await lockScan(
      { 'main.tf': cloudTf, [L]: lock('1.0.0', [zh.linux_amd64 as string, fakeZh('foreign')]) },
      { config: { registry: true, registryHosts: { [HOST]: reg.url } } },
    );
    expect(online.map((f) => f.ruleId)).toEqual(['lock-hash-unknown']);
    expect(reg.requests.length).toBeGreaterThan(before);
  });

  it('a foreign zh: is lock-hash-unknown on its own line', async () => {
    const zh = reg.zh('acme', 'cloud', '1.0.0');
    const foreign = fakeZh('not from the registry');
    const body = lock('1.0.0', [zh.linux_amd64 as string, foreign]);
    expect(brief(await scan(body))).toEqual([
      [
        'lock-hash-unknown',
        'error',
        lineOf(body, foreign),
        expect.stringContaining(
          `${foreign} is not in the signed SHA256SUMS that ${HOST} publishes for ${HOST}/acme/cloud 1.0.0`,
        ),
      ],
    ]);
  });

  it('a tampered SHA256SUMS is lock-signature-invalid, and its hashes are not judged', async () => {
    const body = lock('1.1.0', [fakeZh('whatever')]);
    expect(brief(await scan(body))).toEqual([
      [
        'lock-signature-invalid',
        'error',
        lineOf(body, 'provider'),
        expect.stringContaining('signature does not verify'),
      ],
    ]);
  });

  it('a signature by a key the registry does not publish is lock-signature-invalid', async () => {
    const body = lock('1.2.0', [fakeZh('whatever')]);
    expect(brief(await scan(body))).toEqual([
      [
        'lock-signature-invalid',
        'error',
        lineOf(body, 'provider'),
        expect.stringContaining('unknown issuer'),
      ],
    ]);
  });

  it('an unreachable registry is a notice, never lock-hash-unknown; coverage falls back to the offline check', async () => {
    const body = lock('1.0.0', [fakeZh('cannot be checked')]);
    const got = brief(await scan(body, { platforms: ['linux_amd64'] }, await closedPort()));
    expect(got).toEqual([
      [
        'lock-registry-unavailable',
        'notice',
        lineOf(body, 'provider'),
        expect.stringMatching(/could not check .*ECONNREFUSED/),
      ],
      [
        'lock-platform-coverage',
        'warning',
        lineOf(body, 'hashes'),
        expect.stringContaining('records 0 h1: checksums'),
      ],
    ]);
  });

  it('OpenTofu: a response without signing keys is a notice, and the checksums are still compared', async () => {
    const zh = reg.zh('acme', 'cloud', '1.3.0');
    const foreign = fakeZh('foreign');
    const body = lock('1.3.0', [zh.linux_amd64 as string, foreign]);
    expect(brief(await scan(body, { engine: 'opentofu' }))).toEqual([
      [
        'lock-registry-unsigned',
        'notice',
        lineOf(body, 'provider'),
        expect.stringContaining('no signing keys'),
      ],
      [
        'lock-hash-unknown',
        'error',
        lineOf(body, foreign),
        expect.stringContaining('is not in the published SHA256SUMS'),
      ],
    ]);
  });

  it('Terraform: the same response without keys is lock-signature-invalid', async () => {
    const body = lock('1.3.0', [reg.zh('acme', 'cloud', '1.3.0').linux_amd64 as string]);
    expect(brief(await scan(body))).toEqual([
      [
        'lock-signature-invalid',
        'error',
        lineOf(body, 'provider'),
        expect.stringContaining('no signing keys'),
      ],
    ]);
  });

  it('h1: hashes are checked against the packages hashes of the download response', async () => {
    const h1 = reg.h1('acme', 'cloud', '1.4.0');
    const foreign = fakeH1('foreign');
    const body = lock('1.4.0', [
      h1.darwin_arm64 as string,
      foreign,
      reg.zh('acme', 'cloud', '1.4.0').linux_amd64 as string,
    ]);
    expect(brief(await scan(body))).toEqual([
      [
        'lock-hash-unknown',
        'error',
        lineOf(body, foreign),
        expect.stringContaining('is none of the package hashes'),
      ],
    ]);
  });

  it('platform coverage with the registry: each configured platform needs its zh:', async () => {
    const zh = reg.zh('acme', 'cloud', '1.0.0');
    const body = lock('1.0.0', [fakeH1('a'), fakeH1('b'), fakeH1('c'), zh.linux_amd64 as string]);
    expect(
      brief(
        await scan(body, { platforms: ['linux_amd64', 'darwin_arm64', 'windows_amd64', 'freebsd_amd64'] }),
      ),
    ).toEqual([
      [
        'lock-platform-coverage',
        'warning',
        lineOf(body, 'hashes'),
        expect.stringContaining('has no zh: checksum for darwin_arm64, windows_amd64'),
      ],
      [
        'lock-platform-coverage',
        'warning',
        lineOf(body, 'hashes'),
        expect.stringContaining(
          'the registry publishes no registry.example.test/acme/cloud 1.0.0 package for freebsd_amd64',
        ),
      ],
    ]);
  });

  it('a version the registry does not publish is lock-hash-unknown on the version line', async () => {
    const body = lock('1.9.9', [fakeZh('x')]);
    expect(brief(await scan(body))).toEqual([
      [
        'lock-hash-unknown',
        'error',
        lineOf(body, 'version'),
        expect.stringContaining('does not publish version 1.9.9'),
      ],
    ]);
  });

  it('full scan: .tfguard.hcl turns the check on, the operator maps the hostname; the store caches verified sums', async () => {
    const zh = reg.zh('acme', 'cloud', '1.0.0');
    const foreign = fakeZh('foreign, full scan');
    const body = lock('1.0.0', [fakeH1('l'), fakeH1('d'), zh.linux_amd64 as string, foreign]);
    const config = [
      'registry = true',
      'platforms = ["linux_amd64", "darwin_arm64"]',
      'rule "lock-platform-coverage" { severity = "error" }',
    ].join('\n');
    const operator = { name: 'operator.hcl', text: `registry_hosts = { "${HOST}" = "${reg.url}" }\n` };
    const store = new MemoryStore();
    const first = await scanFiles({ 'main.tf': cloudTf, [L]: body }, { config, store, configText: operator });
    const lockFindings = (r: typeof first) =>
      r.findings
        .filter((f) => f.ruleId.startsWith('lock-'))
        .map((f) => [f.ruleId, f.severity, f.file, f.line] as const);
    expect(lockFindings(first)).toEqual([
      ['lock-platform-coverage', 'error', L, lineOf(body, 'hashes')],
      ['lock-hash-unknown', 'error', L, lineOf(body, foreign)],
    ]);
    expect([...store.objects.keys()]).toEqual([`registry-sums/v1/${SOURCE}/1.0.0.json`]);
    // a second scan with the same store does not ask the registry and reports the same
    const before = reg.requests.length;
    const second = await scanFiles(
      { 'main.tf': cloudTf, [L]: body },
      { config, store, configText: operator },
    );
    expect(reg.requests.length).toBe(before);
    expect(lockFindings(second)).toEqual(lockFindings(first));
  });
  it('SSRF guard: an archive cannot map registry hosts, and unmapped private hosts are never contacted', async () => {
    const body = lock('1.0.0', [reg.zh('acme', 'cloud', '1.0.0').linux_amd64 as string]);
    await expect(
      scanFiles(
        { 'main.tf': cloudTf, [L]: body },
        { config: `registry = true\nregistry_hosts = { "${HOST}" = "${reg.url}" }\n` },
      ),
    ).rejects.toMatchObject({ code: 'invalid-config', message: expect.stringContaining('registry_hosts') });
    const before = reg.requests.length;
    const report = await scanFiles({ 'main.tf': cloudTf, [L]: body }, { config: 'registry = true\n' });
    expect(reg.requests.length).toBe(before);
    expect(
      report.findings
        .filter((f) => f.ruleId.startsWith('lock-'))
        .map((f) => [f.ruleId, f.severity, f.message]),
    ).toEqual([
      [
        'lock-registry-unavailable',
        'notice',
        expect.stringContaining(`registry host ${HOST} is not contacted`),
      ],
    ]);
  });
});
