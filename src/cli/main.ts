/**
 * The `tfguard` command line. Exit codes are a public contract:
 *   0  nothing at or above --fail-on
 *   1  findings at or above --fail-on
 *   2  unusable input or usage (message on stderr, nothing on stdout)
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import {
  archiveLimits,
  cacheDir,
  cacheDirectory,
  codeCache,
  colorMode,
  extractCacheEnabled,
  docsUrl,
  EnvironmentError,
  maxPackageBytes,
  operatorHelp,
  parserSettings,
  registryTokens,
  remoteModuleLimits,
  scanTimeoutMs,
} from '../config';
import { isInputError, InputError } from '../errors';
import type { Severity } from '../model';
import { ciSafeLines, renderReport, REPORT_FORMATS, verdict, visible } from '../report';
import type { FailOn, Report } from '../report';
import { summarize } from '../report/build';
import { ruleHelpUri } from '../report/sarif';
import { hashPackage, PackageHashError, RegistryClient, ReleaseHashResolver } from '../lockfile';
import type { Finding } from '../rules';
import type { ScanConfig } from '../model';
import { RULES } from '../rules';
import { gitQuotedName } from '../fix';
import { closeSharedParser, policyInput, readPolicy, scanPath } from '../scan';
import type { Policy } from '../policy';
// scan/fix.ts runs the pipeline of scan/pipeline.ts, so the index does not re-export it (no cycle).
import { fixPatchParts, fixPath, patchText } from '../scan/fix';
import { insideSubtree, locateRepository, scanSubtree, subtreeDirectories } from '../scan/subtree';
import type { ScanOptions } from '../scan/types';
import { parseFleetData, renderFleetHtml, renderSummaryMarkdown, runLocalAudit } from '../service';
import type { FleetData, LocalArchive } from '../service';
import { LocalObjectStore } from '../storage/local';
import { loadChildProcess } from '../util/lazy';
import { count } from '../util/words';
import { TOOL_VERSION } from '../version';
import { evictExtractionCache, openExtractionCache } from './extract-cache';
import { initCommand } from './init';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  isTTY: boolean;
}

export const EXIT_OK = 0;
export const EXIT_FINDINGS = 1;
export const EXIT_INPUT = 2;

const FAIL_ON: readonly FailOn[] = ['error', 'warning', 'notice', 'never'];

const SCAN_USAGE = `  tfguard scan <dir|archive> [--format text|json|sarif|markdown|codequality] [--output FILE]
                             [--config FILE] [--fail-on error|warning|notice|never]
                             [--min-severity error|warning|notice] [--rule ID ...]
                             [--skip-rule ID ...] [--registry] [--remote-modules]
                             [--cache-dir DIR] [--no-color] [--timeout SECONDS] [--title TEXT]
                             [--policy FILE] [--repository OWNER/NAME] [--no-cache]
                              --min-severity: leave findings below LEVEL out of the report, its
                              counts and the exit code; --rule / --skip-rule: only these rules /
                              not these (repeatable); --remote-modules: resolve registry modules
                              (and git or HTTP packages on hosts allowed with module_hosts in
                              --config) over the network; without it only .terraform/modules in
                              the input is read. A directory inside a repository is scanned with
                              the repository (git top level, else the nearest .tfguard.hcl):
                              its modules and settings apply, only the directory is reported,
                              with paths from the repository root. --title: the Markdown
                              report's heading (e.g. the repository name; default: the
                              directory's or archive's name). --policy: judge the scan against
                              the organisation's policy file (docs/policy.md) as repository
                              --repository (default: the git remote's owner/name, else the
                              directory's or archive's name). --no-cache: parse every file
                              again (default: what was parsed is kept by file content in the
                              cache directory's extract/, so unchanged files are not reparsed).
`;
const FIX_USAGE = `  tfguard fix <dir> [--dry-run] [--rule ID ...] [--config FILE] [--fail-on LEVEL] [--registry]
                   [--remote-modules] [--cache-dir DIR] [--timeout SECONDS] [--policy FILE]
                   [--repository OWNER/NAME] [--no-cache]
                              apply the safe fixes findings carry (edits of the exact ranges:
                              comments and formatting stay; lock files rewritten as terraform
                              writes them), or print them as a unified diff (--dry-run); lists
                              what still needs a person; exit code as for scan, on what remains;
                              --registry: also add lock entries and platform hashes;
                              --remote-modules, --cache-dir, --no-cache: as for scan
`;
const AUDIT_USAGE = `  tfguard audit <dir-of-archives> [--store DIR] [--format markdown|json|html] [--output FILE]
                              [--previous FILE] [--registry] [--timeout SECONDS] [--policy FILE]
                              rescan every archive in the directory (one per repository),
                              compare with the previous audit in the store and print the summary
                              (--timeout: per archive; one over it is listed as failed;
                              --policy: each archive judged as the repository it is named after);
                              html: the fleet page (also kept in the store as fleet/index.html,
                              its data as fleet/index.json); --previous: the fleet/index.json of
                              an earlier audit to compare the page with; --registry: also the
                              registry's newest release of each provider
`;
const INIT_USAGE = `  tfguard init [dir] [--dry-run] [--timeout SECONDS]
                              write .tfguard.hcl with what each directory is (roots, shared,
                              examples, tests, fragments), each entry under its evidence and
                              guesses marked GUESS to confirm; run again, it keeps your edits and
                              adds only new directories (--dry-run: print the file instead)
`;
const HASH_USAGE = `  tfguard hash <zip|dir>      print the h1: (and zh: for a zip) checksums of a provider package,
                              as Terraform records them in .terraform.lock.hcl
`;
const RULES_USAGE = `  tfguard rules [--format text|json]
                              list the rules with their default severities (json: with the
                              link to each rule's documentation)
`;
/** Words of `text` in lines of at most 100 characters, later lines indented by two spaces. */
function wrapList(text: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > 100) {
      lines.push(line);
      line = `  ${word}`;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

const USAGE_FOOTER = `Archives: .tar.gz, .tgz, .tar, .zip (the format is read from the content).
Exit codes: 0 nothing at or above --fail-on (default error); 1 findings at or above it;
            2 unusable input or usage, nothing to check (no Terraform/OpenTofu files), or the
            scan did not finish within --timeout.
${wrapList(`Environment: ${operatorHelp()}; NO_COLOR, FORCE_COLOR (0 turns colour off); TF_TOKEN_<host> (registry tokens). Defaults and meaning: README, "Operator settings".`)}
`;

export const USAGE = `Usage:
${SCAN_USAGE}${FIX_USAGE}${AUDIT_USAGE}${INIT_USAGE}${HASH_USAGE}${RULES_USAGE}  tfguard --version | --help
  tfguard <command> --help    the usage of one command

${USAGE_FOOTER}`;

// ---------------------------------------------------------------------------------------------
// Commands and their options: one table that parsing, `--help` and the "did you mean" hints use.
// A command is added with its usage text and its option table here, and a case in `runCli`.
// ---------------------------------------------------------------------------------------------

type OptionTable = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

const SCAN_OPTIONS = {
  format: { type: 'string', short: 'f' },
  output: { type: 'string', short: 'o' },
  config: { type: 'string', short: 'c' },
  'fail-on': { type: 'string' },
  'min-severity': { type: 'string' },
  rule: { type: 'string', multiple: true },
  'skip-rule': { type: 'string', multiple: true },
  registry: { type: 'boolean' },
  'remote-modules': { type: 'boolean' },
  'cache-dir': { type: 'string' },
  'no-color': { type: 'boolean' },
  timeout: { type: 'string' },
  title: { type: 'string' },
  policy: { type: 'string' },
  repository: { type: 'string' },
  'no-cache': { type: 'boolean' },
} as const satisfies OptionTable;

const FIX_OPTIONS = {
  'dry-run': { type: 'boolean' },
  rule: { type: 'string', multiple: true },
  config: { type: 'string', short: 'c' },
  'fail-on': { type: 'string' },
  registry: { type: 'boolean' },
  // The same resolution as `scan --remote-modules`: the fixes and "still needs a person"
  // see the remote modules' requirements.
  'remote-modules': { type: 'boolean' },
  'cache-dir': { type: 'string' },
  timeout: { type: 'string' },
  policy: { type: 'string' },
  repository: { type: 'string' },
  'no-cache': { type: 'boolean' },
} as const satisfies OptionTable;

const AUDIT_OPTIONS = {
  store: { type: 'string' },
  format: { type: 'string', short: 'f' },
  output: { type: 'string', short: 'o' },
  previous: { type: 'string' },
  registry: { type: 'boolean' },
  timeout: { type: 'string' },
  policy: { type: 'string' },
} as const satisfies OptionTable;

const INIT_OPTIONS = {
  'dry-run': { type: 'boolean' },
  timeout: { type: 'string' },
} as const satisfies OptionTable;

const RULES_OPTIONS = { format: { type: 'string', short: 'f' } } as const satisfies OptionTable;

/** Every command: its usage text and options (`hash` takes none). */
const COMMANDS: Record<string, { usage: string; options: OptionTable }> = {
  scan: { usage: SCAN_USAGE, options: SCAN_OPTIONS },
  fix: { usage: FIX_USAGE, options: FIX_OPTIONS },
  audit: { usage: AUDIT_USAGE, options: AUDIT_OPTIONS },
  init: { usage: INIT_USAGE, options: INIT_OPTIONS },
  hash: { usage: HASH_USAGE, options: {} },
  rules: { usage: RULES_USAGE, options: RULES_OPTIONS },
};

/** The usage text of one command (`tfguard <command> --help`). */
export function commandUsage(command: string): string {
  const spec = COMMANDS[command];
  return spec === undefined ? USAGE : `Usage:\n${spec.usage}\n${USAGE_FOOTER}`;
}

/** A usage error: one line, with where to find the usage (exit 2). */
function usage(message: string, command?: string): never {
  const help = command === undefined ? 'tfguard --help' : `tfguard ${command} --help`;
  throw new InputError('usage', `${message}; see "${help}"`);
}

/** `tfguard <command> --help` (or `-h`): the command's usage on stdout, exit 0. */
class HelpRequested {
  constructor(readonly command: string) {}
}

/** Levenshtein distance, for the "did you mean" hints. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** The candidate closest to `given`, when it is close enough to be a typo of it. */
export function closest(given: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(given, name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  if (best === undefined) return undefined;
  const prefix = candidates.find((c) => given.length >= 3 && (c.startsWith(given) || given.startsWith(c)));
  if (best.distance <= Math.max(2, Math.floor(best.name.length / 3))) return best.name;
  return prefix;
}

function didYouMean(given: string, candidates: readonly string[]): string {
  const near = closest(given, candidates);
  return near === undefined ? '' : ` (did you mean ${near}?)`;
}

/**
 * Parses a command's arguments against its option table: `--help`/`-h` anywhere before `--` asks
 * for the command's usage; an unknown option is one line naming the closest valid one (exit 2).
 */
function parseCommandArgs<T extends OptionTable>(command: string, args: string[], options: T) {
  const loose = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  const known = new Set(Object.keys(options));
  const shorts = new Map(Object.entries(options).flatMap(([name, o]) => (o.short ? [[o.short, name]] : [])));
  for (const token of loose.tokens) {
    if (token.kind !== 'option') continue;
    if (token.name === 'help' || token.name === 'h') throw new HelpRequested(command);
  }
  for (const token of loose.tokens) {
    if (token.kind !== 'option' || known.has(token.name) || shorts.has(token.name)) continue;
    const names = Object.keys(options).map((n) => `--${n}`);
    usage(
      `unknown option ${token.rawName} for ${command}${didYouMean(token.rawName, [...names, '--help'])}`,
      command,
    );
  }
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    return usage((err as Error).message.replace(/\.$/, ''), command);
  }
}

/** A severity option (`--fail-on`, `--min-severity`), checked against its values. */
function levelOption<L extends string>(
  command: string,
  option: string,
  raw: string | undefined,
  values: readonly L[],
  fallback: L,
): L {
  if (raw === undefined) return fallback;
  if ((values as readonly string[]).includes(raw)) return raw as L;
  return usage(
    `--${option} must be one of ${values.join(', ')}, got "${raw}"${didYouMean(raw, values)}`,
    command,
  );
}

/** Rule ids of `--rule` / `--skip-rule`, each a known rule (a typo names the closest one). */
function ruleIds(command: string, option: string, ids: readonly string[] | undefined): string[] | undefined {
  if (ids === undefined) return undefined;
  const known = RULES.map((r) => r.id);
  for (const id of ids)
    if (!known.includes(id)) usage(`--${option}: unknown rule id "${id}"${didYouMean(id, known)}`, command);
  return [...ids];
}

/** `--timeout SECONDS`: a positive number of seconds (fractions allowed), in milliseconds. */
function parseTimeout(raw: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(seconds > 0)) usage(`--timeout must be a positive number of seconds, got ${JSON.stringify(raw)}`);
  return Math.max(1, Math.round(seconds * 1000));
}

