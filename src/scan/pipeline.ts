/**
 * The scan pipeline: archive → settings → modules → rules → report. Used by the CLI, the Lambda
 * handlers and the tests alike; it never reads the environment and never writes anywhere.
 */
import { defaultShouldLoad, inputKind, readArchiveBytes, readInput } from '../archive';
import { FULL_SPEC, HclParser, movedResult, pathVariant } from '../hcl';
import type { BlockSpec, ParseResult } from '../hcl';
import { analyzeLocks, isProviderPackageZip, RegistryClient } from '../lockfile';
import type { LoadedArchive } from '../archive';
import type { ScanConfig } from '../model';
import {
  isModulesManifest,
  LOADER_PROJECTION,
  loadModules,
  RemoteNetwork,
  resolveRemoteModules,
} from '../modules';
import type { ConfigFileReader } from '../modules';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { DEFAULT_MAX_NESTING_DEPTH, hcl2jsonPackageJson, specFingerprint } from '../hcl';
import { ExtractionCache, EXTRACTOR_VERSION } from './cache';
import type { ExtractionCacheOptions, PreloadedManifest } from './cache';
import type { ObjectStore } from '../storage/types';
import { buildReport } from '../report';
import type { Report } from '../report/types';
import { readAnnotations, RULES, ruleContext, runRules } from '../rules';
import type { AnnotatedFile } from '../rules';
import type { LockAnalysis } from '../lockfile/types';
import type { ModuleInfo } from '../modules';
import { CONFIG_FILE_NAME, DEFAULT_CONFIG, mergeConfig, parseConfigFile } from './config-file';
import type { ConfigLayer } from './config-file';
import type { HclParserSettings, ScanOptions } from './types';
import type { ScanParser, ScanReuse } from './reuse';
import { ParseAhead } from './ahead';
import {
  duration,
  PARSING,
  registryBudgetMs,
  timeLimit,
  withDeadline,
  type ScanDeadline,
  type TimeLimit,
} from './deadline';

export type { ScanOptions } from './types';
export { EXTRACTOR_VERSION } from './cache';
export type { CacheStats } from './cache';
export {
  duration,
  timeLimit,
  TimeLimitReached,
  registryBudgetMs,
  REGISTRY_RESERVE_MIN_MS,
  REGISTRY_RESERVE_SHARE,
  type TimeLimit,
} from './deadline';

const KNOWN_RULES: ReadonlySet<string> = new Set(RULES.map((r) => r.id));

let sharedParser: { settings: string; parser: HclParser } | null = null;

/**
 * One parser (and its worker threads) per process, reused across scans: Lambda warm starts and
 * fleet audits skip the WebAssembly start-up. Workers are unref'd when idle, so a CLI still exits.
 */
export function sharedHclParser(settings: HclParserSettings = {}): HclParser {
  const key = JSON.stringify(settings);
  if (sharedParser === null || sharedParser.settings !== key) {
    const old = sharedParser?.parser;
    sharedParser = { settings: key, parser: new HclParser(settings) };
    if (old) void old.close();
  }
  return sharedParser.parser;
}

/** Stops the shared parser's workers (tests, CLI shutdown). */
export async function closeSharedParser(): Promise<void> {
  const current = sharedParser;
  sharedParser = null;
  if (current) await current.parser.close();
}

/** Which files the archive reader keeps in memory (with `terraform init`'s record of the modules it
 * installed, `.terraform/modules/modules.json`: remote resolution reads it, and `module-version-missing`
 * fixes take versions from it). */
export function shouldLoad(path: string): boolean {
  return defaultShouldLoad(path) || isProviderPackageZip(path) || isModulesManifest(path);
}

