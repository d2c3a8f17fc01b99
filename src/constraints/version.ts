/**
 * Provider versions as Terraform reads them (apparentlymart/go-versions, the library behind
 * `internal/getproviders`): `MAJOR[.MINOR[.PATCH]][-PRERELEASE][+METADATA]`, missing parts are 0.
 *
 * Ordering follows go-versions, not the SemVer spec, where the two differ (checked against
 * `terraform init`): pre-release identifiers are compared part by part, but a pre-release that runs
 * out of parts first is the older one *without comparing the last part* — so `1.5.0-beta` sorts
 * before `1.5.0-alpha.1` in Terraform while SemVer puts it after. Numeric identifiers compare by
 * length first (no leading-zero rule). Build metadata never affects precedence.
 */

export class ConstraintSyntaxError extends Error {
  override readonly name = 'ConstraintSyntaxError';
  /** The whole input the error is about. */
  readonly input: string;

  constructor(message: string, input: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.input = input;
  }
}

export interface Version {
  major: number;
  minor: number;
  patch: number;
  /** Pre-release identifiers without the leading `-`, or `''`. */
  prerelease: string;
  /** Build metadata without the leading `+`, or `''`. */
  metadata: string;
  /** How many numeric parts were written (`2` → 1, `2.0` → 2, `2.0.1` → 3). */
  parts: 1 | 2 | 3;
}

/** Characters go-versions accepts inside a pre-release or metadata string (its `extraStr`). */
const EXTRA_CHARS = /^[0-9A-Za-z.-]*/;

/**
 * Parses one numeric part. Terraform accepts up to 2^63-1 (go-version) in configurations; this
 * implementation stops at Number.MAX_SAFE_INTEGER so that every number it keeps is exact.
 */
export function parseNumber(digits: string, input: string): number {
  const n = Number(digits);
  if (!Number.isSafeInteger(n)) {
    throw new ConstraintSyntaxError(
      `version number "${digits}" is too large (at most ${Number.MAX_SAFE_INTEGER} is supported)`,
      input,
    );
  }
  return n;
}

export interface ScannedVersion {
  version: Version;
  /** Unconsumed text after the version. */
  rest: string;
  /** A trailing `-` or `+` with nothing after it, which go-versions silently drops. */
  dangling: '-' | '+' | null;
}

/**
 * Scans a version at the start of `text` (which must start with a digit), the way go-versions'
 * scanner does: 1+ numeric parts, then an optional `-pre` and `+meta` made of `[0-9A-Za-z.-]`.
 * Quirk kept from go-versions: a `-` or `+` with nothing usable after it is dropped
 * (`1.0-` reads as `1.0`), but then nothing else may follow it.
 * `rest` is whatever follows; the caller decides whether it is acceptable.
 */
export function scanVersion(text: string, input: string): ScannedVersion {
  const numMatch = /^[0-9]+(?:\.[0-9]+)*/.exec(text);
  if (numMatch === null) {
    throw new ConstraintSyntaxError(`expected a version number at "${text}"`, input);
  }
  const numText = numMatch[0];
  let rest = text.slice(numText.length);
  if (/^\.[xX*]/.test(rest)) {
    throw new ConstraintSyntaxError(
      `wildcards such as "${numText}${rest.slice(0, 2)}" are not supported; leave out the parts that may vary`,
      input,
    );
  }
  const nums = numText.split('.');
  if (nums.length > 3) {
    throw new ConstraintSyntaxError(
      `"${numText}" has ${nums.length} numeric parts; only three are allowed (major.minor.patch)`,
      input,
    );
  }
  const values = nums.map((d) => parseNumber(d, input));
  let prerelease = '';
  let metadata = '';
  let dangling: '-' | '+' | null = null;
  if (rest.startsWith('-')) {
    const extra = (EXTRA_CHARS.exec(rest.slice(1)) as RegExpExecArray)[0];
    prerelease = extra;
    rest = rest.slice(1 + extra.length);
    if (extra === '') dangling = '-';
  }
  if (dangling === null && rest.startsWith('+')) {
    const extra = (EXTRA_CHARS.exec(rest.slice(1)) as RegExpExecArray)[0];
    metadata = extra;
    rest = rest.slice(1 + extra.length);
    if (extra === '') dangling = '+';
  }
  if (dangling !== null && rest !== '' && !/^[\s,]/.test(rest)) {
    throw new ConstraintSyntaxError(
      `unexpected "${rest}" after "${text.slice(0, text.length - rest.length)}"`,
      input,
    );
  }
  return {
    version: {
      major: values[0] ?? 0,
      minor: values[1] ?? 0,
      patch: values[2] ?? 0,
      prerelease,
      metadata,
      parts: nums.length as 1 | 2 | 3,
    },
    rest,
    dangling,
  };
}