/**
 * The operator's scan settings: parser tuning, archive limits and the scan time limit from the
 * environment (src/config.ts), `--timeout` overriding `TFGUARD_SCAN_TIMEOUT_MS`. A bad variable is
 * a usage error naming it (exit 2).
 */
function operatorScanOptions(
  timeout: string | undefined,
): Pick<ScanOptions, 'parser' | 'limits' | 'timeoutMs' | 'registryTokens'> {
  const timeoutMs = timeout === undefined ? undefined : parseTimeout(timeout);
  try {
    // Read by the launcher (src/cli/launch.ts) before this module loaded; checked here.
    codeCache();
    return {
      parser: parserSettings(),
      limits: archiveLimits(),
      timeoutMs: timeoutMs ?? scanTimeoutMs(),
      registryTokens: registryTokens(),
    };
  } catch (err) {
    if (err instanceof EnvironmentError) throw new InputError('usage', err.message, { cause: err });
    throw err;
  }
}

/** `TFGUARD_DOCS_URL` (report links); a bad value is a usage error naming it (exit 2). */
function operatorDocsUrl(): string | undefined {
  try {
    return docsUrl();
  } catch (err) {
    if (err instanceof EnvironmentError) throw new InputError('usage', err.message, { cause: err });
    throw err;
  }
}

