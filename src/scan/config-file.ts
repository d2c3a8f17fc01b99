/**
 * `.tfguard.hcl`: the per-repository settings file at the archive root (and the same grammar for
 * `--config FILE`). Parsed with the project's HCL parser. Invalid settings reject the input with a
 * specific `invalid-config` error: a typo must never silently change what is enforced.
 *
 * ```hcl
 * engine         = "opentofu"               # or "terraform"
 * roots          = ["live/**"]               # globs of root modules
 * shared         = ["modules/**"]            # globs of shared (reusable) modules
 * examples       = ["docs/snippets/*"]       # globs of example configurations
 * tests          = ["ci/plan-check"]         # globs of test configurations
 * fragments      = ["templates/**"]          # globs of directories that are not modules
 * strict_examples = true                     # hold examples to the root rules (locks, pinning)
 * engines        = { "tofu/**" = "opentofu" } # the engine of matching roots
 * platforms      = ["linux_amd64", "darwin_arm64"]
 * plugin_dirs    = ["vendor/providers"]
 * registry       = true
 * registry_hosts = { "registry.terraform.io" = "https://mirror.example.com" }
 * module_hosts   = { "github.com" = "" }     # --config only: where remote modules are downloaded
 * credentials "app.terraform.io" { token = "..." }  # --config only: a registry's token
 * lock_mode      = "readonly"                # or "default"
 * module_ref_policy    = "sha"               # or "tag-or-sha" (default)
 * module_version_style = "pessimistic"       # or "exact", "any" (default)
 * rule "root-module-unbounded" { severity = "warning" }
 * rule "module-version-missing" { enabled = false }
 * ```
 */
import { InputError } from '../errors';
import type { Engine, RuleSetting, ScanConfig, Severity } from '../model';
import type { HclAttribute, HclBody, ParseResult } from '../hcl';
import { LOCK_MODES, MODULE_REF_POLICIES, MODULE_VERSION_STYLES, SEVERITIES } from '../model';
import { normalizeRegistryHost } from '../util/http';

export const CONFIG_FILE_NAME = '.tfguard.hcl';

export const DEFAULT_CONFIG: ScanConfig = {
  engine: 'terraform',
  roots: [],
  shared: [],
  examples: [],
  tests: [],
  fragments: [],
  strictExamples: false,
  engines: {},
  rules: {},
  platforms: [],
  pluginDirs: [],
  registry: false,
  registryHosts: {},
  lockMode: 'default',
  moduleRefPolicy: 'tag-or-sha',
  moduleVersionStyle: 'any',
  configFiles: [],
};

/** Settings one file contributes; `engine` is present only when the file sets it explicitly. */
export type ConfigLayer = Partial<Omit<ScanConfig, 'configFiles'>>;

const PLATFORM = /^[a-z0-9]+_[a-z0-9]+$/;

function fail(file: string, line: number | null, message: string): never {
  const where = line === null ? file : `${file}:${line}`;
  throw new InputError('invalid-config', `${where}: ${message}`, { entry: file });
}

function stringList(file: string, attr: HclAttribute): string[] {
  if (!Array.isArray(attr.value) || attr.value.some((v) => typeof v !== 'string')) {
    fail(file, attr.line, `"${attr.name}" must be a list of strings`);
  }
  return attr.value as string[];
}

function stringValue(file: string, attr: HclAttribute): string {
  if (typeof attr.value !== 'string') fail(file, attr.line, `"${attr.name}" must be a string`);
  return attr.value;
}

function boolValue(file: string, attr: HclAttribute): boolean {
  if (typeof attr.value !== 'boolean') fail(file, attr.line, `"${attr.name}" must be true or false`);
  return attr.value;
}

/** A string setting that must be one of `allowed` (exactly: no other case). */
function oneOf<T extends string>(file: string, attr: HclAttribute, allowed: readonly T[]): T {
  const value = stringValue(file, attr);
  const known = allowed.find((a) => a === value);
  if (known === undefined) {
    const quoted = allowed.map((a) => `"${a}"`);
    const list = `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1] ?? ''}`;
    fail(file, attr.line, `${attr.name} must be ${list}; got ${JSON.stringify(value)}`);
  }
  return known;
}

function ruleSetting(file: string, body: HclBody, line: number, id: string): RuleSetting {
  const setting: RuleSetting = {};
  for (const block of body.blocks) fail(file, block.line, `unexpected block "${block.type}" in rule "${id}"`);
  for (const attr of body.attributes) {
    if (attr.name === 'severity') {
      const value = stringValue(file, attr);
      if (!(SEVERITIES as readonly string[]).includes(value)) {
        fail(file, attr.line, `severity must be one of ${SEVERITIES.join(', ')}; got "${value}"`);
      }
      setting.severity = value as Severity;
    } else if (attr.name === 'enabled') {
      setting.enabled = boolValue(file, attr);
    } else {
      fail(file, attr.line, `unknown argument "${attr.name}" in rule "${id}" (expected severity or enabled)`);
    }
  }
  if (setting.severity === undefined && setting.enabled === undefined) {
    fail(file, line, `rule "${id}" sets neither severity nor enabled`);
  }
  return setting;
}

