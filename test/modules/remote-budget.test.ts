/**
 * Budgets of remote resolution: one archive with one module call made tfguard download
 * 1,743–1,823 packages, up to 524 at once. A hostile git host on 127.0.0.1 serves, for every ref, a
 * package that calls six more packages at new refs (a tree as large as the 2,000-module limit
 * allows); the host counts what it receives, and the bounds must hold there: requests and
 * downloads per scan, requests in flight over the whole process.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Report } from '../../src/report/types';
import type { ScanOptions } from '../../src/scan/types';
import { lines } from '../support/rule-table';
import { makeTarGz } from '../support/archive';
import { cli } from '../support/cli';
import { findingsOf, scanFiles } from '../support/scan';

const FAN_OUT = 6;

interface HostileHost {
  url: string;
  /** Requests received. */
  total: number;
  /** Most requests in flight at once. */
  peak: number;
  reset(): void;
  close(): Promise<void>;
}

/** `/acme/evil/archive/<ref>.tar.gz`: a package whose module calls `FAN_OUT` refs `<ref>a`, ... */
async function startHostileHost(delayMs: number): Promise<HostileHost> {
  let inFlight = 0;
  const host = {
    url: '',
    total: 0,
    peak: 0,
    reset() {
      host.total = 0;
      host.peak = 0;
    },
    close: async () => undefined as void,
  };
  const server: Server = createServer((req, res) => {
    host.total++;
    inFlight++;
    host.peak = Math.max(host.peak, inFlight);
    const m = /^\/acme\/evil\/archive\/([A-Za-z0-9]+)\.tar\.gz$/.exec(req.url ?? '');
    const done = (status: number, body?: Buffer): void => {
      setTimeout(() => {
        inFlight--;
        res.writeHead(status, { 'content-type': 'application/gzip' }).end(body);
      }, delayMs);
    };
    if (m === null) return done(404);
    const ref = m[1] as string;
    const calls = Array.from({ length: FAN_OUT }, (_, i) =>
      lines(
        `module "m${i}" {`,
        `  source = "git::https://github.com/acme/evil.git?ref=${ref}${String.fromCharCode(97 + i)}"`,
        '}',
      ),
    ).join('');
    void makeTarGz({ [`evil-${ref}/main.tf`]: calls }).then((body) => done(200, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  host.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return host;
}

let host: HostileHost;

beforeAll(async () => {
  host = await startHostileHost(15);
});

afterAll(async () => {
  await host?.close();
});

beforeEach(() => host.reset());

function scanHostile(settings: ScanOptions['remoteModuleSettings'] = {}, ref = 'r'): Promise<Report> {
  return scanFiles(
    { 'main.tf': lines('module "evil" {', `  source = "github.com/acme/evil?ref=${ref}"`, '}') },
    {
      remoteModules: true,
      configText: { name: 'ops.hcl', text: `module_hosts = { "github.com" = "${host.url}" }\n` },
      remoteModuleSettings: { timeoutMs: 5000, retries: 0, ...settings },
    },
  );
}

function unresolvedReasons(report: Report): string[] {
  return (report.roots[0]?.remoteModuleTree ?? [])
    .filter((m) => m.origin === null)
    .map((m) => m.unresolved ?? '');
}

test('the download budget bounds what one module call fetches, and says so in notices', async () => {
  const report = await scanHostile({ maxDownloads: 25, maxConcurrent: 4 });
  expect(host.total).toBeLessThanOrEqual(25);
  expect(host.total).toBeGreaterThan(4);
  expect(host.peak).toBeLessThanOrEqual(4);
  const tree = report.roots[0]?.remoteModuleTree ?? [];
  expect(tree.filter((m) => m.origin === 'download')).toHaveLength(host.total);
  const reasons = unresolvedReasons(report);
  expect(reasons.length).toBeGreaterThan(0);
  for (const r of reasons) {
    expect(r).toContain(
      "was not downloaded: the scan's budget of 25 package downloads for remote modules is spent (TFGUARD_REMOTE_MAX_DOWNLOADS)",
    );
  }
  // One module-unresolved notice per module left unresolved: the report is complete and says what
  // was not checked.
  expect(findingsOf(report, 'module-unresolved')).toHaveLength(reasons.length);
});

test('the request budget counts every request sent', async () => {
  const report = await scanHostile({ maxRequests: 10, maxDownloads: 1000 });
  expect(host.total).toBe(10);
  const reasons = unresolvedReasons(report);
  expect(reasons.length).toBeGreaterThan(0);
  expect(
    reasons.every((r) => r.includes("the scan's budget of 10 requests for remote modules is spent")),
  ).toBe(true);
});

test('the defaults hold against the fan-out the issue measured (1,743 downloads, 524 at once)', async () => {
  const report = await scanHostile();
  expect(host.total).toBeLessThanOrEqual(200);
  expect(host.peak).toBeLessThanOrEqual(8);
  expect(unresolvedReasons(report)[0]).toContain('budget of 200 package downloads');
});

test('the concurrency limit is shared by every scan of the process', async () => {
  const reports = await Promise.all(
    ['p', 'q', 's'].map((ref) => scanHostile({ maxDownloads: 12, maxConcurrent: 3 }, ref)),
  );
  expect(host.peak).toBeLessThanOrEqual(3);
  expect(host.total).toBeLessThanOrEqual(36);
  for (const report of reports) expect(unresolvedReasons(report).length).toBeGreaterThan(0);
});

describe('the operator sets them (src/config.ts): the CLI', () => {
  const VARIABLES = ['TFGUARD_REMOTE_MAX_DOWNLOADS', 'TFGUARD_REMOTE_MAX_CONCURRENCY', 'TFGUARD_CACHE_DIR'];
  let dir: string;
  let saved: Record<string, string | undefined>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tfguard-budget-'));
    await writeFile(join(dir, 'ops.hcl'), `module_hosts = { "github.com" = "${host.url}" }\n`);
    await writeFile(
      join(dir, 'a.tar.gz'),
      await makeTarGz({
        'main.tf': lines('module "evil" {', '  source = "github.com/acme/evil?ref=c"', '}'),
      }),
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    saved = Object.fromEntries(VARIABLES.map((v) => [v, process.env[v]]));
  });
  afterEach(() => {
    for (const v of VARIABLES) {
      if (saved[v] === undefined) delete process.env[v];
      else process.env[v] = saved[v];
    }
  });

  test('TFGUARD_REMOTE_MAX_DOWNLOADS and _CONCURRENCY bound `tfguard scan --remote-modules`', async () => {
    Object.assign(process.env, {
      TFGUARD_REMOTE_MAX_DOWNLOADS: '5',
      TFGUARD_REMOTE_MAX_CONCURRENCY: '2',
      TFGUARD_CACHE_DIR: join(dir, 'cache'),
    });
    const run = await cli([
      'scan',
      '--remote-modules',
      '--config',
      join(dir, 'ops.hcl'),
      '--format',
      'json',
      join(dir, 'a.tar.gz'),
    ]);
    expect(run.stderr).toBe('');
    expect(host.total).toBe(5);
    expect(host.peak).toBeLessThanOrEqual(2);
    const report = JSON.parse(run.stdout) as Report;
    expect(findingsOf(report, 'module-unresolved')[0]?.message).toContain(
      "the scan's budget of 5 package downloads for remote modules is spent (TFGUARD_REMOTE_MAX_DOWNLOADS)",
    );
  });

  test('an unusable value is a usage error naming the variable', async () => {
    process.env.TFGUARD_REMOTE_MAX_DOWNLOADS = 'many';
    const run = await cli(['scan', '--remote-modules', join(dir, 'a.tar.gz')]);
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'tfguard: environment variable TFGUARD_REMOTE_MAX_DOWNLOADS must be a positive integer, got "many"\n',
    });
    expect(host.total).toBe(0);
  });
});
