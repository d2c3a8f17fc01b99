/**
 * The scan pipeline: archive → settings → modules → rules → report. Used by the CLI, the Lambda
 * handlers and the tests alike; it never reads the environment and never writes anywhere.
 */
import { defaultShouldLoad, readArchiveBytes, readInput } from '../archive';
import { displayName } from '../archive/paths';
import { InputError, isInputError } from '../errors';
import { HclParser } from '../hcl';
import { analyzeLocks, isProviderPackageZip, RegistryClient } from '../lockfile';
import type { LoadedArchive, ScanConfig } from '../model';
import { LOADER_PROJECTION, loadModules } from '../modules';
import type { ConfigFileReader } from '../modules';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DEFAULT_MAX_NESTING_DEPTH, specFingerprint } from '../hcl';
import { ExtractionCache, EXTRACTOR_VERSION } from './cache';
import { buildReport } from '../report/build';
import type { Report } from '../report/types';
import { RULES, runRules } from '../rules';
import type { RuleContext } from '../rules/types';
import { CONFIG_FILE_NAME, DEFAULT_CONFIG, mergeConfig, parseConfigFile } from './config-file';
import type { ConfigLayer } from './config-file';
import type { HclParserSettings, ScanOptions } from './types';

export type { ScanOptions } from './types';
export { EXTRACTOR_VERSION } from './cache';
export type { CacheStats } from './cache';

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

/** Which files the archive reader keeps in memory. */
export function shouldLoad(path: string): boolean {
  return defaultShouldLoad(path) || isProviderPackageZip(path);
}