/** `--remote-modules` and `--cache-dir`: network resolution of remote modules, cached in a local
 * directory. Without the flag the CLI sends no request for modules. */
function remoteModuleOptions(
  on: boolean,
  cacheDir: string | undefined,
  extractionCache = false,
): Pick<
  ScanOptions,
  'remoteModules' | 'remoteModuleCache' | 'remoteModulesOffReason' | 'remoteModuleSettings'
> {
  if (!on) {
    if (cacheDir !== undefined && !extractionCache)
      usage('--cache-dir is used only with --remote-modules or the extraction cache (not with --no-cache)');
    return {};
  }
  const dir = cacheDir ?? cacheDirectory();
  let limits: ReturnType<typeof remoteModuleLimits>;
  try {
    // The request and download budget, concurrency and mutable-reference lifetime (TFGUARD_REMOTE_*).
    limits = remoteModuleLimits();
  } catch (err) {
    if (err instanceof EnvironmentError) throw new InputError('usage', err.message, { cause: err });
    throw err;
  }
  return {
    remoteModules: true,
    remoteModuleSettings: limits,
    ...(dir !== undefined ? { remoteModuleCache: new LocalObjectStore(dir) } : {}),
  };
}

/**
 * The extraction cache (src/cli/extract-cache.ts) for a scan of `target`: on unless `--no-cache`
 * or `TFGUARD_EXTRACT_CACHE=off`, in `<--cache-dir or the cache directory>/extract/`; none when
 * no cache directory can be derived or created. The lineage is the real path of the directory the
 * scan reads (the git work tree's top level for a directory inside one), so the next commit parses
 * only the files that changed; an archive has none: its own manifest (by its SHA-256) serves a
 * rescan of the same bytes, and its path says nothing about which repository it holds.
 * `evict` bounds the cache's disk use (at most once a day); call it after the scan. `on`: the
 * settings ask for it (`--cache-dir` is then meaningful without `--remote-modules`).
 */
