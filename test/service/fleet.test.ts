/**
 * The fleet data and page (src/service/fleet.ts, fleet-html.ts): "behind" figures in Terraform's
 * version order, the registry's newest release through the real registry client and a registry on
 * 127.0.0.1, the comparison with previous fleet data (stored, or `tfguard audit --previous FILE`),
 * and archive text escaped for HTML. The page in a real browser: test/service/fleet-browser.test.ts.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { behind, buildFleet, newestOf, parseFleetData, type FleetData } from '../../src/service/fleet';
import { FLEET_CSP, renderFleetHtml } from '../../src/service/fleet-html';
import { runLocalAudit, type LocalArchive } from '../../src/service/local-audit';
import { buildSummary, type RepositoryEntry } from '../../src/service/summary';
import { LocalObjectStore } from '../../src/storage/local';
import { makeTarGz } from '../support/archive';
import { cli } from '../support/cli';
import { generateTestKey, startRegistry, type RegistryServer } from '../support/registry-server';
import fleetSchema from '../../docs/fleet.schema.json';

/** The docs/fleet.schema.json errors of `data` (empty when it conforms). */
function schemaErrors(data: unknown): unknown[] {
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  const validate = ajv.compile(fleetSchema);
  validate(data);
  return validate.errors ?? [];
}