export interface ConfigFileOrigin {
  /** True for the scanned archive's own `.tfguard.hcl`: it may not choose where the scanner sends
   * network requests (`registry_hosts`), or an upload could aim the service at internal endpoints. */
  fromArchive: boolean;
}

/**
 * Reads one settings file. `knownRules` guards against typos in rule ids.
 * Throws `InputError('invalid-config')` naming the file and line.
 */
export function parseConfigFile(
  file: string,
  result: ParseResult,
  knownRules: ReadonlySet<string>,
  origin: ConfigFileOrigin = { fromArchive: false },
): ConfigLayer {
  if (!result.ok) {
    fail(file, result.error.line, `cannot be parsed: ${result.error.message}`);
  }
  const body = result.file.body;
  const layer: ConfigLayer = {};
  for (const attr of body.attributes) {
    switch (attr.name) {
      case 'engine': {
        const engine = stringValue(file, attr);
        if (engine !== 'terraform' && engine !== 'opentofu') {
          fail(file, attr.line, `engine must be "terraform" or "opentofu"; got "${engine}"`);
        }
        layer.engine = engine;
        break;
      }
      case 'roots':
        layer.roots = stringList(file, attr);
        break;
      case 'shared':
        layer.shared = stringList(file, attr);
        break;
      case 'examples':
        layer.examples = stringList(file, attr);
        break;
      case 'tests':
        layer.tests = stringList(file, attr);
        break;
      case 'fragments':
        layer.fragments = stringList(file, attr);
        break;
      case 'strict_examples':
        layer.strictExamples = boolValue(file, attr);
        break;
      case 'engines': {
        const v = attr.value;
        if (v === null || typeof v !== 'object' || Array.isArray(v)) {
          fail(file, attr.line, '"engines" must be a map of root glob to "terraform" or "opentofu"');
        }
        const engines: Record<string, Engine> = {};
        for (const [glob, engine] of Object.entries(v as Record<string, unknown>)) {
          if (engine !== 'terraform' && engine !== 'opentofu') {
            fail(file, attr.line, `engines["${glob}"] must be "terraform" or "opentofu"`);
          }
          engines[glob] = engine;
        }
        layer.engines = engines;
        break;
      }
      case 'platforms': {
        const platforms = stringList(file, attr);
        for (const p of platforms) {
          if (!PLATFORM.test(p))
            fail(file, attr.line, `platform "${p}" is not of the form os_arch (e.g. linux_amd64)`);
        }
        layer.platforms = platforms;
        break;
      }
      case 'plugin_dirs':
        layer.pluginDirs = stringList(file, attr).map((d) => d.replace(/^\.\//, '').replace(/\/+$/, ''));
        break;
      case 'registry':
        layer.registry = boolValue(file, attr);
        break;
      case 'registry_hosts': {
        if (origin.fromArchive) {
          fail(
            file,
            attr.line,
            '"registry_hosts" decides where tfguard sends network requests, so only whoever runs the scan may set it ' +
              '(--config FILE, or TFGUARD_REGISTRY_HOSTS in the service), not the scanned archive',
          );
        }
        const v = attr.value;
        if (v === null || typeof v !== 'object' || Array.isArray(v)) {
          fail(file, attr.line, '"registry_hosts" must be a map of hostname to base URL');
        }
        const hosts: Record<string, string> = {};
        for (const [host, url] of Object.entries(v as Record<string, unknown>)) {
          if (typeof url !== 'string' || !/^https?:\/\/[^\s]+$/.test(url)) {
            fail(file, attr.line, `registry_hosts["${host}"] must be an http(s) URL`);
          }
          hosts[host.toLowerCase()] = url.replace(/\/+$/, '');
        }
        layer.registryHosts = hosts;
        break;
      }
      case 'module_hosts': {
        if (origin.fromArchive) {
          fail(
            file,
            attr.line,
            '"module_hosts" decides where tfguard downloads remote modules from, so only whoever runs the scan may set it ' +
              '(--config FILE, or TFGUARD_MODULE_HOSTS in the service), not the scanned archive',
          );
        }
        const v = attr.value;
        if (v === null || typeof v !== 'object' || Array.isArray(v)) {
          fail(file, attr.line, '"module_hosts" must be a map of hostname to base URL ("" for https://HOST)');
        }
        const hosts: Record<string, string> = {};
        for (const [host, url] of Object.entries(v as Record<string, unknown>)) {
          if (typeof url !== 'string' || (url !== '' && !/^https?:\/\/[^\s]+$/.test(url))) {
            fail(
              file,
              attr.line,
              `module_hosts["${host}"] must be an http(s) URL, or "" for https://${host}`,
            );
          }
          hosts[host.toLowerCase()] = url.replace(/\/+$/, '');
        }
        layer.moduleHosts = hosts;
        break;
      }
      case 'lock_mode': {
        const mode = stringValue(file, attr);
        const known = LOCK_MODES.find((m) => m === mode);
        if (known === undefined) {
          fail(
            file,
            attr.line,
            `lock_mode must be ${LOCK_MODES.map((m) => `"${m}"`).join(' or ')}; got ${JSON.stringify(mode)}`,
          );
        }
        layer.lockMode = known;
        break;
      }
      case 'module_ref_policy':
        layer.moduleRefPolicy = oneOf(file, attr, MODULE_REF_POLICIES);
        break;
      case 'module_version_style':
        layer.moduleVersionStyle = oneOf(file, attr, MODULE_VERSION_STYLES);
        break;
      default:
        fail(
          file,
          attr.line,
          `unknown setting "${attr.name}" (expected engine, roots, shared, examples, tests, fragments, strict_examples, engines, lock_mode, module_ref_policy, module_version_style, platforms, plugin_dirs, registry, registry_hosts, module_hosts or rule blocks)`,
        );
    }
  }
  const rules: Record<string, RuleSetting> = {};
  const credentials: Record<string, string> = {};
  for (const block of body.blocks) {
    if (block.type === 'credentials') {
      credentialsBlock(file, block, origin, credentials);
      continue;
    }
    if (block.type !== 'rule' || block.labels.length !== 1) {
      fail(
        file,
        block.line,
        `unexpected block "${block.type}" (only rule "<id>" { ... } and, in --config, credentials "<host>" { ... } blocks are allowed)`,
      );
    }
    const id = block.labels[0] as string;
    if (!knownRules.has(id)) fail(file, block.line, `unknown rule id "${id}"`);
    if (rules[id] !== undefined) fail(file, block.line, `rule "${id}" is configured twice`);
    rules[id] = ruleSetting(file, block.body, block.line, id);
  }
  if (Object.keys(rules).length > 0) layer.rules = rules;
  if (Object.keys(credentials).length > 0) layer.credentials = credentials;
  return layer;
}

/**
 * `credentials "HOST" { token = "..." }` (as in Terraform's CLI configuration): a registry token,
 * `--config` only. Messages never quote the token.
 */
function credentialsBlock(
  file: string,
  block: HclBody['blocks'][number],
  origin: ConfigFileOrigin,
  into: Record<string, string>,
): void {
  if (origin.fromArchive) {
    fail(
      file,
      block.line,
      '"credentials" are registry tokens of whoever runs the scan, so only they may set them ' +
        '(--config FILE, or TF_TOKEN_<host> environment variables), not the scanned archive',
    );
  }
  const host = block.labels[0];
  if (block.labels.length !== 1 || host === undefined || !/^[^\s/:@]+(:\d+)?$/.test(host)) {
    fail(
      file,
      block.line,
      'a credentials block needs one label, the registry hostname: credentials "HOST" { token = "..." }',
    );
  }
  const key = normalizeRegistryHost(host);
  if (into[key] !== undefined) fail(file, block.line, `credentials for "${host}" are given twice`);
  let token: string | undefined;
  for (const attr of block.body.attributes) {
    if (attr.name !== 'token') {
      fail(file, attr.line, `unknown setting "${attr.name}" in credentials "${host}" (expected token)`);
    }
    if (typeof attr.value !== 'string' || attr.value === '') {
      fail(file, attr.line, `the token of credentials "${host}" must be a non-empty string`);
    }
    token = attr.value;
  }
  if (block.body.blocks.length > 0) {
    fail(file, block.line, `unexpected block in credentials "${host}" (only token = "..." is allowed)`);
  }
  if (token === undefined) fail(file, block.line, `credentials "${host}" has no token`);
  into[key] = token;
}

/** Applies layers in order: later layers win; rule settings merge per rule. */
export function mergeConfig(
  base: ScanConfig,
  layers: Array<{ file: string | null; layer: ConfigLayer }>,
): ScanConfig {
  const out: ScanConfig = { ...base, rules: { ...base.rules }, configFiles: [...base.configFiles] };
  for (const { file, layer } of layers) {
    const { rules, ...rest } = layer;
    Object.assign(out, rest);
    if (rest.engine !== undefined) out.engineExplicit = true;
    for (const [id, setting] of Object.entries(rules ?? {})) out.rules[id] = { ...out.rules[id], ...setting };
    if (file !== null) out.configFiles.push(file);
  }
  return out;
}