async function resolveConfig(
  archive: LoadedArchive,
  parser: ScanParser,
  options: ScanOptions,
  signal: AbortSignal | undefined,
): Promise<ScanConfig> {
  const layers: Array<{ file: string | null; layer: ConfigLayer }> = [];
  const own = archive.files.get(CONFIG_FILE_NAME);
  if (own !== undefined) {
    const parsed = await parser.parse(CONFIG_FILE_NAME, own, { signal });
    layers.push({
      file: CONFIG_FILE_NAME,
      layer: parseConfigFile(CONFIG_FILE_NAME, parsed, KNOWN_RULES, { fromArchive: true }),
    });
  }
  if (options.configText !== undefined) {
    const { name, text } = options.configText;
    const parsed = await parser.parse(name, Buffer.from(text, 'utf8'), { signal });
    layers.push({ file: name, layer: parseConfigFile(name, parsed, KNOWN_RULES) });
  }
  if (options.config !== undefined) layers.push({ file: null, layer: options.config });
  if (options.registry !== undefined) layers.push({ file: null, layer: { registry: options.registry } });
  return mergeConfig(DEFAULT_CONFIG, layers);
}

let hcl2jsonVersion: string | null = null;

/** Everything besides a file's content that determines its extraction result. */
export function cacheFingerprint(): string {
  if (hcl2jsonVersion === null) {
    try {
      const pkg = JSON.parse(readFileSync(hcl2jsonPackageJson(), 'utf8')) as {
        version?: unknown;
      };
      hcl2jsonVersion = String(pkg.version);
    } catch {
      hcl2jsonVersion = 'unknown';
    }
  }
  const material = [
    `v${EXTRACTOR_VERSION}`,
    specFingerprint(LOADER_PROJECTION),
    `depth${DEFAULT_MAX_NESTING_DEPTH}`,
    `hcl2json${hcl2jsonVersion}`,
  ].join('/');
  return createHash('sha256').update(material).digest('hex').slice(0, 24);
}

/** The extraction cache of a scan: `store`, this build's fingerprint, the scan's lineage. */
function cacheOptions(store: ObjectStore, options: ScanOptions): ExtractionCacheOptions {
  return {
    store,
    fingerprint: cacheFingerprint(),
    ...(options.cacheLineage !== undefined ? { lineage: options.cacheLineage } : {}),
  };
}

/** The content hash of a file: the archive reader's for the bytes it read, computed for link paths
 * and for other bytes (the rescans of `tfguard fix` pass edited ones). */
function fileHashes(archive: LoadedArchive): (path: string, content: Buffer) => string {
  const known = new Map<string, string>();
  for (const e of archive.entries)
    if (e.type === 'file' && e.sha256 !== undefined) known.set(e.path, e.sha256);
  return (path, content) =>
    (archive.files.get(path) === content ? known.get(path) : undefined) ??
    createHash('sha256').update(content).digest('hex');
}

/** Smaller copies are parsed again: moving a result costs about what the fast path's parse of a
 * few hundred bytes does, and in the first scans of a process both run unoptimised (measured:
 * terraform-aws-hcp's one 144-byte copy and cds-snc_terraform-modules' forty of ~100 bytes made
 * their scans 4-6% slower with every copy shared). */
const MIN_SHARED_BYTES = 1024;

/**
 * `parser`, parsing each content of at least `MIN_SHARED_BYTES` once per scan, projection and name variant: a file whose bytes
 * another file of the archive already had (a copy: half of cloudposse/terraform-aws-components'
 * configuration bytes) gets that file's result under its own path (src/hcl/moved.ts). Parse errors
 * are not moved (a message may name its file): the copy is parsed.
 */
