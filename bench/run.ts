/**
 * `npm run bench` — tfguard's performance benchmark (see docs/performance.md for the method).
 *
 * For every corpus archive (`../shared/corpus/*.tar.gz`, or the directory in TFGUARD_CORPUS_DIR;
 * without a corpus the bench exits 2 at once): files, HCL bytes, full scan time (archive bytes in
 * memory → report; min/median/max over the measured runs), MB/s, peak RSS, the time to read the
 * archive alone, the full-hcl2json baseline (the same scan with every file parsed by
 * hcl2json), `terraform fmt -check -recursive` on the same files (when terraform is installed),
 * and a rescan with a warm extraction cache. Then: the scaling table (1×, 2×, 4×, 8× copies of a
 * corpus tree), cache batching (one manifest vs one object per file, on the filesystem adapter and
 * on s3rver), the Lambda bundle (size, zipped size, cold initialisation), peak RSS for an
 * archive holding 50 MB of HCL, `tfguard fix --dry-run` against `tfguard scan` on the largest
 * corpus archive unpacked, and remote module resolution: a root calling 20 registry modules
 * (each with a nested one) from a module registry on 127.0.0.1, scanned without resolution, with a
 * cold cache and with a warm cache (the target: a warm-cache rescan adds at most 20 ms), and the
 * classification of a generated archive of 12,000 stacks (target: under 2 s), the fleet audit of
 * every corpus archive (`runLocalAudit`, as `tfguard audit <corpus>`) with the share of its fleet page
 * (fleet data, HTML, both stored), timed in the same runs (target: the page adds at most 10%), and
 * the whole process: `tfguard scan` of the largest corpus archive from the CLI bundle (built from
 * these sources into a temporary directory) against the floor, a fresh `node` that reads the
 * archive, gunzips it and reads every inflated byte once (target: at most 3× the floor, goal 2.5×).
 *
 * Every measurement runs in its own child process (fresh heap; peak RSS per measurement).
 *
 * Options: --runs N (default 7; at least 5), --quick (fewer runs, skips the 50 MB archive),
 * --only NAME[,NAME] (archives whose name contains one of these), --json FILE (write the results),
 * --max-load L (wait, up to 15 minutes, until the 1-minute load average is below L; default 2),
 * --no-wait, --no-fix (skip the fix measurement), --no-directory (skip directory vs archive),
 * --no-scaling, --no-batching (skip those sections), --directory-only (only directory vs archive,
 * on the largest corpus archive), --remote-only (only the remote module case), --no-stacks /
 * --stacks-only (skip / only the generated stacks), --no-audit / --audit-only (skip / only the
 * fleet audit), --no-policy / --policy-only (skip / only a scan with the organisation's policy
 * against one without), --no-process / --process-only (skip / only the whole-process scan against
 * the floor), --help (this list, nothing run).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTarGz, type TarEntrySpec } from '../test/support/archive';
import { corpusDir, corpusStatus } from '../test/support/external';
import { runBenchChild, type ChildResult } from './child';

const ROOT = path.resolve(__dirname, '..');
const USAGE =
  'usage: tsx bench/run.ts [--runs N] [--quick] [--only NAME[,NAME]] [--json FILE] [--max-load L] [--no-wait]\n' +
  '                        [--no-fix] [--no-directory] [--no-scaling] [--no-batching] [--directory-only]\n' +
  '                        [--remote-only] [--no-stacks] [--stacks-only] [--no-audit] [--audit-only]\n' +
  '                        [--no-policy] [--policy-only] [--no-process] [--process-only]\n' +
  'Measures every corpus archive, then scaling, cache batching, the Lambda bundle and (without --quick)\n' +
  'a 50 MB archive; see the header of bench/run.ts and docs/performance.md.\n';
const CORPUS = corpusDir();
const MiB = 1024 * 1024;

// ------------------------------------------------------------------------------------------------
// Helpers shared by parent and children
// ------------------------------------------------------------------------------------------------

interface Stats {
  min: number;
  median: number;
  max: number;
  runs: number[];
}

function stats(runs: number[]): Stats {
  const sorted = [...runs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number, runs };
}

/** This process's CPU time (user + system) in ms: on a loaded machine a steadier figure than the
 * wall clock for work that never waits (the wall clock stays the target). */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function peakRssMiB(): number {
  // maxRSS is in KiB.
  return process.resourceUsage().maxRSS / 1024;
}

async function timeRuns(count: number, fn: () => Promise<unknown>): Promise<Stats> {
  const runs: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn();
    runs.push(performance.now() - t);
  }
  return stats(runs);
}

/** A tar.gz of `copies` copies of the configuration files of `archiveFile`, under copy-N/. */
async function replicate(
  archiveFile: string,
  copies: number,
): Promise<{ bytes: Buffer; files: number; hclBytes: number }> {
  const { readArchiveBytes } = await import('../src/archive');
  const { shouldLoad } = await import('../src/scan');
  const source = await readArchiveBytes(path.basename(archiveFile), readFileSync(archiveFile), {
    shouldLoad,
    limits: { maxEntries: 1_000_000, maxTotalBytes: 4096 * MiB },
  });
  const entries: TarEntrySpec[] = [];
  let files = 0;
  let hclBytes = 0;
  for (let i = 0; i < copies; i++) {
    for (const [p, content] of source.files) {
      entries.push({ name: copies === 1 ? p : `copy-${i}/${p}`, data: content });
      if (isConfig(p)) {
        files++;
        hclBytes += content.length;
      }
    }
  }
  // Mode 0644 and gzip level 6 (zlib's default), as the scaling tables were measured with.
  return { bytes: await buildTarGz(entries), files, hclBytes };
}

function isConfig(p: string): boolean {
  return /\.(tf|tf\.json|tofu|tofu\.json)$/.test(p);
}

// ------------------------------------------------------------------------------------------------
// Child measurements
// ------------------------------------------------------------------------------------------------

async function childArchive(file: string, runs: number): Promise<ChildResult> {
  const { readArchiveBytes } = await import('../src/archive');
  const { scanBytes, shouldLoad, closeSharedParser, sharedHclParser } = await import('../src/scan');
  const { LOADER_PROJECTION } = await import('../src/modules');
  const bytes = readFileSync(file);
  const name = path.basename(file);
  const archive = await readArchiveBytes(name, bytes, { shouldLoad });
  const configFiles = [...archive.files].filter(([p]) => isConfig(p));
  const hclBytes = configFiles.reduce((n, [, c]) => n + c.length, 0);

  // One warm-up scan (JIT, lazy module state), not counted.
  const first = performance.now();
  await scanBytes(name, bytes);
  const firstScan = performance.now() - first;
  const scan = await timeRuns(runs, () => scanBytes(name, bytes));
  const read = await timeRuns(runs, () => readArchiveBytes(name, bytes, { shouldLoad }));
  const parser = sharedHclParser();
  const before = { ...parser.stats };
  const parse = await timeRuns(runs, () =>
    Promise.all(configFiles.map(([p, c]) => parser.extract(p, c, LOADER_PROJECTION))),
  );
  const rss = peakRssMiB();
  const parserStats = {
    verified: parser.stats.verified - before.verified,
    fullParses: parser.stats.fullParses - before.fullParses,
    snippets: parser.stats.snippets - before.snippets,
    wasmStarted: parser.wasmStarted,
  };
  await closeSharedParser();
  return { name, files: configFiles.length, hclBytes, firstScan, scan, read, parse, rss, parserStats };
}