async function extractionCacheOptions(
  noCache: boolean,
  cacheDirFlag: string | undefined,
  directoryRoot: string | null,
): Promise<{
  on: boolean;
  options: Pick<ScanOptions, 'cache' | 'cacheLineage'>;
  evict: () => Promise<unknown>;
}> {
  const off = { on: false, options: {}, evict: async () => undefined };
  const none = { ...off, on: true };
  let dir: string | undefined;
  try {
    if (noCache || !extractCacheEnabled()) return off;
    dir = cacheDirFlag ?? cacheDirectory();
  } catch (err) {
    if (err instanceof EnvironmentError) throw new InputError('usage', err.message, { cause: err });
    throw err;
  }
  if (dir === undefined) return none;
  const store = await openExtractionCache(dir);
  if (store === undefined) return none;
  const lineage =
    directoryRoot === null ? undefined : await fs.realpath(directoryRoot).catch(() => undefined);
  const cacheDirectoryPath = dir;
  return {
    on: true,
    options: { cache: store, ...(lineage !== undefined ? { cacheLineage: `directory:${lineage}` } : {}) },
    evict: () => evictExtractionCache(cacheDirectoryPath),
  };
}

/** Writes `--output FILE` through a temporary file and a rename; a path that cannot be written is
 * one line naming it (exit 2), never a stack trace. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    await fs.writeFile(tmp, text);
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? `directory ${path.dirname(file)} does not exist`
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? `${file} is a directory`
            : code === 'ENOTDIR'
              ? `a part of ${path.dirname(file)} is not a directory`
              : ((err as Error).message ?? String(err));
    throw new InputError('not-found', `cannot write --output ${file}: ${why}`, { cause: err });
  }
}

const SEVERITY_ORDER: readonly Severity[] = ['notice', 'warning', 'error'];
const MIN_SEVERITY: readonly Severity[] = ['error', 'warning', 'notice'];

/** `--min-severity`: the report without the findings below `level`, counted again. */
function atOrAbove(report: Report, level: Severity): Report {
  const min = SEVERITY_ORDER.indexOf(level);
  const findings = report.findings.filter((f) => SEVERITY_ORDER.indexOf(f.severity) >= min);
  return { ...report, findings, summary: summarize(findings, report.summary.modules, report.summary.roots) };
}

/** `--rule` / `--skip-rule` as a settings layer, applied after every settings file: the rules left
 * out are disabled, as `rule "<id>" { enabled = false }` does. */
function ruleSelection(
  only: string[] | undefined,
  skip: string[] | undefined,
): Partial<ScanConfig> | undefined {
  if (only === undefined && skip === undefined) return undefined;
  const rules: ScanConfig['rules'] = {};
  for (const rule of RULES) {
    const off = (only !== undefined && !only.includes(rule.id)) || (skip ?? []).includes(rule.id);
    if (off) rules[rule.id] = { enabled: false };
  }
  return { rules };
}

const CONFIG_SUFFIXES = ['.tf', '.tf.json', '.tofu', '.tofu.json', '.hcl', '.tfvars', '.tftest.json'];

/** What the scan target is; a single configuration file gets a hint to pass its directory. */
async function scanTarget(target: string): Promise<'directory' | 'archive'> {
  const stat = await fs.stat(target).catch(() => null);
  if (stat === null)
    throw new InputError('not-found', `no such directory or archive: ${target}`, { entry: target });
  if (stat.isDirectory()) return 'directory';
  if (stat.isFile() && CONFIG_SUFFIXES.some((suffix) => target.endsWith(suffix))) {
    const dir = path.dirname(target);
    usage(
      `${target} is a file; tfguard scans a directory (modules, lock files and settings are judged together) or an archive: tfguard scan ${dir === '.' ? '.' : dir}`,
      'scan',
    );
  }
  return 'archive';
}

