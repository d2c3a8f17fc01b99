/**
 * Constant values of one module, for `required_providers` entries whose `version` or `source` is an
 * expression (Terraform 1.17, hashicorp/terraform#39153): "You can now reference const variables
 * and locals inside of provider requirements … values can't depend on any dynamic results from a
 * plan step". Terraform evaluates them during `init` (`nodeResolveProviderRequirements`): a
 * reference to anything but `var.*` or `local.*` is an error ("Unknown provider version"), a
 * variable must be declared `const = true` (Terraform 1.15) or its value is unknown during init and
 * that is the same error, and a const variable takes its value from `-var`, a `.tfvars` file, the
 * calling module or its default.
 *
 * tfguard evaluates what it can prove from the module alone: literals, templates, `const`
 * variables through their defaults, locals (nested, cycles detected), attribute and index access
 * into constant objects and lists. Each value is `known`, `unknown` (tfguard cannot tell: a const
 * variable without a default, a function call, an operator) or `rejected` (Terraform rejects it).
 * A const variable's default is what tfguard reads, though `-var`, a `.tfvars` file or a caller can
 * set another value; the detail of a known value names the default it came from.
 *
 * Values are read as hcl2json renders them (`var.x` → `"${var.x}"`), or as Terraform's JSON syntax
 * writes them (templates); the two read the same through `templateParts`.
 */
import { hasInterpolation, templateParts } from '../hcl';
import type { Engine } from '../model';
import type { ValueExpression } from './types';
import type { AssembledModule, SrcAttr, SrcBlock, SrcFile } from './assemble';
import { attr, mergeBlock } from './assemble';

/** The declarations a module's constants come from, after override files are merged. */
export interface ConstantScope {
  variables: Map<string, SrcBlock>;
  locals: Map<string, SrcAttr>;
}

/**
 * Variables and locals of one module, merged as Terraform's `NewModule` does: in primary files the
 * first declaration of a name wins (a second is a Terraform error); an override file's `variable`
 * block merges into the base block (arguments replaced), and its `locals` replace values of the same
 * name. An override without a base declaration is a Terraform error and is ignored.
 */
export function assembleConstants(primary: SrcFile[], overrides: SrcFile[]): ConstantScope {
  const scope: ConstantScope = { variables: new Map(), locals: new Map() };
  for (const file of primary) {
    for (const b of file.body.blocks) {
      if (b.type === 'variable') {
        const name = b.labels[0] ?? '';
        if (!scope.variables.has(name)) scope.variables.set(name, b);
      } else if (b.type === 'locals') {
        for (const a of b.body.attributes) if (!scope.locals.has(a.name)) scope.locals.set(a.name, a);
      }
    }
  }
  for (const file of overrides) {
    for (const b of file.body.blocks) {
      if (b.type === 'variable') {
        const name = b.labels[0] ?? '';
        const base = scope.variables.get(name);
        if (base !== undefined) scope.variables.set(name, mergeBlock(base, b));
      } else if (b.type === 'locals') {
        for (const a of b.body.attributes) if (scope.locals.has(a.name)) scope.locals.set(a.name, a);
      }
    }
  }
  return scope;
}

/** The outcome of evaluating one value: a constant, or why there is none. */
type Outcome =
  | { ok: true; value: unknown; literal?: boolean }
  | { ok: false; status: 'unknown' | 'rejected'; why: string; ref?: string };

const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const NAME = '[A-Za-z_][A-Za-z0-9_-]*';
/** A traversal: root, then `.name`, `[N]` or `["key"]` steps. */
const TRAVERSAL = new RegExp(`^(${NAME})((?:\\.${NAME}|\\[[0-9]+\\]|\\["[^"\\\\]*"\\])*)$`);
const STEP = new RegExp(`\\.(${NAME})|\\[([0-9]+)\\]|\\["([^"\\\\]*)"\\]`, 'g');
/** References in an expression tfguard does not evaluate (string literals blanked first): a root
 * name and one attribute, not part of a longer traversal nor a namespaced function. */
const REFERENCE = new RegExp(`(?<![A-Za-z0-9_.:-])(${NAME})\\.(${NAME})`, 'g');
const QUOTED = /"(?:[^"\\]|\\.)*"/g;

function where(a: { range: { file: string }; line: number }): string {
  return `${a.range.file}:${a.line}`;
}

class Evaluator {
  /** `var.x` / `local.y` in order of first use. */
  readonly references: string[] = [];
  /** Where a known value's parts came from, in order of first use. */
  readonly origins: string[] = [];
  private readonly localStack: string[] = [];
  private readonly localMemo = new Map<string, Outcome>();

  constructor(
    private readonly scope: ConstantScope,
    private readonly rules: VariableRules = 'terraform-const',
  ) {}

  private note(list: string[], item: string): void {
    if (!list.includes(item)) list.push(item);
  }

