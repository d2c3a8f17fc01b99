/**
 * A static evaluator of the HCL expressions Terragrunt configurations write: literals, templates,
 * references (`local.x`, `include.root.locals.x`, `values.x`), operators, conditionals and the
 * functions that only read paths and strings. Nothing is executed: `run_cmd`, `get_env`,
 * `sops_decrypt_file`, `get_aws_account_id` and every other function that reads the environment, a
 * shell or the network is *unknown*, and an unknown value carries the reasons why, so the caller
 * can say exactly what could not be resolved.
 *
 * The HCL parser renders every non-literal expression as a `"${...}"` template string (hcl2json's
 * rendering, src/hcl/types.ts); `evaluate` reads those strings back into expressions with the small
 * recursive-descent parser below.
 *
 * Paths: Terragrunt's path functions return absolute paths. Here the archive's top directory is
 * `ARCHIVE_ROOT` (`get_repo_root()`: a checkout's top directory is the repository root), and
 * `toArchivePath` turns such a path back into an archive path.
 * Semantics of each function: https://terragrunt.gruntwork.io/docs/reference/built-in-functions/
 */
import { posix } from 'node:path';
import { templateParts } from '../../hcl';
import { isCleanRelativePath } from '../../addrs';
import type { InputKind } from '../../model';

/** The absolute path the archive's top directory stands for while evaluating. */
export const ARCHIVE_ROOT = '/__tfguard_archive__';

/** A value tfguard cannot know statically. `branches` holds the possible values of a conditional
 * whose condition is unknown (each branch evaluated), when both are known. */
export class Unknown {
  constructor(
    readonly reasons: string[],
    readonly branches: Value[] | null = null,
  ) {}
}

export type Value = string | number | boolean | null | Value[] | { [key: string]: Value } | Unknown;

export function isUnknown(v: unknown): v is Unknown {
  return v instanceof Unknown;
}

/** Every reason an unknown value (or an unknown inside a list or object) gives. */
export function unknownReasons(v: Value): string[] {
  if (v instanceof Unknown) return v.reasons;
  if (Array.isArray(v)) return [...new Set(v.flatMap(unknownReasons))];
  if (v !== null && typeof v === 'object') return [...new Set(Object.values(v).flatMap(unknownReasons))];
  return [];
}

function unknown(reason: string, ...from: Value[]): Unknown {
  const reasons = new Set<string>(from.flatMap(unknownReasons));
  if (reason !== '') reasons.add(reason);
  return new Unknown([...reasons]);
}

const ARCHIVE_PREFIX = `${ARCHIVE_ROOT}/`;

/** `/__tfguard_archive__/a/b` → `a/b` (the top directory → `.`); null for a path outside it. */
export function toArchivePath(abs: string): string | null {
  // `/__tfguard_archive__/a/b` with `a/b` clean: what the normalisation below returns.
  if (abs.startsWith(ARCHIVE_PREFIX)) {
    const rest = abs.slice(ARCHIVE_PREFIX.length);
    if (isCleanRelativePath(rest)) return rest;
  }
  const n = posix.normalize(abs);
  if (n === ARCHIVE_ROOT) return '.';
  if (!n.startsWith(ARCHIVE_PREFIX)) return null;
  return n.slice(ARCHIVE_PREFIX.length).replace(/\/+$/, '') || '.';
}

/** An archive directory (`.` for the top) as the absolute path the functions return. */
export function absolute(archivePath: string): string {
  return archivePath === '.' ? ARCHIVE_ROOT : `${ARCHIVE_ROOT}/${archivePath}`;
}

