/** The parsing layer's tree: what `HclParser` returns for every file. */
import type { SourceRange } from '../model';

/** An argument (`name = expr`). `value` is the JSON rendering hcl2json gives: literals as JSON,
 * anything else as a `"${...}"` template string (e.g. `aws.east` → `"${aws.east}"`). */
export interface HclAttribute {
  name: string;
  value: unknown;
  line: number;
  endLine: number;
  /** From the name to the end of the expression (native syntax); the property, key to value (JSON). */
  range: SourceRange;
  /** The expression alone (native syntax) or the JSON value. */
  valueRange: SourceRange;
  /** For an argument of a `required_providers` block whose expression is an object constructor
   * (`{ k = v, ... }`) or a JSON object: its items, one level deep, in source order (what a fix of
   * a provider requirement edits). Other arguments leave it out: locating every item of every
   * object would cost every scan time and memory for nothing. */
  items?: HclObjectItem[];
  /** In a lock file, for `hashes` in a `provider` block whose expression is a tuple constructor:
   * the range of each element, in order (what a lock finding about one hash points at). */
  elements?: SourceRange[];
}

/** One item of an object constructor (`key = value` / `key: value`) or JSON object. */
export interface HclObjectItem {
  /** The key as text (quoted keys unescaped). */
  key: string;
  keyRange: SourceRange;
  valueRange: SourceRange;
}

export interface HclBlock {
  type: string;
  labels: string[];
  line: number;
  endLine: number;
  /** From the block type name to the closing brace (native); from the enclosing property's key to
   * the body object's closing brace (JSON). Either way the block's last byte is its `}`. */
  range: SourceRange;
  body: HclBody;
}

/** Read-only once parsed: a block whose body holds nothing may share the frozen `EMPTY_BODY`. */
export interface HclBody {
  /** Attributes in source order. Duplicate names are a parse error, so names are unique. */
  attributes: HclAttribute[];
  /** Nested blocks in source order. */
  blocks: HclBlock[];
}

export interface ParsedFile {
  /** Archive-relative path. */
  path: string;
  syntax: 'hcl' | 'json';
  body: HclBody;
}

export interface ParseErrorInfo {
  path: string;
  message: string;
  line: number;
  column: number;
}

export type ParseResult = { ok: true; file: ParsedFile } | { ok: false; error: ParseErrorInfo };