  /** A value as rendered: strings are templates, other JSON values are themselves. */
  resolve(raw: unknown, literal = false): Outcome {
    if (typeof raw !== 'string' || literal) return { ok: true, value: raw, literal };
    const parts = templateParts(raw);
    if (parts === null) {
      return {
        ok: false,
        status: 'unknown',
        why: 'it uses a template directive (%{ ... }), which tfguard does not evaluate',
      };
    }
    const only = parts[0];
    if (parts.length === 1 && only?.kind === 'interpolation') return this.expression(only.expr);
    let text = '';
    for (const p of parts) {
      if (p.kind === 'literal') {
        text += p.text;
        continue;
      }
      const v = this.expression(p.expr);
      if (!v.ok) return v;
      const s = asText(v.value, p.expr);
      if (!s.ok) return s;
      text += s.value as string;
    }
    return { ok: true, value: text };
  }

  private expression(source: string): Outcome {
    const e = source.trim();
    if (NUMBER.test(e)) return { ok: true, value: Number(e) };
    if (e === 'true' || e === 'false') return { ok: true, value: e === 'true' };
    if (e === 'null') return { ok: true, value: null };
    const quoted = /^"([^"\\$%]*)"$/.exec(e);
    if (quoted !== null) return { ok: true, value: quoted[1] };
    const t = TRAVERSAL.exec(e);
    if (t !== null) return this.traversal(t[1] as string, t[2] as string, e);
    return this.opaque(e);
  }

  /** `root.a.b[0]`: a variable or local, then steps into its (constant) value. */
  private traversal(root: string, rest: string, text: string): Outcome {
    const steps: (string | number)[] = [];
    for (const m of rest.matchAll(STEP)) {
      if (m[1] !== undefined) steps.push(m[1]);
      else if (m[2] !== undefined) steps.push(Number(m[2]));
      else steps.push(m[3] as string);
    }
    const name = steps.shift();
    if ((root !== 'var' && root !== 'local') || typeof name !== 'string') {
      return {
        ok: false,
        status: 'rejected',
        why: `it refers to ${text}, which Terraform cannot evaluate during init (only const variables and locals)`,
      };
    }
    let cur = root === 'var' ? this.variable(name) : this.local(name);
    let path = `${root}.${name}`;
    for (const step of steps) {
      if (!cur.ok) return cur;
      const v = cur.value;
      const label = typeof step === 'number' ? `[${step}]` : `.${step}`;
      let member: unknown;
      if (Array.isArray(v) && typeof step === 'number') member = v[step];
      else if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof step === 'string')
        member = Object.prototype.hasOwnProperty.call(v, step)
          ? (v as Record<string, unknown>)[step]
          : undefined;
      if (member === undefined) {
        return { ok: false, status: 'rejected', why: `${path} has no element ${label}` };
      }
      path += label;
      cur = this.resolve(member, cur.literal === true);
    }
    return cur;
  }

  private variable(name: string): Outcome {
    const ref = `var.${name}`;
    this.note(this.references, ref);
    const block = this.scope.variables.get(name);
    if (block === undefined) {
      return { ok: false, status: 'rejected', why: `${ref} is not declared in this module`, ref };
    }
    const constant = attr(block, 'const')?.value;
    if (this.rules === 'opentofu-static') {
      // OpenTofu 1.12 (opentofu/opentofu#3946, internal/configs/static_scope.go): `const = false`
      // keeps a variable out of static evaluation; without `const`, any variable may be used.
      if (constant === false || constant === 'false') {
        return {
          ok: false,
          status: 'rejected',
          why: `${ref} is declared with const = false, which OpenTofu (1.12+) does not evaluate during init`,
          ref,
        };
      }
    } else if (constant !== true && constant !== 'true') {
      return {
        ok: false,
        status: 'rejected',
        why: `${ref} is not declared with const = true; Terraform evaluates only const variables and locals during init`,
        ref,
      };
    }
    const def = attr(block, 'default');
    if (def === undefined) {
      return {
        ok: false,
        status: 'unknown',
        why: `${ref} has no default (its value comes from -var, a .tfvars file or the calling module)`,
        ref,
      };
    }
    this.note(this.origins, `${ref} (its default, ${where(def)})`);
    // A default is a literal: in JSON syntax it is read as written, in native syntax a reference
    // in it is a Terraform error ("Variables not allowed").
    if (def.range.file.endsWith('.json')) return { ok: true, value: def.value, literal: true };
    if (containsTemplate(def.value)) {
      return {
        ok: false,
        status: 'rejected',
        why: `the default of ${ref} refers to other values, which Terraform does not allow`,
        ref,
      };
    }
    return this.resolve(def.value);
  }

  private local(name: string): Outcome {
    const ref = `local.${name}`;
    this.note(this.references, ref);
    const memo = this.localMemo.get(name);
    if (memo !== undefined) return memo;
    const a = this.scope.locals.get(name);
    if (a === undefined) {
      return { ok: false, status: 'rejected', why: `${ref} is not declared in this module`, ref };
    }
    const at = this.localStack.indexOf(name);
    if (at !== -1) {
      const cycle = [...this.localStack.slice(at), name].map((n) => `local.${n}`).join(' → ');
      return { ok: false, status: 'rejected', why: `locals refer to each other in a cycle (${cycle})`, ref };
    }
    this.note(this.origins, `${ref} (${where(a)})`);
    this.localStack.push(name);
    const out = this.resolve(a.value);
    this.localStack.pop();
    this.localMemo.set(name, out);
    return out;
  }

  /** An expression tfguard does not evaluate (a call, an operator, a conditional, a `for`): still
   * rejected when it refers to something Terraform cannot evaluate during init. */
  private opaque(e: string): Outcome {
    const code = e.replace(QUOTED, '""');
    for (const m of code.matchAll(REFERENCE)) {
      const root = m[1] as string;
      const name = m[2] as string;
      const next = code[(m.index ?? 0) + m[0].length];
      if (next === '(') continue;
      if (root === 'var' || root === 'local') {
        const v = root === 'var' ? this.variable(name) : this.local(name);
        if (!v.ok && v.status === 'rejected') return v;
        continue;
      }
      return {
        ok: false,
        status: 'rejected',
        why: `it refers to ${root}.${name}, which Terraform cannot evaluate during init (only const variables and locals)`,
      };
    }
    return {
      ok: false,
      status: 'unknown',
      why: `${e} is an expression tfguard does not evaluate (a function call, an operator or a conditional)`,
    };
  }
}