/** What the functions and references of one configuration file see. */
export interface Scope {
  /** Archive directory of the unit being evaluated (`get_terragrunt_dir()`): an included file's
   * functions see the including unit's directory. */
  unitDir: string;
  /** Archive directory of the file whose expressions these are (`file()` paths are relative to it). */
  fileDir: string;
  /** `local.<name>`. */
  local(name: string): Value;
  /** `include.<name>` (`''` for a bare `include {}`): the included file's directory and its locals. */
  include(name: string): { dir: string; local(name: string): Value } | null;
  /** Names of the includes, for `get_parent_terragrunt_dir()` without a name. */
  includeNames(): string[];
  /** When this file is itself included: its directory (the parent of the unit). */
  parentDir: string | null;
  /** Archive files that exist. */
  exists(path: string): boolean;
  /** Contents of an archive file, or null. */
  read(path: string): string | null;
  /** `read_terragrunt_config(path)`: the locals of that configuration file, or null when the
   * archive has no such (parsable) file. */
  readConfig?(path: string): { local(name: string): Value } | null;
  /** What was scanned, as reasons name it ("not in the directory"); absent: an archive. */
  input?: InputKind;
}

// ---------------------------------------------------------------------------------------------
// Parser

export type Expr =
  | { t: 'lit'; v: Value }
  | { t: 'tpl'; parts: (string | Expr)[] }
  | { t: 'ref'; root: string; path: (string | Expr)[] }
  | { t: 'call'; name: string; args: Expr[] }
  | { t: 'cond'; c: Expr; a: Expr; b: Expr }
  | { t: 'bin'; op: string; l: Expr; r: Expr }
  | { t: 'un'; op: string; e: Expr }
  | { t: 'list'; items: Expr[] }
  | { t: 'obj'; items: [Expr, Expr][] }
  | { t: 'index'; e: Expr; key: string | Expr };

class ParseFail extends Error {}

