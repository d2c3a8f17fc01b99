/**
 * The shared remote-module cache cannot be poisoned: scans of two repositories share one
 * cache in s3rver (the service's reports bucket), and a host on 127.0.0.1 whose answers change
 * between scans stands in for a git host whose branch or tag moves, and for an HTTP archive URL
 * whose content changes. Content behind a mutable reference is reused only by the same repository,
 * and only briefly; content with an immutable identity (a commit SHA, a checksummed archive) is
 * shared; a failure (a checksum mismatch, files that do not parse) is never kept.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Report } from '../../src/report/types';
import { S3ObjectStore } from '../../src/storage/s3';
import { PrefixedObjectStore } from '../../src/storage/prefixed';
import { lines } from '../support/rule-table';
import { makeTarGz } from '../support/archive';
import { startS3rver, type RunningS3rver } from '../support/s3rver';
import { findingsOf, scanFiles } from '../support/scan';

const BUCKET = 'tfguard-cache-test';
const SHA = 'a'.repeat(40);

/** A package requiring hashicorp/aws with `constraint`. */
function pkg(constraint: string): Record<string, string> {
  return {
    'main.tf': lines(
      'terraform {',
      '  required_providers {',
      `    aws = { source = "hashicorp/aws", version = "${constraint}" }`,
      '  }',
      '}',
    ),
  };
}

/** What GitHub serves: the tree inside one top directory. */
async function gitArchive(files: Record<string, string>): Promise<Buffer> {
  return makeTarGz(Object.fromEntries(Object.entries(files).map(([p, c]) => [`net-ref/${p}`, c])));
}

interface Host {
  url: string;
  /** Path → body; changed by the tests between scans. */
  files: Map<string, Buffer>;
  requests: string[];
  close(): Promise<void>;
}

