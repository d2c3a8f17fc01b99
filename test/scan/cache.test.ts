/**
 * The content-addressed extraction cache: real archives, the real filesystem ObjectStore adapter
 * (and the in-memory contract implementation for fault injection), the real parser.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { readArchiveBytes } from '../../src/archive';
import { scanBytes, sharedHclParser } from '../../src/scan';
import { ExtractionCache } from '../../src/scan/cache';
import { LOADER_PROJECTION } from '../../src/modules';
import type { CacheStats, ScanOptions } from '../../src/scan';
import { LocalObjectStore } from '../../src/storage/local';
import { PrefixedObjectStore } from '../../src/storage/prefixed';
import { S3ObjectStore } from '../../src/storage/s3';
import { startS3rver } from '../support/s3rver';
import type { ObjectStore, PutOptions, StoredObject } from '../../src/storage/types';
import type { Report } from '../../src/report/types';
import { makeTarGz } from '../support/archive';
import { MemoryStore } from '../support/memory-store';
import { corpusFile, describeWithCorpus } from '../support/external';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tfguard-cache-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function scan(
  name: string,
  bytes: Buffer,
  options: ScanOptions,
): Promise<{ report: Report; stats: CacheStats }> {
  let stats: CacheStats | undefined;
  const report = await scanBytes(name, bytes, { ...options, onCacheStats: (s) => (stats = s) });
  if (stats === undefined) throw new Error('no cache stats');
  return { report, stats };
}

/** The parts of a report that depend on the configuration (everything but the tool's timing). */
function essence(r: Report): unknown {
  return { findings: r.findings, modules: r.modules, roots: r.roots };
}

const MODULE = {
  'main.tf': [
    'terraform {',
    '  required_version = ">= 1.5"',
    '  required_providers {',
    '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
    '  }',
    '}',
    'module "net" {',
    '  source = "./net"',
    '  providers = { aws = aws.east }',
    '}',
    'provider "aws" {',
    '  alias  = "east"',
    '  region = "us-east-1"',
    '}',
    '',
  ].join('\n'),
  'net/main.tf': 'resource "aws_vpc" "v" {\n  cidr_block = "10.0.0.0/16"\n}\n',
  'net/versions.tf':
    'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 5.0" }\n  }\n}\n',
  'broken/main.tf': 'resource "aws_vpc" "v" {\n  cidr_block = \n}\n',
};