function copiesParsedOnce(archive: LoadedArchive, parser: ScanParser): ScanParser {
  const shared = new Set<string>();
  let copies = 0;
  for (const e of archive.entries) {
    if (e.type !== 'file' || e.sha256 === undefined) continue;
    const content = archive.files.get(e.path);
    if (content === undefined || content.length < MIN_SHARED_BYTES) continue;
    if (shared.has(e.sha256)) copies++;
    else shared.add(e.sha256);
  }
  // No copy worth sharing (most repositories): the wrapper's bookkeeping would be all it adds.
  if (copies === 0) return parser;
  const hashOf = fileHashes(archive);
  // The first parse of each content, in flight or done: the loader parses several files at once.
  const first = new Map<BlockSpec, Map<string, Promise<ParseResult>>>();
  const once = (
    path: string,
    content: Buffer,
    spec: BlockSpec,
    parse: () => Promise<ParseResult>,
  ): Promise<ParseResult> => {
    if (content.length < MIN_SHARED_BYTES) return parse();
    let bySpec = first.get(spec);
    if (bySpec === undefined) {
      bySpec = new Map();
      first.set(spec, bySpec);
    }
    const key = `${hashOf(path, content)}/${pathVariant(path)}`;
    const earlier = bySpec.get(key);
    if (earlier === undefined) {
      const result = parse();
      bySpec.set(key, result);
      return result;
    }
    return earlier.then((result) => movedResult(result, path) ?? parse());
  };
  return {
    extract: (path, content, spec, options) =>
      once(path, content, spec, () => parser.extract(path, content, spec, options)),
    parse: (path, content, options) =>
      once(path, content, FULL_SPEC, () => parser.parse(path, content, options)),
  };
}

/** The files whose `tfguard:` annotations count: every module's configuration files and lock files
 * (a finding never points anywhere else that a comment could be written). */
function* annotatedFiles(
  archive: LoadedArchive,
  modules: readonly ModuleInfo[],
  lock: LockAnalysis,
): Generator<AnnotatedFile> {
  const paths = new Set<string>();
  for (const m of modules) {
    for (const f of m.files) paths.add(f);
    if (m.lockFile !== null) paths.add(m.lockFile);
  }
  for (const r of lock.roots) if (r.lockFile !== null) paths.add(r.lockFile);
  for (const path of [...paths].sort()) {
    const content = archive.files.get(path);
    if (content !== undefined) yield { path, content };
  }
}

/**
 * Remote module resolution (src/modules/remote): installed copies in the archive always; the
 * registries and allowed hosts only with `options.remoteModules`, within what the deadline leaves
 * after a reserve for the rest of the scan (half of it when the registry check follows).
 */
async function resolveRemote(
  loaded: Awaited<ReturnType<typeof loadModules>>,
  archive: LoadedArchive,
  config: ScanConfig,
  parser: ScanParser,
  read: ConfigFileReader,
  options: ScanOptions,
  deadline: ScanDeadline,
): Promise<Awaited<ReturnType<typeof loadModules>>> {
  if (!loaded.roots.some((r) => r.remoteCalls.some((c) => c.installed !== true && c.source !== null))) {
    return loaded;
  }
  const online = options.remoteModules === true;
  deadline.enter(online ? 'resolving remote modules (with the network)' : 'resolving remote modules');
  const remaining = online ? deadline.remainingMs() : undefined;
  let budget: TimeLimit | undefined;
  if (remaining !== undefined) {
    const ms = Math.floor(registryBudgetMs(remaining) * (config.registry ? 0.5 : 1));
    budget = timeLimit(
      ms,
      `remote module resolution's time budget of ${duration(ms)} ran out (the scan's deadline left ` +
        `${duration(remaining)})`,
      options.clock,
    );
  }
  const cache = options.remoteModuleCache ?? options.store;
  const network = online
    ? new RemoteNetwork({
        ...(options.remoteModuleSettings ?? {}),
        registryHosts: config.registryHosts,
        credentials: { ...(config.credentials ?? {}), ...(options.registryTokens ?? {}) },
        moduleHosts: config.moduleHosts ?? {},
        ...(options.remoteModuleTenant !== undefined ? { tenant: options.remoteModuleTenant } : {}),
        ...(cache !== undefined ? { cache } : {}),
        ...(budget !== undefined ? { signal: budget.signal } : {}),
      })
    : null;
  try {
    const resolved = await deadline.race(
      resolveRemoteModules(loaded, {
        archive,
        config,
        parser,
        readConfigFile: read,
        signal: deadline.signal,
        network,
        offlineReason: options.remoteModulesOffReason ?? offlineReason(archive),
        ...(options.limits !== undefined ? { limits: options.limits } : {}),
      }),
    );
    if (network !== null) {
      options.onRemoteStats?.({ requests: network.requestCount, downloads: network.downloadCount });
    }
    return resolved;
  } finally {
    budget?.dispose();
  }
}

