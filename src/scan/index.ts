/**
 * The scan pipeline: archive → settings → modules → rules → report. Used by the CLI, the Lambda
 * handlers and the tests alike; it never reads the environment and never writes anywhere.
 */
import { defaultShouldLoad, readArchiveBytes, readInput } from '../archive';
import { HclParser } from '../hcl';
import { analyzeLocks, isProviderPackageZip, RegistryClient } from '../lockfile';
import type { LoadedArchive, ScanConfig } from '../model';
import { loadModules } from '../modules';
import { buildReport } from '../report/build';
import type { Report } from '../report/types';
import { RULES, runRules } from '../rules';
import type { RuleContext } from '../rules/types';
import { CONFIG_FILE_NAME, DEFAULT_CONFIG, mergeConfig, parseConfigFile } from './config-file';
import type { ConfigLayer } from './config-file';
import type { HclParserSettings, ScanOptions } from './types';

export type { ScanOptions } from './types';

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
): Promise<ScanConfig> {
  const layers: Array<{ file: string | null; layer: ConfigLayer }> = [];
  const own = archive.files.get(CONFIG_FILE_NAME);
  if (own !== undefined) {
    const parsed = await parser.parse(CONFIG_FILE_NAME, own);
    layers.push({ file: CONFIG_FILE_NAME, layer: parseConfigFile(CONFIG_FILE_NAME, parsed, KNOWN_RULES) });
  }
  if (options.configText !== undefined) {
    const { name, text } = options.configText;
    const parsed = await parser.parse(name, Buffer.from(text, 'utf8'));
    layers.push({ file: name, layer: parseConfigFile(name, parsed, KNOWN_RULES) });
  }
  if (options.config !== undefined) layers.push({ file: null, layer: options.config });
  if (options.registry !== undefined) layers.push({ file: null, layer: { registry: options.registry } });
  return mergeConfig(DEFAULT_CONFIG, layers);
}

/** Scans an archive already read into memory. Throws `InputError` only for unusable settings. */
export async function scanArchive(archive: LoadedArchive, options: ScanOptions = {}): Promise<Report> {
  const parser = sharedHclParser(options.parser);
  const config = await resolveConfig(archive, parser, options);
  const loaded = await loadModules({ archive, config, parser });
  const registry = config.registry
    ? new RegistryClient({ hosts: config.registryHosts, ...(options.store ? { cache: options.store } : {}) })
    : undefined;
  const lock = await analyzeLocks({
    archive,
    modules: loaded.modules,
    roots: loaded.roots,
    config,
    parser,
    engine: loaded.engine,
    ...(registry ? { registry } : {}),
  });
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
  const archive = await readArchiveBytes(name, bytes, { limits: options.limits, shouldLoad });
  return scanArchive(archive, options);
}

/** Scans a directory or an archive file on disk. */
export async function scanPath(path: string, options: ScanOptions = {}): Promise<Report> {
  const archive = await readInput(path, { limits: options.limits, shouldLoad });
  return scanArchive(archive, options);
}
