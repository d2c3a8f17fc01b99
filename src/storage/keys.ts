/**
 * Key rules shared by every `ObjectStore` adapter, so that a key valid for one store is valid for
 * all of them (the filesystem store maps keys to paths, S3 takes them as they are).
 *
 * A key is `/`-separated, 1..1024 UTF-8 bytes (S3's limit), never starts or ends with `/`, has no
 * empty, `.` or `..` segment, and contains no control character and no backslash. Any other
 * character (spaces, `+`, `%`, non-ASCII) is allowed.
 */

export class StorageKeyError extends Error {
  override readonly name = 'StorageKeyError';
  readonly key: string;

  constructor(key: string, reason: string) {
    super(`invalid storage key ${JSON.stringify(key)}: ${reason}`);
    this.key = key;
  }
}

export const MAX_KEY_BYTES = 1024;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// C0 controls, DEL and the C1 controls.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\]/;

function checkSegments(key: string, segments: string[]): void {
  for (const segment of segments) {
    if (segment === '') throw new StorageKeyError(key, 'empty path segment');
    if (segment === '.' || segment === '..') throw new StorageKeyError(key, `"${segment}" segment`);
  }
}

function checkCharacters(key: string): void {
  const bad = FORBIDDEN.exec(key);
  if (bad) {
    const what =
      bad[0] === '\\'
        ? 'a backslash'
        : `control character U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0')}`;
    throw new StorageKeyError(key, `contains ${what}`);
  }
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES)
    throw new StorageKeyError(key, `longer than ${MAX_KEY_BYTES} bytes`);
  if (LONE_SURROGATE.test(key)) throw new StorageKeyError(key, 'not well-formed Unicode (lone surrogate)');
}

/** Throws `StorageKeyError` unless `key` is a valid object key. */
export function assertValidKey(key: string): void {
  if (typeof key !== 'string' || key === '') throw new StorageKeyError(String(key), 'empty key');
  checkCharacters(key);
  if (key.startsWith('/')) throw new StorageKeyError(key, 'starts with "/"');
  if (key.endsWith('/')) throw new StorageKeyError(key, 'ends with "/"');
  checkSegments(key, key.split('/'));
}

/**
 * Throws `StorageKeyError` unless `prefix` is a valid listing prefix: empty, or a valid key, or a
 * valid key followed by `/`, or a key whose last segment is partial (`reports/ab` lists
 * `reports/abc/x`).
 */
export function assertValidPrefix(prefix: string): void {
  if (prefix === '') return;
  checkCharacters(prefix);
  if (prefix.startsWith('/')) throw new StorageKeyError(prefix, 'starts with "/"');
  const segments = prefix.split('/');
  // The last segment is a partial name and may be empty (a prefix ending in "/"), or "." (a prefix
  // of ".x"), but "a/../" style complete segments are rejected.
  const complete = segments.slice(0, -1);
  checkSegments(prefix, complete);
}

/** Byte-wise (UTF-8) comparison: the order S3 lists keys in. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
