/**
 * Archive text by destination. Paths, module names, provider sources, constraint strings and the
 * rule messages that quote them come from whoever made the archive: a directory may be called
 * anything but NUL and `/`, and a comment (a suppression reason) anything at all. Every renderer
 * passes such text through the functions here, one group per destination:
 *
 * - everywhere: `visible` shows what a reader could not see or that would act on a terminal or a
 *   log (control characters, bidirectional and zero-width formatting, line separators) as escapes,
 *   and doubles `\`, so the shown form is unambiguous (`\x1b` is always ESC, `\\x1b` the text);
 * - text (terminal and CI logs): `visible` per field, and `ciSafeLines` over the output so that
 *   no line is a CI workflow command (GitHub's `::cmd::` at a line start and `##[cmd]` anywhere,
 *   see actions/runner ActionCommand.TryParseV2 / TryParse; Azure's `##vso[`; TeamCity's
 *   `##teamcity[`);
 * - Markdown (GitHub comments): `mdText` for prose (every character with a Markdown meaning
 *   backslash-escaped, mentions and issue references broken with a zero-width space as Renovate's
 *   sanitizeMarkdown does), `mdCode` for code spans (exact, in a fence longer than any backtick
 *   run, pipes escaped for tables), `mdFence` for suggestion blocks (or null when the text cannot be
 *   shown exactly);
 * - HTML (the fleet page): `htmlText` for element text and double-quoted attribute values
 *   (`visible`, then `&`, `<`, `>`, `"` and `'` as character references);
 * - SARIF and GitLab Code Quality: `plainText` for message fields (`visible`, and no SARIF embedded
 *   link `[text](target)`, SARIF 2.1.0 §3.11.6), `sarifUri` for artifact locations, and
 *   `jsonForLogs` over the serialised JSON (same value, no `##[` for a log that prints it).
 *
 * The JSON report is data, not a destination: it keeps every string as it is.
 */

/** C0 controls, DEL, C1 controls, soft hyphen, Arabic letter mark, Mongolian vowel separator,
 * zero-width and bidirectional formatting (U+200B-U+200F, U+202A-U+202E, U+2060-U+2069), line and
 * paragraph separators, BOM, and lone surrogates (a string from JSON may hold one). */
const HIDDEN =
  // eslint-disable-next-line no-control-regex
  /[\\\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

/** Whether `text` is printable ASCII without `\`: nothing `HIDDEN` matches (almost every string of
 * a report; the regular expression, with its lookbehind, is far slower than this loop). */
function printableAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f || c === 0x5c) return false;
  }
  return true;
}

/**
 * `text` with every character a reader could not see, or that a terminal or log would act on,
 * written as an escape: `\xNN` below U+0100, `\uNNNN` above; `\` is written `\\`. Injective: two
 * different texts never look the same.
 */