async function resolveConfig(
  archive: LoadedArchive,
  parser: HclParser,
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
      const pkg = JSON.parse(readFileSync(require.resolve('@cdktf/hcl2json/package.json'), 'utf8')) as {
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

/** The content hash of each loaded file (the archive reader's, or computed for link paths). */
function fileHashes(archive: LoadedArchive): (path: string, content: Buffer) => string {
  const known = new Map<string, string>();
  for (const e of archive.entries)
    if (e.type === 'file' && e.sha256 !== undefined) known.set(e.path, e.sha256);
  return (path, content) => known.get(path) ?? createHash('sha256').update(content).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Deadlines
// ---------------------------------------------------------------------------------------------

/** The reason a `timeLimit` signal fires with; its message ends the scan-timeout message. */
export class TimeLimitReached extends Error {
  override readonly name = 'TimeLimitReached';
}

const timeLimits = new WeakMap<AbortSignal, { at: number; abort: () => void }>();

export interface TimeLimit {
  signal: AbortSignal;
  /** When it fires (milliseconds since the epoch). */
  at: number;
  /** Stops its timer (a scan calls this for its own limit; the signal keeps its state). */
  dispose(): void;
}

/**
 * A signal that fires `ms` from now with a `TimeLimitReached(description)` reason, e.g. "the scan
 * time limit is 30 s". Unlike `AbortSignal.timeout`, a scan given this signal also compares the
 * clock itself at every checkpoint, so the limit holds even when long synchronous work (or a run of
 * files that need no I/O) keeps its timer from running.
 */
export function timeLimit(ms: number, description: string): TimeLimit {
  if (typeof ms !== 'number' || Number.isNaN(ms))
    throw new RangeError(`time limit must be a number, got ${ms}`);
  const controller = new AbortController();
  const wait = Math.max(0, ms);
  const at = Date.now() + wait;
  const abort = (): void => {
    if (!controller.signal.aborted) controller.abort(new TimeLimitReached(description));
  };
  timeLimits.set(controller.signal, { at, abort });
  if (wait === 0) {
    abort();
    return { signal: controller.signal, at, dispose: () => undefined };
  }
  const timer = setTimeout(abort, Math.min(wait, 2 ** 31 - 1));
  timer.unref();
  return { signal: controller.signal, at, dispose: () => clearTimeout(timer) };
}

function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * One scan's deadline: its own `timeoutMs` and the caller's `signal`, whichever fires first, and
 * where the scan was (for the message of the `scan-timeout` error).
 */
class ScanDeadline {
  /** Fires when either source does; undefined when the scan has no deadline. */
  readonly signal: AbortSignal | undefined;
  private readonly started = Date.now();
  private readonly controller = new AbortController();
  private readonly sources: AbortSignal[] = [];
  private readonly cleanups: (() => void)[] = [];
  private readonly expired: Promise<never>;
  private stage = 'starting';
  /** Files being parsed, in the order they started. */
  private readonly parsing = new Set<string>();
  private lastParsed: string | null = null;

  constructor(options: ScanOptions) {
    if (options.timeoutMs !== undefined) {
      const ms = options.timeoutMs;
      if (typeof ms !== 'number' || !(ms > 0)) {
        throw new RangeError(`ScanOptions.timeoutMs must be a positive number, got ${String(ms)}`);
      }
      const own = timeLimit(ms, `the scan time limit is ${duration(ms)}`);
      this.cleanups.push(() => own.dispose());
      this.sources.push(own.signal);
    }
    if (options.signal !== undefined) this.sources.push(options.signal);
    for (const source of this.sources) {
      const forward = (): void => {
        if (!this.controller.signal.aborted) this.controller.abort(source.reason);
      };
      if (source.aborted) forward();
      else {
        source.addEventListener('abort', forward, { once: true });
        this.cleanups.push(() => source.removeEventListener('abort', forward));
      }
    }
    this.signal = this.sources.length > 0 ? this.controller.signal : undefined;
    this.expired = new Promise<never>((_, reject) => {
      const fire = (): void => reject(this.controller.signal.reason);
      if (this.controller.signal.aborted) fire();
      else this.controller.signal.addEventListener('abort', fire, { once: true });
    });
    this.expired.catch(() => undefined);
  }

  /** True once the deadline passed (also noticing a `timeLimit` whose timer could not run yet). */
  get aborted(): boolean {
    if (this.signal === undefined) return false;
    if (!this.controller.signal.aborted) {
      const now = Date.now();
      for (const source of this.sources) {
        const limit = timeLimits.get(source);
        if (limit !== undefined && now >= limit.at) limit.abort();
      }
    }
    return this.controller.signal.aborted;
  }

  /** Throws the scan-timeout error when the deadline passed. */
  check(): void {
    if (this.aborted) throw this.timeoutError();
  }

  /** Checks the deadline, then records that the scan moved on to `stage`. */
  enter(stage: string): void {
    this.check();
    this.stage = stage;
  }

  /** `work`, or the scan-timeout error as soon as the deadline passes (work in flight is abandoned). */
  async race<T>(work: Promise<T>): Promise<T> {
    if (this.signal === undefined) return work;
    try {
      return await Promise.race([work, this.expired]);
    } catch (err) {
      // A rejection of the input (e.g. by the archive reader) that came first stays what it is.
      if (!isInputError(err) && this.aborted) throw this.timeoutError();
      throw err;
    }
  }

  /** Wraps the loader's file reader: a checkpoint before each file, and which files are in flight. */
  reader(read: ConfigFileReader): ConfigFileReader {
    if (this.signal === undefined) return read;
    return async (path, content) => {
      this.check();
      this.parsing.add(path);
      try {
        return await read(path, content);
      } catch (err) {
        if (this.aborted) throw this.timeoutError(path);
        throw err;
      } finally {
        this.parsing.delete(path);
        this.lastParsed = path;
      }
    };
  }

  timeoutError(file?: string): InputError {
    const reason: unknown = this.controller.signal.reason;
    let why = 'the scan was cancelled';
    if (reason instanceof TimeLimitReached) why = reason.message;
    else if (reason instanceof Error && reason.name === 'TimeoutError') why = 'its deadline passed';
    else if (reason instanceof Error && reason.name !== 'AbortError' && reason.message !== '')
      why = reason.message;
    const entry = file ?? this.parsing.values().next().value;
    let where = this.stage;
    if (entry !== undefined) where = `parsing "${displayName(entry)}"`;
    else if (this.stage === PARSING && this.lastParsed !== null)
      where = `${PARSING} (after "${displayName(this.lastParsed)}")`;
    return new InputError(
      'scan-timeout',
      `scan timed out after ${duration(Date.now() - this.started)} while ${where}: ${why}`,
      { ...(entry !== undefined ? { entry: displayName(entry) } : {}), cause: reason },
    );
  }

  dispose(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}

const PARSING = 'parsing the configuration files';

/**
 * Runs one scan under its deadline. A scan returns a report only when it finished before the
 * deadline; otherwise it throws `InputError('scan-timeout')`, whatever was in flight.
 */
async function withDeadline(
  options: ScanOptions,
  work: (deadline: ScanDeadline) => Promise<Report>,
): Promise<Report> {
  const deadline = new ScanDeadline(options);
  try {
    deadline.check();
    const report = await work(deadline);
    deadline.check();
    return report;
  } catch (err) {
    if (isInputError(err)) throw err;
    if (deadline.aborted) throw deadline.timeoutError();
    throw err;
  } finally {
    deadline.dispose();
  }
}

/** Scans an archive already read into memory. Throws `InputError` only for unusable settings
 * (and `scan-timeout`, see `ScanOptions.timeoutMs` / `signal`). */
export async function scanArchive(archive: LoadedArchive, options: ScanOptions = {}): Promise<Report> {
  return withDeadline(options, (deadline) => scanLoaded(archive, options, deadline));
}

async function scanLoaded(
  archive: LoadedArchive,
  options: ScanOptions,
  deadline: ScanDeadline,
): Promise<Report> {
  const signal = deadline.signal;
  deadline.enter('reading the settings');
  const parser = sharedHclParser(options.parser);
  const config = await resolveConfig(archive, parser, options, signal);
  let cache: ExtractionCache | null = null;
  let read: ConfigFileReader = (path, content) =>
    parser.extract(path, content, LOADER_PROJECTION, { signal });
  if (options.cache !== undefined) {
    deadline.enter('reading the extraction cache');
    const c = await deadline.race(
      ExtractionCache.open(
        {
          store: options.cache,
          fingerprint: cacheFingerprint(),
          ...(options.cacheLineage !== undefined ? { lineage: options.cacheLineage } : {}),
        },
        archive.sha256,
      ),
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
  deadline.enter(PARSING);
  const loaded = await loadModules({
    archive,
    config,
    parser,
    readConfigFile: deadline.reader(read),
    signal,
  });
  if (cache !== null) {
    deadline.enter('saving the extraction cache');
    await deadline.race(cache.save());
    options.onCacheStats?.(cache.stats);
  }
  const registry = config.registry
    ? new RegistryClient({ hosts: config.registryHosts, ...(options.store ? { cache: options.store } : {}) })
    : undefined;
  deadline.enter(registry ? 'checking the lock files (with the registry)' : 'checking the lock files');
  const lock = await deadline.race(
    analyzeLocks({
      archive,
      modules: loaded.modules,
      roots: loaded.roots,
      config,
      parser,
      engine: loaded.engine,
      ...(registry ? { registry } : {}),
    }),
  );
  deadline.enter('running the rules');
  const ctx: RuleContext = {
    modules: loaded.modules,
    moduleByPath: new Map(loaded.modules.map((m) => [m.path, m])),
    roots: loaded.roots,
    diagnostics: loaded.diagnostics,
    config: { ...config, engine: loaded.engine },
    engine: loaded.engine,
    lock,
  };
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

/** Scans a directory or an archive file on disk. */
export async function scanPath(path: string, options: ScanOptions = {}): Promise<Report> {
  return withDeadline(options, async (deadline) => {
    deadline.enter('reading the archive');
    const archive = await deadline.race(readInput(path, { limits: options.limits, shouldLoad }));
    return scanLoaded(archive, options, deadline);
  });
}
