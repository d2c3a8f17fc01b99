/**
 * Every setting of `.tfguard.hcl` and `--config FILE`, declared once: the settings file parser
 * (src/scan/config-file.ts), the defaults (`DEFAULT_CONFIG`), its "unknown setting" message and the
 * README's settings sample and table are all made from this table. A setting that only one rule
 * reads is declared on that rule (`Rule.options`) and joins the table from the rule registry.
 */
import type { Engine, ScanConfig } from '../model';
import { ENGINES, LOCK_MODES } from '../model';
import { RULES } from '../rules';
import type { FieldSetting } from '../util/settings';
import {
  bool,
  checkedList,
  defaultText,
  oneOf,
  SettingValueError,
  stringList,
  stringMap,
} from '../util/settings';

/** A setting of `ScanConfig`, as the settings file names it. */
export type ConfigSetting = FieldSetting<keyof ScanConfig>;

const PLATFORM = /^[a-z0-9]+_[a-z0-9]+$/;
const HTTP_URL = /^https?:\/\/[^\s]+$/;

const globs = stringList;

/** Where tfguard sends requests or downloads from: whoever runs the scan decides, never the scanned
 * archive (SSRF); the message says so. */
const OPERATOR_ONLY = ['config'] as const;

const engineType = oneOf(ENGINES);

