/**
 * The CLI's extraction cache on disk (src/cli/extract-cache.ts): real tarballs and a real git
 * checkout scanned through `runCli` with the filesystem store, twice; what the second scan read and
 * wrote is observed on the store itself (the reports must be byte-identical to a scan without it).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { evictExtractionCache } from '../../src/cli/extract-cache';
import { LocalObjectStore } from '../../src/storage/local';
import { cli } from '../support/cli';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const DEMO = path.join(ROOT, 'examples/platform-demo.tar.gz');
const DAY = 24 * 3600 * 1000;

let tmp: string;
let n = 0;
const saved = { ...process.env };
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-xcache-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});
let cacheDir: string;
beforeEach(() => {
  cacheDir = path.join(tmp, `cache-${n++}`);
  process.env.TFGUARD_CACHE_DIR = cacheDir;
  delete process.env.TFGUARD_EXTRACT_CACHE; // the default: on
});
afterEach(() => {
  jest.restoreAllMocks();
  process.env = { ...saved };
});

/** Every file under `dir`, relative, sorted (none when it does not exist). */
async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    const entries = await fs.readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  await walk(dir);
  return out.sort();
}

const manifests = async (kind: 'archives' | 'lineage'): Promise<string[]> =>
  (await files(path.join(cacheDir, 'extract'))).filter((f) => f.includes(`/${kind}/`) && !f.startsWith('.'));

/** The store's reads and writes of extraction manifests during `fn`. */
async function observe<T>(fn: () => Promise<T>): Promise<{ value: T; hits: string[]; puts: string[] }> {
  const hits: string[] = [];
  const puts: string[] = [];
  const get = LocalObjectStore.prototype.get;
  const put = LocalObjectStore.prototype.put;
  jest.spyOn(LocalObjectStore.prototype, 'get').mockImplementation(async function (
    this: LocalObjectStore,
    key,
  ) {
    const object = await get.call(this, key);
    if (object !== null && key.startsWith('extract/')) hits.push(key);
    return object;
  });
  jest.spyOn(LocalObjectStore.prototype, 'put').mockImplementation(async function (
    this: LocalObjectStore,
    key,
    body,
    options,
  ) {
    if (key.startsWith('extract/')) puts.push(key);
    return put.call(this, key, body, options);
  });
  const value = await fn();
  jest.restoreAllMocks();
  return { value, hits, puts };
}

const JSON_ARGS = ['--format', 'json', '--fail-on', 'never'];