/** True when a rendered value (or any string inside it) holds a template. */
function containsTemplate(v: unknown): boolean {
  if (typeof v === 'string') return /(^|[^$])\$\{|(^|[^%])%\{/.test(v);
  if (Array.isArray(v)) return v.some(containsTemplate);
  if (v !== null && typeof v === 'object') return Object.values(v).some(containsTemplate);
  return false;
}

/** A value as Terraform converts it to a string (`cty.String`). */
function asText(v: unknown, what: string): Outcome {
  if (typeof v === 'string') return { ok: true, value: v };
  if (typeof v === 'number' || typeof v === 'boolean') return { ok: true, value: String(v) };
  if (v === null) return { ok: false, status: 'unknown', why: `${what} is null` };
  return {
    ok: false,
    status: 'rejected',
    why: `${what} is ${Array.isArray(v) ? 'a list' : 'an object'}, not a string`,
  };
}

/** The result of evaluating a `required_providers` value that is an expression. */
export interface Evaluated extends ValueExpression {
  /** The string value when `status` is `known`. */
  value: string | null;
}

/**
 * Evaluates `raw` (a `version` or `source` value as rendered: a template string) in `scope`. The
 * text is the expression as written; references lists the variables and locals read.
 */
export function evaluateConstant(
  raw: unknown,
  scope: ConstantScope,
  rules: VariableRules = 'terraform-const',
): Evaluated {
  const ev = new Evaluator(scope, rules);
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  let out = ev.resolve(raw);
  if (out.ok) out = asText(out.value, text);
  if (out.ok) {
    return {
      text,
      status: 'known',
      value: out.value as string,
      detail: ev.origins.length > 0 ? ev.origins.join(', ') : 'a constant expression',
      references: ev.references,
    };
  }
  return { text, status: out.status, value: null, detail: out.why, references: ev.references };
}

/**
 * Which variables a static evaluation may read:
 * - `terraform-const`: Terraform's init-time values (module `source`/`version` since 1.15,
 *   `required_providers` since 1.17): only variables declared `const = true`, and locals;
 * - `opentofu-static`: OpenTofu's early evaluation (module `source`/`version` and backends since
 *   1.8; opentofu/opentofu rfc/20240513-static-evaluation.md): any variable and local, except a
 *   variable declared `const = false` (1.12).
 */
export type VariableRules = 'terraform-const' | 'opentofu-static';

/** The variable rules of an engine's static evaluation of module `source` and `version`. */
export function moduleSourceRules(engine: Engine): VariableRules {
  return engine === 'opentofu' ? 'opentofu-static' : 'terraform-const';
}

/** True when a module's `required_providers` (as assembled: the first block, overrides applied)
 * has an entry whose `version` or `source` is an expression, or a `module` block's `source` or
 * `version` is one: the module's variables and locals are then read too (`CONSTANT_PROJECTION`). */
export function readsConstants(module: Pick<AssembledModule, 'requiredProviders' | 'moduleCalls'>): boolean {
  for (const a of module.requiredProviders.values()) {
    const v = a.value;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    const entry = v as Record<string, unknown>;
    if (hasInterpolation(entry.version) || hasInterpolation(entry.source)) return true;
  }
  for (const b of module.moduleCalls) {
    if (hasInterpolation(attr(b, 'source')?.value) || hasInterpolation(attr(b, 'version')?.value))
      return true;
  }
  return false;
}
