/**
 * `.tfguard.hcl`: the per-repository settings file at the archive root (and the same grammar for
 * `--config FILE`). Parsed with the project's HCL parser. Invalid settings reject the input with a
 * specific `invalid-config` error: a typo must never silently change what is enforced.
 *
 * Every setting (key, type, default, who may set it) is declared once in src/scan/settings.ts; this
 * file reads a settings file against that table. The README's sample and table are made from it.
 */
import { InputError } from '../errors';
import type { RuleSetting, ScanConfig, Severity } from '../model';
import type { HclAttribute, HclBody, ParseResult } from '../hcl';
import { SEVERITIES } from '../model';
import { normalizeRegistryHost } from '../util/http';
import { SettingValueError } from '../util/settings';
import { configSetting, defaultConfig, expectedSettings, OPERATOR_ONLY_REASON } from './settings';

export const CONFIG_FILE_NAME = '.tfguard.hcl';

/** The defaults of every setting (src/scan/settings.ts). */
export const DEFAULT_CONFIG: ScanConfig = defaultConfig();

/** Settings one file contributes; `engine` is present only when the file sets it explicitly. */
export type ConfigLayer = Partial<Omit<ScanConfig, 'configFiles'>>;

function fail(file: string, line: number | null, message: string): never {
  const where = line === null ? file : `${file}:${line}`;
  throw new InputError('invalid-config', `${where}: ${message}`, { entry: file });
}

function stringValue(file: string, attr: HclAttribute): string {
  if (typeof attr.value !== 'string') fail(file, attr.line, `"${attr.name}" must be a string`);
  return attr.value;
}

function boolValue(file: string, attr: HclAttribute): boolean {
  if (typeof attr.value !== 'boolean') fail(file, attr.line, `"${attr.name}" must be true or false`);
  return attr.value;
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
  const values = layer as Record<string, unknown>;
  for (const attr of body.attributes) {
    const setting = configSetting(attr.name);
    if (setting === undefined) {
      fail(file, attr.line, `unknown setting "${attr.name}" (expected ${expectedSettings()})`);
    }
    if (origin.fromArchive && !setting.origins.includes('repository')) {
      fail(
        file,
        attr.line,
        `"${attr.name}" ${OPERATOR_ONLY_REASON[attr.name] ?? 'may only be set with --config FILE'}`,
      );
    }
    try {
      values[setting.field] = setting.type.fromValue(attr.value, attr.name);
    } catch (err) {
      if (err instanceof SettingValueError) fail(file, attr.line, err.message);
      throw err;
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
