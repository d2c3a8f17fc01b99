/**
 * Which files of a directory form the module, the way Terraform / OpenTofu choose them.
 *
 * - Terraform reads `*.tf` and `*.tf.json`; OpenTofu also reads `*.tofu` and `*.tofu.json`, and
 *   `x.tofu` replaces `x.tf` (`x.tofu.json` replaces `x.tf.json`) in the same directory (OpenTofu
 *   docs, "Files and Directories → Extension Precedence"; the same holds for override files).
 * - Names starting with `.`, ending with `~`, or starting and ending with `#` are editor leftovers
 *   and are skipped (`IsIgnoredFile` in hashicorp/terraform internal/configs/parser_config_dir.go).
 * - `override.*` and `*_override.*` are override files: skipped on the first pass, then merged in
 *   lexical file-name order.
 */
import { basename, compareUtf8 } from '../archive';
import type { Engine } from '../model';

export type ConfigExtension = '.tf' | '.tf.json' | '.tofu' | '.tofu.json';

const TERRAFORM_EXTENSIONS: readonly ConfigExtension[] = ['.tf.json', '.tf'];
const OPENTOFU_EXTENSIONS: readonly ConfigExtension[] = ['.tofu.json', '.tofu', '.tf.json', '.tf'];

/** The configuration extension of a file name for the engine, or null if it is not a config file. */
export function configExtension(name: string, engine: Engine): ConfigExtension | null {
  const list = engine === 'opentofu' ? OPENTOFU_EXTENSIONS : TERRAFORM_EXTENSIONS;
  return list.find((ext) => name.endsWith(ext)) ?? null;
}

/** Terraform's editor-leftover test (`IsIgnoredFile`). */
export function isIgnoredName(name: string): boolean {
  return name.startsWith('.') || name.endsWith('~') || (name.startsWith('#') && name.endsWith('#'));
}

/**
 * Whether an ignored name is a configuration file in disguise: `.main.tf`, `main.tf~`, `#main.tf#`,
 * `.#main.tf`. Other hidden files (`.terraform.lock.hcl`, `.gitignore`) are not reported.
 */
function looksLikeConfig(name: string, engine: Engine): boolean {
  const inner = name.replace(/~+$/, '').replace(/^#(.*)#$/, '$1');
  return configExtension(inner, engine) !== null;
}

export function isOverrideName(name: string, ext: ConfigExtension): boolean {
  const stem = name.slice(0, name.length - ext.length);
  return stem === 'override' || stem.endsWith('_override');
}

export interface FileSelection {
  /** Every configuration file that is loaded (primary and override files), sorted. */
  selected: string[];
  /** Configuration-looking files the engine skips: editor leftovers and, for OpenTofu, `.tf` /
   * `.tf.json` files shadowed by a `.tofu` / `.tofu.json` twin. Sorted. */
  ignored: string[];
  /** The subset of `selected` that are override files, in the order they are applied. */
  overrides: string[];
}

/**
 * Splits the files of ONE directory (names or paths; the result repeats them as given) into the
 * files Terraform/OpenTofu load, the ones it ignores, and the override files.
 */
export function selectConfigFiles(fileNames: string[], engine: Engine): FileSelection {
  const selected: string[] = [];
  const ignored: string[] = [];
  const candidates: { given: string; name: string; ext: ConfigExtension }[] = [];
  for (const given of fileNames) {
    const name = basename(given);
    if (isIgnoredName(name)) {
      if (looksLikeConfig(name, engine)) ignored.push(given);
      continue;
    }
    const ext = configExtension(name, engine);
    if (ext !== null) candidates.push({ given, name, ext });
  }
  if (engine === 'opentofu') {
    const present = new Set(candidates.map((c) => c.name));
    for (const c of candidates) {
      const twin =
        c.ext === '.tf'
          ? c.name.slice(0, -'.tf'.length) + '.tofu'
          : c.ext === '.tf.json'
            ? c.name.slice(0, -'.tf.json'.length) + '.tofu.json'
            : null;
      if (twin !== null && present.has(twin)) ignored.push(c.given);
      else selected.push(c.given);
    }
  } else {
    for (const c of candidates) selected.push(c.given);
  }
  const extOf = new Map(candidates.map((c) => [c.given, c]));
  const byName = (a: string, b: string): number => compareUtf8(basename(a), basename(b)) || compareUtf8(a, b);
  selected.sort(byName);
  ignored.sort(byName);
  const overrides = selected.filter((f) => {
    const c = extOf.get(f);
    return c !== undefined && isOverrideName(c.name, c.ext);
  });
  return { selected, ignored, overrides };
}

/**
 * Directories that hold tool state, not configuration: `.terraform/` (where `init` installs remote
 * modules, which are loaded only through their calls, never as modules of the archive) and `.git/`.
 */
export function inToolDirectory(path: string): boolean {
  // Asked of every entry several times a scan: searched in place rather than split into segments.
  return hasSegment(path, '.terraform') || hasSegment(path, '.git');
}

/** Whether one `/`-separated segment of `path` is exactly `segment`. */
function hasSegment(path: string, segment: string): boolean {
  for (let i = path.indexOf(segment); i >= 0; i = path.indexOf(segment, i + 1)) {
    const end = i + segment.length;
    if (
      (i === 0 || path.charCodeAt(i - 1) === SLASH) &&
      (end === path.length || path.charCodeAt(end) === SLASH)
    )
      return true;
  }
  return false;
}

const SLASH = 0x2f;
