/**
 * Parsing of provider version-constraint strings.
 *
 * Terraform parses a `required_providers` `version` string twice and both must accept it
 * (internal/configs + internal/getproviders): first hashicorp/go-version (`NewConstraint`: split on
 * commas, each piece `^\s*(op)\s*v?N(.N)*(-pre)?(+meta)?\s*$`), then apparentlymart/go-versions
 * (`constraints.ParseRubyStyleMulti`, Ruby-style). The accepted language is the intersection, which
 * is what the "config" grammar below implements:
 *
 *   constraints := piece ("," piece)*              — every piece non-empty; all must hold (AND)
 *   piece       := ws* op sep version ws*
 *   op          := "" | "=" | "!=" | ">" | ">=" | "<" | "<=" | "~>"
 *   sep         := "" | " "                        — exactly one space at most; no tab, no "v"
 *   version     := N ("." N){0,2} ("-" pre)? ("+" meta)?   — N decimal digits, leading zeros ok
 *   pre, meta   := ident ("." ident)*              — ident [0-9A-Za-z-]+ (pre's first may be empty)
 *
 * A lock file's `constraints` is parsed by go-versions alone ("lock" grammar): there an empty string
 * is valid (no constraints), a trailing comma is tolerated, and pre-release/metadata may contain
 * empty dot-separated identifiers. Both grammars keep go-versions' quirk that a dangling `-`/`+`
 * (`1.0-`) is dropped.
 */
import { ConstraintSyntaxError, scanVersion, type Version } from './version';

export type Operator = '=' | '!=' | '>' | '>=' | '<' | '<=' | '~>';

export interface Constraint {
  op: Operator;
  /** False for a bare version (`1.2.3`), which means `=`. */
  explicitOp: boolean;
  /** The boundary version; parts not written are 0 (`parts` says how many were written). */
  version: Version;
  /** The piece as written, trimmed (e.g. `>=1.0`). */
  raw: string;
}

export type Grammar = 'config' | 'lock';

export interface ParseOptions {
  /** `config` (default): a `version` argument in a configuration. `lock`: a lock file's `constraints`. */
  grammar?: Grammar;
}

const OPERATORS: ReadonlySet<string> = new Set(['', '=', '!=', '>', '>=', '<', '<=', '~>']);

/** Go regexp `\s` (what go-version trims). */
const CONFIG_WS = /^[\t\n\f\r ]+|[\t\n\f\r ]+$/g;
/** Go `strings.TrimSpace` (what go-versions trims). */
const LOCK_WS =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