describeWithCorpus('a warm cache (corpus archives)', () => {
  it('serves a rescan of the same archive from one object: same report, nothing parsed, no WebAssembly', async () => {
    const bytes = await readFile(corpusFile('hashicorp_learn-terraform-provision-eks-cluster.tar.gz'));
    const store = new LocalObjectStore(path.join(dir, 'warm'));
    const cold = await scan('eks.tar.gz', bytes, { cache: store });
    expect(cold.stats).toMatchObject({ source: 'none', hits: 0, gets: 1, puts: 1, failures: 0 });
    expect(cold.stats.misses).toBeGreaterThan(3);
    const keys: string[] = [];
    for await (const k of store.list('extract/')) keys.push(k);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^extract\/[0-9a-f]{24}\/archives\/[0-9a-f]{64}\.json\.gz$/);

    // A fresh process state: no parser workers; every file comes from the cache.
    const before = { ...sharedHclParser().stats };
    const warm = await scan('eks.tar.gz', bytes, { cache: store });
    expect(warm.stats).toMatchObject({ source: 'archive', misses: 0, rejected: 0, gets: 1, puts: 0 });
    expect(warm.stats.hits).toBe(cold.stats.misses);
    expect(essence(warm.report)).toEqual(essence(cold.report));
    expect(essence(warm.report)).toEqual(essence(await scanBytes('eks.tar.gz', bytes)));
    // Only the lock file was parsed (in TypeScript), and no hcl2json worker was ever started.
    expect(sharedHclParser().stats.fullParses).toBe(before.fullParses);
    expect(sharedHclParser().wasmStarted).toBe(false);
  });

  it('works on S3 (s3rver): one GET of one object per rescan, under a prefix', async () => {
    const server = await startS3rver(['reports']);
    try {
      const store = new PrefixedObjectStore(
        new S3ObjectStore({ bucket: 'reports', client: server.client() }),
        'cache/',
      );
      const bytes = await readFile(corpusFile('terraform-aws-modules_terraform-aws-vpc.tar.gz'));
      const cold = await scan('vpc.tar.gz', bytes, { cache: store });
      const warm = await scan('vpc.tar.gz', bytes, { cache: store });
      expect(cold.stats).toMatchObject({ source: 'none', hits: 0, puts: 1, failures: 0 });
      expect(warm.stats).toMatchObject({ source: 'archive', misses: 0, gets: 1, puts: 0, failures: 0 });
      expect(warm.stats.hits).toBe(cold.stats.misses);
      expect(essence(warm.report)).toEqual(essence(cold.report));
      const raw = new S3ObjectStore({ bucket: 'reports', client: server.client() });
      const keys: string[] = [];
      for await (const k of raw.list('')) keys.push(k);
      expect(keys).toEqual([
        expect.stringMatching(/^cache\/extract\/[0-9a-f]{24}\/archives\/[0-9a-f]{64}\.json\.gz$/),
      ]);
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe('a warm cache', () => {
  it('with a lineage, a new commit reuses the results of unchanged files, found by content', async () => {
    const store = new MemoryStore();
    const v1 = await makeTarGz(MODULE);
    const first = await scan('repo.tar.gz', v1, { cache: store, cacheLineage: 'github.com/acme/infra' });
    expect(first.stats).toMatchObject({ source: 'none', misses: 4, puts: 2 });
    // Commit 2: one file changed, one renamed (same content), the broken one fixed.
    const v2 = await makeTarGz({
      'main.tf': MODULE['main.tf'],
      'net/network.tf': MODULE['net/main.tf'],
      'net/versions.tf': MODULE['net/versions.tf'].replace('>= 5.0', '>= 5.1'),
      'broken/main.tf': 'resource "aws_vpc" "v" {\n  cidr_block = "x"\n}\n',
    });
    const second = await scan('repo-2.tar.gz', v2, { cache: store, cacheLineage: 'github.com/acme/infra' });
    expect(second.stats).toMatchObject({ source: 'lineage', hits: 2, misses: 2, puts: 2 });
    expect(essence(second.report)).toEqual(essence(await scanBytes('repo-2.tar.gz', v2)));
    // Without the lineage the new archive starts cold.
    const other = await scan('repo-2.tar.gz', v2, { cache: new MemoryStore() });
    expect(other.stats).toMatchObject({ source: 'none', hits: 0, misses: 4 });
  });

  it('a lineage read before the archive is known serves open as reading it then would', async () => {
    const store = new MemoryStore();
    const lineage = 'directory:/work/infra';
    const fingerprint = 'preload';
    const parser = sharedHclParser();
    const content = Buffer.from('terraform {\n  required_version = ">= 1.5"\n}\n');
    const sha = 'b'.repeat(64);
    expect(await ExtractionCache.preload({ store, fingerprint })).toBeNull(); // no lineage
    const none = await ExtractionCache.preload({ store, fingerprint, lineage });
    expect(none?.has(sha)).toBe(false);
    const writer = await ExtractionCache.open({ store, fingerprint, lineage }, 'a'.repeat(64), none);
    expect(writer.stats).toMatchObject({ source: 'none', gets: 2 });
    writer.record(sha, await parser.extract('main.tf', content, LOADER_PROJECTION));
    await writer.save();
    // The same archive again: its own manifest, the bytes of the lineage's (read once, parsed once).
    const preloaded = await ExtractionCache.preload({ store, fingerprint, lineage });
    expect(preloaded?.has(sha)).toBe(true);
    expect(preloaded?.has('c'.repeat(64))).toBe(false);
    const same = await ExtractionCache.open({ store, fingerprint, lineage }, 'a'.repeat(64), preloaded);
    const plain = await ExtractionCache.open({ store, fingerprint, lineage }, 'a'.repeat(64));
    expect(same.lookup(sha, 'main.tf')).toEqual(plain.lookup(sha, 'main.tf'));
    expect(same.stats).toMatchObject({ source: 'archive', hits: 1, gets: 2 });
    expect(plain.stats).toMatchObject({ source: 'archive', hits: 1, gets: 1 });
    // Another archive of the lineage (a new commit): the preloaded manifest, no second read.
    const next = await ExtractionCache.open({ store, fingerprint, lineage }, 'd'.repeat(64), preloaded);
    expect(next.lookup(sha, 'x/main.tf')).toBeDefined();
    expect(next.stats).toMatchObject({ source: 'lineage', hits: 1, gets: 2 });
  });

  it('keeps parse errors, bound to their path', async () => {
    const store = new MemoryStore();
    const bytes = await makeTarGz(MODULE);
    const cold = await scan('repo.tar.gz', bytes, { cache: store });
    const warm = await scan('repo.tar.gz', bytes, { cache: store });
    const errors = (r: Report): unknown => r.findings.filter((f) => f.ruleId === 'parse-error');
    expect(errors(cold.report)).toHaveLength(1);
    expect(errors(warm.report)).toEqual(errors(cold.report));
    expect(warm.stats).toMatchObject({ hits: 4, misses: 0 });
    // The same broken content at another path is parsed again (its message names the file).
    const { ['broken/main.tf']: broken, ...rest } = MODULE;
    const moved = await makeTarGz({ ...rest, 'other/x.tf': broken });
    const third = await scan('moved.tar.gz', moved, { cache: store, cacheLineage: 'l' });
    await scan('moved.tar.gz', moved, { cache: store, cacheLineage: 'l' });
    const fourth = await scan('moved-2.tar.gz', await makeTarGz({ ...rest, 'elsewhere/x.tf': broken }), {
      cache: store,
      cacheLineage: 'l',
    });
    expect(third.stats.misses).toBe(4);
    expect(fourth.stats).toMatchObject({ source: 'lineage', hits: 3, misses: 1 });
    expect(errors(fourth.report)).toEqual([expect.objectContaining({ file: 'elsewhere/x.tf' })]);
  });

  it('gives the same bytes under a name of the other syntax their own parse', async () => {
    // `{}` is a `.tf.json` file's empty body and a `.tf` file's parse error; `` the reverse.
    const store = new MemoryStore();
    const errors = (r: Report): unknown =>
      r.findings.filter((f) => f.ruleId === 'parse-error').map((f) => f.file);
    const json = await makeTarGz({ 'main.tf': MODULE['main.tf'], 'extra.tf.json': '{}', 'empty.tf': '' });
    const first = await scan('json.tar.gz', json, { cache: store, cacheLineage: 'l' });
    expect(errors(first.report)).toEqual([]);
    // The next commit renames them into the other syntax.
    const swapped = await makeTarGz({ 'main.tf': MODULE['main.tf'], 'extra.tf': '{}', 'empty.tf.json': '' });
    const second = await scan('swapped.tar.gz', swapped, { cache: store, cacheLineage: 'l' });
    expect(second.stats).toMatchObject({ source: 'lineage', hits: 1, misses: 2 });
    expect(errors(second.report)).toEqual(['empty.tf.json', 'extra.tf']);
    expect(essence(second.report)).toEqual(essence(await scanBytes('swapped.tar.gz', swapped)));
  });
});

/** A store whose objects can be replaced with hostile content. */
class TamperedStore extends MemoryStore {
  replaceAll(body: Buffer): void {
    for (const [k, v] of this.objects) this.objects.set(k, { ...v, body });
  }
}

function manifest(fingerprint: string, files: Record<string, unknown>): Buffer {
  return gzipSync(
    JSON.stringify({ format: 'tfguard-extract-manifest', version: 1, fingerprint, archive: 'x', files }),
  );
}

describe('what a cache entry gives back', () => {
  // Every node of every file, ranges included, as the parser gave it: the compact spans (lines
  // taken from the node) and the full ones (a range that ends on another line than `endLine`).
  it('is the parse result itself, ranges included (the demo archive and edge cases)', async () => {
    const demo = await readArchiveBytes('demo.tar.gz', await readFile('examples/platform-demo.tar.gz'));
    const files: [string, Buffer][] = [...demo.files].filter(([p]) => /\.tf(\.json)?$/.test(p));
    const edge: Record<string, string> = {
      'edge/heredoc.tf':
        'terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = <<EOT\n~> 5.0\nEOT\n    }\n  }\n}\nmodule "m" {\n  source = "./m"\n  providers = {\n    aws = aws\n  }\n}\n',
      'edge/unicode.tf': '\uFEFFprovider "aws" {\n  alias = "é😀"  # ünïcode\n  version = "~> 5.0"\n}\n',
      'edge/main.tf.json':
        // "aws": its value starts on the next line, so its spans take the full form.
        '{"terraform": {"required_providers": {"aws":\n{"source": "hashicorp/aws",\n"version": ">= 5"}}},\n"resource": {"aws_vpc": {"v": {}}}}',
    };
    for (const [p, text] of Object.entries(edge)) files.push([p, Buffer.from(text, 'utf8')]);
    const parser = sharedHclParser();
    const store = new MemoryStore();
    const fingerprint = 'round-trip';
    const writer = await ExtractionCache.open({ store, fingerprint }, 'a'.repeat(64));
    const expected = new Map<string, unknown>();
    for (const [i, [p, content]] of files.entries()) {
      const result = await parser.extract(p, content, LOADER_PROJECTION);
      expect(result.ok).toBe(true);
      const sha = i.toString(16).padStart(64, '0');
      writer.record(sha, result);
      expected.set(sha, result);
    }
    await writer.save();
    const reader = await ExtractionCache.open({ store, fingerprint }, 'a'.repeat(64));
    for (const [i, [p]] of files.entries()) {
      const sha = i.toString(16).padStart(64, '0');
      expect(reader.lookup(sha, p)).toEqual(expected.get(sha));
    }
    expect(reader.stats).toMatchObject({ hits: files.length, rejected: 0 });
  });

  it('is rejected when its ranges are not what this version writes', async () => {
    const content = Buffer.from('resource "a_b" "c" {\n  provider = a.x\n}\n', 'utf8');
    const result = await sharedHclParser().extract('m.tf', content, LOADER_PROJECTION);
    const sha = 'b'.repeat(64);
    const corrupt: [string, (r: number[]) => unknown][] = [
      ['missing', () => undefined],
      ['negative', (r) => r.map((n, i) => (i === 2 ? -1 : n))],
      ['an unknown count', (r) => [5, ...r.slice(1)]],
      ['too few', (r) => r.slice(0, -1)],
      ['one left over', (r) => [...r, 7]],
      ['a column of 0', (r) => r.map((n, i) => (i === 1 ? 0 : n))],
    ];
    for (const [what, change] of corrupt) {
      const store = new MemoryStore();
      const writer = await ExtractionCache.open({ store, fingerprint: 'f' }, 'c'.repeat(64));
      writer.record(sha, result);
      await writer.save();
      const key = [...store.objects.keys()][0] as string;
      const stored = JSON.parse(gunzipSync((await store.get(key))?.body as Buffer).toString('utf8')) as {
        files: Record<string, { r: number[] }>;
      };
      const entry = stored.files[sha] as { r?: unknown };
      const changed = change(entry.r as number[]);
      if (changed === undefined) delete entry.r;
      else entry.r = changed;
      await store.put(key, gzipSync(JSON.stringify(stored)));
      const reader = await ExtractionCache.open({ store, fingerprint: 'f' }, 'c'.repeat(64));
      expect([what, reader.lookup(sha, 'm.tf')]).toEqual([what, undefined]);
      expect(reader.stats.rejected).toBe(1);
    }
  });
});

describe('corrupt or foreign cache content is ignored', () => {
  const variants: [string, (fingerprint: string, shas: string[]) => Buffer][] = [
    ['not gzip', () => Buffer.from('{"format":"tfguard-extract-manifest"}')],
    ['gzip of not JSON', () => gzipSync('not json')],
    ['another format', () => gzipSync(JSON.stringify({ format: 'other', files: {} }))],
    [
      'another fingerprint',
      (_f, shas) =>
        manifest('0'.repeat(24), Object.fromEntries(shas.map((s) => [s, { s: 'hcl', b: [[], []] }]))),
    ],
    ['files is an array', (f) => manifest(f, [] as never)],
    [
      'malformed entries',
      (f, shas) =>
        manifest(
          f,
          Object.fromEntries(
            shas.map((s, i) => [
              s,
              [
                { s: 'hcl', b: [[['a', 1, 0, 1]], []] },
                { s: 'hcl', b: [[], [['resource', 'not-a-list', 1, 1]]] },
                { s: 'yaml', b: [[], []] },
                { e: ['main.tf', 'x', -1, 1] },
                { s: 'hcl', b: [[['a', 1, 3, 2]], []] },
                null,
                { s: 'hcl', b: [[], [['t', [], 1, 1, 'body']]] },
              ][i % 7],
            ]),
          ),
        ),
    ],
  ];

  it.each(variants)('%s: the scan is the same as without a cache', async (_name, make) => {
    const bytes = await makeTarGz(MODULE);
    const store = new TamperedStore();
    const cold = await scan('repo.tar.gz', bytes, { cache: store });
    const key = [...store.objects.keys()][0] as string;
    const fingerprint = key.split('/')[1] as string;
    const archive = await readArchiveBytes('repo.tar.gz', bytes);
    store.replaceAll(
      make(
        fingerprint,
        archive.entries.filter((e) => e.type === 'file').map((e) => e.sha256 as string),
      ),
    );
    const after = await scan('repo.tar.gz', bytes, { cache: store });
    expect(essence(after.report)).toEqual(essence(cold.report));
    expect(after.stats.hits).toBe(0);
    expect(after.stats.misses).toBe(4);
    expect(after.stats.rejected).toBeGreaterThan(0);
    // The bad manifest is replaced by a good one.
    const again = await scan('repo.tar.gz', bytes, { cache: store });
    expect(again.stats).toMatchObject({ source: 'archive', hits: 4, misses: 0 });
  });

  it('a failing store never fails a scan', async () => {
    const failing: ObjectStore = {
      put: async (_k: string, _b: Buffer | string, _o?: PutOptions) => {
        throw new Error('put failed');
      },
      get: async (): Promise<StoredObject | null> => {
        throw new Error('get failed');
      },
      list: (): AsyncIterable<string> => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('list failed')) }),
      }),
      delete: async () => {
        throw new Error('delete failed');
      },
    };
    const bytes = await makeTarGz(MODULE);
    const r = await scan('repo.tar.gz', bytes, { cache: failing, cacheLineage: 'x' });
    expect(essence(r.report)).toEqual(essence(await scanBytes('repo.tar.gz', bytes)));
    expect(r.stats).toMatchObject({ source: 'none', hits: 0, misses: 4 });
    expect(r.stats.failures).toBeGreaterThanOrEqual(3);
  });
});