async function startHost(): Promise<Host> {
  const files = new Map<string, Buffer>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    requests.push(req.url ?? '/');
    const body = files.get(path);
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    files,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let s3: RunningS3rver;
let host: Host;
let run = 0;

beforeAll(async () => {
  [s3, host] = await Promise.all([startS3rver([BUCKET]), startHost()]);
});

afterAll(async () => {
  await Promise.all([s3?.stop(), host?.close()]);
});

beforeEach(() => {
  host.files.clear();
  host.requests.length = 0;
  run++;
});

/** The service's layout: the remote cache under the registry cache prefix of the reports bucket;
 * a fresh prefix per test. */
function sharedCache(): PrefixedObjectStore {
  return new PrefixedObjectStore(
    new S3ObjectStore({ bucket: BUCKET, client: s3.client() }),
    `run-${run}/reports/cache/registry/`,
  );
}

function call(source: string): string {
  return lines('module "net" {', `  source = "${source}"`, '}');
}

function scanAs(
  tenant: string,
  source: string,
  cache: PrefixedObjectStore,
  mutableTtlMs = 60_000,
): Promise<Report> {
  return scanFiles(
    { 'main.tf': call(source) },
    {
      remoteModules: true,
      configText: {
        name: 'ops.hcl',
        text: `module_hosts = { "github.com" = "${host.url}", "modules.example.com" = "${host.url}" }\n`,
      },
      remoteModuleCache: cache,
      remoteModuleTenant: tenant,
      remoteModuleSettings: { timeoutMs: 2000, retries: 0, mutableTtlMs },
    },
  );
}

/** The aws constraints the remote module states, or its unresolved reason. */
function seen(report: Report): string {
  const m = report.roots[0]?.remoteModuleTree?.[0];
  if (m === undefined) return 'no remote module';
  if (m.origin === null) return `unresolved: ${m.unresolved ?? ''}`;
  return m.providers.map((p) => `${p.source} ${p.constraints.join(', ')}`).join('; ');
}

const AWS5 = 'registry.terraform.io/hashicorp/aws >= 5.0';
const AWS6 = 'registry.terraform.io/hashicorp/aws >= 6.0';

describe('mutable references are kept per repository and briefly', () => {
  it.each([
    ['a branch', 'git::https://github.com/acme/net.git?ref=main', '/acme/net/archive/main.tar.gz', true],
    ['a tag (tags can be moved)', 'github.com/acme/net?ref=v1.0.0', '/acme/net/archive/v1.0.0.tar.gz', true],
    [
      'no ref (the default branch)',
      'git::https://github.com/acme/net.git',
      '/acme/net/archive/HEAD.tar.gz',
      true,
    ],
    ['an HTTP archive without checksum', 'https://modules.example.com/net.tar.gz', '/net.tar.gz', false],
  ])('%s: what one repository fetched first is not what another sees', async (_what, source, path, git) => {
    const cache = sharedCache();
    // The attacker's repository scans while the reference points at its content.
    host.files.set(path, git ? await gitArchive(pkg('>= 6.0')) : await makeTarGz(pkg('>= 6.0')));
    expect(seen(await scanAs('repository acme/attacker', source, cache))).toBe(AWS6);
    // It moves back; the victim's scan asks the host again and sees what is there now.
    host.files.set(path, git ? await gitArchive(pkg('>= 5.0')) : await makeTarGz(pkg('>= 5.0')));
    host.requests.length = 0;
    expect(seen(await scanAs('repository acme/victim', source, cache))).toBe(AWS5);
    expect(host.requests.map((r) => r.split('?')[0])).toEqual([path]);
    // Within the lifetime, a repository's rescan reuses its own answer (no request)...
    host.requests.length = 0;
    expect(seen(await scanAs('repository acme/attacker', source, cache))).toBe(AWS6);
    expect(seen(await scanAs('repository acme/victim', source, cache))).toBe(AWS5);
    expect(host.requests).toEqual([]);
    // ...and once it is over, asks again.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen(await scanAs('repository acme/attacker', source, cache, 10))).toBe(AWS5);
    expect(host.requests.map((r) => r.split('?')[0])).toEqual([path]);
  });
});

describe('immutable identities are shared', () => {
  it('a full commit SHA: the second repository sends no request', async () => {
    const cache = sharedCache();
    const source = `git::https://github.com/acme/net.git?ref=${SHA}`;
    host.files.set(`/acme/net/archive/${SHA}.tar.gz`, await gitArchive(pkg('>= 5.0')));
    expect(seen(await scanAs('repository acme/one', source, cache))).toBe(AWS5);
    expect(host.requests).toHaveLength(1);
    host.requests.length = 0;
    expect(seen(await scanAs('repository acme/two', source, cache))).toBe(AWS5);
    expect(host.requests).toEqual([]);
  });

  it('a checksummed archive is checked, shared once it matches, and refused when it does not', async () => {
    const good = await makeTarGz(pkg('>= 5.0'));
    const sum = createHash('sha256').update(good).digest('hex');
    const cache = sharedCache();
    for (const checksum of [`sha256:${sum}`, sum]) {
      const source = `https://modules.example.com/net.tar.gz?checksum=${checksum}`;
      // Someone else's bytes at that URL first: refused (as terraform init refuses them), not kept.
      host.files.set('/net.tar.gz', await makeTarGz(pkg('>= 6.0')));
      host.requests.length = 0;
      const refused = await scanAs('repository acme/attacker', source, cache);
      expect(seen(refused)).toMatch(
        /^unresolved: the package .* does not match its checksum: sha256 [0-9a-f]{64}/,
      );
      expect(findingsOf(refused, 'module-unresolved')).toHaveLength(1);
      // The checksum is taken off the URL before the request, as go-getter does.
      expect(host.requests).toEqual(['/net.tar.gz']);
      host.files.set('/net.tar.gz', good);
      expect(seen(await scanAs('repository acme/one', source, cache))).toBe(AWS5);
      host.requests.length = 0;
      host.files.delete('/net.tar.gz');
      expect(seen(await scanAs('repository acme/two', source, cache))).toBe(AWS5);
      expect(host.requests).toEqual([]);
    }
  });

  it('checksums tfguard cannot check leave the module unresolved, saying why', async () => {
    const cache = sharedCache();
    for (const [checksum, reason] of [
      ['file:https://modules.example.com/SHA256SUMS', 'checksum files (checksum=file:...) are not fetched'],
      ['sha256:abc', 'the sha256 checksum "abc" has the wrong length'],
      ['crc32:00000000', 'checksums of type "crc32" are not supported'],
    ]) {
      const report = await scanAs(
        'repository acme/one',
        `https://modules.example.com/net.tar.gz?checksum=${checksum}`,
        cache,
      );
      expect(seen(report)).toContain(reason);
    }
    expect(host.requests).toEqual([]);
  });
});

describe('failures are never kept', () => {
  it('a package whose files did not parse is fetched again by the next scan', async () => {
    const cache = sharedCache();
    const source = `git::https://github.com/acme/net.git?ref=${SHA}`;
    const path = `/acme/net/archive/${SHA}.tar.gz`;
    host.files.set(path, await gitArchive({ 'main.tf': 'terraform {\n  required_providers {\n' }));
    expect(seen(await scanAs('repository acme/one', source, cache))).toMatch(
      /^unresolved: its files do not parse/,
    );
    host.files.set(path, await gitArchive(pkg('>= 5.0')));
    host.requests.length = 0;
    expect(seen(await scanAs('repository acme/one', source, cache))).toBe(AWS5);
    expect(host.requests).toEqual([path]);
  });

  it('a host that failed is asked again', async () => {
    const cache = sharedCache();
    const source = `git::https://github.com/acme/net.git?ref=${SHA}`;
    expect(seen(await scanAs('repository acme/one', source, cache))).toMatch(/answered 404/);
    host.files.set(`/acme/net/archive/${SHA}.tar.gz`, await gitArchive(pkg('>= 5.0')));
    expect(seen(await scanAs('repository acme/one', source, cache))).toBe(AWS5);
  });
});