/** The settings every scan reads (rule options are added from the rules below). */
const CORE_SETTINGS: readonly ConfigSetting[] = [
  {
    key: 'engine',
    field: 'engine',
    type: engineType,
    default: 'terraform',
    defaultText: 'detected (`"terraform"` unless OpenTofu files or locks)',
    origins: ['repository'],
    doc: 'the engine that runs the roots: `"terraform"` or `"opentofu"`',
    example: '"opentofu"',
  },
  {
    key: 'roots',
    field: 'roots',
    type: globs,
    default: [],
    origins: ['repository'],
    doc: 'globs: these directories are root modules',
    example: '["live/**", "stacks/*"]',
  },
  {
    key: 'shared',
    field: 'shared',
    type: globs,
    default: [],
    origins: ['repository'],
    doc: 'globs: these are shared (reusable) modules',
    example: '["modules/**"]',
  },
  {
    key: 'examples',
    field: 'examples',
    type: globs,
    default: [],
    origins: ['repository'],
    doc: 'globs: example configurations (checked for consistency only)',
    example: '["docs/snippets/*"]',
  },
  {
    key: 'tests',
    field: 'tests',
    type: globs,
    default: [],
    origins: ['repository'],
    doc: 'globs: test configurations (checked for consistency only)',
    example: '["ci/plan-check"]',
  },
  {
    key: 'fragments',
    field: 'fragments',
    type: globs,
    default: [],
    origins: ['repository'],
    doc: 'globs: directories that are not modules (snippets, templates)',
    example: '["templates/**"]',
  },
  {
    key: 'strict_examples',
    field: 'strictExamples',
    type: bool,
    default: false,
    origins: ['repository'],
    doc: '`true`: examples get the root rules too (locks, pinning)',
    example: 'false',
  },
  {
    key: 'engines',
    field: 'engines',
    type: stringMap<Engine>('a map of root glob to "terraform" or "opentofu"', (key, glob, value) => {
      if (value !== 'terraform' && value !== 'opentofu') {
        throw new SettingValueError(`${key}["${glob}"] must be "terraform" or "opentofu"`);
      }
      return value;
    }),
    default: {},
    defaultText: 'per lock file',
    origins: ['repository'],
    doc: 'the engine of matching roots',
    example: '{ "tofu/**" = "opentofu" }',
  },
  {
    key: 'platforms',
    field: 'platforms',
    type: checkedList('a list of os_arch platforms', (p) =>
      PLATFORM.test(p) ? null : `platform "${p}" is not of the form os_arch (e.g. linux_amd64)`,
    ),
    default: [],
    origins: ['repository'],
    doc: 'platforms lock files must cover',
    example: '["linux_amd64", "darwin_arm64"]',
  },
  {
    key: 'plugin_dirs',
    field: 'pluginDirs',
    type: checkedList(
      'a list of directories',
      () => null,
      (d) => d.replace(/^\.\//, '').replace(/\/+$/, ''),
    ),
    default: [],
    origins: ['repository'],
    doc: 'extra filesystem-mirror directories',
    example: '["vendor/providers"]',
  },
  {
    key: 'registry',
    field: 'registry',
    flag: '--registry',
    type: bool,
    default: false,
    origins: ['repository', 'cli'],
    doc: 'registry cross-check of lock files',
    example: 'true',
  },
  {
    key: 'registry_hosts',
    field: 'registryHosts',
    env: 'TFGUARD_REGISTRY_HOSTS',
    type: stringMap(
      'a map of hostname to base URL',
      (key, host, url) => {
        if (typeof url !== 'string' || !HTTP_URL.test(url)) {
          throw new SettingValueError(`${key}["${host}"] must be an http(s) URL`);
        }
        return url.replace(/\/+$/, '');
      },
      (host) => host.toLowerCase(),
    ),
    default: {},
    origins: OPERATOR_ONLY,
    doc: 'registry hostname → base URL (private registries, mirrors); decides where tfguard sends network requests',
    example: '{ "tfe.example.com" = "https://tfe.example.com" }',
  },
  {
    key: 'module_hosts',
    field: 'moduleHosts',
    env: 'TFGUARD_MODULE_HOSTS',
    type: stringMap(
      'a map of hostname to base URL ("" for https://HOST)',
      (key, host, url) => {
        if (typeof url !== 'string' || (url !== '' && !HTTP_URL.test(url))) {
          throw new SettingValueError(`${key}["${host}"] must be an http(s) URL, or "" for https://${host}`);
        }
        return url.replace(/\/+$/, '');
      },
      (host) => host.toLowerCase(),
    ),
    default: undefined,
    defaultText: '`{}`',
    origins: OPERATOR_ONLY,
    doc: 'git and HTTP hosts remote modules may be downloaded from, hostname → base URL',
    example: '{ "github.com" = "" }',
  },
  {
    key: 'lock_mode',
    field: 'lockMode',
    type: oneOf(LOCK_MODES),
    default: 'default',
    origins: ['repository'],
    doc: '`"readonly"`: the CI runs `init -lockfile=readonly` (`lock-missing` and `lock-provider-stale` become errors)',
    example: '"readonly"',
  },
];

/** Why an operator-only setting may not come from the scanned archive (the message's tail). */
export const OPERATOR_ONLY_REASON: Readonly<Record<string, string>> = {
  registry_hosts:
    'decides where tfguard sends network requests, so only whoever runs the scan may set it ' +
    '(--config FILE, or TFGUARD_REGISTRY_HOSTS in the service), not the scanned archive',
  module_hosts:
    'decides where tfguard downloads remote modules from, so only whoever runs the scan may set it ' +
    '(--config FILE, or TFGUARD_MODULE_HOSTS in the service), not the scanned archive',
};

/** Every settings-file setting: the core ones, then each rule's own, in registry order. */
export const CONFIG_SETTINGS: readonly ConfigSetting[] = [
  ...CORE_SETTINGS,
  ...RULES.flatMap((rule) => rule.options ?? []),
];

/** The blocks a settings file may hold besides the settings (documentation and messages). */
export const CONFIG_BLOCKS = [
  {
    name: 'rule',
    syntax: 'rule "root-module-unbounded" { severity = "warning" }',
    origins: ['repository'],
    doc: 'a rule\'s severity (`"error"`, `"warning"`, `"notice"`) or `enabled = false`',
  },
  {
    name: 'credentials',
    syntax: 'credentials "app.terraform.io" { token = "..." }',
    origins: ['config'],
    doc: "a registry's token (`TF_TOKEN_<host>` in the environment wins)",
  },
] as const;

const BY_KEY = new Map(CONFIG_SETTINGS.map((s) => [s.key, s]));

export function configSetting(key: string): ConfigSetting | undefined {
  return BY_KEY.get(key);
}

/** The defaults, from the table. */
export function defaultConfig(): ScanConfig {
  const config: Record<string, unknown> = { rules: {}, configFiles: [] };
  for (const s of CONFIG_SETTINGS) {
    if (s.default === undefined) continue;
    const d = s.default;
    config[s.field] = Array.isArray(d)
      ? [...(d as unknown[])]
      : d !== null && typeof d === 'object'
        ? { ...d }
        : d;
  }
  return config as unknown as ScanConfig;
}

/** `engine, roots, ... or rule blocks`: the settings a file may hold, for "unknown setting". */
export function expectedSettings(): string {
  return `${CONFIG_SETTINGS.map((s) => s.key).join(', ')} or rule blocks`;
}

const ORIGIN_TEXT = {
  repository: '`.tfguard.hcl`, `--config`',
  config: '`--config` only',
} as const;

/** The README's sample settings file: every setting with its example, its default in a comment. */
export function settingsSample(): string {
  const width = Math.max(...CONFIG_SETTINGS.map((s) => `${s.key} = ${s.example ?? ''}`.length)) + 2;
  const lines = CONFIG_SETTINGS.map((s) => {
    const line = `${s.key} = ${s.example ?? ''}`;
    const where = s.origins.includes('repository') ? '' : '; --config FILE only';
    return `${line.padEnd(width)}# default: ${plain(defaultText(s))}${where}`;
  });
  const blocks = CONFIG_BLOCKS.map((b) => {
    const where = (b.origins as readonly string[]).includes('repository') ? '' : '   # --config FILE only';
    return `${b.syntax}${where}`;
  });
  return ['```hcl', ...lines, '', ...blocks, '```'].join('\n');
}

/** The README's settings table: key, type, default, who may set it, meaning. */
export function settingsTable(): string {
  const rows = CONFIG_SETTINGS.map((s) => {
    const origin = s.origins.includes('repository') ? ORIGIN_TEXT.repository : ORIGIN_TEXT.config;
    const also = [s.flag, s.env].filter((x): x is string => x !== undefined).map((x) => `\`${x}\``);
    const where = also.length > 0 ? `${origin}; ${also.join(', ')}` : origin;
    return `| \`${s.key}\` | ${cell(s.type.describe)} | ${cell(defaultText(s))} | ${where} | ${cell(s.doc)} |`;
  });
  const blocks = CONFIG_BLOCKS.map((b) => {
    const origin = (b.origins as readonly string[]).includes('repository')
      ? ORIGIN_TEXT.repository
      : ORIGIN_TEXT.config;
    return `| \`${b.syntax}\` | block | none | ${origin} | ${cell(b.doc)} |`;
  });
  return [
    '| setting | type | default | set in | meaning |',
    '|---|---|---|---|---|',
    ...rows,
    ...blocks,
  ].join('\n');
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function plain(text: string): string {
  return text.replace(/`/g, '');
}