async function scanCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('scan', args, SCAN_OPTIONS);
  if (positionals.length !== 1) usage('scan takes exactly one <dir|archive>', 'scan');
  const format = levelOption('scan', 'format', values.format, REPORT_FORMATS, 'text');
  const failOn = levelOption('scan', 'fail-on', values['fail-on'], FAIL_ON, 'error');
  const minSeverity = levelOption('scan', 'min-severity', values['min-severity'], MIN_SEVERITY, 'notice');
  const only = ruleIds('scan', 'rule', values.rule);
  const skip = ruleIds('scan', 'skip-rule', values['skip-rule']);
  const operator = operatorScanOptions(values.timeout);
  const docs = operatorDocsUrl();
  const configText = await readConfigOption(values.config);
  const policy = await readPolicyOption(values.policy);
  if (values.repository !== undefined && policy === undefined)
    usage('--repository is used only with --policy', 'scan');
  const target = positionals[0] as string;
  const kind = await scanTarget(target);
  // A directory inside a repository: the repository is read, the directory reported (subtree.ts).
  const where = kind === 'directory' ? await locateRepository(target) : { root: target, subtree: null };
  const selection = ruleSelection(only, skip);
  const extraction = await extractionCacheOptions(
    values['no-cache'] === true,
    values['cache-dir'],
    kind === 'directory' ? where.root : null,
  );
  const scanOptions = {
    configText,
    ...operator,
    ...extraction.options,
    ...(selection !== undefined ? { config: selection } : {}),
    ...(values.registry ? { registry: true } : {}),
    ...remoteModuleOptions(values['remote-modules'] === true, values['cache-dir'], extraction.on),
    ...(policy !== undefined
      ? { policy: policyInput(policy, await repositoryName(values.repository, target, kind), new Date()) }
      : {}),
  };
  let report: Report | null;
  try {
    report =
      where.subtree === null
        ? await scanPath(where.root, scanOptions)
        : await scanSubtree(where.root, where.subtree, scanOptions, scanPath);
  } catch (err) {
    // An empty directory is "nothing to check" like one without configuration files.
    if (!(isInputError(err) && err.code === 'empty-archive' && kind === 'directory')) throw err;
    report = null;
  }
  await extraction.evict();
  if (report === null || (report.modules.length === 0 && report.findings.length === 0)) {
    const what = where.subtree === null ? `${kind} ${target}` : `directory ${where.subtree} of ${where.root}`;
    throw new InputError(
      'empty-archive',
      `nothing to check: the ${what} has no Terraform or OpenTofu configuration (${CONFIG_SUFFIXES.slice(0, 4).join(', ')} files)`,
    );
  }
  if (minSeverity !== 'notice') report = atOrAbove(report, minSeverity);
  const mode = colorMode();
  const color =
    format === 'text' &&
    !values['no-color'] &&
    values.output === undefined &&
    (mode === 'always' || (mode === 'auto' && io.isTTY));
  const text = renderReport(report, format, {
    color,
    ...(docs !== undefined ? { docsUrl: docs } : {}),
    ...(values.title !== undefined ? { markdown: { title: values.title } } : {}),
  });
  if (values.output !== undefined) await writeAtomically(values.output, text);
  else io.stdout(text);
  return verdict(report, failOn) === 'fail' ? EXIT_FINDINGS : EXIT_OK;
}