/**
 * Parses an exact version as written in a lock file's `version` (go-versions `ParseVersion`):
 * no operator, no `v` prefix, no surrounding spaces, 1–3 numeric parts (missing ones are 0).
 * A lock file additionally requires the canonical form: compare `formatVersion(v)` with the input.
 */
export function parseVersion(s: string): Version {
  if (typeof s !== 'string') throw new ConstraintSyntaxError('version must be a string', String(s));
  if (s.trim() === '') throw new ConstraintSyntaxError('version is empty', s);
  if (/^\s/.test(s)) throw new ConstraintSyntaxError(`version "${s}" starts with white space`, s);
  if (/^[vV]/.test(s)) throw new ConstraintSyntaxError(`version "${s}": a "v" prefix must not be used`, s);
  const op = /^[^0-9A-Za-z.*\s]+/.exec(s);
  if (op !== null) {
    throw new ConstraintSyntaxError(
      `"${s}" is not an exact version: operator "${op[0]}" cannot be used here`,
      s,
    );
  }
  const { version, rest } = scanVersion(s, s);
  if (rest !== '') {
    if (rest.trim() === '') throw new ConstraintSyntaxError(`version "${s}" ends with white space`, s);
    if (/^\s*[,|]/.test(rest))
      throw new ConstraintSyntaxError(`"${s}" lists several versions; one exact version is required`, s);
    throw new ConstraintSyntaxError(`version "${s}" has unexpected characters "${rest}"`, s);
  }
  return version;
}

/** The canonical `MAJOR.MINOR.PATCH[-pre][+meta]` form (what a lock file's `version` must be). */
export function formatVersion(v: Version): string {
  let s = `${v.major}.${v.minor}.${v.patch}`;
  if (v.prerelease !== '') s += `-${v.prerelease}`;
  if (v.metadata !== '') s += `+${v.metadata}`;
  return s;
}

function isAllDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** go-versions `lessThanStr`: numeric identifiers first, numbers by length then digits. */
function identifierLess(a: string, b: string): boolean {
  const an = isAllDigits(a);
  const bn = isAllDigits(b);
  if (an && !bn) return true;
  if (bn && !an) return false;
  if (an) {
    if (a.length !== b.length) return a.length < b.length;
    return a < b;
  }
  return byteLess(a, b);
}

/** Go string comparison (UTF-8 bytes); the characters allowed here are ASCII, so code units do. */
function byteLess(a: string, b: string): boolean {
  return a < b;
}

/** go-versions `VersionExtra.LessThan` (also used to order metadata in the normalized form). */
export function extraLess(a: string, b: string): boolean {
  if (a === b) return false;
  let s1 = a;
  let s2 = b;
  for (;;) {
    const d1 = s1.indexOf('.');
    const d2 = s2.indexOf('.');
    if (d1 === -1 && d2 !== -1) return true;
    if (d2 === -1 && d1 !== -1) return false;
    if (d1 === -1) return identifierLess(s1, s2);
    const p1 = s1.slice(0, d1);
    const p2 = s2.slice(0, d2);
    if (p1 !== p2) return identifierLess(p1, p2);
    s1 = s1.slice(d1 + 1);
    s2 = s2.slice(d2 + 1);
  }
}

/** Precedence comparison (metadata ignored): -1, 0 or 1. */
export function compareVersions(a: Version, b: Version): -1 | 0 | 1 {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1;
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1;
  if (a.prerelease === b.prerelease) return 0;
  if (a.prerelease === '') return 1;
  if (b.prerelease === '') return -1;
  return extraLess(a.prerelease, b.prerelease) ? -1 : 1;
}

/** Same precedence and same metadata: what an `=` / `!=` constraint compares. */
export function versionsIdentical(a: Version, b: Version): boolean {
  return compareVersions(a, b) === 0 && a.metadata === b.metadata;
}

export function toVersion(v: string | Version): Version {
  return typeof v === 'string' ? parseVersion(v) : v;
}
