/**
 * RegistryClient against a real HTTP registry on 127.0.0.1 (test/support/registry-server.ts) with
 * real zips and OpenPGP keys generated here: authentication and trust levels, tampering, OpenTofu's
 * unsigned responses, faults (unreachable, 5xx, hangs, garbage, resets) with retries and timeouts,
 * and the cache of verified checksums.
 */
import { RegistryClient } from '../../src/lockfile';
import type { RegistryOutcome } from '../../src/lockfile';
import { closedPort, generateTestKey, startRegistry, trustSignature } from '../support/registry-server';
import type { FakeRelease, RegistryServer, TestKey } from '../support/registry-server';
import { registryBudgetMs, timeLimit } from '../../src/scan';
import { ManualClock } from '../support/clock';
import { MemoryStore } from '../support/memory-store';

const HOST = 'registry.example.test';
const PLATFORMS = ['linux_amd64', 'darwin_arm64', 'windows_amd64'];

let registryKey: TestKey;
let otherKey: TestKey;
let partnersKey: TestKey;
let reg: RegistryServer;

const rel = (version: string, extra: Partial<FakeRelease> = {}): FakeRelease => ({
  namespace: 'acme',
  type: 'cloud',
  version,
  platforms: PLATFORMS,
  ...extra,
});

beforeAll(async () => {
  [registryKey, otherKey, partnersKey] = await Promise.all([
    generateTestKey('Test Registry'),
    generateTestKey('Somebody Else'),
    generateTestKey('Test Partners'),
  ]);
  const goodTrust = await trustSignature(registryKey.publicArmored, partnersKey);
  const badTrust = await trustSignature(registryKey.publicArmored, otherKey);
  reg = await startRegistry({
    signingKey: registryKey,
    providersPath: '/api/registry/v1/providers/',
    releases: [
      rel('1.0.0'),
      rel('1.0.1', { armoredSignature: true }),
      rel('1.1.0', { tamperSums: true }),
      rel('1.2.0', { signWith: otherKey }),
      rel('1.3.0', { keys: 'none' }),
      rel('1.4.0', { packages: true }),
      rel('1.5.0', { trustSignature: goodTrust }),
      rel('1.5.1', { trustSignature: badTrust }),
      rel('1.6.0', { lyingShasum: true }),
      rel('1.7.0', { keys: [otherKey, registryKey] }),
      rel('1.8.0', { shasumsUrl: 'file:///etc/passwd' }),
      rel('2.0.0', { namespace: 'flaky' }),
      rel('2.0.0', { namespace: 'hang' }),
      rel('2.0.0', { namespace: 'garbage' }),
      rel('2.0.0', { namespace: 'reset' }),
      rel('2.0.0', { namespace: 'down' }),
    ],
  });
});

afterAll(async () => {
  await reg?.close();
});

function client(extra: ConstructorParameters<typeof RegistryClient>[0] = {}): RegistryClient {
  return new RegistryClient({
    hosts: { [HOST]: reg.url },
    retries: 2,
    backoffMs: 5,
    timeoutMs: 2000,
    ...extra,
  });
}

const ask = (
  c: RegistryClient,
  version: string,
  engine: 'terraform' | 'opentofu' = 'terraform',
  ns = 'acme',
) => c.checkRelease({ source: `${HOST}/${ns}/cloud`, version, engine, platforms: ['darwin_arm64'] });

function verified(o: RegistryOutcome): Extract<RegistryOutcome, { status: 'verified' }> {
  if (o.status !== 'verified') throw new Error(`expected verified, got ${o.status}: ${o.reason}`);
  return o;
}