async function readConfigOption(
  file: string | undefined,
): Promise<{ name: string; text: string } | undefined> {
  if (file === undefined) return undefined;
  try {
    return { name: file, text: await fs.readFile(file, 'utf8') };
  } catch (err) {
    throw new InputError('not-found', `cannot read --config ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** `--policy FILE`: the organisation's policy, parsed (an error names the file and line, exit 2). */
async function readPolicyOption(file: string | undefined): Promise<Policy | undefined> {
  if (file === undefined) return undefined;
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (err) {
    throw new InputError('not-found', `cannot read --policy ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return readPolicy(file, bytes, operatorParserSettings());
}

function operatorParserSettings(): ReturnType<typeof parserSettings> {
  try {
    return parserSettings();
  } catch (err) {
    if (err instanceof EnvironmentError) throw new InputError('usage', err.message, { cause: err });
    throw err;
  }
}

/** `owner/name` of a git remote URL (`git@github.com:acme/infra.git`, `https://host/acme/infra`). */
export function remoteRepositoryName(url: string): string | null {
  const path = url
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*\//i, '')
    .replace(/^[^@/]+@[^:/]+:/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length < 2) return null;
  return parts.slice(-2).join('/');
}

/** The git remote (`origin`, else the first one) of the repository at `dir`, when git knows one. */
async function gitRemoteUrl(dir: string): Promise<string | null> {
  const { execFile } = await loadChildProcess();
  return new Promise((resolve) => {
    execFile('git', ['-C', dir, 'remote', '-v'], { timeout: 5000, windowsHide: true }, (err, stdout) => {
      if (err !== null) return resolve(null);
      const remotes = stdout
        .split('\n')
        .map((l) => l.split(/\s+/))
        .filter((p) => p.length >= 2 && p[1] !== undefined && p[1] !== '');
      const chosen = remotes.find((p) => p[0] === 'origin') ?? remotes[0];
      resolve(chosen?.[1] ?? null);
    });
  });
}

/**
 * The repository a policy judges the scan as: `--repository`, else the git remote's `owner/name`
 * of the scanned directory, else the directory's name (for an archive: its name without suffix).
 */
async function repositoryName(
  given: string | undefined,
  target: string,
  kind: 'directory' | 'archive',
): Promise<string> {
  if (given !== undefined) {
    if (given.trim() === '') usage('--repository must not be empty');
    return given.trim();
  }
  if (kind === 'directory') {
    const url = await gitRemoteUrl(target);
    const name = url === null ? null : remoteRepositoryName(url);
    if (name !== null) return name;
    return path.basename(path.resolve(target));
  }
  const base = path.basename(target);
  const suffix = ARCHIVE_SUFFIXES.find((s) => base.endsWith(s));
  return suffix === undefined ? base : base.slice(0, base.length - suffix.length);
}

/**
 * Writes `content` over `file` through a temporary file and a rename, keeping the file's mode
 * (set with chmod: the mode given at creation is cut by the umask, 0664 would become 0644). A
 * symlink is never written through (the fix plan names link targets, src/fix/files.ts); a file
 * with other hard links is rewritten in place, so every name keeps reading it.
 */
async function replaceFile(file: string, content: Buffer): Promise<void> {
  const stats = await fs.lstat(file);
  if (!stats.isFile()) throw new Error(`${file} is no longer a regular file; nothing was written to it`);
  if (stats.nlink > 1) {
    await fs.writeFile(file, content);
    return;
  }
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tfguard-fix`);
  try {
    await fs.writeFile(tmp, content, { mode: 0o600 });
    await fs.chmod(tmp, stats.mode & 0o7777);
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/** Writes a new file atomically (a temporary file renamed into place); fails if it appeared meanwhile. */
async function createFile(file: string, content: Buffer): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tfguard-fix`);
  try {
    await fs.writeFile(tmp, content, { mode: 0o644 });
    await fs.link(tmp, file);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/**
 * Registry access for lock-file fixes, as the operator allows it: the registry hosts of the
 * settings, and the cache of `TFGUARD_CACHE_DIR` (verified SHA256SUMS and package hashes) when set.
 */
function lockFixRegistry(config: ScanConfig): ReleaseHashResolver {
  let dir: string | undefined;
  let limit: number | undefined;
  try {
    dir = cacheDir();
    limit = maxPackageBytes();
  } catch (err) {
    if (err instanceof EnvironmentError) throw new InputError('usage', err.message, { cause: err });
    throw err;
  }
  const cache = dir === undefined ? undefined : new LocalObjectStore(dir);
  const client = new RegistryClient({
    hosts: config.registryHosts,
    credentials: { ...(config.credentials ?? {}), ...registryTokens() },
    ...(cache ? { cache } : {}),
  });
  return new ReleaseHashResolver({
    client,
    ...(cache ? { cache } : {}),
    ...(limit === undefined ? {} : { maxPackageBytes: limit }),
  });
}

/** Where a finding is, as text output shows it (control characters escaped: src/report/escape.ts). */
function where(f: Finding): string {
  return visible(f.file === null ? f.module : `${f.file}${f.line === null ? '' : `:${f.line}`}`);
}

async function fixCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('fix', args, FIX_OPTIONS);
  if (positionals.length !== 1) usage('fix takes exactly one <dir>', 'fix');
  const dir = positionals[0] as string;
  const stat = await fs.stat(dir).catch(() => null);
  if (stat === null) throw new InputError('not-found', `no such directory: ${dir}`);
  if (!stat.isDirectory()) usage('fix works on a directory (a checkout), not on an archive', 'fix');
  const failOn = levelOption('fix', 'fail-on', values['fail-on'], FAIL_ON, 'error');
  const ruleList = ruleIds('fix', 'rule', values.rule);
  const rules = ruleList === undefined ? undefined : new Set(ruleList);
  const policy = await readPolicyOption(values.policy);
  if (values.repository !== undefined && policy === undefined)
    usage('--repository is used only with --policy', 'fix');
  // A directory inside a repository (`tfguard fix live/prod`): read from the repository root what
  // a scan of it reads (as `scan` does, src/scan/subtree.ts), fix only inside it, and name files
  // (and the patch's paths) from the repository root.
  const repo = await locateRepository(dir);
  const extraction = await extractionCacheOptions(
    values['no-cache'] === true,
    values['cache-dir'],
    repo.root,
  );
  const options = {
    configText: await readConfigOption(values.config),
    ...operatorScanOptions(values.timeout),
    ...extraction.options,
    ...(values.registry ? { registry: true } : {}),
    ...remoteModuleOptions(values['remote-modules'] === true, values['cache-dir'], extraction.on),
    ...(policy !== undefined
      ? { policy: policyInput(policy, await repositoryName(values.repository, dir, 'directory'), new Date()) }
      : {}),
  };

  const dryRun = values['dry-run'] === true;
  const subtree = repo.subtree;
  const top = subtree === null ? dir : repo.root;
  const scope =
    subtree === null
      ? {}
      : {
          within: subtree,
          directories: (await subtreeDirectories(repo.root, subtree, options, scanPath)).directories,
        };
  const outcome = await fixPath(top, {
    ...options,
    ...scope,
    ...(rules !== undefined ? { rules } : {}),
    lockRegistry: (config) => (config.registry ? lockFixRegistry(config) : null),
  });
  const inScope = (f: Finding): boolean => subtree === null || insideSubtree(f.file ?? f.module, subtree);
  const { changes, fixed } = outcome;
  const report = { ...outcome.report, findings: outcome.report.findings.filter(inScope) };
  const say = (text: string): void => (dryRun ? io.stderr : io.stdout)(ciSafeLines(text));
  const onDisk = (file: string): string => path.join(top, ...file.split('/'));
  if (subtree !== null) {
    say(`tfguard fix: ${dir} is ${subtree} of the repository at ${repo.root}; paths are from there\n`);
    const outside = outcome.report.findings.filter(
      (f) => !inScope(f) && f.suppressed === undefined && f.fix?.edits !== undefined,
    );
    if (outside.length > 0)
      say(
        `tfguard fix: not edited: ${count(outside.length, 'fixable finding')} outside ${subtree} ` +
          `(in modules it calls); run tfguard fix on the directory that holds them\n`,
      );
  }
  if (dryRun) {
    const parts = fixPatchParts(changes);
    io.stdout(patchText(parts));
    // The patch names them too, in lines git apply skips: say it where a person reads.
    for (const l of parts.leftOut)
      io.stderr(`tfguard fix: left out of the patch: ${gitQuotedName('', l.path)}: ${l.reason}\n`);
  } else
    for (const c of changes) {
      if (c.created) await createFile(onDisk(c.path), c.after);
      else await replaceFile(onDisk(c.path), c.after);
    }
  const verb = dryRun ? 'would fix' : 'fixed';
  say(`tfguard fix: ${verb} ${count(fixed.length, 'finding')} in ${count(changes.length, 'file')}\n`);
  for (const f of fixed) say(`  ${where(f)}  ${f.ruleId}: ${visible(outcome.descriptions.get(f) ?? '')}\n`);
  // What remains: after a real fix, a fresh scan of the written files says; a dry run assumes the
  // planned fixes apply (to the last scan it made).
  const fixedKeys = new Set(fixed.map((f) => `${f.ruleId}\0${where(f)}`));
  const remaining = dryRun
    ? (outcome.after ?? report).findings.filter((f) => !fixedKeys.has(`${f.ruleId}\0${where(f)}`))
    : subtree === null
      ? (await scanPath(dir, options)).findings
      : (await scanSubtree(repo.root, subtree, options, scanPath)).findings;
  const open = remaining.filter(
    (f) => f.suppressed === undefined && inScope(f) && (rules === undefined || rules.has(f.ruleId)),
  );
  const reasons = new Map(outcome.skipped.map((r) => [`${r.finding.ruleId}\0${where(r.finding)}`, r.reason]));
  if (open.length > 0) {
    say(`still needs a person: ${count(open.length, 'finding')}\n`);
    for (const f of open) {
      const reason = reasons.get(`${f.ruleId}\0${where(f)}`) ?? 'no mechanical fix';
      say(`  ${where(f)}  ${f.ruleId} (${f.severity}): ${visible(reason)}\n`);
      // A finding without a fix says in its note what to do (and, for a fix withheld, why).
      if (f.fix?.edits === undefined && f.note !== undefined) say(`      ${visible(f.note)}\n`);
    }
  }
  await extraction.evict();
  // With --rule, the exit code, like the list, is about those rules.
  const judged = remaining.filter((f) => inScope(f) && (rules === undefined || rules.has(f.ruleId)));
  return verdict({ ...report, findings: judged }, failOn) === 'fail' ? EXIT_FINDINGS : EXIT_OK;
}

const ARCHIVE_SUFFIXES = ['.tar.gz', '.tgz', '.tar', '.zip'];

function progressBar(done: number, total: number, label: string): string {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total} ${label}`.slice(0, 120);
}

async function auditCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs('audit', args, AUDIT_OPTIONS);
  if (positionals.length !== 1) usage('audit takes exactly one <dir-of-archives>', 'audit');
  const format = levelOption(
    'audit',
    'format',
    values.format,
    ['markdown', 'json', 'html'] as const,
    'markdown',
  );
  const operator = operatorScanOptions(values.timeout);
  let previousFleet: FleetData | undefined;
  if (values.previous !== undefined) {
    let text: string;
    try {
      text = await fs.readFile(values.previous, 'utf8');
    } catch (err) {
      throw new InputError(
        'not-found',
        `cannot read --previous ${values.previous}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    try {
      previousFleet = parseFleetData(text, `--previous ${values.previous}`);
    } catch (err) {
      throw new InputError('usage', (err as Error).message, { cause: err });
    }
  }
  const policy = await readPolicyOption(values.policy);
  const dir = positionals[0] as string;
  let names: string[];
  try {
    names = (await fs.readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isFile() && ARCHIVE_SUFFIXES.some((s) => d.name.endsWith(s)))
      .map((d) => d.name)
      .sort();
  } catch (err) {
    throw new InputError('not-found', `cannot read directory ${dir}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (names.length === 0) usage(`no archives (${ARCHIVE_SUFFIXES.join(', ')}) in directory ${dir}`, 'audit');
  const archives: LocalArchive[] = names.map((name) => ({
    repository: name.slice(0, name.length - (ARCHIVE_SUFFIXES.find((s) => name.endsWith(s)) ?? '').length),
    name,
    read: () => fs.readFile(path.join(dir, name)),
  }));
  const store = new LocalObjectStore(values.store ?? 'tfguard-reports');
  const result = await runLocalAudit(archives, store, {
    registry: values.registry === true,
    scanOptions: operator,
    ...(previousFleet !== undefined ? { previousFleet } : {}),
    ...(policy !== undefined ? { policy } : {}),
    ...(io.isTTY
      ? { onProgress: (p) => io.stderr(progressBar(p.done, p.total, `${p.repository} (${p.status})`)) }
      : {}),
  });
  if (io.isTTY) io.stderr('\n');
  let text: string;
  if (format === 'html') {
    if (result.fleet === null)
      throw new InputError(
        'usage',
        `the store ${values.store ?? 'tfguard-reports'} holds a newer audit's fleet page`,
      );
    text = renderFleetHtml(result.fleet);
  } else if (format === 'json') text = JSON.stringify(result.summary, null, 2) + '\n';
  else text = renderSummaryMarkdown(result.summary);
  if (values.output !== undefined) await writeAtomically(values.output, text);
  else io.stdout(text);
  return EXIT_OK;
}