/** Why remote modules stay unresolved when the scan does not fetch them (the loader's
 * `offlineReason`, naming the input as the user gave it). */
function offlineReason(archive: LoadedArchive): string {
  return (
    'remote modules are fetched only with --remote-modules, and the ' +
    `${inputKind(archive)} has no installed copy (.terraform/modules)`
  );
}

/** Scans an archive already read into memory. Throws `InputError` only for unusable settings
 * (and `scan-timeout`, see `ScanOptions.timeoutMs` / `signal`). `reuse`: what earlier scans of
 * this archive (with other bytes in some files) computed that this one may take over
 * (src/scan/reuse.ts; `tfguard fix` between its passes). */
export async function scanArchive(
  archive: LoadedArchive,
  options: ScanOptions = {},
  reuse?: ScanReuse,
): Promise<Report> {
  return withDeadline(options, (deadline) => scanLoaded(archive, options, deadline, reuse));
}

async function scanLoaded(
  archive: LoadedArchive,
  options: ScanOptions,
  deadline: ScanDeadline,
  reuse?: ScanReuse,
  fromDirectory?: { ahead: ParseAhead | undefined; preloaded: PreloadedManifest | null },
): Promise<Report> {
  const ahead = fromDirectory?.ahead;
  const signal = deadline.signal;
  deadline.enter('reading the settings');
  // Copies parsed once beneath the reuse of `tfguard fix`, which keeps every result by path, and
  // above the files a directory's read parsed ahead.
  const hcl = sharedHclParser(options.parser);
  const shared = copiesParsedOnce(archive, ahead === undefined ? hcl : ahead.parser(hcl));
  const parser = reuse === undefined ? shared : reuse.parser(shared);
  const config = await resolveConfig(archive, parser, options, signal);
  let cache: ExtractionCache | null = null;
  let read: ConfigFileReader = (path, content) =>
    parser.extract(path, content, LOADER_PROJECTION, { signal });
  if (options.cache !== undefined) {
    deadline.enter('reading the extraction cache');
    const c = await deadline.race(
      ExtractionCache.open(cacheOptions(options.cache, options), archive.sha256, fromDirectory?.preloaded),
    );
    cache = c;
    const hashOf = fileHashes(archive);
    read = async (path, content) => {
      const sha256 = hashOf(path, content);
      const hit = c.lookup(sha256, path);
      if (hit !== undefined) return hit;
      const result = await parser.extract(path, content, LOADER_PROJECTION, { signal });
      c.record(sha256, result);
      return result;
    };
  }
  // Without the cache, `read` asks `parser`, which answers from the earlier scans already.
  if (reuse !== undefined && cache !== null) read = reuse.reader(read);
  deadline.enter(PARSING);
  let loaded = await loadModules({
    archive,
    config,
    parser,
    readConfigFile: deadline.reader(read),
    signal,
    ...(reuse === undefined ? {} : { memo: reuse.modules }),
  });
  loaded = await resolveRemote(loaded, archive, config, parser, deadline.reader(read), options, deadline);
  if (cache !== null) {
    deadline.enter('saving the extraction cache');
    await deadline.race(cache.save());
    options.onCacheStats?.(cache.stats);
  }
  deadline.enter(config.registry ? 'checking the lock files (with the registry)' : 'checking the lock files');
  // The registry check gets what the deadline leaves after a reserve for the rules and the report.
  const remaining = config.registry ? deadline.remainingMs() : undefined;
  let budget: TimeLimit | undefined;
  if (remaining !== undefined) {
    const ms = registryBudgetMs(remaining);
    budget = timeLimit(
      ms,
      `the registry check's time budget of ${duration(ms)} ran out (the scan's deadline left ` +
        `${duration(remaining)}, ${duration(remaining - ms)} of it kept for the rules and the report)`,
      options.clock,
    );
  }
  const registry = config.registry
    ? new RegistryClient({
        hosts: config.registryHosts,
        credentials: { ...(config.credentials ?? {}), ...(options.registryTokens ?? {}) },
        ...(options.store ? { cache: options.store } : {}),
        ...(budget ? { signal: budget.signal } : {}),
      })
    : undefined;
  let lock;
  try {
    lock = await deadline.race(
      analyzeLocks({
        archive,
        modules: loaded.modules,
        // Lock files are verified for deployable roots (and examples with strict_examples).
        roots: loaded.roots.filter(
          (r) => r.kind === 'root' || (r.kind === 'example' && config.strictExamples),
        ),
        config,
        parser,
        engine: loaded.engine,
        ...(registry ? { registry } : {}),
      }),
    );
  } finally {
    budget?.dispose();
  }
  options.onLockAnalysis?.(lock, config);
  deadline.enter('reading inline annotations');
  const annotations = readAnnotations(annotatedFiles(archive, loaded.modules, lock), KNOWN_RULES);
  deadline.enter('running the rules');
  const ctx = ruleContext(
    loaded,
    config,
    lock,
    annotations,
    archive.files,
    inputKind(archive),
    options.policy,
  );
  const findings = runRules(ctx);
  deadline.enter('building the report');
  return buildReport({
    archive,
    engine: loaded.engine,
    configFiles: config.configFiles,
    modules: loaded.modules,
    roots: loaded.roots,
    lock,
    findings,
  });
}