let dir: string;
let reg: RegistryServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tfguard-fleet-'));
  reg = await startRegistry({
    signingKey: await generateTestKey('Fleet Registry'),
    releases: ['1.0.0', '1.2.0', '1.3.0', '2.0.0', '2.1.0-beta1'].map((version) => ({
      namespace: 'acme',
      type: 'cloud',
      version,
      platforms: ['linux_amd64'],
    })),
  });
});
afterAll(async () => {
  await reg?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('behind', () => {
  test.each([
    // locked, newest, reference, expected
    ['5.31.0', '5.40.0', ['5.31.0', '5.40.0'], { releases: 1, majors: 0, minors: 9 }],
    ['4.67.0', '5.40.0', ['4.67.0', '5.31.0', '5.40.0'], { releases: 2, majors: 1, minors: null }],
    ['5.40.0', '5.40.0', ['5.40.0'], { releases: 0, majors: 0, minors: 0 }],
    ['3.6.0', '3.6.2', ['3.6.0', '3.6.1', '3.6.2', '3.7.0'], { releases: 2, majors: 0, minors: 0 }],
    // Terraform reads "1.2" as 1.2.0: not behind 1.2.0.
    ['1.2', '1.2.0', ['1.2.0'], { releases: 0, majors: 0, minors: 0 }],
    // Pre-releases are not counted as releases; the newest always is.
    ['1.0.0', '1.1.0', ['1.1.0-beta', '1.1.0-rc1', '1.1.0'], { releases: 1, majors: 0, minors: 1 }],
    // Newer than the "newest" (a version only one repository has, say): nothing behind.
    ['2.0.0', '1.9.0', ['1.9.0'], { releases: 0, majors: 0, minors: 0 }],
    // What Terraform cannot read is never called behind.
    ['not-a-version', '1.0.0', ['1.0.0'], { releases: 0, majors: 0, minors: 0 }],
  ] as const)('%s against %s', (locked, newest, reference, expected) => {
    expect(behind(locked, newest, reference)).toEqual({ newest, ...expected });
  });

  test('the newest is a release unless only pre-releases are known, in Terraform order', () => {
    expect(newestOf(['1.9.0', '1.10.0', '1.11.0-beta1'])).toBe('1.10.0');
    expect(newestOf(['2.0.0-alpha', '2.0.0-beta'])).toBe('2.0.0-beta');
    expect(newestOf([])).toBeNull();
  });
});

function entry(repository: string, locks: Record<string, string[]>, extra: Partial<RepositoryEntry> = {}) {
  return {
    repository,
    status: 'scanned',
    scanId: null,
    counts: { error: 0, warning: 0, notice: 0, total: 0 },
    compared: false,
    new: [],
    fixed: [],
    locks,
    rules: {},
    reason: null,
    ...extra,
  } satisfies RepositoryEntry;
}

const run = {
  runId: '20250101T030000000Z-aaaaaaaa',
  startedAt: '2025-01-01T03:00:00.000Z',
  previousRunId: null,
};

test('archive text is escaped for HTML, and the CSP names the inline style and script by hash', () => {
  const hostile = '<img src=x onerror=alert(1)>"\'&\u202e';
  const summary = buildSummary(run, [
    entry(
      hostile,
      { 'registry.terraform.io/hashicorp/aws': ['5.0.0'] },
      {
        requiredVersions: [{ constraint: '>= 1.5 <script>', modules: 1 }],
        moduleVersions: [{ source: 'acme/<b>x</b>/aws', version: '"1.0"', calls: 1 }],
        policy: [
          {
            ruleId: 'policy-provider-denied',
            severity: 'error',
            module: '.',
            file: 'main.tf',
            line: 3,
            message: 'denied: </td><script>alert(2)</script>',
          },
        ],
      },
    ),
    entry('org/ok', { 'registry.terraform.io/hashicorp/aws': ['5.1.0'] }),
  ]);
  const html = renderFleetHtml(buildFleet(summary, { registry: null, previous: null }));
  expect(html).not.toContain('<img');
  expect(html).not.toContain('<b>x');
  expect(html).not.toContain('<script>alert');
  expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;\\u202e');
  expect(html).toContain('denied: &lt;/td&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
  expect(html).toContain('<code>main.tf:3</code>');
  // Exactly one script and one style, each allowed by its hash and by nothing else.
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  expect(scripts).toHaveLength(1);
  expect(styles).toHaveLength(1);
  const hash = (s: string) => createHash('sha256').update(s).digest('base64');
  expect(FLEET_CSP).toContain(`script-src 'sha256-${hash(scripts[0]!)}'`);
  expect(FLEET_CSP).toContain(`style-src 'sha256-${hash(styles[0]!)}'`);
  expect(FLEET_CSP).toMatch(/^default-src 'none';/);
  // No tag has a style or event-handler attribute (the CSP would block them) or a URL.
  const tags = html.match(/<[a-z][^>]*>/gi) ?? [];
  expect(tags.length).toBeGreaterThan(50);
  expect(tags.filter((t) => /\sstyle=|\son[a-z]+=|(?:src|href)="(?!#)/i.test(t))).toEqual([]);
});

test('previous fleet data that is not fleet data is refused with what is wrong', () => {
  expect(() => parseFleetData('{', 'x.json')).toThrow(/x\.json is not JSON/);
  expect(() => parseFleetData('{"kind":"other"}', 'x.json')).toThrow(/not tfguard fleet data/);
  expect(() => parseFleetData('{"kind":"tfguard-fleet","schemaVersion":2}', 'x.json')).toThrow(
    /schemaVersion 2; this tfguard reads 1/,
  );
  expect(() =>
    parseFleetData(
      '{"kind":"tfguard-fleet","schemaVersion":1,"runId":"r","startedAt":"s","repositories":[{}]}',
      'x.json',
    ),
  ).toThrow(/lacks repository, status, counts or locks/);
});

const cloudLock = (version: string) => `provider "registry.example.test/acme/cloud" {
  version     = "${version}"
  constraints = "~> 1.0"
  hashes = [
    "h1:ltxyuBWIy9cq0kIKDJH1jeWJy/y7XJLjS4QrsQK4plA=",
  ]
}
`;
const cloudRoot = `terraform {
  required_version = "~> 1.9"
  required_providers {
    cloud = { source = "registry.example.test/acme/cloud", version = "~> 1.0" }
  }
}
module "net" {
  source  = "acme/net/cloud"
  version = "~> 3.1"
}
`;

async function archive(repository: string, files: Record<string, string>): Promise<LocalArchive> {
  const bytes = await makeTarGz(files);
  return { repository, name: `${repository.replace(/\//g, '_')}.tar.gz`, read: async () => bytes };
}

test("with the registry check, each repository is also measured against the registry's newest release", async () => {
  const store = new LocalObjectStore(join(dir, 'registry'));
  const result = await runLocalAudit(
    [
      await archive('org/new', { 'main.tf': cloudRoot, '.terraform.lock.hcl': cloudLock('1.2.0') }),
      await archive('org/old', { 'main.tf': cloudRoot, '.terraform.lock.hcl': cloudLock('1.0.0') }),
    ],
    store,
    {
      registry: true,
      scanOptions: { config: { registryHosts: { 'registry.example.test': reg.url } } },
      now: new Date('2025-04-01T00:00:00Z'),
    },
  );
  const fleet = result.fleet!;
  const source = 'registry.example.test/acme/cloud';
  expect(fleet.registry).toBe(true);
  // 2.1.0-beta1 is published but a pre-release: the newest release is 2.0.0.
  expect(fleet.providers).toEqual([
    expect.objectContaining({
      source,
      newest: '1.2.0',
      registry: { status: 'ok', newest: '2.0.0', releases: 4 },
      behind: 1,
    }),
  ]);
  const lockOf = (repository: string) =>
    fleet.repositories.find((r) => r.repository === repository)!.locks[0];
  expect(lockOf('org/new')).toEqual({
    source,
    versions: ['1.2.0'],
    oldest: '1.2.0',
    fleet: { newest: '1.2.0', releases: 0, majors: 0, minors: 0 },
    registry: { newest: '2.0.0', releases: 2, majors: 1, minors: null },
  });
  expect(lockOf('org/old')!.fleet).toEqual({ newest: '1.2.0', releases: 1, majors: 0, minors: 2 });
  expect(lockOf('org/old')!.registry).toEqual({ newest: '2.0.0', releases: 3, majors: 1, minors: null });
  expect(fleet.repositories[0]!.moduleVersions).toEqual([
    { source: 'acme/net/cloud', version: '~> 3.1', calls: 1 },
  ]);
  expect(fleet.requiredVersions).toEqual([
    { constraint: '~> 1.9', repositories: ['org/new', 'org/old'], modules: 2 },
  ]);
  const html = (await store.get(result.keys.fleetHtml))!.body.toString('utf8');
  expect(html).toContain('Registry newest');
  expect(html).toContain('1 major behind</span> <span class="sub">3 newer releases</span>');
  // The stored data is what the function returned, and what docs/fleet.schema.json says.
  expect(JSON.parse((await store.get(result.keys.fleetJson))!.body.toString('utf8'))).toEqual(fleet);
  expect(schemaErrors(fleet)).toEqual([]);
  // The schema is not vacuous.
  expect(schemaErrors({ ...fleet, providers: [{ ...fleet.providers[0], behind: -1 }] })).not.toEqual([]);
  expect(
    schemaErrors({
      ...fleet,
      repositories: [
        { ...fleet.repositories[0], locks: [{ ...fleet.repositories[0]!.locks[0], fleet: {} }] },
      ],
    }),
  ).not.toEqual([]);
});

test('a registry that does not answer leaves the newest release unknown, with why', async () => {
  const store = new LocalObjectStore(join(dir, 'unreachable'));
  const result = await runLocalAudit(
    [await archive('org/one', { 'main.tf': cloudRoot, '.terraform.lock.hcl': cloudLock('1.2.0') })],
    store,
    {
      registry: true,
      // Port 9 on 127.0.0.1 (discard): nothing listens; connections are refused at once.
      scanOptions: { config: { registryHosts: { 'registry.example.test': 'http://127.0.0.1:9/' } } },
      now: new Date('2025-04-01T00:00:00Z'),
    },
  );
  expect(result.fleet!.providers[0]!.registry).toEqual({ status: 'unavailable', reason: expect.any(String) });
  expect(result.fleet!.repositories[0]!.locks[0]!.registry).toBeNull();
  const html = (await store.get(result.keys.fleetHtml))!.body.toString('utf8');
  expect(html).toContain('<span class="sub">not known</span>');
});

test('tfguard audit --format html --output writes the page; --previous compares with given fleet data', async () => {
  const archives = join(dir, 'cli-archives');
  await rm(archives, { recursive: true, force: true });
  await import('node:fs/promises').then((fs) => fs.mkdir(archives, { recursive: true }));
  const write = async (name: string, version: string) =>
    writeFile(
      join(archives, name),
      await makeTarGz({ 'main.tf': cloudRoot, '.terraform.lock.hcl': cloudLock(version) }),
    );
  await write('alpha.tar.gz', '1.0.0');
  await write('beta.tar.gz', '1.2.0');
  const store = join(dir, 'cli-store');
  const page = join(dir, 'fleet.html');
  const first = await cli(['audit', archives, '--store', store, '--format', 'html', '--output', page]);
  expect(first).toMatchObject({ code: 0, stdout: '' });
  const html = await readFile(page, 'utf8');
  expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
  expect(html).toContain('1.0.0');
  expect(html).toContain('2 minor behind');
  const data = join(store, 'reports', 'fleet', 'index.json');
  const previous: FleetData = parseFleetData(await readFile(data, 'utf8'), data);
  expect(previous.changes).toBeNull();

  // alpha moves to 1.2.0; beta disappears; gamma is new.
  await write('alpha.tar.gz', '1.2.0');
  await rm(join(archives, 'beta.tar.gz'));
  await write('gamma.tar.gz', '1.2.0');
  const saved = join(dir, 'previous.json');
  await writeFile(saved, JSON.stringify(previous));
  // A fresh store: only --previous knows the earlier audit.
  const second = await cli([
    'audit',
    archives,
    '--store',
    join(dir, 'cli-store-2'),
    '--format',
    'html',
    '--previous',
    saved,
  ]);
  expect(second.code).toBe(0);
  expect(second.stdout).toContain(`Fleet compared with audit <code>${previous.runId}</code>`);
  expect(second.stdout).toContain('1 repository added (gamma), 1 removed (beta), 1 lock change.');
  const stored = JSON.parse(
    await readFile(join(dir, 'cli-store-2', 'reports', 'fleet', 'index.json'), 'utf8'),
  );
  expect(stored.changes).not.toBeNull();
  expect(schemaErrors(stored)).toEqual([]);
  expect(second.stdout).toMatch(
    /<code>1\.0\.0<\/code><\/td><td><code>1\.2\.0<\/code><\/td><td><span class="badge b-ok">upgrade/,
  );

  const bad = join(dir, 'bad.json');
  await writeFile(bad, '{"kind":"something else"}');
  const refused = await cli(['audit', archives, '--store', join(dir, 'cli-store-3'), '--previous', bad]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(`--previous ${bad} is not tfguard fleet data`);
  const missing = await cli(['audit', archives, '--previous', join(dir, 'nope.json')]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('cannot read --previous');
}, 120_000);
