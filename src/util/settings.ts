/**
 * The shape every setting is declared in, once: its key, its type (which is its validation), its
 * default, who may set it and one line of documentation. The tables built from it are
 * `REPOSITORY_SETTINGS` (`.tfguard.hcl` and `--config`, src/scan/settings.ts, with the rule options
 * each rule declares), `OPERATOR_SETTINGS` (environment of the CLI and the service, src/config.ts)
 * and `SERVICE_SETTINGS` (the deployed service, src/service/settings.ts). Parsers, defaults, error
 * messages, `--help` and the README's tables are derived from those tables, never written twice.
 */

/** Who may set a setting:
 * - `repository`: the scanned repository's own `.tfguard.hcl` (also `--config FILE`);
 * - `config`: `--config FILE` only (whoever runs the scan; never the scanned archive);
 * - `environment`: an environment variable of the CLI or the service;
 * - `cli`: a command-line option. */
export type SettingOrigin = 'repository' | 'config' | 'environment' | 'cli';

/** A value that does not fit a setting's type; the message is whole, naming the setting. */
export class SettingValueError extends Error {
  override readonly name = 'SettingValueError';
}

/**
 * A setting's type: what it accepts, written for people, and how a value is read and checked.
 * `name` is how messages name the setting: `"roots"` for a settings file's type errors (the key,
 * quoted), `environment variable TFGUARD_X` for the environment.
 */
export interface SettingType<T> {
  /** For documentation: `a list of strings`, `true or false`, `"a" or "b"`. */
  readonly describe: string;
  /** A value as a settings file gives it (string, boolean, number, list, object). */
  fromValue(value: unknown, key: string): T;
  /** A value as an environment variable gives it (text). */
  fromText?(text: string, variable: string): T;
}

export interface SettingSpec<T = unknown> {
  /** The name in `.tfguard.hcl` / `--config`, when it has one (`module_ref_policy`). */
  readonly key?: string;
  /** The environment variable, when it has one (`TFGUARD_MAX_ENTRIES`). */
  readonly env?: string;
  /** The command-line option, when it has one (`--timeout SECONDS`). */
  readonly flag?: string;
  readonly type: SettingType<T>;
  /** The value when nobody sets it; undefined = none (off, unlimited, detected). */
  readonly default: T | undefined;
  /** How the default reads in the documentation, when `default` alone does not say it. */
  readonly defaultText?: string;
  readonly origins: readonly SettingOrigin[];
  /** For an environment variable: the CLI only or the service only; absent = both. */
  readonly readBy?: 'cli' | 'service';
  /** One line: what it does. */
  readonly doc: string;
  /** A value as it would be written in `.tfguard.hcl` (for the README's sample). */
  readonly example?: string;
}

/** The text of one value in a message or a table. */
export function showValue(value: unknown): string {
  return JSON.stringify(value);
}

/** `"a", "b" or "c"`. */
export function alternatives(values: readonly string[]): string {
  const quoted = values.map((v) => `"${v}"`);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1] ?? ''}`;
}

/** How a setting's default reads in documentation. */
export function defaultText(spec: SettingSpec): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  const d = spec.default;
  if (d === undefined) return 'none';
  if (Array.isArray(d) && d.length === 0) return '`[]`';
  if (d !== null && typeof d === 'object' && Object.keys(d).length === 0) return '`{}`';
  if (typeof d === 'number') return String(d);
  return `\`${typeof d === 'string' ? JSON.stringify(d) : String(d)}\``;
}

// ---------------------------------------------------------------------------------------------
// Types. Messages keep the forms users have seen: a wrong type quotes the key
// (`"roots" must be a list of strings`), a wrong value does not (`lock_mode must be "default" or
// "readonly"; got "strict"`), and an environment variable is named as such.
// ---------------------------------------------------------------------------------------------

export const stringList: SettingType<string[]> = {
  describe: 'a list of strings',
  fromValue(value, key) {
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
      throw new SettingValueError(`"${key}" must be a list of strings`);
    }
    return value as string[];
  },
};

/** A list of strings, each checked by `check` (which returns a whole message, or null). */
export function checkedList(
  describe: string,
  check: (item: string) => string | null,
  map: (item: string) => string = (item) => item,
): SettingType<string[]> {
  return {
    describe,
    fromValue(value, key) {
      const list = stringList.fromValue(value, key);
      for (const item of list) {
        const problem = check(item);
        if (problem !== null) throw new SettingValueError(problem);
      }
      return list.map(map);
    },
  };
}

const TRUE_TEXT = ['1', 'true', 'yes', 'on'];
const FALSE_TEXT = ['0', 'false', 'no', 'off'];