describe('authentication and trust', () => {
  it('verifies a community provider and lists every platform zh: from the signed sums', async () => {
    const o = verified(await ask(client(), '1.0.0'));
    expect(o.trust).toBe('community');
    expect(o.keyId).toBe(registryKey.keyId);
    expect(o.platforms).toEqual(reg.zh('acme', 'cloud', '1.0.0'));
    expect(Object.keys(o.sums)).toHaveLength(3);
    expect(o.packages).toBeNull();
    expect(o.cached).toBe(false);
    // discovery was followed to the non-default providers path; the preferred platform was asked for
    expect(reg.requests).toEqual(
      expect.arrayContaining([
        '/.well-known/terraform.json',
        '/api/registry/v1/providers/acme/cloud/versions',
        '/api/registry/v1/providers/acme/cloud/1.0.0/download/darwin/arm64',
        '/files/acme/cloud/1.0.0/SHA256SUMS',
        '/files/acme/cloud/1.0.0/SHA256SUMS.sig',
      ]),
    );
  });

  it('accepts an armored signature', async () => {
    expect(verified(await ask(client(), '1.0.1')).trust).toBe('community');
  });

  it('official: the signature also verifies with an official key', async () => {
    const o = verified(await ask(client({ officialKeys: [registryKey.publicArmored] }), '1.0.0'));
    expect(o.trust).toBe('official');
  });

  it('partner: the signing key carries a trust signature by the partners key', async () => {
    const o = verified(await ask(client({ partnerKeys: [partnersKey.publicArmored] }), '1.5.0'));
    expect(o.trust).toBe('partner');
  });

  it('a trust signature that does not verify with the partners key is rejected', async () => {
    const o = await ask(client({ partnerKeys: [partnersKey.publicArmored] }), '1.5.1');
    expect(o).toEqual({
      status: 'signature-invalid',
      reason: expect.stringMatching(/trust signature does not verify/),
    });
  });

  it('the signer is found among several published keys', async () => {
    expect(verified(await ask(client(), '1.7.0')).keyId).toBe(registryKey.keyId);
  });

  it('a tampered SHA256SUMS fails the signature', async () => {
    const o = await ask(client(), '1.1.0');
    expect(o).toEqual({ status: 'signature-invalid', reason: expect.stringMatching(/does not verify/) });
  });

  it('a signature by a key the registry does not publish is rejected (unknown issuer)', async () => {
    const o = await ask(client(), '1.2.0');
    expect(o).toEqual({ status: 'signature-invalid', reason: expect.stringMatching(/unknown issuer/) });
  });

  it('a download shasum that disagrees with the signed sums is rejected', async () => {
    const o = await ask(client(), '1.6.0');
    expect(o).toEqual({
      status: 'signature-invalid',
      reason: expect.stringMatching(/differs from the signed SHA256SUMS/),
    });
  });

  it('no signing keys: Terraform rejects, OpenTofu accepts unsigned', async () => {
    expect(await ask(client(), '1.3.0', 'terraform')).toEqual({
      status: 'signature-invalid',
      reason: expect.stringMatching(/no signing keys/),
    });
    const o = verified(await ask(client(), '1.3.0', 'opentofu'));
    expect(o.trust).toBe('unsigned');
    expect(o.keyId).toBeNull();
    expect(o.platforms).toEqual(reg.zh('acme', 'cloud', '1.3.0'));
  });

  it('OpenTofu-style packages hashes are returned', async () => {
    const o = verified(await ask(client(), '1.4.0'));
    const h1 = reg.h1('acme', 'cloud', '1.4.0');
    const zh = reg.zh('acme', 'cloud', '1.4.0');
    expect(o.packages).toEqual(Object.fromEntries(PLATFORMS.map((p) => [p, [h1[p], zh[p]]])));
  });

  it('an unpublished version or provider is not-found', async () => {
    expect(await ask(client(), '9.9.9')).toEqual({
      status: 'not-found',
      reason: expect.stringMatching(/does not publish version 9.9.9/),
    });
    expect(await ask(client(), '1.0.0', 'terraform', 'nobody')).toEqual({
      status: 'not-found',
      reason: expect.stringMatching(/404/),
    });
  });
});