async function childBaseline(file: string, runs: number): Promise<ChildResult> {
  const { scanBytes, closeSharedParser } = await import('../src/scan');
  const bytes = readFileSync(file);
  const name = path.basename(file);
  const options = { parser: { fastPath: false } };
  const first = performance.now();
  await scanBytes(name, bytes, options);
  const firstScan = performance.now() - first;
  const scan = await timeRuns(runs, () => scanBytes(name, bytes, options));
  const rss = peakRssMiB();
  await closeSharedParser();
  return { firstScan, scan, rss };
}

async function childCache(file: string, runs: number): Promise<ChildResult> {
  const { scanBytes, closeSharedParser, sharedHclParser } = await import('../src/scan');
  const { LocalObjectStore } = await import('../src/storage/local');
  const bytes = readFileSync(file);
  const name = path.basename(file);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-cache-'));
  try {
    const store = new LocalObjectStore(dir);
    await scanBytes(name, bytes); // warm-up (JIT), no cache
    let t = performance.now();
    await scanBytes(name, bytes, { cache: store });
    const cold = performance.now() - t;
    await closeSharedParser();
    t = performance.now();
    let cacheStats: unknown;
    await scanBytes(name, bytes, { cache: store, onCacheStats: (s) => (cacheStats = s) });
    const firstWarm = performance.now() - t;
    const warm = await timeRuns(runs, () => scanBytes(name, bytes, { cache: store }));
    const wasmStarted = sharedHclParser().wasmStarted;
    await closeSharedParser();
    return { cold, firstWarm, warm, cacheStats, wasmStarted };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function childScale(file: string, runs: number): Promise<ChildResult> {
  const { scanBytes, closeSharedParser } = await import('../src/scan');
  const bytes = readFileSync(file);
  const limits = { maxEntries: 1_000_000, maxTotalBytes: 4096 * MiB };
  await scanBytes('warmup.tar.gz', bytes, { limits });
  const scan = await timeRuns(runs, () => scanBytes(path.basename(file), bytes, { limits }));
  const rss = peakRssMiB();
  await closeSharedParser();
  return { scan, rss };
}

async function childBig(file: string): Promise<ChildResult> {
  const { scanBytes, closeSharedParser, sharedHclParser } = await import('../src/scan');
  const bytes = readFileSync(file);
  const limits = { maxEntries: 1_000_000, maxTotalBytes: 4096 * MiB };
  const t = performance.now();
  const report = await scanBytes(path.basename(file), bytes, { limits });
  const scan = performance.now() - t;
  const rss = peakRssMiB();
  const wasmStarted = sharedHclParser().wasmStarted;
  await closeSharedParser();
  return { scan, rss, modules: report.modules.length, wasmStarted };
}

/** One manifest vs one object per file: GET latency on a store. */
async function childBatching(file: string): Promise<ChildResult> {
  const { scanBytes, closeSharedParser } = await import('../src/scan');
  const { LocalObjectStore } = await import('../src/storage/local');
  const { S3ObjectStore } = await import('../src/storage/s3');
  const { startS3rver } = await import('../test/support/s3rver');
  const bytes = readFileSync(file);
  const name = path.basename(file);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-batching-'));
  const out: ChildResult = {};
  const s3 = await startS3rver(['bench']).catch(() => null);
  try {
    const stores: [string, import('../src/storage/types').ObjectStore][] = [
      ['filesystem', new LocalObjectStore(dir)],
    ];
    if (s3 !== null) stores.push(['s3rver', new S3ObjectStore({ bucket: 'bench', client: s3.client() })]);
    for (const [label, store] of stores) {
      let manifestBytes = 0;
      await scanBytes(name, bytes, { cache: store, onCacheStats: (s) => (manifestBytes = s.bytesWritten) });
      const manifestKeys: string[] = [];
      for await (const k of store.list('extract/')) manifestKeys.push(k);
      const key = manifestKeys[0] as string;
      const manifest = await timeRuns(5, () => store.get(key));
      // The same results as one object per file (what a per-file cache would read).
      const { gunzipSync } = await import('node:zlib');
      const files = (
        JSON.parse(gunzipSync((await store.get(key))!.body).toString('utf8')) as {
          files: Record<string, unknown>;
        }
      ).files;
      const entries = Object.entries(files);
      await Promise.all(
        entries.map(([sha, entry]) => store.put(`perfile/${sha}.json`, JSON.stringify(entry))),
      );
      const perFile = await timeRuns(3, async () => {
        let next = 0;
        await Promise.all(
          Array.from({ length: 32 }, async () => {
            while (next < entries.length) {
              const [sha] = entries[next++] as [string, unknown];
              await store.get(`perfile/${sha}.json`);
            }
          }),
        );
      });
      out[label] = { objects: entries.length, manifestBytes, manifest, perFile };
    }
  } finally {
    await s3?.stop();
    await closeSharedParser();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/**
 * `tfguard fix --dry-run` against `tfguard scan` on the same directory (the archive unpacked), both
 * through the CLI with output discarded: what a user runs. Interleaved runs, after one warm-up each.
 * Both with `--no-cache`: with the CLI's extraction cache warm, neither would parse anything.
 */
async function childFix(file: string, runs: number): Promise<ChildResult> {
  const { runCli } = await import('../src/cli/main');
  const { closeSharedParser } = await import('../src/scan');
  const { fixPath } = await import('../src/scan/fix');
  const { tarGzFiles } = await import('../test/support/corpus');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-fix-'));
  try {
    for (const [p, c] of Object.entries(await tarGzFiles(readFileSync(file)))) {
      mkdirSync(path.join(dir, path.dirname(p)), { recursive: true });
      writeFileSync(path.join(dir, p), c);
    }
    const io = { stdout: (): void => {}, stderr: (): void => {}, isTTY: false };
    await runCli(['scan', dir, '--no-cache'], io);
    await runCli(['fix', dir, '--dry-run', '--no-cache'], io);
    const scanRuns: number[] = [];
    const fixRuns: number[] = [];
    const scanCpu: number[] = [];
    const fixCpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      let t = performance.now();
      let c = cpuMs();
      await runCli(['scan', dir, '--no-cache'], io);
      scanRuns.push(performance.now() - t);
      scanCpu.push(cpuMs() - c);
      t = performance.now();
      c = cpuMs();
      await runCli(['fix', dir, '--dry-run', '--no-cache'], io);
      fixRuns.push(performance.now() - t);
      fixCpu.push(cpuMs() - c);
    }
    const outcome = await fixPath(dir);
    await closeSharedParser();
    return {
      name: path.basename(file),
      scan: stats(scanRuns),
      fix: stats(fixRuns),
      scanCpu: stats(scanCpu),
      fixCpu: stats(fixCpu),
      fixed: outcome.fixed.length,
      files: outcome.changes.length,
      rescanned: outcome.after !== null,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `tfguard scan <dir>` against `tfguard scan <archive>` of the same files (the archive unpacked by
 * `tar`), through the CLI with output discarded, interleaved in one process after one warm-up each
 * (target: the directory at most 1.0× the archive).
 */
/** The corpus archive of the policy case: 57 lock files, so the lock-reading policy rules have work. */
const POLICY_ARCHIVE = 'ministryofjustice_analytical-platform.tar.gz';

/** The policy of issue 23 (docs/policy.md), with every kind of element, for the policy case. */
const BENCH_POLICY = `provider "hashicorp/aws" {
  versions = ">= 5.40, < 7.0"
}
provider "hashicorp/template" {
  deny   = true
  reason = "archived upstream; use templatefile()"
}
allowed_registries = ["registry.terraform.io", "registry.opentofu.org"]
module_sources     = ["terraform-aws-modules/*", "git::https://github.com/acme/*"]
required_platforms = ["linux_amd64", "darwin_arm64"]
exception {
  repository = "acme/*"
  rule       = "policy-provider-version"
  provider   = "hashicorp/aws"
  reason     = "migration planned for Q1"
  expires    = "2027-03-31"
}
`;

/** A scan with the organisation's policy against one without, runs interleaved (issue 23: within 5%). */
async function childPolicy(file: string, runs: number): Promise<ChildResult> {
  const { scanBytes, closeSharedParser, readPolicy, policyInput } = await import('../src/scan');
  const bytes = readFileSync(file);
  const name = path.basename(file);
  const policy = policyInput(
    await readPolicy('policy.hcl', Buffer.from(BENCH_POLICY)),
    'acme/bench',
    new Date('2026-06-01T00:00:00Z'),
  );
  await scanBytes(name, bytes); // warm-up (JIT)
  const report = await scanBytes(name, bytes, { policy });
  const without: number[] = [];
  const withPolicy: number[] = [];
  // Alternately without first and with first, so that neither always pays for the other.
  for (let i = 0; i < runs; i++) {
    for (const withIt of i % 2 === 0 ? [false, true] : [true, false]) {
      const t = performance.now();
      await scanBytes(name, bytes, withIt ? { policy } : {});
      (withIt ? withPolicy : without).push(performance.now() - t);
    }
  }
  await closeSharedParser();
  return {
    name,
    without: stats(without),
    with: stats(withPolicy),
    policyFindings: report.findings.filter((f) => f.ruleId.startsWith('policy-')).length,
  };
}

/** The policy case as one line of the report. */
function policyLine(r: ChildResult): string {
  const without = r.without as Stats;
  const withPolicy = r.with as Stats;
  return (
    `Scan of ${String(r.name).replace('.tar.gz', '')} with the organisation's policy (docs/policy.md; ` +
    `${String(r.policyFindings)} policy findings) against without: with ${fmtStats(withPolicy)} ms, without ` +
    `${fmtStats(without)} ms, ${(withPolicy.median / without.median).toFixed(3)}× (target ≤ 1.05×).`
  );
}

/** A directory against its tarball through the CLI (`--no-cache`: both parse every file, as the
 * first scan of a checkout does), alternately, after five scans of each: a process's first scans
 * of a 1,800-file tree still run code V8 is compiling (the first four took 250-450 ms against
 * about 220 ms after), and with one warm-up they made the row's medians move by ±7%. */
async function childDirectory(file: string, runs: number): Promise<ChildResult> {
  const { runCli } = await import('../src/cli/main');
  const { closeSharedParser } = await import('../src/scan');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-dir-'));
  try {
    execFileSync('tar', ['-xzf', file, '-C', dir]);
    const io = { stdout: (): void => {}, stderr: (): void => {}, isTTY: false };
    for (let i = 0; i < 5; i++) {
      await runCli(['scan', dir, '--no-cache'], io);
      await runCli(['scan', file, '--no-cache'], io);
    }
    const dirRuns: number[] = [];
    const archiveRuns: number[] = [];
    const dirCpu: number[] = [];
    const archiveCpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      let t = performance.now();
      let c = cpuMs();
      await runCli(['scan', dir, '--no-cache'], io);
      dirRuns.push(performance.now() - t);
      dirCpu.push(cpuMs() - c);
      t = performance.now();
      c = cpuMs();
      await runCli(['scan', file, '--no-cache'], io);
      archiveRuns.push(performance.now() - t);
      archiveCpu.push(cpuMs() - c);
    }
    await closeSharedParser();
    return {
      name: path.basename(file),
      directory: stats(dirRuns),
      archive: stats(archiveRuns),
      directoryCpu: stats(dirCpu),
      archiveCpu: stats(archiveCpu),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 20 registry modules with 30 versions each (provider metadata, two submodules, a nested
 * registry module): what a warm-cache rescan costs over a scan that resolves nothing. */
async function childRemote(runs: number): Promise<ChildResult> {
  const { scanBytes, closeSharedParser } = await import('../src/scan');
  const { LocalObjectStore } = await import('../src/storage/local');
  const { startRegistry } = await import('../test/support/registry-server');
  const { makeTarGz } = await import('../test/support/archive');
  const versions = (deps: { name: string; source: string; version: string }[]) =>
    Array.from({ length: 30 }, (_, v) => ({
      version: `${Math.floor(v / 10) + 1}.${v % 10}.0`,
      root: {
        providers: [
          { name: 'aws', namespace: 'hashicorp', source: 'hashicorp/aws', version: '>= 5.0' },
          { name: 'random', namespace: 'hashicorp', source: 'hashicorp/random', version: '>= 3.1' },
        ],
        dependencies: [...deps, { name: 'sub', source: './modules/sub' }],
      },
      submodules: [
        { path: 'modules/sub', providers: [{ name: 'aws', source: 'hashicorp/aws', version: '>= 5.1' }] },
        { path: 'modules/other', providers: [{ name: 'tls', source: 'hashicorp/tls', version: '>= 4.0' }] },
      ],
    }));
  const modules = [
    { namespace: 'bench', name: 'kms', system: 'aws', versions: versions([]) },
    ...Array.from({ length: 20 }, (_, i) => ({
      namespace: 'bench',
      name: `m${i}`,
      system: 'aws',
      versions: versions([{ name: 'kms', source: 'bench/kms/aws', version: '~> 2.0' }]),
    })),
  ];
  const registry = await startRegistry({ modules });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-remote-'));
  try {
    const main =
      'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.0" }\n  }\n}\n' +
      Array.from(
        { length: 20 },
        (_, i) => `module "m${i}" {\n  source  = "bench/m${i}/aws"\n  version = "~> 3.0"\n}\n`,
      ).join('');
    const bytes = await makeTarGz({ 'main.tf': main });
    const configText = {
      name: 'ops.hcl',
      text: `registry_hosts = { "registry.terraform.io" = "${registry.url}" }\n`,
    };
    const store = new LocalObjectStore(dir);
    const online = { configText, remoteModules: true, remoteModuleCache: store };
    await scanBytes('remote.tar.gz', bytes, { configText }); // warm-up (JIT)
    const t = performance.now();
    const cold = await scanBytes('remote.tar.gz', bytes, online);
    const coldMs = performance.now() - t;
    const resolved = (cold.roots[0]?.remoteModuleTree ?? []).filter((m) => m.origin !== null).length;
    const coldRequests = registry.requests.length;
    const offline = await timeRuns(runs, () => scanBytes('remote.tar.gz', bytes, { configText }));
    const warm = await timeRuns(runs, () => scanBytes('remote.tar.gz', bytes, online));
    const warmRequests = registry.requests.length - coldRequests;
    await closeSharedParser();
    return { resolved, coldMs, coldRequests, offline, warm, warmRequests };
  } finally {
    await registry.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A generated archive of `count` small stacks, each one `main.tf`. `backend` shape:
 * `stacks/team-N/sM/` with a backend, a provider block and a bucket (an organisation's
 * deployments). `library` shape: `lib/team-N/mM/` with a bucket, every other module calling a
 * sibling, nothing deployed anywhere (the shape that made the module-library test quadratic:
 * every module asked about every other).
 */
function stackEntries(count: number, shape: 'backend' | 'library'): TarEntrySpec[] {
  const entries: TarEntrySpec[] = [];
  for (let i = 0; i < count; i++) {
    const team = `team-${i % 40}`;
    const dir = shape === 'backend' ? `stacks/${team}/s${i}` : `lib/${team}/m${i}`;
    const backend = shape === 'backend' ? `  backend "s3" {\n    key = "${dir}"\n  }\n` : '';
    const provider = shape === 'backend' ? 'provider "aws" {\n  region = "eu-west-2"\n}\n' : '';
    const call =
      shape === 'library' && i % 2 === 0 && i + 40 < count
        ? `module "next" {\n  source = "../m${i + 40}"\n}\n`
        : '';
    entries.push({
      name: `${dir}/main.tf`,
      data:
        `terraform {\n  required_version = ">= 1.5"\n  required_providers {\n` +
        `    aws = { source = "hashicorp/aws", version = "~> 5.0" }\n  }\n${backend}}\n` +
        `${provider}${call}resource "aws_s3_bucket" "b" {\n  bucket = "b${i}"\n}\n`,
    });
  }
  return entries;
}

/** Classification alone (modules loaded once, then `classifyModules` timed) and one full scan. */
async function childStacks(shape: string, runs: number): Promise<ChildResult> {
  const { readArchiveBytes } = await import('../src/archive');
  const { scanBytes, shouldLoad, sharedHclParser, closeSharedParser } = await import('../src/scan');
  const { loadModules, classifyModules } = await import('../src/modules');
  const { localCallers } = await import('../src/modules/tree');
  const { DEFAULT_CONFIG } = await import('../src/scan/config-file');
  const count = STACKS;
  const bytes = await buildTarGz(stackEntries(count, shape === 'library' ? 'library' : 'backend'));
  const limits = { maxEntries: 1_000_000, maxTotalBytes: 4096 * MiB };
  const archive = await readArchiveBytes('stacks.tar.gz', bytes, { shouldLoad, limits });
  const loaded = await loadModules({ archive, config: { ...DEFAULT_CONFIG }, parser: sharedHclParser() });
  const modules = new Map(loaded.modules.map((m) => [m.path, m]));
  const input = {
    modules,
    callers: localCallers(modules),
    signals: loaded.signals,
    config: DEFAULT_CONFIG,
    templateFiles: loaded.templateFiles,
  };
  const kinds: Record<string, number> = {};
  for (const d of classifyModules(input).values())
    kinds[`${d.kind}/${d.evidence}`] = (kinds[`${d.kind}/${d.evidence}`] ?? 0) + 1;
  const classify = await timeRuns(runs, async () => classifyModules(input));
  const classifyCpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c = cpuMs();
    classifyModules(input);
    classifyCpu.push(cpuMs() - c);
  }
  const t = performance.now();
  const report = await scanBytes('stacks.tar.gz', bytes, { limits });
  const scan = performance.now() - t;
  const rss = peakRssMiB();
  await closeSharedParser();
  return {
    shape,
    stacks: count,
    archiveBytes: bytes.length,
    kinds,
    classify,
    classifyCpu: stats(classifyCpu),
    scan,
    findings: report.findings.length,
    rss,
  };
}

/** Stacks in the generated archive (12,000 took 31 s before classification was linear). */
const STACKS = 12_000;

/**
 * The fleet audit of every corpus archive (what `tfguard audit <corpus>` runs, into a fresh
 * filesystem store each run), and in the same runs the fleet page alone: `writeFleet` on the run's
 * summary into another fresh store (read the previous data, build, render, store both files).
 */
async function childAudit(runs: number): Promise<ChildResult> {
  const { runLocalAudit } = await import('../src/service/local-audit');
  const { writeFleet } = await import('../src/service/audit');
  const { ReportLayout } = await import('../src/service/keys');
  const { noMetrics, silentLogger } = await import('../src/service/observability');
  const { LocalObjectStore } = await import('../src/storage/local');
  const names = readdirSync(CORPUS)
    .filter((f) => f.endsWith('.tar.gz'))
    .sort();
  const bytes = new Map(names.map((n) => [n, readFileSync(path.join(CORPUS, n))]));
  const audit: number[] = [];
  const page: number[] = [];
  let htmlBytes = 0;
  for (let i = 0; i < runs; i++) {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-audit-'));
    try {
      let t = performance.now();
      const result = await runLocalAudit(
        names.map((name) => ({
          repository: name.slice(0, -'.tar.gz'.length),
          name,
          read: async () => bytes.get(name)!,
        })),
        new LocalObjectStore(path.join(tmp, 'audit')),
        { now: new Date(Date.UTC(2026, 0, 1 + i)) },
      );
      audit.push(performance.now() - t);
      const store = new LocalObjectStore(path.join(tmp, 'page'));
      const layout = new ReportLayout('reports/');
      t = performance.now();
      await writeFleet(
        {
          reports: store,
          layout,
          scanOptions: {},
          logger: silentLogger,
          metrics: noMetrics,
          registry: false,
        },
        result.summary,
      );
      page.push(performance.now() - t);
      htmlBytes = (await store.get(layout.fleetHtml))!.body.length;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return { archives: names.length, audit: stats(audit), page: stats(page), htmlBytes };
}

/** The fleet audit line of the report. */
function auditLine(r: ChildResult): string {
  const audit = r.audit as Stats;
  const page = r.page as Stats;
  const share = (page.median / (audit.median - page.median)) * 100;
  return (
    `Fleet audit of ${String(r.archives)} corpus archives (page included): ${fmtStats(audit)} ms; ` +
    `of which the fleet page ${fmtStats(page)} ms (${share.toFixed(1)}% on top of the audit without it; ` +
    `target ≤ 10%), ${(Number(r.htmlBytes) / 1000).toFixed(0)} kB of HTML.`
  );
}

async function child(kind: string, args: string[]): Promise<void> {
  const runs = Number(args[1] ?? 5);
  const file = args[0] as string;
  let result: ChildResult;
  switch (kind) {
    case 'archive':
      result = await childArchive(file, runs);
      break;
    case 'baseline':
      result = await childBaseline(file, runs);
      break;
    case 'cache':
      result = await childCache(file, runs);
      break;
    case 'scale':
      result = await childScale(file, runs);
      break;
    case 'big':
      result = await childBig(file);
      break;
    case 'batching':
      result = await childBatching(file);
      break;
    case 'fix':
      result = await childFix(file, runs);
      break;
    case 'stacks':
      result = await childStacks(file, runs);
      break;
    case 'remote':
      result = await childRemote(runs);
      break;
    case 'directory':
      result = await childDirectory(file, runs);
      break;
    case 'audit':
      result = await childAudit(runs);
      break;
    case 'policy':
      result = await childPolicy(file, runs);
      break;
    default:
      throw new Error(`unknown child ${kind}`);
  }
  process.stdout.write(`\n@@RESULT ${JSON.stringify(result)}\n`);
}

// ------------------------------------------------------------------------------------------------
// Parent
// ------------------------------------------------------------------------------------------------

function runChild(kind: string, args: string[]): Promise<ChildResult> {
  return runBenchChild(__filename, ROOT, kind, args);
}

function hasTerraform(): boolean {
  return spawnSync('terraform', ['version'], { stdio: 'ignore' }).status === 0;
}

/** `terraform fmt -check -recursive` over the archive's files, written to a temp directory. */
async function terraformFmt(file: string, runs: number): Promise<Stats> {
  const { readArchiveBytes } = await import('../src/archive');
  const archive = await readArchiveBytes(path.basename(file), readFileSync(file), { shouldLoad: isConfig });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-fmt-'));
  try {
    for (const [p, c] of archive.files) {
      mkdirSync(path.join(dir, path.dirname(p)), { recursive: true });
      writeFileSync(path.join(dir, p), c);
    }
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      // Exit code 3 = some files are not formatted: still a complete run.
      spawnSync('terraform', ['fmt', '-check', '-recursive', '-list=false'], { cwd: dir, stdio: 'ignore' });
      times.push(performance.now() - t);
    }
    return stats(times);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bundles `entry` with the esbuild settings of serverless.yml (CommonJS, hcl2json external,
 * `import.meta.url` for bundled ESM dependencies), for this machine's Node. */
async function bundleAsServerless(entry: string, outfile: string): Promise<void> {
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    minify: false,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile,
    external: ['@cdktf/hcl2json'],
    define: { 'import.meta.url': '__bundleFileUrl' },
    banner: { js: '"use strict"; const __bundleFileUrl = require("url").pathToFileURL(__filename).href;' },
    logLevel: 'error',
  });
}

/**
 * Bundles a handler (as serverless.yml does), zips it with hcl2json, times cold loads. `entry`:
 * the real upload handler, or a minimal handler over the scan core alone.
 */
async function lambdaBundle(runs: number, kind: 'upload-handler' | 'scan-core'): Promise<ChildResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-bundle-'));
  try {
    let entry = path.join(ROOT, 'handlers', 'upload-scan.ts');
    if (kind === 'scan-core' || !existsSync(entry)) {
      // A handler-like wrapper: archive bytes in the event → report.
      entry = path.join(dir, 'core-handler.ts');
      writeFileSync(
        entry,
        `import { scanBytes } from ${JSON.stringify(path.join(ROOT, 'src', 'scan'))};\n` +
          `export async function handler(event: { name: string; base64: string }) {\n` +
          `  return scanBytes(event.name, Buffer.from(event.base64, 'base64'));\n}\n`,
      );
    }
    const outfile = path.join(dir, 'handlers', 'upload-scan.js');
    await bundleAsServerless(entry, outfile);
    // The unbundled runtime package and its dependencies (serverless.yml package.patterns).
    for (const pkg of ['@cdktf/hcl2json', 'fs-extra', 'graceful-fs', 'jsonfile', 'universalify']) {
      cpSync(path.join(ROOT, 'node_modules', pkg), path.join(dir, 'node_modules', pkg), {
        recursive: true,
        // What serverless.yml packages: the JavaScript, package.json files and the wasm.
        filter: (src) =>
          statSync(src).isDirectory() || /\.js$|(^|\/)package\.json$|main\.wasm\.gz$/.test(src),
      });
    }
    const zip = path.join(dir, 'bundle.zip');
    execFileSync('zip', ['-q', '-r', '-9', zip, 'handlers', 'node_modules'], { cwd: dir });
    const loads: number[] = [];
    const boots: number[] = [];
    const probe = `const t0 = performance.now(); const m = require(${JSON.stringify(outfile)}); const t1 = performance.now();
      if (typeof m.handler !== 'function') throw new Error('no handler');
      process.stdout.write(JSON.stringify({ boot: t0, load: t1 - t0 }));`;
    for (let i = 0; i < runs; i++) {
      const r = JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd: dir }).toString()) as {
        boot: number;
        load: number;
      };
      loads.push(r.load);
      boots.push(r.boot);
    }
    return {
      kind,
      entry: entry.startsWith(ROOT)
        ? path.relative(ROOT, entry)
        : 'a minimal handler over src/scan (scanBytes)',
      bundleBytes: statSync(outfile).size,
      zipBytes: statSync(zip).size,
      load: stats(loads),
      boot: stats(boots),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Scans `file` once in a fresh process running an esbuild bundle of the scan core (what a Lambda
 * runs), with the archive limits raised; returns its time and peak RSS. The bundle is written under
 * node_modules/.cache so that the external @cdktf/hcl2json resolves as it does beside a handler.
 */
async function bundledBig(file: string): Promise<ChildResult> {
  const dir = path.join(ROOT, 'node_modules', '.cache', 'tfguard-bench');
  mkdirSync(dir, { recursive: true });
  const entry = path.join(dir, 'big-entry.ts');
  writeFileSync(
    entry,
    `import { readFileSync } from 'node:fs';\n` +
      `import { scanBytes, sharedHclParser } from ${JSON.stringify(path.join(ROOT, 'src', 'scan'))};\n` +
      `const bytes = readFileSync(process.argv[2] as string);\n` +
      `const t = performance.now();\n` +
      `scanBytes('big.tar.gz', bytes, { limits: { maxEntries: 1_000_000, maxTotalBytes: 4096 * 1024 * 1024 } }).then((report) => {\n` +
      `  const scan = performance.now() - t;\n` +
      `  process.stdout.write(JSON.stringify({ scan, rss: process.resourceUsage().maxRSS / 1024, modules: report.modules.length, wasmStarted: sharedHclParser().wasmStarted }));\n` +
      `  process.exit(0);\n});\n`,
  );
  const outfile = path.join(dir, 'big.cjs');
  await bundleAsServerless(entry, outfile);
  try {
    return JSON.parse(
      execFileSync(process.execPath, [outfile, file], { cwd: ROOT }).toString(),
    ) as ChildResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The floor of a whole-process scan (issue 24): what any tool that reads the archive must do. A
 * fresh `node` starts, reads the archive file, gunzips it in one call and reads every inflated
 * byte once (counting line feeds, so the pass cannot be optimised away), prints the count and
 * exits. Everything a scan adds on top (loading the bundle, parsing, modules, rules, the report)
 * is measured against it.
 */
const FLOOR_SCRIPT =
  "const z = require('node:zlib'), fs = require('node:fs');" +
  'const b = z.gunzipSync(fs.readFileSync(process.argv[1]));' +
  'let n = 0; for (let i = 0; i < b.length; i++) if (b[i] === 10) n++;' +
  "process.stdout.write(String(n) + '\\n');";

/** CPU time (user + system) of this process's waited-for children, in ms (Linux /proc; null
 * elsewhere). */
function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5) (cutime, cstime), in clock ticks (100 per second on Linux).
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

/** Runs `args` with this Node to completion (output discarded); wall and CPU time in ms. */
function timedProcess(args: string[], env?: NodeJS.ProcessEnv): { wall: number; cpu: number | null } {
  const cpuBefore = childrenCpuMs();
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: 'ignore', cwd: os.tmpdir(), env });
  const wall = performance.now() - t;
  const cpuAfter = childrenCpuMs();
  if (r.error !== undefined) throw r.error;
  // Exit 1 is "findings at or above --fail-on": a complete scan.
  if (r.status !== 0 && r.status !== 1) throw new Error(`${args.join(' ')} exited ${String(r.status)}`);
  return { wall, cpu: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore };
}

/**
 * `tfguard scan <archive>` as a user runs it (the CLI bundle in a fresh process, text report to a
 * discarded stdout) against the floor above, interleaved, after one warm-up of each (file cache).
 * The bundle is built from these sources (scripts/build-cli.ts) into a temporary directory, so a
 * stale committed dist-cli/ is never what is measured. Its V8 code cache (src/cli/code-cache.ts)
 * goes to a cache directory of its own there, written by the warm-up scan, as a user's second
 * and later runs find it. The scan row runs with `--no-cache` (every file parsed, as the first
 * scan of a repository); a separate row runs with the CLI's extraction cache warm (filled by its
 * warm-up: a rescan of the same archive).
 */
async function wholeProcess(file: string, runs: number): Promise<ChildResult> {
  const { buildCli } = await import('../scripts/build-cli');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-process-'));
  try {
    await buildCli(dir);
    const bundle = path.join(dir, 'tfguard.cjs');
    const floorArgs = ['-e', FLOOR_SCRIPT, file];
    const scanArgs = [bundle, 'scan', file, '--no-color', '--no-cache'];
    const warmArgs = [bundle, 'scan', file, '--no-color'];
    const startArgs = [bundle, '--version'];
    const env = {
      ...process.env,
      XDG_CACHE_HOME: path.join(dir, 'cache'),
      TFGUARD_CACHE_DIR: '',
      TFGUARD_CODE_CACHE: 'on',
    };
    const warmEnv = { ...env, TFGUARD_EXTRACT_CACHE: 'on' };
    timedProcess(floorArgs);
    timedProcess(scanArgs, env);
    timedProcess(warmArgs, warmEnv); // fills the extraction cache
    const floor: { wall: number; cpu: number | null }[] = [];
    const scan: { wall: number; cpu: number | null }[] = [];
    const warm: { wall: number; cpu: number | null }[] = [];
    const start: { wall: number; cpu: number | null }[] = [];
    for (let i = 0; i < runs; i++) {
      floor.push(timedProcess(floorArgs));
      scan.push(timedProcess(scanArgs, env));
      warm.push(timedProcess(warmArgs, warmEnv));
      start.push(timedProcess(startArgs, env));
    }
    const cpu = (xs: { cpu: number | null }[]): Stats | null =>
      xs.every((x) => x.cpu !== null) ? stats(xs.map((x) => x.cpu as number)) : null;
    return {
      name: path.basename(file),
      floor: stats(floor.map((x) => x.wall)),
      scan: stats(scan.map((x) => x.wall)),
      start: stats(start.map((x) => x.wall)),
      floorCpu: cpu(floor),
      scanCpu: cpu(scan),
      warm: stats(warm.map((x) => x.wall)),
      warmCpu: cpu(warm),
      // Same-run ratios: the median of the per-run ratios (each scan against the floor next to it).
      ratio: stats(scan.map((x, i) => x.wall / (floor[i] as { wall: number }).wall)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The whole-process case as lines of the report. */
function processLines(r: ChildResult): string[] {
  const floor = r.floor as Stats;
  const scan = r.scan as Stats;
  const ratio = r.ratio as Stats;
  const fc = r.floorCpu as Stats | null;
  const sc = r.scanCpu as Stats | null;
  const wc = (r.warmCpu ?? null) as Stats | null;
  return [
    `Whole process: \`tfguard scan\` of ${String(r.name).replace('.tar.gz', '')} from the CLI bundle, fresh process, ` +
      'text report discarded, against the floor (a fresh `node` reading the archive, gunzip, one pass over ' +
      'every inflated byte), interleaved:',
    '',
    '| process | wall (ms) | CPU user+sys (ms, median) |',
    '|---|---|---:|',
    `| floor | ${fmtStats(floor)} | ${fc ? ms(fc.median) : 'n/a'} |`,
    `| \`tfguard --version\` (node start + bundle load) | ${fmtStats(r.start as Stats)} | |`,
    `| \`tfguard scan --no-cache\` (every file parsed) | ${fmtStats(scan)} | ${sc ? ms(sc.median) : 'n/a'} |`,
    `| **scan / floor** (per-run ratios) | ${ratio.min.toFixed(2)} / **${ratio.median.toFixed(2)}×** / ${ratio.max.toFixed(2)} (target ≤ 3×, goal 2.5×) | ${fc && sc ? (sc.median / fc.median).toFixed(2) + '×' : ''} |`,
    ...(r.warm !== undefined
      ? [
          `| \`tfguard scan\`, extraction cache warm (a rescan: nothing parsed; not against the target) | ${fmtStats(r.warm as Stats)} | ${wc ? ms(wc.median) : 'n/a'} |`,
        ]
      : []),
  ];
}

/** The corpus archive with the most bytes. */
function largestArchive(): string | undefined {
  return readdirSync(CORPUS)
    .filter((f) => f.endsWith('.tar.gz'))
    .sort((a, b) => statSync(path.join(CORPUS, b)).size - statSync(path.join(CORPUS, a)).size)[0];
}

async function waitForLoad(maxLoad: number, enabled: boolean): Promise<number> {
  const deadline = Date.now() + 15 * 60_000;
  while (enabled && os.loadavg()[0]! >= maxLoad && Date.now() < deadline) {
    process.stderr.write(`waiting for load < ${maxLoad} (now ${os.loadavg()[0]!.toFixed(2)})\n`);
    await new Promise((r) => setTimeout(r, 15_000));
  }
  return os.loadavg()[0] as number;
}

const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
const fmtStats = (s: Stats): string => `${ms(s.min)} / **${ms(s.median)}** / ${ms(s.max)}`;
const mb = (bytes: number): string => (bytes / 1e6).toFixed(2);

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return child(argv[1] as string, argv.slice(2));
  const flag = (name: string): boolean => argv.includes(name);
  const option = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  if (flag('--help')) {
    process.stdout.write(USAGE);
    return;
  }
  const corpus = corpusStatus();
  if (!corpus.ok) {
    process.stderr.write(`bench: cannot run: ${corpus.reason}\n`);
    process.exitCode = 2;
    return;
  }
  const quick = flag('--quick');
  const runs = Math.max(5, Number(option('--runs') ?? (quick ? 5 : 7)));
  if (flag('--directory-only')) {
    const largest = readdirSync(CORPUS)
      .filter((f) => f.endsWith('.tar.gz'))
      .sort((a, b) => statSync(path.join(CORPUS, b)).size - statSync(path.join(CORPUS, a)).size)[0];
    if (largest === undefined) throw new Error('no corpus archive');
    const r = await runChild('directory', [path.join(CORPUS, largest), String(runs)]);
    process.stdout.write(directoryLine(r) + '\n');
    return;
  }
  if (flag('--policy-only')) {
    const r = await runChild('policy', [path.join(CORPUS, POLICY_ARCHIVE), String(runs)]);
    process.stdout.write(policyLine(r) + '\n');
    return;
  }
  if (flag('--process-only')) {
    const largest = largestArchive();
    if (largest === undefined) throw new Error('no corpus archive');
    process.stderr.write(
      `whole process vs floor (${largest}), load average ${os.loadavg()[0]!.toFixed(2)}…\n`,
    );
    const r = await wholeProcess(path.join(CORPUS, largest), runs);
    process.stdout.write(
      [...processLines(r), '', `Load average ${os.loadavg()[0]!.toFixed(2)} after.`].join('\n') + '\n',
    );
    return;
  }
  if (flag('--remote-only')) {
    const remote = await runChild('remote', ['-', String(runs)]);
    process.stdout.write(remoteLine(remote) + '\n');
    return;
  }
  if (flag('--audit-only')) {
    const audit = await runChild('audit', ['-', String(runs)]);
    process.stdout.write(auditLine(audit) + '\n');
    return;
  }
  if (flag('--stacks-only')) {
    const stacks = [
      await runChild('stacks', ['backend', String(runs)]),
      await runChild('stacks', ['library', String(runs)]),
    ];
    process.stdout.write(stacksLines(stacks).join('\n') + '\n');
    return;
  }
  const only = option('--only')?.split(',');
  const loadBefore = await waitForLoad(Number(option('--max-load') ?? 2), !flag('--no-wait'));
  const archives = readdirSync(CORPUS)
    .filter((f) => f.endsWith('.tar.gz'))
    .filter((f) => only === undefined || only.some((o) => f.includes(o)))
    .sort();
  const terraform = hasTerraform();
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadBefore,
    runs,
  };

  const perArchive: Record<string, unknown>[] = [];
  for (const a of archives) {
    const file = path.join(CORPUS, a);
    process.stderr.write(`${a}…\n`);
    const fast = await runChild('archive', [file, String(runs)]);
    const baseline = await runChild('baseline', [file, String(quick ? 1 : 3)]);
    const cache = await runChild('cache', [file, String(runs)]);
    const fmt = terraform ? await terraformFmt(file, 3) : null;
    perArchive.push({ archive: a, fast, baseline, cache, fmt });
  }
  results.archives = perArchive;

  // fix --dry-run on the largest corpus archive (target: at most 1.3× the scan of the same directory).
  const largest = readdirSync(CORPUS)
    .filter((f) => f.endsWith('.tar.gz'))
    .sort((a, b) => statSync(path.join(CORPUS, b)).size - statSync(path.join(CORPUS, a)).size)[0];
  if (largest !== undefined && !flag('--no-fix')) {
    process.stderr.write(`fix --dry-run (${largest})…\n`);
    results.fix = await runChild('fix', [path.join(CORPUS, largest), String(runs)]);
  }

  // The same repository as a directory and as an archive (target: the directory ≤ 1.0×).
  if (largest !== undefined && !flag('--no-directory')) {
    process.stderr.write(`directory vs archive (${largest})…\n`);
    results.directory = await runChild('directory', [path.join(CORPUS, largest), String(runs)]);
  }

  // A scan with the policy (target: within 5% of one without), on the repository with most lock files.
  if (existsSync(path.join(CORPUS, POLICY_ARCHIVE)) && !flag('--no-policy')) {
    process.stderr.write(`policy (${POLICY_ARCHIVE})…\n`);
    results.policy = await runChild('policy', [path.join(CORPUS, POLICY_ARCHIVE), String(runs)]);
  }
  // The whole process against the floor (target: at most 3×, goal 2.5×).
  if (largest !== undefined && !flag('--no-process')) {
    process.stderr.write(`whole process vs floor (${largest})…\n`);
    results.process = await wholeProcess(path.join(CORPUS, largest), runs);
  }

  const scaleSource = path.join(CORPUS, 'ministryofjustice_modernisation-platform.tar.gz');
  const scaling: Record<string, unknown>[] = [];
  if (existsSync(scaleSource) && !flag('--no-scaling')) {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-scale-'));
    try {
      for (const copies of [1, 2, 4, 8]) {
        process.stderr.write(`scaling ${copies}×…\n`);
        const built = await replicate(scaleSource, copies);
        const file = path.join(tmp, `x${copies}.tar.gz`);
        writeFileSync(file, built.bytes);
        const r = await runChild('scale', [file, String(5)]);
        scaling.push({ copies, files: built.files, hclBytes: built.hclBytes, ...r });
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  results.scaling = scaling;

  const big = path.join(CORPUS, 'cloudposse_terraform-aws-components.tar.gz');
  if (!quick && existsSync(big)) {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'tfguard-bench-big-'));
    try {
      process.stderr.write('50 MB archive…\n');
      const built = await replicate(big, Math.ceil((50 * 1e6) / 4_875_969));
      const file = path.join(tmp, 'big.tar.gz');
      writeFileSync(file, built.bytes);
      results.big = {
        files: built.files,
        hclBytes: built.hclBytes,
        archiveBytes: built.bytes.length,
        // Under tsx (adds ~35 MiB of transpiler state) and as the bundled scan core (as in Lambda).
        tsx: await runChild('big', [file]),
        bundled: await bundledBig(file),
      };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  if (existsSync(big) && !flag('--no-batching')) {
    process.stderr.write('cache batching…\n');
    results.batching = await runChild('batching', [big]);
  }
  if (!flag('--no-stacks')) {
    process.stderr.write(`${STACKS} generated stacks…\n`);
    results.stacks = [
      await runChild('stacks', ['backend', String(runs)]),
      await runChild('stacks', ['library', String(runs)]),
    ];
  }
  process.stderr.write('remote modules…\n');
  results.remote = await runChild('remote', ['-', String(runs)]);
  if (!flag('--no-audit')) {
    process.stderr.write('fleet audit…\n');
    results.audit = await runChild('audit', ['-', String(runs)]);
  }
  process.stderr.write('Lambda bundle…\n');
  results.lambda = [await lambdaBundle(runs, 'upload-handler'), await lambdaBundle(runs, 'scan-core')];
  results.loadAfter = os.loadavg()[0];

  const json = option('--json');
  if (json !== undefined) writeFileSync(json, JSON.stringify(results, null, 2) + '\n');
  print(results, terraform);
}

/** The generated-stacks table: classification time (target < 2 s) and one full scan. */
function stacksLines(stacks: ChildResult[]): string[] {
  const lines = [
    `Classification of ${STACKS} generated stacks (one main.tf each; target: classification < 2 s, scan well inside the API Lambda's 29 s):`,
    '',
    '| shape | archive MB | kinds | classification (ms) | classification CPU (median ms) | full scan (ms) | findings | peak RSS MiB |',
    '|---|---:|---|---|---:|---:|---:|---:|',
  ];
  for (const s of stacks) {
    lines.push(
      `| ${String(s.shape)} | ${mb(s.archiveBytes as number)} | ${Object.entries(
        s.kinds as Record<string, number>,
      )
        .map(([k, n]) => `${k} ${n}`)
        .join(
          ', ',
        )} | ${fmtStats(s.classify as Stats)} | ${s.classifyCpu === undefined ? 'n/a' : ms((s.classifyCpu as Stats).median)} | ${ms(s.scan as number)} | ${String(s.findings)} | ${(s.rss as number).toFixed(0)} |`,
    );
  }
  return lines;
}

/** The directory-vs-archive case as one line of the report. */
function directoryLine(r: ChildResult): string {
  const dir = r.directory as Stats;
  const archive = r.archive as Stats;
  return (
    `\`tfguard scan\` of ${String(r.name).replace('.tar.gz', '')} as a directory (unpacked) and as the archive, ` +
    `through the CLI, same process: directory ${fmtStats(dir)} ms, archive ${fmtStats(archive)} ms, ` +
    `${(dir.median / archive.median).toFixed(2)}× (target ≤ 1.0×)` +
    (r.directoryCpu !== undefined
      ? `; CPU time (medians) ${ms((r.directoryCpu as Stats).median)} vs ${ms((r.archiveCpu as Stats).median)} ms, ` +
        `${((r.directoryCpu as Stats).median / (r.archiveCpu as Stats).median).toFixed(2)}×.`
      : '.')
  );
}

/** The remote module case as one line of the report. */
function remoteLine(r: ChildResult): string {
  const offline = r.offline as Stats;
  const warm = r.warm as Stats;
  return (
    `Remote modules: a root calling 20 registry modules (${String(r.resolved)} remote modules resolved from ` +
    `provider metadata, 30 versions each): resolution off ${fmtStats(offline)} ms; cold cache ` +
    `${ms(r.coldMs as number)} ms (${String(r.coldRequests)} requests); warm cache ${fmtStats(warm)} ms ` +
    `(${String(r.warmRequests)} requests): **the warm rescan adds ${ms(warm.median - offline.median)} ms** (median).`
  );
}

function print(r: Record<string, unknown>, terraform: boolean): void {
  const lines: string[] = [];
  lines.push(
    `tfguard benchmark — ${String(r.date)}, node ${String(r.node)}, ${String(r.cpus)} CPUs (${String(r.cpuModel)}), ` +
      `load average ${(r.loadBefore as number).toFixed(2)} before / ${(r.loadAfter as number).toFixed(2)} after, ` +
      `${String(r.runs)} measured runs after one warm-up`,
  );
  lines.push('');
  lines.push('Times in ms: min / **median** / max. Scan = archive bytes in memory → report.');
  lines.push('');
  lines.push(
    '| archive | files | HCL MB | scan | MB/s | peak RSS MiB | of which: read archive / extract files (medians) | full hcl2json scan (median) | speed-up | terraform fmt -check (median) | ratio fmt/scan | warm-cache rescan |',
  );
  lines.push('|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const a of r.archives as Record<string, Record<string, unknown>>[]) {
    const fast = a.fast as Record<string, unknown>;
    const scan = fast.scan as Stats;
    const base = (a.baseline as Record<string, unknown>).scan as Stats;
    const fmt = a.fmt as unknown as Stats | null;
    const warm = (a.cache as Record<string, unknown>).warm as Stats;
    const bytes = fast.hclBytes as number;
    lines.push(
      `| ${String(a.archive).replace('.tar.gz', '')} | ${String(fast.files)} | ${mb(bytes)} | ${fmtStats(scan)} | ` +
        `${(bytes / 1e6 / (scan.median / 1000)).toFixed(1)} | ${(fast.rss as number).toFixed(0)} | ${ms((fast.read as Stats).median)} / ${ms((fast.parse as Stats).median)} | ` +
        `${ms(base.median)} | ${(base.median / scan.median).toFixed(1)}× | ${fmt ? ms(fmt.median) : 'n/a'} | ` +
        `${fmt ? (fmt.median / scan.median).toFixed(1) + '×' : 'n/a'} | ${fmtStats(warm)} |`,
    );
  }
  if (!terraform) lines.push('', 'terraform is not installed: no `terraform fmt` column.');
  const fix = r.fix as Record<string, unknown> | undefined;
  if (fix !== undefined) {
    const scan = fix.scan as Stats;
    const dry = fix.fix as Stats;
    lines.push(
      '',
      `\`tfguard fix --dry-run\` on the largest corpus archive (${String(fix.name).replace('.tar.gz', '')}, unpacked; ` +
        `${String(fix.fixed)} fixes in ${String(fix.files)} files${fix.rescanned === true ? ', one rescan' : ''}), ` +
        'both through the CLI with output discarded:',
      '',
      '| command | time (ms) | ratio to scan (medians) |',
      '|---|---|---:|',
      `| scan <dir> | ${fmtStats(scan)} | 1.0× |`,
      `| fix <dir> --dry-run | ${fmtStats(dry)} | ${(dry.median / scan.median).toFixed(2)}× (target ≤ 1.3×) |`,
    );
    if (fix.scanCpu !== undefined) {
      const sc = fix.scanCpu as Stats;
      const fc = fix.fixCpu as Stats;
      lines.push(
        `| CPU time (medians): scan / fix | ${ms(sc.median)} / ${ms(fc.median)} | ${(fc.median / sc.median).toFixed(2)}× |`,
      );
    }
  }
  const directory = r.directory as Record<string, unknown> | undefined;
  if (directory !== undefined) lines.push('', directoryLine(directory));
  const policy = r.policy as Record<string, unknown> | undefined;
  if (policy !== undefined) lines.push('', policyLine(policy));
  const whole = r.process as ChildResult | undefined;
  if (whole !== undefined) lines.push('', ...processLines(whole));
  const scaling = r.scaling as Record<string, unknown>[];
  if (scaling.length > 0) {
    lines.push('', 'Scaling (copies of the modernisation-platform tree in one archive):', '');
    lines.push('| copies | files | HCL MB | scan (ms) | ms per MB | peak RSS MiB |');
    lines.push('|---:|---:|---:|---|---:|---:|');
    for (const s of scaling) {
      const st = s.scan as Stats;
      lines.push(
        `| ${String(s.copies)}× | ${String(s.files)} | ${mb(s.hclBytes as number)} | ${fmtStats(st)} | ` +
          `${(st.median / ((s.hclBytes as number) / 1e6)).toFixed(0)} | ${(s.rss as number).toFixed(0)} |`,
      );
    }
  }
  const big = r.big as Record<string, Record<string, unknown>> | undefined;
  if (big !== undefined) {
    const b = big.bundled as Record<string, unknown>;
    const t = big.tsx as Record<string, unknown>;
    lines.push(
      '',
      `50 MB of HCL: ${String(big.files)} files, ${mb(big.hclBytes as unknown as number)} MB (archive ${mb(big.archiveBytes as unknown as number)} MB), ` +
        `one scan in a fresh process: bundled scan core ${ms(b.scan as number)} ms, **peak RSS ${(b.rss as number).toFixed(0)} MiB**; ` +
        `under tsx ${ms(t.scan as number)} ms, peak RSS ${(t.rss as number).toFixed(0)} MiB. WebAssembly loaded: ${String(b.wasmStarted)}.`,
    );
  }
  const batching = r.batching as Record<string, Record<string, unknown>> | undefined;
  if (batching !== undefined) {
    lines.push(
      '',
      'Cache reads for the cloudposse archive: one manifest vs one object per file (32 concurrent GETs):',
      '',
    );
    lines.push('| store | files | manifest (gzip) | GET manifest (ms) | GET per-file objects (ms) |');
    lines.push('|---|---:|---:|---|---|');
    for (const [label, b] of Object.entries(batching)) {
      lines.push(
        `| ${label} | ${String(b.objects)} | ${((b.manifestBytes as number) / 1024).toFixed(0)} KiB | ${fmtStats(b.manifest as Stats)} | ${fmtStats(b.perFile as Stats)} |`,
      );
    }
  }
  if (r.stacks !== undefined) lines.push('', ...stacksLines(r.stacks as ChildResult[]));
  if (r.remote !== undefined) lines.push('', remoteLine(r.remote as ChildResult));
  if (r.audit !== undefined) lines.push('', auditLine(r.audit as ChildResult));
  lines.push(
    '',
    'Lambda bundles (esbuild as in serverless.yml, hcl2json and its dependencies beside the bundle):',
    '',
  );
  lines.push(
    '| bundle | entry | bundle MB | zip MB | cold init: module load to handler ready (ms) | node start before it (median ms) |',
  );
  lines.push('|---|---|---:|---:|---|---:|');
  for (const l of r.lambda as Record<string, unknown>[]) {
    lines.push(
      `| ${String(l.kind)} | ${String(l.entry)} | ${mb(l.bundleBytes as number)} | ${mb(l.zipBytes as number)} | ` +
        `${fmtStats(l.load as Stats)} | ${ms((l.boot as Stats).median)} |`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
