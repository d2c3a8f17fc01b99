import { InputError } from '../errors';
import type { ArchiveLimits } from '../model';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Longest name (in UTF-16 code units) rendered in full in messages and `InputError.entry`; longer
 * names (a PAX or GNU long name can be megabytes) keep their head and tail around an ellipsis. */
export const MAX_DISPLAY_NAME = 8192;

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

/** Render a name for messages: control characters (and, for raw bytes, anything that is not valid
 * UTF-8) as `\xNN`, so a hostile name can neither break a log line nor be confused with another;
 * names longer than `MAX_DISPLAY_NAME` are shortened so an error stays small. */
export function displayName(name: string): string {
  return shorten(name).replace(
    CONTROL_CHARACTERS,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** Whether `displayName(text)` is `text` itself (no character to escape, not too long to show). */
export function displaysAsIs(text: string): boolean {
  return text.length <= MAX_DISPLAY_NAME && !HAS_CONTROL_CHARACTER.test(text);
}

// eslint-disable-next-line no-control-regex
const HAS_CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function shorten(text: string): string {
  if (text.length <= MAX_DISPLAY_NAME) return text;
  return `${text.slice(0, MAX_DISPLAY_NAME / 2)}…${text.slice(-MAX_DISPLAY_NAME / 2)}`;
}

/**
 * The key under which a case-insensitive, normalisation-insensitive file system (macOS APFS/HFS+,
 * Windows NTFS) stores a name: two archive paths with the same key are the same file there, so one
 * would silently replace the other on extraction. Compatibility decomposition, then lower- and
 * upper-casing (so `ß` meets `ss` and the Kelvin sign meets `k`), as node-tar does since its fix for
 * CVE-2026-23950 (GHSA-r6q2-hw4h-h46w).
 */
export function collisionKey(path: string): string {
  // ASCII (nearly every path) decomposes to itself, and lower- then upper-casing it is upper-casing.
  if (ASCII.test(path)) return path.toUpperCase();
  return path.normalize('NFKD').toLowerCase().toUpperCase();
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\u0000-\u007f]*$/;

/** Hex-escape every byte outside printable ASCII: used for names that are not valid UTF-8. */
export function hexEscape(raw: Uint8Array): string {
  let out = '';
  for (const byte of raw) {
    out +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x5c
        ? String.fromCharCode(byte)
        : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** Decode a raw entry name (or link target) as strict UTF-8; reject anything else as `invalid-path`. */
export function decodeUtf8Name(raw: Uint8Array, what: string, entryForError?: string): string {
  try {
    return utf8.decode(raw);
  } catch (cause) {
    const shown = shorten(hexEscape(raw));
    throw new InputError('invalid-path', `${what} is not valid UTF-8: "${shown}"`, {
      entry: entryForError ?? shown,
      cause,
    });
  }
}

/** Re-decode a string that tar-stream decoded as latin1 (one char per byte) as strict UTF-8. */
export function latin1ToUtf8(name: string, what: string, entryForError?: string): string {
  // Pure ASCII is by far the common case and is identical in both encodings.
  // eslint-disable-next-line no-control-regex
  if (/^[\u0000-\u007f]*$/.test(name)) return name;
  return decodeUtf8Name(Buffer.from(name, 'latin1'), what, entryForError);
}

export interface NormaliseOptions {
  /** Archive names may come from Windows tools: treat `\` as a separator and reject drive forms. */
  archive: boolean;
}

/**
 * Validate and normalise an entry name. Returns the normalised archive-relative path, or `null` for
 * the archive root itself (`./`, `.`). Throws `InputError` naming the entry on any violation.
 */
export function normaliseEntryPath(
  name: string,
  limits: ArchiveLimits,
  options: NormaliseOptions,
): string | null {
  const plain = alreadyNormal(name, limits);
  if (plain !== null) return plain;
  // The display form (`shown`) is computed only for an error.
  if (name.includes('\0')) {
    const shown = displayName(name);
    throw new InputError('invalid-path', `entry name contains a NUL byte: "${shown}"`, { entry: shown });
  }
  let work = name;
  if (options.archive) {
    // Leading `/` or `\`, UNC `\\host`, and every drive form (`C:\x`, `C:/x`, `C:..`, `C:x` is
    // drive-relative) are absolute somewhere.
    if (/^[/\\]/.test(work) || /^[A-Za-z]:/.test(work)) {
      const shown = displayName(name);
      throw new InputError('absolute-path', `absolute path in archive: "${shown}"`, { entry: shown });
    }
    work = work.replace(/\\/g, '/');
  }
  const stack: string[] = [];
  for (const segment of work.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (stack.length === 0) {
        const shown = displayName(name);
        throw new InputError('path-traversal', `path escapes the archive root: "${shown}"`, { entry: shown });
      }
      stack.pop();
      continue;
    }
    stack.push(segment);
  }
  if (stack.length === 0) return null;
  const normalised = stack.join('/');
  const length = Buffer.byteLength(normalised, 'utf8');
  if (length > limits.maxPathLength) {
    const shown = displayName(name);
    throw new InputError(
      'path-too-long',
      `path is ${length} bytes long, more than the limit of ${limits.maxPathLength}: "${truncateForDisplay(shown)}"`,
      { entry: shown },
    );
  }
  if (stack.length > limits.maxPathDepth) {
    const shown = displayName(name);
    throw new InputError(
      'path-too-deep',
      `path is ${stack.length} levels deep, more than the limit of ${limits.maxPathDepth}: "${truncateForDisplay(shown)}"`,
      { entry: shown },
    );
  }
  return normalised;
}

/**
 * Something that makes a name other than its own normal form (or that only the full check below
 * judges): a NUL, a `\\`, an empty, `.` or `..` segment, a leading `/`, a drive form.
 */
// eslint-disable-next-line no-control-regex
const NOT_PLAIN = /[\u0000\\]|\/\/|(?:^|\/)\.{1,2}(?:\/|$)|^\/|^[A-Za-z]:/;

/**
 * `normaliseEntryPath` of a name that is already normal (as nearly every name in an archive is:
 * segments joined by single `/`, perhaps after a leading `./` as `tar -C dir .` writes, perhaps a
 * trailing `/` of a directory) and within the length and depth limits, without splitting and
 * joining it; null for every other name, which the full check takes (and so gives every rejection
 * its message). A UTF-16 code unit is at most three bytes of UTF-8, so a name of at most a third of
 * the length limit cannot be over it; its segments are counted only when it is long enough to have
 * too many (`2d - 1` units for `d` segments).
 */
function alreadyNormal(name: string, limits: ArchiveLimits): string | null {
  const rest = name.startsWith('./') ? name.slice(2) : name;
  if (rest.length === 0 || rest.length * 3 > limits.maxPathLength || NOT_PLAIN.test(rest)) return null;
  const path = rest.endsWith('/') ? rest.slice(0, -1) : rest;
  if (path.length >= 2 * limits.maxPathDepth) {
    let segments = 1;
    for (let at = path.indexOf('/'); at !== -1; at = path.indexOf('/', at + 1)) segments++;
    if (segments > limits.maxPathDepth) return null;
  }
  return path;
}

function truncateForDisplay(text: string): string {
  return text.length > 200 ? `${text.slice(0, 100)}…${text.slice(-100)}` : text;
}

/** macOS resource-fork debris: `._name` AppleDouble files and the `__MACOSX/` tree. */
export function isMacOsDebris(path: string): boolean {
  if (path === '__MACOSX' || path.startsWith('__MACOSX/')) return true;
  return path.startsWith('._', path.lastIndexOf('/') + 1);
}

export function basename(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}

export function dirname(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

/** Byte-order comparison of the UTF-8 encodings (what `LC_ALL=C sort` and Go's sort of strings do). */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-8 byte order is code point order. UTF-16 code units agree with it except that surrogates
  // (D800-DFFF, the code points from U+10000) sort above E000-FFFF: compare unit by unit, and let
  // the encoder decide only at a difference that involves a surrogate (lone surrogates encode as
  // U+FFFD). Sorting paths is hot enough that encoding every comparison showed in profiles.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if ((x & 0xf800) === 0xd800 || (y & 0xf800) === 0xd800) {
      return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

// `.hcl`: Terragrunt configuration (`terragrunt.hcl`, included files), `terraform test` files
// (`.tftest.hcl`), Terraform Stacks and Terramate files, read to tell what each directory is.
const LOADED_SUFFIXES = [
  '.tf',
  '.tf.json',
  '.tofu',
  '.tofu.json',
  '.hcl',
  '.tftest.json',
  // OpenTofu's own test files (`.tofutest.hcl` is covered by `.hcl`).
  '.tofutest.json',
  '.tfcomponent.json',
  '.tfdeploy.json',
  '.tm',
];
const LOADED_NAMES = new Set([
  '.terraform.lock.hcl',
  '.tfguard.hcl',
  'README.md',
  'readme.md',
  'Readme.md',
  // Deployment tooling that declares root directories (src/modules/declarations).
  'atlantis.yaml',
  'atlantis.yml',
  'digger.yml',
  'digger.yaml',
  'atmos.yaml',
  'env0.workflow.yml',
  'env0.workflow.yaml',
]);
/** Spacelift's runtime configuration, and YAML under a `stacks` directory (Atmos stack manifests,
 * whose default and conventional base path is `stacks`). */
const LOADED_YAML = /(^|\/)\.spacelift\/config\.ya?ml$|(^|\/)stacks\/(.*\/)?[^/]+\.ya?ml$/;

/** Files whose content tfguard needs: configuration files, lock files, the tfguard config, and the
 * files that say what a directory is (Terragrunt, test, Stacks and deployment tooling files,
 * READMEs). */
export function defaultShouldLoad(path: string): boolean {
  const name = basename(path);
  if (LOADED_NAMES.has(name)) return true;
  if (LOADED_SUFFIXES.some((suffix) => name.endsWith(suffix))) return true;
  return (name.endsWith('.yaml') || name.endsWith('.yml')) && LOADED_YAML.test(path);
}