describe('tfguard scan with the extraction cache', () => {
  it('keeps what a scan parsed; the rescan reads it, writes nothing and reports the same bytes', async () => {
    const plain = await cli(['scan', DEMO, ...JSON_ARGS, '--no-cache']);
    const first = await observe(() => cli(['scan', DEMO, ...JSON_ARGS]));
    expect(first.hits).toEqual([]);
    expect(first.puts).toHaveLength(1); // the archive's manifest; an archive has no lineage
    expect(await manifests('archives')).toHaveLength(1);
    expect(await manifests('lineage')).toEqual([]);
    const second = await observe(() => cli(['scan', DEMO, ...JSON_ARGS]));
    expect(second.hits).toEqual(first.puts);
    expect(second.puts).toEqual([]);
    expect(first.value).toEqual(plain);
    expect(second.value).toEqual(plain);
    expect(plain.code).toBe(0);
    // Created private: manifests hold what the configuration files say.
    expect((await fs.stat(cacheDir)).mode & 0o777).toBe(0o700);
    expect((await fs.stat(path.join(cacheDir, 'extract'))).mode & 0o777).toBe(0o700);
  });

  it('--no-cache and TFGUARD_EXTRACT_CACHE=off write nothing', async () => {
    const r = await cli(['scan', DEMO, ...JSON_ARGS, '--no-cache']);
    expect(r.code).toBe(0);
    process.env.TFGUARD_EXTRACT_CACHE = 'off';
    expect(await cli(['scan', DEMO, ...JSON_ARGS])).toEqual(r);
    await expect(fs.stat(cacheDir)).rejects.toThrow(/ENOENT/);
  });

  it('--cache-dir places it (without --remote-modules), unless it is off', async () => {
    const other = path.join(tmp, `flag-${n}`);
    expect((await cli(['scan', DEMO, ...JSON_ARGS, '--cache-dir', other])).code).toBe(0);
    expect((await files(path.join(other, 'extract'))).some((f) => f.includes('/archives/'))).toBe(true);
    await expect(fs.stat(cacheDir)).rejects.toThrow(/ENOENT/);
    const r = await cli(['scan', DEMO, '--no-cache', '--cache-dir', other]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--cache-dir is used only with --remote-modules or the extraction cache');
  });

  it('a bad TFGUARD_EXTRACT_CACHE is a usage error naming it', async () => {
    process.env.TFGUARD_EXTRACT_CACHE = 'sometimes';
    const r = await cli(['scan', DEMO]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('TFGUARD_EXTRACT_CACHE must be "on" or "off"');
  });

  it('scans as without it when the cache directory cannot be created', async () => {
    const plain = await cli(['scan', DEMO, ...JSON_ARGS, '--no-cache']);
    await fs.writeFile(cacheDir, 'a file in the way');
    expect(await cli(['scan', DEMO, ...JSON_ARGS])).toEqual(plain);
    await fs.rm(cacheDir);
    // ... or only the extract/ subdirectory.
    await fs.mkdir(cacheDir);
    await fs.writeFile(path.join(cacheDir, 'extract'), '');
    expect(await cli(['scan', DEMO, ...JSON_ARGS])).toEqual(plain);
  });

  it('scans as without it when a manifest is corrupt, and writes a good one again', async () => {
    const plain = await cli(['scan', DEMO, ...JSON_ARGS, '--no-cache']);
    await cli(['scan', DEMO, ...JSON_ARGS]);
    const [manifest] = await manifests('archives');
    const file = path.join(cacheDir, 'extract', manifest as string);
    const good = await fs.readFile(file);
    await fs.writeFile(file, Buffer.concat([good.subarray(0, 40), Buffer.from('not gzip')]));
    const again = await observe(() => cli(['scan', DEMO, ...JSON_ARGS]));
    expect(again.value).toEqual(plain);
    expect(again.hits).toEqual([manifest]); // read, rejected ...
    expect(again.puts).toEqual([manifest]); // ... and replaced
    expect(await fs.readFile(file)).toEqual(good);
  });

  it('scans as without it when the store cannot be written', async () => {
    const plain = await cli(['scan', DEMO, ...JSON_ARGS, '--no-cache']);
    // The store's temporary directory is a file: every write fails (root ignores permissions).
    await fs.mkdir(path.join(cacheDir, 'extract', '.tfguard'), { recursive: true });
    await fs.writeFile(path.join(cacheDir, 'extract', '.tfguard', 'tmp'), '');
    expect(await cli(['scan', DEMO, ...JSON_ARGS])).toEqual(plain);
    expect(await manifests('archives')).toEqual([]);
  });

  it('a directory in a git repository uses the work tree as lineage: a new commit reuses it', async () => {
    const repo = path.join(tmp, `repo-${n}`);
    await fs.mkdir(path.join(repo, 'live'), { recursive: true });
    await run('tar', ['-xzf', DEMO, '-C', path.join(repo, 'live')]);
    await run('git', ['init', '-q', repo]);
    const first = await observe(() => cli(['scan', path.join(repo, 'live'), ...JSON_ARGS]));
    expect(first.hits).toEqual([]);
    const lineageName = `directory:${await fs.realpath(repo)}`;
    const lineageKey = first.puts.find((k) => k.includes('/lineage/'));
    expect(lineageKey).toMatch(
      new RegExp(`/lineage/${createHash('sha256').update(lineageName).digest('hex')}\\.json\\.gz$`),
    );
    // A new file: the archive differs, the lineage's manifest serves every unchanged file.
    await fs.writeFile(
      path.join(repo, 'live', 'extra.tf'),
      'terraform {\n  required_version = ">= 1.5"\n}\n',
    );
    const second = await observe(() => cli(['scan', path.join(repo, 'live'), ...JSON_ARGS]));
    expect(second.hits).toEqual([lineageKey]);
    expect(second.value).toEqual(await cli(['scan', path.join(repo, 'live'), ...JSON_ARGS, '--no-cache']));
  });

  it('tfguard fix --dry-run uses it with the same output', async () => {
    const dir = path.join(tmp, `fix-${n}`);
    await fs.mkdir(dir);
    await run('tar', ['-xzf', DEMO, '-C', dir]);
    const plain = await cli(['fix', dir, '--dry-run', '--no-cache']);
    // The demo's fixes change constraints, so fix scans the edited files once more.
    expect(plain.stdout).toContain('+++ b/');
    const first = await observe(() => cli(['fix', dir, '--dry-run']));
    expect(first.puts.length).toBeGreaterThan(0);
    const written = await manifests('archives');
    const bytes = await fs.readFile(path.join(cacheDir, 'extract', written[0] as string));
    // Only the files as they are on disk are kept: the scan of the edited bytes (which a dry run
    // never writes) neither reads the manifests again nor replaces them with its few new entries.
    const second = await observe(() => cli(['fix', dir, '--dry-run']));
    expect(second.hits.length).toBeGreaterThan(0);
    expect(second.puts).toEqual([]);
    expect(await manifests('archives')).toEqual(written);
    expect(await fs.readFile(path.join(cacheDir, 'extract', written[0] as string))).toEqual(bytes);
    const scan = await observe(() => cli(['scan', dir, ...JSON_ARGS]));
    expect(scan.puts).toEqual([]);
    expect(scan.value).toEqual(await cli(['scan', dir, ...JSON_ARGS, '--no-cache']));
    expect(first.value).toEqual(plain);
    expect(second.value).toEqual(plain);
  });
});

describe('evictExtractionCache', () => {
  /** Two manifests: one used `ageDays` ago, one just now. */
  async function twoManifests(ageDays: number): Promise<{ old: string; fresh: string }> {
    await cli(['scan', DEMO, ...JSON_ARGS]);
    const [fresh] = await manifests('archives');
    const freshFile = path.join(cacheDir, 'extract', fresh as string);
    const old = (fresh as string).replace(/[0-9a-f]{64}/, 'a'.repeat(64));
    const oldFile = path.join(cacheDir, 'extract', old);
    await fs.copyFile(freshFile, oldFile);
    const then = new Date(Date.now() - ageDays * DAY);
    await fs.utimes(oldFile, then, then);
    return { old, fresh: fresh as string };
  }

  it('removes manifests not used for 7 days, at most once a day', async () => {
    const { fresh } = await twoManifests(8);
    // The scan that made `fresh` ran an eviction (the cache's first): within a day of it, nothing
    // is even listed.
    expect(await evictExtractionCache(cacheDir)).toMatchObject({ ran: false, removed: 0 });
    expect(await manifests('archives')).toHaveLength(2);
    const r = await evictExtractionCache(cacheDir, { intervalMs: 0 });
    expect(r).toMatchObject({ ran: true, removed: 1, kept: 1 });
    expect(await manifests('archives')).toEqual([fresh]);
    await twoManifests(8);
    expect(await evictExtractionCache(cacheDir)).toMatchObject({ ran: false, removed: 0 });
    expect(await manifests('archives')).toHaveLength(2);
    expect(await evictExtractionCache(cacheDir, { now: new Date(Date.now() + DAY + 1000) })).toMatchObject({
      ran: true,
      removed: 1,
    });
  });

  it('a manifest read by a scan counts as used', async () => {
    const { fresh } = await twoManifests(0);
    const file = path.join(cacheDir, 'extract', fresh);
    const then = new Date(Date.now() - 8 * DAY);
    await fs.utimes(file, then, then);
    await cli(['scan', DEMO, ...JSON_ARGS]); // reads it (a hit writes nothing)
    expect(Date.now() - (await fs.stat(file)).mtimeMs).toBeLessThan(DAY);
    await evictExtractionCache(cacheDir, { intervalMs: 0 });
    expect(await manifests('archives')).toContain(fresh);
  });

  it('keeps the most recently used under the size cap', async () => {
    const { fresh } = await twoManifests(1);
    const size = (await fs.stat(path.join(cacheDir, 'extract', fresh))).size;
    const r = await evictExtractionCache(cacheDir, { maxBytes: size, intervalMs: 0 });
    expect(r).toMatchObject({ ran: true, removed: 1, kept: 1, keptBytes: size });
    expect(await manifests('archives')).toEqual([fresh]);
    // The store's sidecar went with it.
    expect((await files(path.join(cacheDir, 'extract', '.tfguard', 'meta'))).length).toBe(1);
  });

  it('runs after a CLI scan when due', async () => {
    const { old, fresh } = await twoManifests(8);
    await cli(['scan', DEMO, ...JSON_ARGS]); // the first scan's eviction ran before `old` existed
    expect(await manifests('archives')).toEqual([fresh, old].sort());
    const marker = path.join(cacheDir, 'extract', '.tfguard', 'last-eviction');
    const then = new Date(Date.now() - 2 * DAY);
    await fs.utimes(marker, then, then);
    await cli(['scan', DEMO, ...JSON_ARGS]);
    expect(await manifests('archives')).toEqual([fresh]);
  });

  it('never throws on a cache that is not there', async () => {
    await expect(evictExtractionCache(path.join(tmp, 'nowhere'), { intervalMs: 0 })).resolves.toMatchObject({
      removed: 0,
    });
  });
});