export const bool: SettingType<boolean> = {
  describe: 'true or false',
  fromValue(value, key) {
    if (typeof value !== 'boolean') throw new SettingValueError(`"${key}" must be true or false`);
    return value;
  },
  fromText(text, variable) {
    const t = text.trim().toLowerCase();
    if (TRUE_TEXT.includes(t)) return true;
    if (FALSE_TEXT.includes(t)) return false;
    throw new SettingValueError(`${variable} must be true or false, got ${showValue(text)}`);
  },
};

/** One of `allowed`, exactly (no other case). */
export function oneOf<T extends string>(allowed: readonly T[]): SettingType<T> {
  const check = (value: string, name: string): T => {
    const known = allowed.find((a) => a === value);
    if (known === undefined) {
      throw new SettingValueError(`${name} must be ${alternatives(allowed)}; got ${showValue(value)}`);
    }
    return known;
  };
  return {
    describe: alternatives(allowed),
    fromValue(value, key) {
      if (typeof value !== 'string') throw new SettingValueError(`"${key}" must be a string`);
      return check(value, key);
    },
    fromText: (text, variable) => check(text.trim(), variable),
  };
}

/**
 * A map of string keys to values each checked by `item(key, entryKey, value)`, which returns the
 * value or throws a whole message. `describe` reads after "must be".
 */
export function stringMap<T>(
  describe: string,
  item: (key: string, entryKey: string, value: unknown) => T,
  normalizeKey: (key: string) => string = (k) => k,
): SettingType<Record<string, T>> {
  const fromValue = (raw: unknown, key: string): Record<string, T> => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new SettingValueError(`"${key}" must be ${describe}`);
    }
    const out: Record<string, T> = {};
    for (const [entryKey, value] of Object.entries(raw as Record<string, unknown>)) {
      out[normalizeKey(entryKey)] = item(key, entryKey, value);
    }
    return out;
  };
  return {
    describe,
    fromValue,
    fromText(text, variable) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new SettingValueError(
          `${variable} must be a JSON object (${describe}), got ${showValue(text)}`,
        );
      }
      return fromValue(parsed, variable);
    },
  };
}

/** A positive number: an integer unless `integer` is false. */
export function positive(integer = true): SettingType<number> {
  const what = integer ? 'a positive integer' : 'a positive number';
  const ok = (n: number): boolean =>
    integer ? Number.isSafeInteger(n) && n > 0 : Number.isFinite(n) && n > 0;
  return {
    describe: what,
    fromValue(value, key) {
      if (typeof value !== 'number' || !ok(value)) throw new SettingValueError(`"${key}" must be ${what}`);
      return value;
    },
    fromText(text, variable) {
      const n = Number(text);
      if (text.trim() === '' || !ok(n))
        throw new SettingValueError(`${variable} must be ${what}, got ${showValue(text)}`);
      return n;
    },
  };
}

/** A text setting checked by `fromText` (which returns the value or throws a whole message); a
 * settings file's value is read as its text. */
export function textType<T>(describe: string, fromText: (text: string, name: string) => T): SettingType<T> {
  return { describe, fromText, fromValue: (value, name) => fromText(String(value), name) };
}

/** How `readEnvSetting` reads for one caller. */
export interface EnvReadOptions<T> {
  /** What an unset or blank variable reads as (default: the setting's default). */
  readonly fallback?: T | undefined;
  /** How messages name the variable (default: `environment variable <NAME>`). */
  readonly label?: string;
  /** The caller's error for an unusable value (default: the `SettingValueError` itself). */
  readonly error?: (message: string, cause: SettingValueError) => Error;
}

/**
 * Reads one setting from an environment object: unset or blank is the fallback (the default unless
 * given); otherwise the type's `fromText` of the trimmed text, its messages naming the variable.
 * The one reader of environment settings: the CLI's operator settings, the stage and the service's
 * settings differ only in the options.
 */
export function readEnvSetting<T>(
  spec: SettingSpec<T>,
  env: Readonly<Record<string, string | undefined>>,
  options: EnvReadOptions<T> = {},
): T | undefined {
  const fallback = Object.hasOwn(options, 'fallback') ? options.fallback : spec.default;
  if (spec.env === undefined) return fallback;
  const raw = env[spec.env];
  if (raw === undefined || raw.trim() === '') return fallback;
  const variable = options.label ?? `environment variable ${spec.env}`;
  const value = raw.trim();
  try {
    return spec.type.fromText !== undefined
      ? spec.type.fromText(value, variable)
      : spec.type.fromValue(value, variable);
  } catch (err) {
    if (options.error !== undefined && err instanceof SettingValueError)
      throw options.error(err.message, err);
    throw err;
  }
}

/** A setting of a configuration object: its key in a settings file and the field it sets. */
export interface FieldSetting<F extends string = string, T = unknown> extends SettingSpec<T> {
  readonly key: string;
  readonly field: F;
}