/** Scans archive bytes (`.tar.gz`, `.tgz`, `.tar`, `.zip`; the format is read from the content). */
export async function scanBytes(name: string, bytes: Buffer, options: ScanOptions = {}): Promise<Report> {
  return withDeadline(options, async (deadline) => {
    deadline.enter('reading the archive');
    const archive = await deadline.race(
      readArchiveBytes(name, bytes, { limits: options.limits, shouldLoad }),
    );
    return scanLoaded(archive, options, deadline);
  });
}

/** Whether `path` is a directory (for the phase a timeout names; readInput reports a bad path). */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Scans a directory or an archive file on disk. */
export async function scanPath(path: string, options: ScanOptions = {}): Promise<Report> {
  return withDeadline(options, async (deadline) => {
    const directory = isDirectory(path);
    deadline.enter(`reading the ${directory ? 'directory' : 'archive'}`);
    // A directory's configuration files are parsed while the rest of it is read, those the
    // extraction cache lacks (src/scan/ahead.ts).
    let ahead: ParseAhead | undefined;
    let preloaded: PreloadedManifest | null = null;
    if (directory) {
      const hcl = sharedHclParser(options.parser);
      if (options.cache === undefined) ahead = new ParseAhead(hcl, deadline.signal);
      else if (options.cacheLineage !== undefined) {
        const manifest = await deadline.race(ExtractionCache.preload(cacheOptions(options.cache, options)));
        preloaded = manifest;
        ahead = new ParseAhead(hcl, deadline.signal, (sha256) => manifest?.has(sha256) === true);
      }
    }
    const archive = await deadline.race(
      readInput(path, {
        limits: options.limits,
        shouldLoad,
        ...(options.directories !== undefined ? { directories: options.directories } : {}),
        ...(ahead !== undefined ? { ahead } : {}),
      }),
    );
    const report = await scanLoaded(archive, options, deadline, undefined, { ahead, preloaded });
    if (ahead !== undefined) options.onParseAheadStats?.({ ...ahead.stats });
    return report;
  });
}