/** Whether a directory tree holds at least one file (a provider package is never empty). */
async function hasFiles(dir: string): Promise<boolean> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => null);
  return entries === null || entries.some((e) => !e.isDirectory());
}

async function hashCommand(args: string[], io: CliIo): Promise<number> {
  const { positionals } = parseCommandArgs('hash', args, {});
  if (positionals.length !== 1) usage('hash takes exactly one <zip|dir>', 'hash');
  const target = positionals[0] as string;
  const stat = await fs.stat(target).catch(() => null);
  if (stat?.isDirectory() === true && !(await hasFiles(target)))
    throw new InputError('empty-archive', `directory ${target} has no files: it is not a provider package`);
  let hashes;
  try {
    hashes = await hashPackage(target);
  } catch (err) {
    if (err instanceof PackageHashError)
      throw new InputError('corrupt-archive', err.message, { entry: target, cause: err });
    throw err;
  }
  const lines = [hashes.h1];
  if (hashes.zh !== undefined) lines.push(hashes.zh);
  io.stdout(lines.join('\n') + '\n');
  if (hashes.h1Packed !== undefined) {
    io.stderr(
      `tfguard: note: the zip has directory entries; Terraform checks a packed mirror zip against ${hashes.h1Packed}, ` +
        'which never equals the h1 it records, so install it unpacked or repack it without directory entries\n',
    );
  }
  return EXIT_OK;
}