describe('faults', () => {
  it('an unreachable registry is unavailable after the retries', async () => {
    const c = new RegistryClient({ hosts: { [HOST]: await closedPort() }, retries: 2, backoffMs: 5 });
    const o = await ask(c, '1.0.0');
    expect(o).toEqual({ status: 'unavailable', reason: expect.stringMatching(/after 3 attempts/) });
    expect(c.requestCount).toBe(3);
  });

  it('5xx answers are retried with backoff and then succeed', async () => {
    reg.faults.push({
      path: /^\/api\/registry\/v1\/providers\/flaky\//,
      kind: 'status',
      status: 503,
      times: 2,
    });
    const c = client();
    const o = verified(await ask(c, '2.0.0', 'terraform', 'flaky'));
    expect(o.trust).toBe('community');
    expect(reg.requests.filter((p) => p === '/api/registry/v1/providers/flaky/cloud/versions')).toHaveLength(
      3,
    );
  });

  it('5xx every time ends unavailable', async () => {
    reg.faults.push({ path: /^\/api\/registry\/v1\/providers\/down\//, kind: 'status', status: 500 });
    expect(await ask(client(), '2.0.0', 'terraform', 'down')).toEqual({
      status: 'unavailable',
      reason: expect.stringMatching(/answered 500 \(after 3 attempts\)/),
    });
  });

  it('a registry that never answers times out', async () => {
    reg.faults.push({ path: /^\/api\/registry\/v1\/providers\/hang\//, kind: 'hang' });
    const started = Date.now();
    const o = await ask(client({ timeoutMs: 150, retries: 1 }), '2.0.0', 'terraform', 'hang');
    expect(o).toEqual({ status: 'unavailable', reason: expect.stringMatching(/no answer within 150 ms/) });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a time budget stops a registry that never answers: unavailable with its reason, no retry after it', async () => {
    reg.faults.push({ path: /^\/api\/registry\/v1\/providers\/hang\//, kind: 'hang' });
    const clock = new ManualClock();
    const budget = timeLimit(300, 'the test budget of 300 ms ran out', clock);
    // Without the budget: 10 s per request and two retries.
    const c = client({ timeoutMs: 10_000, retries: 2, signal: budget.signal });
    const before = reg.requests.length;
    const asked = ask(c, '2.0.0', 'terraform', 'hang');
    // The registry is asked for the version list and never answers: the budget's time passes. (Wait
    // for that request itself: service discovery comes first and answers.)
    const hanging = (): boolean =>
      reg.requests.slice(before).some((p) => p.startsWith('/api/registry/v1/providers/hang/'));
    while (!hanging()) await new Promise((r) => setTimeout(r, 10));
    clock.advance(300);
    const o = await asked;
    expect(o).toEqual({
      status: 'unavailable',
      reason: expect.stringMatching(
        /^the version list of hang\/cloud: http:\/\/127\.0\.0\.1:\d+\/api\/registry\/v1\/providers\/hang\/cloud\/versions: the test budget of 300 ms ran out$/,
      ),
    });
    const sent = c.requestCount;
    // Once spent, nothing more is asked: another release is unavailable at once.
    expect(await ask(c, '1.0.0')).toEqual({
      status: 'unavailable',
      reason: expect.stringContaining('the test budget of 300 ms ran out'),
    });
    expect(c.requestCount).toBe(sent);
    budget.dispose();
  });

  it('registryBudgetMs keeps a tenth of the time, at least a second, for the rules and the report', () => {
    expect(registryBudgetMs(21_000)).toBe(18_900); // POST /scans: 21.75 s minus parsing
    expect(registryBudgetMs(109_000)).toBe(98_100); // the upload scan
    expect(registryBudgetMs(5_000)).toBe(4_000);
    expect(registryBudgetMs(800)).toBe(0);
  });

  it('garbage instead of JSON is unavailable, not a verdict', async () => {
    reg.faults.push({ path: /^\/api\/registry\/v1\/providers\/garbage\//, kind: 'garbage' });
    expect(await ask(client(), '2.0.0', 'terraform', 'garbage')).toEqual({
      status: 'unavailable',
      reason: expect.stringMatching(/did not return JSON/),
    });
  });

  it('connection resets are unavailable', async () => {
    reg.faults.push({ path: /^\/api\/registry\/v1\/providers\/reset\//, kind: 'reset' });
    expect((await ask(client(), '2.0.0', 'terraform', 'reset')).status).toBe('unavailable');
  });

  it('a host without service discovery is unavailable', async () => {
    const c = new RegistryClient({ hosts: { [HOST]: `${reg.url}/nothing-here` }, retries: 0 });
    expect(await ask(c, '1.0.0')).toEqual({
      status: 'unavailable',
      reason: expect.stringMatching(/no service discovery/),
    });
  });

  it('only http(s) URLs from a response are followed', async () => {
    expect(await ask(client(), '1.8.0')).toEqual({
      status: 'unavailable',
      reason: expect.stringMatching(/shasums_url that is not http\(s\): "file:\/\/\/etc\/passwd"/),
    });
  });

  it('oversized responses are refused', async () => {
    const c = client({ maxResponseBytes: 100 });
    expect(await ask(c, '1.0.0')).toEqual({
      status: 'unavailable',
      reason: expect.stringMatching(/larger than 100 bytes/),
    });
  });
});

describe('cache and memoization', () => {
  it('asks the registry once per version within a client', async () => {
    const c = client();
    const [a, b] = await Promise.all([ask(c, '1.0.0'), ask(c, '1.0.0')]);
    expect(a).toBe(b);
    const n = c.requestCount;
    await ask(c, '1.0.0');
    expect(c.requestCount).toBe(n);
  });

  it('a second client with the same store answers from the cache without any request', async () => {
    const store = new MemoryStore();
    const first = verified(await ask(client({ cache: store }), '1.0.0'));
    expect([...store.objects.keys()]).toEqual([`registry-sums/v1/${HOST}/acme/cloud/1.0.0.json`]);
    const second = client({ cache: store });
    const again = verified(await ask(second, '1.0.0'));
    expect(second.requestCount).toBe(0);
    expect(again).toEqual({ ...first, cached: true });
  });

  it('failed verifications are never cached', async () => {
    const store = new MemoryStore();
    await ask(client({ cache: store }), '1.1.0');
    await ask(client({ cache: store }), '1.2.0');
    expect(store.objects.size).toBe(0);
  });

  it('an unsigned (OpenTofu) entry is not reused under Terraform rules', async () => {
    const store = new MemoryStore();
    verified(await ask(client({ cache: store }), '1.3.0', 'opentofu'));
    expect(store.objects.size).toBe(1);
    const tf = client({ cache: store });
    expect((await ask(tf, '1.3.0', 'terraform')).status).toBe('signature-invalid');
    expect(tf.requestCount).toBeGreaterThan(0);
  });

  it('a corrupt cache entry is ignored', async () => {
    const store = new MemoryStore();
    await store.put(`registry-sums/v1/${HOST}/acme/cloud/1.0.0.json`, '{not json');
    const c = client({ cache: store });
    expect(verified(await ask(c, '1.0.0')).cached).toBe(false);
    expect(c.requestCount).toBeGreaterThan(0);
  });
});