export function visible(text: string): string {
  if (printableAscii(text)) return text;
  return text.replace(HIDDEN, (c) => {
    if (c === '\\') return '\\\\';
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`;
  });
}

// ---------------------------------------------------------------------------------------------
// Text: terminals and CI logs
// ---------------------------------------------------------------------------------------------

/** What `JSON.stringify` writes for a character `visible` may change: an escape other than `\"`
 * (a quote), or a character outside printable ASCII. */
const NOT_PRINTABLE_JSON = /[^\x20-\x7e]|\\[^"]/;

/** Every string of `value` (a report, a finding, ...) through `visible`; numbers, booleans and the
 * shape stay. The text renderer works on this copy, so whatever field it prints is escaped.
 *
 * Almost always every string is printable ASCII already, and `visible` changes none: that is
 * checked first with one `JSON.stringify` (native) and one search over its output, which is much
 * cheaper than the walk (a cold CLI run spent 30-70 ms in it). JSON.stringify writes `"` as `\"`,
 * `\` as `\\`, control characters and lone surrogates as other escapes that start with `\`, and
 * every other character as itself, so no escape but `\"` and nothing outside U+0020-U+007E in its
 * output means no string (nor key) holds a character `visible` escapes. Then `value` itself is
 * returned, not a copy. */
export function visibleStrings<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !NOT_PRINTABLE_JSON.test(JSON.stringify(value)))
    return value;
  return visibleCopy(value);
}

function visibleCopy<T>(value: T): T {
  if (typeof value === 'string') return visible(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => visibleCopy(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = visibleCopy(v);
    return out as T;
  }
  return value;
}

// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/g;
/** `##[cmd]` (GitHub, anywhere in a line), `##vso[` (Azure Pipelines), `##teamcity[` (TeamCity). */
const HASH_COMMAND = /##(?=\[|vso\[|teamcity\[)/gi;
/** A line whose first character other than white space and colour-code characters is `:`. */
// eslint-disable-next-line no-control-regex
const MAY_START_WITH_COLON = /^[\s\u001b[0-9;m]*:/m;

/**
 * `output` (lines of text whose archive parts went through `visible`) with no line a CI runner
 * takes for a command: a `:` starting a line (after whitespace and colour codes) is written
 * `\x3a`, and the second `#` of `##[` (`##vso[`, `##teamcity[`) `\x23`. As `\` is always doubled by
 * `visible`, these escapes cannot be confused with archive text.
 */
export function ciSafeLines(output: string): string {
  // Nothing to change (the usual output, two native searches instead of a pass per line) without
  // `##` and without a line whose first character other than white space and colour-code
  // characters (ESC, `[`, digits, `;`, `m`) is `:`: a line that is `::` once its colour codes are
  // taken out is such a line.
  if (!output.includes('##') && !MAY_START_WITH_COLON.test(output)) return output;
  return output
    .split('\n')
    .map((line) => {
      let safe = line.replace(HASH_COMMAND, '#\\x23');
      if (/^\s*::/.test(safe.replace(SGR, ''))) {
        const at = safe.indexOf(':');
        safe = `${safe.slice(0, at)}\\x3a${safe.slice(at + 1)}`;
      }
      return safe;
    })
    .join('\n');
}

// ---------------------------------------------------------------------------------------------
// Markdown (GitHub Flavored Markdown, as GitHub renders comments)
// ---------------------------------------------------------------------------------------------

/** Characters with a meaning in GFM inline text: escapes, code spans, emphasis, strikethrough,
 * links and images, raw HTML and autolinks, entities, table cells, math (`$`), headings' closing
 * `#`. CommonMark lets any ASCII punctuation be backslash-escaped. */
const MD_SPECIAL = /[\\`*_~[\]<>&|$#]/;
/** A zero-width space, written as an entity so the Markdown source shows it. */
const ZWSP = '&#8203;';

/**
 * Archive text as Markdown prose (a table cell, a heading): `visible`, cut to `max` characters
 * (the last one `…`), then every Markdown-special character backslash-escaped, so the text renders
 * as itself: no HTML, link, image, emphasis, code or cell break. `@` is followed by a zero-width
 * space (no @mention, no e-mail autolink) and so is a `#` before a digit (no issue reference).
 */
export function mdText(text: string, max = Number.POSITIVE_INFINITY): string {
  const chars = [...visible(text)];
  const cut = chars.length > max ? [...chars.slice(0, max - 1), '…'] : chars;
  let out = '';
  for (let i = 0; i < cut.length; i++) {
    const c = cut[i] as string;
    if (c === '@') out += `@${ZWSP}`;
    else if (c === '#' && /^[0-9]$/.test(cut[i + 1] ?? '')) out += `\\#${ZWSP}`;
    else out += MD_SPECIAL.test(c) ? `\\${c}` : c;
  }
  return out;
}

/**
 * Archive text as a Markdown code span showing exactly `visible(text)`: in a backtick fence longer
 * than any backtick run inside, padded with a space when CommonMark would otherwise strip or join
 * one. In a table cell (`inTable`) `|` is written `\|` (GFM's cell rule; `visible` doubles every
 * `\`, so this one always escapes the pipe). Nothing in a code span is a link, mention or HTML.
 */
export function mdCode(text: string, inTable = true): string {
  let body = visible(text);
  if (inTable) body = body.replace(/\|/g, '\\|');
  if (body === '') return '` `';
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad =
    body.startsWith('`') ||
    body.endsWith('`') ||
    (body.startsWith(' ') && body.endsWith(' ') && body.trim() !== '');
  return pad ? `${fence} ${body} ${fence}` : `${fence}${body}${fence}`;
}

/**
 * The fence for a fenced code block holding `text` exactly (a GitHub suggestion is applied as it
 * reads): backticks, longer than any backtick run in the text and at least three; or null when no
 * fence can show the text as it is (a lone CR, which Markdown takes for a line break).
 */
export function mdFence(text: string): string | null {
  if (/\r(?!\n)/.test(text)) return null;
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  return '`'.repeat(Math.max(3, longest + 1));
}

// ---------------------------------------------------------------------------------------------
// HTML (the fleet page, src/service/fleet-html.ts)
// ---------------------------------------------------------------------------------------------

const HTML_SPECIAL: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Archive text as HTML element content or a quoted attribute value: `visible` (so a hidden or
 * bidirectional character shows as its escape), then the five characters with a meaning in
 * markup as character references (the set OWASP's XSS prevention cheat sheet gives for HTML
 * body and quoted attribute contexts). Never for a `<script>`, `<style>` or URL context.
 */
export function htmlText(text: string): string {
  return visible(text).replace(/[&<>"']/g, (c) => HTML_SPECIAL[c] as string);
}

// ---------------------------------------------------------------------------------------------
// SARIF and GitLab Code Quality
// ---------------------------------------------------------------------------------------------

/**
 * Archive text in a plain-text message (SARIF `message.text`, a suppression's justification,
 * Code Quality `description`): `visible`, and `](` written `]\(` so that no `[text](target)` is an
 * embedded link (SARIF 2.1.0 §3.11.6 makes one of any `[...](uri)` in a plain-text message).
 */
export function plainText(text: string): string {
  return visible(text).replace(/\]\(/g, ']\\(');
}

/** Characters a path segment may hold in a URI (RFC 3986 `pchar`) that encodeURIComponent encodes;
 * `:` stays encoded (in a first segment it would read as a scheme). */
const PCHAR_KEEP = /%(24|26|2B|2C|3B|3D|40)/g;

/**
 * An archive-relative path as a relative URI reference (SARIF `artifactLocation.uri`): each segment
 * percent-encoded (`#`, `?`, `%`, `:`, spaces, control characters, non-ASCII), `/` between them.
 * Unlike encodeURI, a `#` or `?` in a name cannot cut the path into a fragment or query.
 */
export function sarifUri(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(PCHAR_KEEP, (m) => decodeURIComponent(m)))
    .join('/');
}

/** Serialised JSON with each `##[` (`##vso[`, `##teamcity[`), which can only be inside a string,
 * written `\u0023#[`: the same JSON value, and no CI command when a log prints the file. */
export function jsonForLogs(json: string): string {
  return json.replace(/#(?=#(?:\[|vso\[|teamcity\[))/gi, '\\u0023');
}