function rulesCommand(args: string[], io: CliIo): number {
  const { values, positionals } = parseCommandArgs('rules', args, RULES_OPTIONS);
  if (positionals.length > 0) usage('rules takes no arguments', 'rules');
  const format = levelOption('rules', 'format', values.format, ['text', 'json'] as const, 'text');
  if (format === 'json') {
    const docs = operatorDocsUrl();
    const rules = RULES.map((r) => ({
      id: r.id,
      severity: r.defaultSeverity as Severity,
      summary: r.summary,
      docs: ruleHelpUri(r.id, docs),
    }));
    io.stdout(JSON.stringify(rules, null, 2) + '\n');
    return EXIT_OK;
  }
  const width = Math.max(...RULES.map((r) => r.id.length));
  const lines = RULES.map(
    (r) => `${r.id.padEnd(width)}  ${(r.defaultSeverity as Severity).padEnd(7)}  ${r.summary}`,
  );
  io.stdout(lines.join('\n') + '\n');
  return EXIT_OK;
}

/** Runs the CLI and returns the exit code. Never throws. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    const [command, ...rest] = argv;
    switch (command) {
      case 'scan':
        return await scanCommand(rest, io);
      case 'fix':
        return await fixCommand(rest, io);
      case 'audit':
        return await auditCommand(rest, io);
      case 'hash':
        return await hashCommand(rest, io);
      case 'init': {
        const { values, positionals } = parseCommandArgs('init', rest, INIT_OPTIONS);
        return await initCommand(values, positionals, io, operatorScanOptions);
      }
      case 'rules':
        return rulesCommand(rest, io);
      case '--version':
      case '-v':
        io.stdout(`${TOOL_VERSION}\n`);
        return EXIT_OK;
      case '--help':
      case '-h':
        io.stdout(USAGE);
        return EXIT_OK;
      case 'help':
        // `tfguard help scan` as `tfguard scan --help`.
        io.stdout(rest[0] !== undefined && COMMANDS[rest[0]] !== undefined ? commandUsage(rest[0]) : USAGE);
        return EXIT_OK;
      case undefined:
        usage('missing command');
        break;
      default: {
        const names = [...Object.keys(COMMANDS), 'help', '--help', '--version'];
        usage(`unknown command "${command}"${didYouMean(command, names)}`);
      }
    }
  } catch (err) {
    if (err instanceof HelpRequested) {
      io.stdout(commandUsage(err.command));
      return EXIT_OK;
    }
    if (isInputError(err)) {
      io.stderr(`tfguard: ${err.message}\n`);
      return EXIT_INPUT;
    }
    const e = err as Error;
    io.stderr(`tfguard: internal error: ${e?.stack ?? String(err)}\n`);
    return EXIT_INPUT;
  } finally {
    await closeSharedParser();
  }
  return EXIT_INPUT;
}

/** Entry point of bin/tfguard.js. */
export function main(): void {
  const io: CliIo = {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    isTTY: process.stdout.isTTY === true,
  };
  void runCli(process.argv.slice(2), io).then((code) => {
    process.exitCode = code;
  });
}