const CONFIG_EXTRA_PRE = /^[0-9A-Za-z-]*(?:\.[0-9A-Za-z-]+)*$/;
const CONFIG_EXTRA_META = /^[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*$/;

function quote(s: string): string {
  return JSON.stringify(s);
}

function operatorAdvice(op: string): string {
  switch (op) {
    case '=>':
      return `invalid operator "=>"; did you mean ">="?`;
    case '=<':
      return `invalid operator "=<"; did you mean "<="?`;
    case '==':
      return `invalid operator "=="; use "=" (or no operator) for an exact version`;
    case '~':
      return `invalid operator "~" (npm style); Terraform's pessimistic operator is "~>"`;
    case '^':
      return `invalid operator "^" (npm caret); use "~> MAJOR.MINOR" to allow newer minor versions`;
    case '!':
      return `invalid operator "!"; did you mean "!="?`;
    case '<>':
      return `invalid operator "<>"; use "!=" to exclude a version`;
    default:
      return `invalid operator ${quote(op)}; valid operators are =, !=, >, >=, <, <= and ~>`;
  }
}

function parsePiece(piece: string, input: string, grammar: Grammar): Constraint {
  const text = piece.replace(grammar === 'config' ? CONFIG_WS : LOCK_WS, '');
  const fail = (msg: string): never => {
    throw new ConstraintSyntaxError(`invalid constraint ${quote(text)}: ${msg}`, input);
  };
  if (/^\s/.test(text)) fail('unexpected white-space character');
  const opRun = (/^[^0-9A-Za-z.*\s]*/.exec(text) as RegExpExecArray)[0];
  if (!OPERATORS.has(opRun)) fail(operatorAdvice(opRun));
  let rest = text.slice(opRun.length);
  const sep = (/^[\s]*/.exec(rest) as RegExpExecArray)[0];
  rest = rest.slice(sep.length);
  if (/^[vV]/.test(rest)) fail('a "v" prefix must not be used; write the version number only');
  if (sep !== '' && sep !== ' ') {
    fail(`only one space is allowed between the operator ${quote(opRun)} and the version`);
  }
  if (rest === '') fail(`operator ${quote(opRun)} is not followed by a version`);
  if (/^[xX*]/.test(rest)) fail('wildcards are not supported; leave out the parts that may vary');
  if (!/^[0-9]/.test(rest)) fail(`expected a version number, found ${quote(rest)}`);
  let scanned;
  try {
    scanned = scanVersion(rest, input);
  } catch (err) {
    if (err instanceof ConstraintSyntaxError) fail(err.message);
    throw err;
  }
  const { version, dangling } = scanned;
  const after = scanned.rest;
  const written = rest.slice(0, rest.length - after.length);
  if (grammar === 'config') {
    if (version.prerelease !== '' && !CONFIG_EXTRA_PRE.test(version.prerelease)) {
      fail(`invalid pre-release ${quote(version.prerelease)} (empty dot-separated part)`);
    }
    if (version.metadata !== '' && !CONFIG_EXTRA_META.test(version.metadata)) {
      fail(`invalid build metadata ${quote(version.metadata)} (empty dot-separated part)`);
    }
    if (dangling === '+') fail(`build metadata after "+" is empty`);
  }
  if (grammar === 'config' && /^[\t\n\f\r ]*[^\t\n\f\r ]/.test(after) && after.trim() === '') {
    fail('unexpected white-space character after the version');
  }
  if (after.trim() !== '') {
    const tail = after.trimStart();
    if (tail.startsWith('|')) {
      fail('"||" is not supported: constraints are separated by commas and all of them must hold');
    }
    if (tail.startsWith('-') && after !== tail) {
      fail(`range syntax is not supported; write ">= ${written}, <= ..." instead`);
    }
    if (after !== tail && /^[0-9<>=!~^]/.test(tail)) {
      fail(`missing comma between ${quote(written)} and ${quote(tail)}`);
    }
    if (after === tail && /^[A-Za-z]/.test(tail) && version.prerelease === '' && version.metadata === '') {
      fail(`a pre-release must follow a "-" (for example "${written}-${tail}")`);
    }
    fail(`unexpected ${quote(tail)} after ${quote(written)}`);
  }
  return {
    op: (opRun === '' ? '=' : opRun) as Operator,
    explicitOp: opRun !== '',
    version,
    raw: text,
  };
}

/**
 * Parses a constraint string (comma = AND). Throws ConstraintSyntaxError with a specific message.
 * With the default `config` grammar an empty string is an error (Terraform rejects `version = ""`);
 * with the `lock` grammar it yields `[]`.
 */
export function parseConstraints(s: string, options: ParseOptions = {}): Constraint[] {
  const grammar = options.grammar ?? 'config';
  if (typeof s !== 'string') {
    throw new ConstraintSyntaxError('version constraint must be a string', String(s));
  }
  // A monorepo repeats a handful of constraint strings thousands of times (every module, every
  // rule): parse each once. The constraints are frozen, so sharing them is safe; each caller gets
  // its own copy of the list, which is kept unfrozen: V8 copies a frozen array about 15 times
  // slower (about 1 µs), which the thousands of lookups of a scan paid. Errors are not cached.
  const key = grammar === 'config' ? s : `\u0000${s}`;
  const cached = parsed.get(key);
  if (cached !== undefined) return cached.slice();
  const result = parseUncached(s, grammar);
  if (parsed.size >= MAX_CACHED) parsed.clear();
  parsed.set(key, result);
  return result.slice();
}

const MAX_CACHED = 10_000;
const parsed = new Map<string, readonly Constraint[]>();

function freeze(c: Constraint): Constraint {
  Object.freeze(c.version);
  return Object.freeze(c);
}

function parseUncached(s: string, grammar: Grammar): Constraint[] {
  const ws = grammar === 'config' ? CONFIG_WS : LOCK_WS;
  if (s.replace(ws, '') === '') {
    if (grammar === 'lock') return [];
    throw new ConstraintSyntaxError(
      s === '' ? 'version constraint is empty' : 'version constraint contains only white space',
      s,
    );
  }
  const pieces = s.split(',');
  if (
    grammar === 'lock' &&
    pieces.length > 1 &&
    (pieces[pieces.length - 1] as string).replace(ws, '') === ''
  ) {
    pieces.pop(); // go-versions tolerates one trailing comma
  }
  const out: Constraint[] = [];
  pieces.forEach((piece, i) => {
    if (piece.replace(ws, '') === '') {
      const where =
        i === 0
          ? 'starts with a comma'
          : i === pieces.length - 1
            ? 'ends with a comma'
            : 'has an empty constraint between two commas';
      throw new ConstraintSyntaxError(`version constraint ${quote(s)} ${where}`, s);
    }
    out.push(freeze(parsePiece(piece, s, grammar)));
  });
  return out;
}

/** `null` when `s` is a valid configuration constraint string, else the error message. */
export function validateConstraints(s: string): string | null {
  try {
    parseConstraints(s);
    return null;
  } catch (err) {
    if (err instanceof ConstraintSyntaxError) return err.message;
    throw err;
  }
}

/** Accepts either form the public API takes. */
export function toConstraints(s: string | Constraint[]): Constraint[] {
  return typeof s === 'string' ? parseConstraints(s) : s;
}

/** `~> X.Y.Z` only allows patch updates; `~> X` and `~> X.Y` allow minor updates. */
export function isPatchOnly(c: Constraint): boolean {
  return c.op === '~>' && c.version.parts === 3;
}
