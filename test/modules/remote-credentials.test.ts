/**
 * Registry credentials (`TF_TOKEN_<host>`, `credentials "HOST" { token = ... }` in `--config`), as
 * Terraform uses them: a fake private registry on 127.0.0.1 answers 401 without
 * `Authorization: Bearer <token>`, and a second server stands in for the download host (S3, GitHub)
 * the registry sends packages to. The token goes to the registry's own host and nowhere else, and
 * appears in no report, notice or error.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RegistryClient } from '../../src/lockfile';
import { HttpClient, RegistryHosts } from '../../src/util/http';
import { cli } from '../support/cli';
import { registryTokens, tokenVariableHost, tokenVariableName } from '../../src/config';
import type { Report } from '../../src/report/types';
import type { ScanOptions } from '../../src/scan/types';
import { lines } from '../support/rule-table';
import { makeTarGz } from '../support/archive';
import { generateTestKey, startRegistry } from '../support/registry-server';
import type { FakeModule, RegistryServer } from '../support/registry-server';
import { findingsOf, scanFiles } from '../support/scan';

const HOST = 'private.example.com';
const TOKEN = 'tok-5ecret.atlasv1.DO-NOT-LEAK-0123456789';

const PACKAGE = {
  'main.tf': lines(
    'terraform {',
    '  required_providers {',
    '    google = { source = "hashicorp/google", version = ">= 5.0" }',
    '  }',
    '}',
  ),
};

let downloads: RegistryServer;
let registry: RegistryServer;

const PRIVATE = (): FakeModule => ({
  namespace: 'acme',
  name: 'net',
  system: 'google',
  versions: [
    { version: '1.0.0', files: PACKAGE },
    // The registry redirects the download to another host (as HCP Terraform does to its archivist).
    { version: '1.1.0', download: { location: '/elsewhere.tar.gz' } },
    // The download location itself is on another host (S3, GitHub).
    { version: '1.2.0', download: { location: `${downloads.url}/direct.tar.gz` } },
  ],
});

beforeAll(async () => {
  const tarball = await makeTarGz(PACKAGE);
  downloads = await startRegistry({
    modulesPath: null,
    files: { '/pkg.tar.gz': tarball, '/direct.tar.gz': tarball },
  });
  registry = await startRegistry({
    modules: [PRIVATE()],
    requireToken: TOKEN,
    // Like HCP Terraform: the API needs the token; packages are served on pre-authorised URLs.
    tokenPaths: /^\/(\.well-known|v1)\//,
    redirects: { '/elsewhere.tar.gz': `${downloads.url}/pkg.tar.gz` },
  });
});

afterAll(async () => {
  await Promise.all([registry.close(), downloads.close()]);
});

beforeEach(() => {
  for (const s of [registry, downloads]) {
    s.requests.length = 0;
    s.authorizations.length = 0;
  }
});

function ops(extra = ''): string {
  return (
    `registry_hosts = { "${HOST}" = "${registry.url}" }\n` +
    `module_hosts = { "127.0.0.1" = "", "${new URL(downloads.url).host}" = "" }\n` +
    extra
  );
}

function scan(
  version: string,
  config = ops(),
  options: Omit<ScanOptions, 'configText' | 'config'> = {},
): Promise<Report> {
  return scanFiles(
    {
      'main.tf': lines(
        'module "m" {',
        `  source  = "${HOST}/acme/net/google"`,
        `  version = "${version}"`,
        '}',
      ),
    },
    {
      remoteModules: true,
      configText: { name: 'ops.hcl', text: config },
      remoteModuleSettings: { timeoutMs: 2000, retries: 0 },
      ...options,
    },
  );
}

function unresolved(report: Report): string[] {
  return findingsOf(report, 'module-unresolved').map((f) => f.message);
}

function resolvedVersions(report: Report): (string | null)[] {
  return (report.roots[0]?.remoteModuleTree ?? []).map((m) => m.resolvedVersion);
}

describe('a registry that needs a token', () => {
  it('resolves with the token of TF_TOKEN_* (registryTokens), sent to the registry only', async () => {
    const report = await scan('1.0.0', ops(), { registryTokens: { [HOST]: TOKEN } });
    expect(unresolved(report)).toEqual([]);
    expect(resolvedVersions(report)).toEqual(['1.0.0']);
    expect(report.roots[0]?.providers.map((p) => p.source)).toContain(
      'registry.terraform.io/hashicorp/google',
    );
    expect(registry.requests).toEqual(
      expect.arrayContaining(['/.well-known/terraform.json', '/v1/modules/acme/net/google/versions']),
    );
    expect(registry.authorizations.length).toBeGreaterThanOrEqual(3);
    // The token goes to the registry's API only; the package, on the same host, gets none (as
    // Terraform does it: see remote-credentials-oracle.test.ts).
    registry.requests.forEach((path, i) =>
      expect([path, registry.authorizations[i]]).toEqual([
        path,
        /^\/(\.well-known|v1)\//.test(path) ? `Bearer ${TOKEN}` : null,
      ]),
    );
    expect(registry.requests.some((p) => !/^\/(\.well-known|v1)\//.test(p))).toBe(true);
    expect(JSON.stringify(report)).not.toContain(TOKEN);
  });

  it('resolves with a credentials block of --config', async () => {
    const report = await scan('1.0.0', ops(`credentials "${HOST}" {\n  token = "${TOKEN}"\n}\n`));
    expect(unresolved(report)).toEqual([]);
    expect(resolvedVersions(report)).toEqual(['1.0.0']);
    expect(JSON.stringify(report)).not.toContain(TOKEN);
  });

  it('TF_TOKEN_* wins over a credentials block', async () => {
    const report = await scan('1.0.0', ops(`credentials "${HOST}" {\n  token = "stale"\n}\n`), {
      registryTokens: { [HOST]: TOKEN },
    });
    expect(unresolved(report)).toEqual([]);
  });

  it.each([
    ['no token', {}],
    ['a wrong token', { [HOST]: 'wrong-token' }],
  ])('%s: the module is unresolved, naming the host and the token', async (_label, tokens) => {
    const report = await scan('1.0.0', ops(), { registryTokens: tokens });
    const messages = unresolved(report);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(`the registry refused the request: no or invalid token for ${HOST}`);
    expect(resolvedVersions(report)).toEqual([null]);
    expect(JSON.stringify(report)).not.toContain('wrong-token');
    // 401 is not retried
    expect(registry.requests).toEqual(['/.well-known/terraform.json']);
  });

  it('the token is not sent to the host a download redirects to', async () => {
    const report = await scan('1.1.0', ops(), { registryTokens: { [HOST]: TOKEN } });
    expect(unresolved(report)).toEqual([]);
    expect(resolvedVersions(report)).toEqual(['1.1.0']);
    expect(registry.requests).toContain('/elsewhere.tar.gz');
    expect(downloads.requests).toEqual(['/pkg.tar.gz']);
    expect(downloads.authorizations).toEqual([null]);
  });

  it('the token is not sent to a download location on another host', async () => {
    const report = await scan('1.2.0', ops(), { registryTokens: { [HOST]: TOKEN } });
    expect(unresolved(report)).toEqual([]);
    expect(downloads.requests).toEqual(['/direct.tar.gz']);
    expect(downloads.authorizations).toEqual([null]);
  });

  it('the token of another host is never sent to this one', async () => {
    const report = await scan('1.0.0', ops(), { registryTokens: { 'other.example.com': TOKEN } });
    expect(unresolved(report)[0]).toContain(`no or invalid token for ${HOST}`);
    expect(registry.authorizations).toEqual([null]);
  });

  it('a scanned archive cannot set credentials', async () => {
    await expect(
      scanFiles(
        {
          'main.tf': 'terraform {}\n',
          '.tfguard.hcl': `credentials "${HOST}" {\n  token = "${TOKEN}"\n}\n`,
        },
        { remoteModules: true },
      ),
    ).rejects.toThrow(/"credentials" are registry tokens of whoever runs the scan/);
  });

  it('an invalid credentials block is rejected without quoting the token', async () => {
    const bad = scan('1.0.0', ops(`credentials "${HOST}" {\n  token = "${TOKEN}"\n  user = "${TOKEN}"\n}\n`));
    await expect(bad).rejects.toThrow(/unknown setting "user" in credentials/);
    await expect(bad).rejects.not.toThrow(TOKEN);
  });
});

describe('the shared HTTP client', () => {
  it('gives the token only to the origin of the registry (scheme, host and port)', () => {
    const hosts = new RegistryHosts(
      { [HOST]: `https://${HOST}` },
      { [HOST]: TOKEN, 'unmapped.example': 'x' },
    );
    expect(hosts.authorization(new URL(`https://${HOST}/v1/modules/`))).toBe(`Bearer ${TOKEN}`);
    expect(hosts.authorization(new URL(`https://PRIVATE.example.com/x`))).toBe(`Bearer ${TOKEN}`);
    expect(hosts.authorization(new URL(`http://${HOST}/v1/modules/`))).toBeUndefined();
    expect(hosts.authorization(new URL(`https://${HOST}:8443/v1/modules/`))).toBeUndefined();
    expect(hosts.authorization(new URL(`https://evil.${HOST}/`))).toBeUndefined();
    // a token for a host that may not be contacted is never used
    expect(hosts.authorization(new URL('https://unmapped.example/'))).toBeUndefined();
  });

  it('follows a JSON redirect to another host without the token', async () => {
    const http = new HttpClient({
      retries: 0,
      credentials: new RegistryHosts({ [HOST]: registry.url }, { [HOST]: TOKEN }),
    });
    const body = await http.getBytes(new URL('/elsewhere.tar.gz', registry.url), 'a test download');
    expect(body.length).toBeGreaterThan(0);
    expect(registry.authorizations).toEqual([`Bearer ${TOKEN}`]);
    expect(downloads.requests).toEqual(['/pkg.tar.gz']);
    expect(downloads.authorizations).toEqual([null]);
  });
});

describe('tfguard scan --remote-modules with TF_TOKEN_<host>', () => {
  const VAR = 'TF_TOKEN_private_example_com';
  let tmp: string;
  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-creds-'));
    await fs.mkdir(path.join(tmp, 'repo'));
    await fs.writeFile(
      path.join(tmp, 'repo', 'main.tf'),
      lines('module "m" {', `  source  = "${HOST}/acme/net/google"`, '  version = "1.0.0"', '}'),
    );
    await fs.writeFile(path.join(tmp, 'ops.hcl'), ops());
  });
  afterAll(async () => {
    delete process.env[VAR];
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it.each([
    ['json', TOKEN, 0],
    ['text', TOKEN, 0],
    ['json', `${TOKEN}-wrong`, 1],
    ['text', `${TOKEN}-wrong`, 1],
  ])('--format %s: the token is used and never printed', async (format, token, unresolvedCount) => {
    process.env[VAR] = token;
    const run = await cli([
      'scan',
      path.join(tmp, 'repo'),
      '--format',
      format,
      '--fail-on',
      'never',
      '--config',
      path.join(tmp, 'ops.hcl'),
      '--remote-modules',
      '--cache-dir',
      await fs.mkdtemp(path.join(tmp, 'cache-')),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(TOKEN);
    expect(registry.authorizations).toContain(`Bearer ${token}`);
    if (format === 'json') {
      const report = JSON.parse(run.stdout) as Report;
      expect(unresolved(report)).toHaveLength(unresolvedCount);
    }
    if (unresolvedCount > 0) expect(run.stdout).toContain(`no or invalid token for ${HOST}`);
  });
});

describe('the provider registry client (lock-file checks)', () => {
  let providers: RegistryServer;
  beforeAll(async () => {
    providers = await startRegistry({
      signingKey: await generateTestKey('Private Registry'),
      requireToken: TOKEN,
      releases: [{ namespace: 'acme', type: 'cloud', version: '1.0.0', platforms: ['linux_amd64'] }],
    });
  });
  afterAll(async () => {
    await providers.close();
  });
  const check = (credentials: Record<string, string>) =>
    new RegistryClient({
      hosts: { [HOST]: providers.url },
      credentials,
      retries: 0,
      timeoutMs: 2000,
    }).checkRelease({
      source: `${HOST}/acme/cloud`,
      version: '1.0.0',
      engine: 'terraform',
      platforms: ['linux_amd64'],
    });

  it('verifies a release with the token', async () => {
    const o = await check({ [HOST]: TOKEN });
    expect(o.status).toBe('verified');
  });

  it('without it the release is unavailable, and the reason names the host', async () => {
    const o = await check({});
    expect(o.status).toBe('unavailable');
    expect(o.status === 'verified' ? '' : o.reason).toContain(`no or invalid token for ${HOST}`);
  });
});

describe('TF_TOKEN_<host> variable names (as Terraform reads them)', () => {
  it.each([
    ['TF_TOKEN_app_terraform_io', 'app.terraform.io'],
    ['TF_TOKEN_APP_TERRAFORM_IO', 'app.terraform.io'],
    ['TF_TOKEN_my__registry_example_com', 'my-registry.example.com'],
    ['TF_TOKEN_my-registry_example_com', 'my-registry.example.com'],
    ['TF_TOKEN_café_fr', 'xn--caf-dma.fr'],
    ['TF_TOKEN_xn____caf__dma_fr', 'xn--caf-dma.fr'],
    ['TF_TOKEN_', null],
    ['TF_TOKENS_app_terraform_io', null],
    ['AWS_SECRET_ACCESS_KEY', null],
  ])('%s → %s', (name, host) => {
    expect(tokenVariableHost(name)).toBe(host);
  });

  it.each([
    ['app.terraform.io', 'TF_TOKEN_app_terraform_io'],
    ['my-registry.example.com', 'TF_TOKEN_my__registry_example_com'],
    ['café.fr', 'TF_TOKEN_xn____caf__dma_fr'],
  ])('%s is read from %s, and back', (host, name) => {
    expect(tokenVariableName(host)).toBe(name);
    expect(tokenVariableHost(name)).toBe(domainOf(host));
  });

  it('registryTokens reads the environment, skipping empty values', () => {
    const saved = { ...process.env };
    try {
      process.env.TF_TOKEN_app_terraform_io = 'a';
      process.env.TF_TOKEN_my__registry_example_com = 'b';
      process.env.TF_TOKEN_empty_example_com = '';
      const tokens = registryTokens();
      expect(tokens['app.terraform.io']).toBe('a');
      expect(tokens['my-registry.example.com']).toBe('b');
      expect(tokens).not.toHaveProperty('empty.example.com');
    } finally {
      process.env = saved;
    }
  });
});

function domainOf(host: string): string {
  return new URL(`http://${host}`).hostname;
}