const BINARY_LEVELS: string[][] = [
  ['||'],
  ['&&'],
  ['==', '!='],
  ['<', '>', '<=', '>='],
  ['+', '-'],
  ['*', '/', '%'],
];

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  fail(): never {
    throw new ParseFail(`cannot read "${this.s}"`);
  }
  ws(): void {
    for (;;) {
      const c = this.s[this.i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') this.i++;
      else if (c === '#' || (c === '/' && this.s[this.i + 1] === '/')) {
        while (this.i < this.s.length && this.s[this.i] !== '\n') this.i++;
      } else if (c === '/' && this.s[this.i + 1] === '*') {
        const end = this.s.indexOf('*/', this.i + 2);
        if (end === -1) this.fail();
        this.i = end + 2;
      } else return;
    }
  }
  peek(tok: string): boolean {
    this.ws();
    return this.s.startsWith(tok, this.i);
  }
  eat(tok: string): boolean {
    if (!this.peek(tok)) return false;
    this.i += tok.length;
    return true;
  }
  expect(tok: string): void {
    if (!this.eat(tok)) this.fail();
  }
  ident(): string | null {
    this.ws();
    const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(this.s.slice(this.i));
    if (m === null) return null;
    this.i += m[0].length;
    return m[0];
  }

  expr(): Expr {
    const c = this.binary(0);
    if (this.eat('?')) {
      const a = this.expr();
      this.expect(':');
      const b = this.expr();
      return { t: 'cond', c, a, b };
    }
    return c;
  }
  binary(level: number): Expr {
    if (level === BINARY_LEVELS.length) return this.unary();
    let l = this.binary(level + 1);
    const ops = (BINARY_LEVELS[level] as string[]).slice().sort((x, y) => y.length - x.length);
    for (;;) {
      this.ws();
      const op = ops.find(
        (o) => this.s.startsWith(o, this.i) && !(o === '=' || (o === '<' && this.s[this.i + 1] === '<')),
      );
      // `=>` and `==` must not be read as `=`; `>=` vs `>` is handled by the longest-first order.
      if (op === undefined || (op === '/' && /[/*]/.test(this.s[this.i + 1] ?? ''))) return l;
      this.i += op.length;
      l = { t: 'bin', op, l, r: this.binary(level + 1) };
    }
  }
  unary(): Expr {
    if (this.eat('!')) return { t: 'un', op: '!', e: this.unary() };
    if (this.peek('-') && !/[0-9]/.test(this.s[this.i + 1] ?? '')) {
      this.i++;
      return { t: 'un', op: '-', e: this.unary() };
    }
    return this.postfix(this.primary());
  }
  postfix(e: Expr): Expr {
    for (;;) {
      if (this.peek('.') && !this.s.startsWith('..', this.i)) {
        this.i++;
        if (this.peek('*')) this.fail();
        const name = this.ident() ?? this.number();
        if (name === null) this.fail();
        e = { t: 'index', e, key: String(name) };
      } else if (this.eat('[')) {
        if (this.peek('*')) this.fail();
        const key = this.expr();
        this.expect(']');
        e = { t: 'index', e, key };
      } else return e;
    }
  }
  number(): number | null {
    this.ws();
    const m = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.s.slice(this.i));
    if (m === null) return null;
    this.i += m[0].length;
    return Number(m[0]);
  }
  primary(): Expr {
    this.ws();
    const c = this.s[this.i];
    if (c === '"') return this.quoted();
    if (c === '(') {
      this.i++;
      const e = this.expr();
      this.expect(')');
      return e;
    }
    if (c === '[') {
      this.i++;
      if (/^\s*for\s/.test(this.s.slice(this.i))) this.fail();
      const items: Expr[] = [];
      while (!this.eat(']')) {
        items.push(this.expr());
        if (!this.eat(',') && !this.peek(']')) this.ws();
      }
      return { t: 'list', items };
    }
    if (c === '{') {
      this.i++;
      if (/^\s*for\s/.test(this.s.slice(this.i))) this.fail();
      const items: [Expr, Expr][] = [];
      while (!this.eat('}')) {
        this.ws();
        const save = this.i;
        const name = this.ident();
        let key: Expr;
        if (name !== null && (this.peek('=') || this.peek(':')) && !this.peek('=='))
          key = { t: 'lit', v: name };
        else {
          this.i = save;
          key = this.expr();
        }
        if (!this.eat('=') && !this.eat(':')) this.fail();
        items.push([key, this.expr()]);
        this.eat(',');
      }
      return { t: 'obj', items };
    }
    const n = this.number();
    if (n !== null) return { t: 'lit', v: n };
    const name = this.ident();
    if (name === null) this.fail();
    if (name === 'true' || name === 'false') return { t: 'lit', v: name === 'true' };
    if (name === 'null') return { t: 'lit', v: null };
    if (this.eat('(')) {
      const args: Expr[] = [];
      while (!this.eat(')')) {
        args.push(this.expr());
        if (this.eat('...')) this.fail();
        if (!this.eat(',') && !this.peek(')')) this.fail();
      }
      return { t: 'call', name, args };
    }
    return { t: 'ref', root: name, path: [] };
  }
  /** A quoted template: literal text, escapes and nested `${ … }` interpolations. */
  quoted(): Expr {
    this.i++; // opening quote
    const parts: (string | Expr)[] = [];
    let lit = '';
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined || c === '\n') this.fail();
      if (c === '"') {
        this.i++;
        break;
      }
      if (c === '\\') {
        const e = this.s[this.i + 1];
        const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\' };
        if (e !== undefined && map[e] !== undefined) {
          lit += map[e];
          this.i += 2;
          continue;
        }
        this.fail();
      }
      if ((c === '$' || c === '%') && this.s[this.i + 1] === c && this.s[this.i + 2] === '{') {
        lit += `${c}{`;
        this.i += 3;
        continue;
      }
      if (c === '%' && this.s[this.i + 1] === '{') this.fail();
      if (c === '$' && this.s[this.i + 1] === '{') {
        this.i += 2;
        this.eat('~');
        if (lit !== '') parts.push(lit);
        lit = '';
        parts.push(this.expr());
        this.eat('~');
        this.expect('}');
        continue;
      }
      lit += c;
      this.i++;
    }
    if (lit !== '' || parts.length === 0) parts.push(lit);
    return parts.length === 1 && typeof parts[0] === 'string'
      ? { t: 'lit', v: parts[0] }
      : { t: 'tpl', parts };
  }
}

const parsed = new Map<string, Expr | null>();

/** The expression in `text` (the inside of one `${ … }`), or null when it is outside the subset
 * read here (`for` expressions, splats, template directives). */
export function parseExpression(text: string): Expr | null {
  const cached = parsed.get(text);
  if (cached !== undefined) return cached;
  let e: Expr | null;
  try {
    const p = new Parser(text);
    e = p.expr();
    p.ws();
    if (p.i !== text.length) e = null;
  } catch (err) {
    if (!(err instanceof ParseFail)) throw err;
    e = null;
  }
  if (parsed.size > 10_000) parsed.clear();
  parsed.set(text, e);
  return e;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

/** Evaluates an attribute value as the HCL parser renders it (a JSON value whose strings may be
 * templates). */
export function evaluate(value: unknown, scope: Scope): Value {
  if (typeof value === 'string') return evalTemplateString(value, scope);
  if (Array.isArray(value)) return value.map((v) => evaluate(v, scope));
  if (value !== null && typeof value === 'object') {
    const out: { [key: string]: Value } = {};
    for (const [k, v] of Object.entries(value)) out[k] = evaluate(v, scope);
    return out;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  return unknown('a value of an unsupported type');
}

function evalTemplateString(s: string, scope: Scope): Value {
  if (!s.includes('${') && !s.includes('%{')) return s;
  const parts = templateParts(s);
  if (parts === null) return unknown(`a template directive (%{ … }) in "${clip(s)}"`);
  const exprs: (string | Expr)[] = [];
  for (const p of parts) {
    if (p.kind === 'literal') exprs.push(p.text);
    else {
      const e = parseExpression(p.expr);
      if (e === null)
        return unknown(`the expression "${clip(p.expr)}" (outside what tfguard reads statically)`);
      exprs.push(e);
    }
  }
  if (exprs.length === 1 && typeof exprs[0] !== 'string') return evalExpr(exprs[0] as Expr, scope, 0);
  return evalExpr({ t: 'tpl', parts: exprs }, scope, 0);
}

/** Evaluates an expression `parseExpression` returned. */
export function evaluateParsed(e: Expr, scope: Scope): Value {
  return evalExpr(e, scope, 0);
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

const MAX_DEPTH = 64;

function toText(v: Value): string | Unknown {
  if (v instanceof Unknown) return v;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return unknown('a value that is not a string');
}

/** Applies `f` to known values, distributing over the branches of unknown conditionals (so
 * `"${cond ? "../a" : "git::…"}//x"` keeps both possible results). */
function lift(args: Value[], f: (args: Value[]) => Value): Value {
  const idx = args.findIndex((a) => a instanceof Unknown);
  if (idx === -1) return f(args);
  const u = args[idx] as Unknown;
  if (u.branches === null) return unknown('', ...args.filter((a) => a instanceof Unknown));
  const results = u.branches.map((b) => {
    const copy = args.slice();
    copy[idx] = b;
    return lift(copy, f);
  });
  const reasons = [...new Set([...u.reasons, ...results.flatMap(unknownReasons)])];
  const branches = results.flatMap((r) => (r instanceof Unknown ? (r.branches ?? []) : [r]));
  return results.every((r) => !(r instanceof Unknown) || r.branches !== null)
    ? new Unknown(reasons, branches)
    : new Unknown(reasons);
}

function evalExpr(e: Expr, scope: Scope, depth: number): Value {
  if (depth > MAX_DEPTH) return unknown('an expression nested too deeply');
  const ev = (x: Expr): Value => evalExpr(x, scope, depth + 1);
  switch (e.t) {
    case 'lit':
      return e.v;
    case 'tpl': {
      const vals = e.parts.map((p) => (typeof p === 'string' ? p : ev(p)));
      return lift(vals, (vs) => {
        let out = '';
        for (const v of vs) {
          const t = toText(v);
          if (t instanceof Unknown) return t;
          out += t;
        }
        return out;
      });
    }
    case 'list':
      return e.items.map(ev);
    case 'obj': {
      const out: { [key: string]: Value } = {};
      for (const [k, v] of e.items) {
        const key = ev(k);
        if (typeof key !== 'string') return unknown('an object key that is not a known string');
        out[key] = ev(v);
      }
      return out;
    }
    case 'cond': {
      const c = ev(e.c);
      if (c === true) return ev(e.a);
      if (c === false) return ev(e.b);
      const a = ev(e.a);
      const b = ev(e.b);
      const reasons = [...new Set([...unknownReasons(c), ...unknownReasons(a), ...unknownReasons(b)])];
      if (reasons.length === 0) reasons.push('a condition that is not a known boolean');
      const branches = [a, b].flatMap((x) => (x instanceof Unknown ? (x.branches ?? []) : [x]));
      return new Unknown(reasons, branches.length > 0 ? branches : null);
    }
    case 'un': {
      const v = ev(e.e);
      if (v instanceof Unknown) return unknown('', v);
      if (e.op === '!' && typeof v === 'boolean') return !v;
      if (e.op === '-' && typeof v === 'number') return -v;
      return unknown(`"${e.op}" on a value of the wrong type`);
    }
    case 'bin':
      return binary(e.op, ev(e.l), ev(e.r));
    case 'ref':
      return reference(e.root, scope);
    case 'index': {
      const base = ev(e.e);
      const key = typeof e.key === 'string' ? e.key : ev(e.key);
      if (base instanceof Unknown) return unknown('', base);
      if (key instanceof Unknown) return unknown('', key);
      if (Array.isArray(base) && typeof key === 'number')
        return base[key] ?? unknown(`index ${key} out of range`);
      if (Array.isArray(base) && typeof key === 'string' && /^[0-9]+$/.test(key))
        return base[Number(key)] ?? unknown(`index ${key} out of range`);
      if (base !== null && typeof base === 'object' && !Array.isArray(base) && typeof key !== 'object') {
        const v = base[String(key)];
        return v === undefined ? unknown(`no attribute "${String(key)}"`) : v;
      }
      return unknown(`an attribute "${String(key)}" of a value that has none`);
    }
    case 'call':
      return call(e.name, e.args.map(ev), scope);
  }
}

function binary(op: string, l: Value, r: Value): Value {
  if (op === '&&' && (l === false || r === false)) return false;
  if (op === '||' && (l === true || r === true)) return true;
  if (l instanceof Unknown || r instanceof Unknown) return unknown('', l, r);
  switch (op) {
    case '==':
      return JSON.stringify(l) === JSON.stringify(r);
    case '!=':
      return JSON.stringify(l) !== JSON.stringify(r);
    case '&&':
    case '||':
      return typeof l === 'boolean' && typeof r === 'boolean'
        ? op === '&&'
          ? l && r
          : l || r
        : unknown(`"${op}" on non-booleans`);
  }
  const a = typeof l === 'string' && l.trim() !== '' ? Number(l) : l;
  const b = typeof r === 'string' && r.trim() !== '' ? Number(r) : r;
  if (typeof a !== 'number' || typeof b !== 'number' || Number.isNaN(a) || Number.isNaN(b))
    return unknown(`"${op}" on values that are not numbers`);
  switch (op) {
    case '<':
      return a < b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    case '>=':
      return a >= b;
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return a / b;
    default:
      return a % b;
  }
}

function reference(root: string, scope: Scope): Value {
  if (root === 'local') return lazyObject((name) => scope.local(name));
  if (root === 'include') {
    // `include.<name>.locals.x`, and `include.locals.x` for a bare include.
    const out: { [key: string]: Value } = {};
    for (const name of scope.includeNames()) {
      const inc = scope.include(name) as NonNullable<ReturnType<Scope['include']>>;
      const view = { locals: lazyObject((n) => inc.local(n)) };
      if (name === '') Object.assign(out, view);
      else out[name] = view;
    }
    return out;
  }
  return unknown(`${root}.* (${ROOT_REASONS[root] ?? 'not known statically'})`);
}

const ROOT_REASONS: Record<string, string> = {
  values: 'the values a terragrunt.stack.hcl passes to a unit',
  dependency: 'outputs of another unit, known only after it is applied',
  var: 'input variables',
  feature: 'feature flags set at run time',
};

/** An object whose properties are evaluated only when read (locals may be expensive or unknown). */
function lazyObject(get: (name: string) => Value): Value {
  return new Proxy({} as { [key: string]: Value }, {
    get: (_t, p) => (typeof p === 'string' ? get(p) : undefined),
    has: () => true,
  });
}

/** Functions that read the environment, a shell, the cloud or another unit: never run. */
const RUN_TIME: Record<string, string> = {
  run_cmd: 'runs a command',
  get_env: 'reads an environment variable',
  get_aws_account_id: 'asks AWS',
  get_aws_account_alias: 'asks AWS',
  get_aws_caller_identity_arn: 'asks AWS',
  get_aws_caller_identity_user_id: 'asks AWS',
  sops_decrypt_file: 'decrypts a file',
  get_terraform_command: 'depends on the command run',
  get_terraform_cli_args: 'depends on the command run',
  get_platform: 'depends on the machine',
  get_working_dir: 'depends on the download directory',
  get_original_terragrunt_dir: 'depends on how Terragrunt is run',
  read_tfvars_file: 'is not read statically',
  timestamp: 'depends on the time',
  uuid: 'is random',
};

function str(v: Value): string | null {
  return typeof v === 'string' ? v : null;
}

function call(name: string, args: Value[], scope: Scope): Value {
  const why = RUN_TIME[name];
  if (why !== undefined) {
    const first = typeof args[0] === 'string' ? `"${clip(args[0])}"` : '…';
    return unknown(`${name}(${args.length > 0 ? first : ''}) ${why}; tfguard never runs it`);
  }
  // `try(a, b)`: the first argument that evaluates; unknown when the first is unknown.
  if (name === 'try') return args.find((a) => !(a instanceof Unknown)) ?? unknown('', ...args);
  if (name === 'can') return args[0] instanceof Unknown ? unknown('', args[0]) : true;
  const pathFns = PATH_FUNCTIONS[name];
  if (pathFns !== undefined) return lift(args, (vs) => pathFns(vs, scope));
  const f = FUNCTIONS[name];
  if (f === undefined) return unknown(`the function ${name}() (not evaluated statically)`, ...args);
  return lift(args, (vs) => {
    if (vs.some((v) => v instanceof Unknown)) return unknown('', ...vs);
    return f(vs);
  });
}

/** The nearest ancestor of `dir` (not `dir` itself) holding `name`; Terragrunt's default name is
 * `root.hcl` (older releases: `terragrunt.hcl`). */
export function findInParentFolders(
  dir: string,
  name: string | null,
  exists: (p: string) => boolean,
): string | null {
  const names = name === null ? ['root.hcl', 'terragrunt.hcl'] : [name];
  let d = dir;
  while (d !== '.') {
    d = posix.dirname(d);
    for (const n of names) {
      const joined = d === '.' ? n : `${d}/${n}`;
      const candidate = isCleanRelativePath(joined) ? joined : posix.normalize(joined);
      if (candidate.startsWith('../')) return null;
      if (exists(candidate)) return candidate;
    }
  }
  return null;
}

function includeDir(args: Value[], scope: Scope): string | Unknown {
  const name = str(args[0] ?? null);
  if (name !== null) {
    const inc = scope.include(name);
    return inc === null ? unknown(`no include named "${name}"`) : inc.dir;
  }
  if (scope.parentDir !== null) return scope.parentDir;
  const names = scope.includeNames();
  if (names.length === 1) return (scope.include(names[0] as string) as { dir: string }).dir;
  return names.length === 0 ? scope.unitDir : unknown('which include is meant (several, none named)');
}

const PATH_FUNCTIONS: Record<string, (args: Value[], scope: Scope) => Value> = {
  get_repo_root: () => ARCHIVE_ROOT,
  get_terragrunt_dir: (_a, s) => absolute(s.unitDir),
  get_parent_terragrunt_dir: (a, s) => {
    const d = includeDir(a, s);
    return d instanceof Unknown ? d : absolute(d);
  },
  path_relative_to_include: (a, s) => {
    const d = includeDir(a, s);
    if (d instanceof Unknown) return d;
    return posix.relative(absolute(d), absolute(s.unitDir)) || '.';
  },
  path_relative_from_include: (a, s) => {
    const d = includeDir(a, s);
    if (d instanceof Unknown) return d;
    return posix.relative(absolute(s.unitDir), absolute(d)) || '.';
  },
  find_in_parent_folders: (a, s) => {
    const name = a[0] === undefined ? null : str(a[0]);
    if (a[0] !== undefined && name === null)
      return unknown('find_in_parent_folders() with a name that is not a string');
    const found = findInParentFolders(s.unitDir, name, s.exists);
    if (found !== null) return absolute(found);
    if (a[1] !== undefined) return a[1];
    return unknown(
      `find_in_parent_folders(${name === null ? '' : `"${name}"`}) finds no file above ${s.unitDir}`,
    );
  },
  file: (a, s) => {
    const p = str(a[0] ?? null);
    if (p === null) return unknown('file() of a value that is not a string');
    const archivePath = p.startsWith('/') ? toArchivePath(p) : posix.normalize(posix.join(s.fileDir, p));
    const text = archivePath === null ? null : s.read(archivePath);
    return text ?? unknown(`file("${clip(p)}"), which is not in the ${s.input ?? 'archive'}`);
  },
  // https://terragrunt.gruntwork.io/docs/reference/built-in-functions/#read_terragrunt_config:
  // the file's configuration as an object; tfguard reads its `locals` (account.hcl, region.hcl).
  read_terragrunt_config: (a, s) => {
    const p = str(a[0] ?? null);
    if (p === null) return unknown('read_terragrunt_config() of a value that is not a string');
    const archivePath = p.startsWith('/') ? toArchivePath(p) : posix.normalize(posix.join(s.fileDir, p));
    const config = archivePath === null || s.readConfig === undefined ? null : s.readConfig(archivePath);
    if (config === null) {
      return a[1] !== undefined
        ? a[1]
        : unknown(
            `read_terragrunt_config("${clip(p)}"), which is not a readable file of the ${s.input ?? 'archive'}`,
          );
    }
    return { locals: lazyObject((n) => config.local(n)) };
  },
  fileexists: (a, s) => {
    const p = str(a[0] ?? null);
    if (p === null) return unknown('fileexists() of a value that is not a string');
    const archivePath = p.startsWith('/') ? toArchivePath(p) : posix.normalize(posix.join(s.fileDir, p));
    return archivePath !== null && s.exists(archivePath);
  },
  abspath: (a, s) => {
    const p = str(a[0] ?? null);
    if (p === null) return unknown('abspath() of a value that is not a string');
    return p.startsWith('/') ? posix.normalize(p) : posix.join(absolute(s.unitDir), p);
  },
};

const FUNCTIONS: Record<string, (args: Value[]) => Value> = {
  dirname: ([p]) => (typeof p === 'string' ? posix.dirname(p) : unknown('dirname() of a non-string')),
  basename: ([p]) => (typeof p === 'string' ? posix.basename(p) : unknown('basename() of a non-string')),
  trimspace: ([p]) => (typeof p === 'string' ? p.trim() : unknown('trimspace() of a non-string')),
  lower: ([p]) => (typeof p === 'string' ? p.toLowerCase() : unknown('lower() of a non-string')),
  upper: ([p]) => (typeof p === 'string' ? p.toUpperCase() : unknown('upper() of a non-string')),
  trimprefix: ([p, x]) =>
    typeof p === 'string' && typeof x === 'string'
      ? p.startsWith(x)
        ? p.slice(x.length)
        : p
      : unknown('trimprefix()'),
  trimsuffix: ([p, x]) =>
    typeof p === 'string' && typeof x === 'string'
      ? x !== '' && p.endsWith(x)
        ? p.slice(0, -x.length)
        : p
      : unknown('trimsuffix()'),
  replace: ([p, a, b]) =>
    typeof p === 'string' && typeof a === 'string' && typeof b === 'string' && !a.startsWith('/')
      ? p.split(a).join(b)
      : unknown('replace() with a pattern'),
  join: ([sep, list]) =>
    typeof sep === 'string' && Array.isArray(list) && list.every((x) => typeof x === 'string')
      ? list.join(sep)
      : unknown('join() of values that are not strings'),
  split: ([sep, s]) => (typeof sep === 'string' && typeof s === 'string' ? s.split(sep) : unknown('split()')),
  concat: (lists) =>
    lists.every(Array.isArray) ? (lists as Value[][]).flat(1) : unknown('concat() of non-lists'),
  merge: (objs) =>
    objs.every((o) => o !== null && typeof o === 'object' && !Array.isArray(o))
      ? Object.assign({}, ...(objs as object[]))
      : unknown('merge() of non-objects'),
  lookup: ([o, k, d]) => {
    if (o === null || typeof o !== 'object' || Array.isArray(o) || typeof k !== 'string')
      return unknown('lookup()');
    const v = (o as { [key: string]: Value })[k];
    return v ?? d ?? unknown(`lookup() of a missing key "${k}"`);
  },
  coalesce: (vs) => vs.find((v) => v !== null && v !== '') ?? unknown('coalesce() of only empty values'),
  format: ([f, ...rest]) => {
    if (typeof f !== 'string') return unknown('format() with an unknown format');
    let i = 0;
    let bad = false;
    const out = f.replace(/%(%|s|d|v)/g, (_m, c: string) => {
      if (c === '%') return '%';
      const v = rest[i++];
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
      bad = true;
      return '';
    });
    return bad || /%[^%sdv]/.test(f) ? unknown('format() with a verb tfguard does not read') : out;
  },
  tostring: ([v]) =>
    typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
      ? String(v)
      : unknown('tostring()'),
  length: ([v]) =>
    typeof v === 'string'
      ? v.length
      : Array.isArray(v)
        ? v.length
        : v !== null && typeof v === 'object'
          ? Object.keys(v).length
          : unknown('length()'),
  contains: ([l, v]) =>
    Array.isArray(l) ? l.some((x) => JSON.stringify(x) === JSON.stringify(v)) : unknown('contains()'),
  element: ([l, i]) =>
    Array.isArray(l) && typeof i === 'number' && l.length > 0
      ? (l[i % l.length] as Value)
      : unknown('element()'),
  startswith: ([s, p]) =>
    typeof s === 'string' && typeof p === 'string' ? s.startsWith(p) : unknown('startswith()'),
  endswith: ([s, p]) =>
    typeof s === 'string' && typeof p === 'string' ? s.endsWith(p) : unknown('endswith()'),
};
