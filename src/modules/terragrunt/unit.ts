/**
 * One Terragrunt unit read statically: its `include`s (bare and named together), locals (its own
 * and `include.<name>.locals.*`), `terraform { source }` (its own or an included file's), the files
 * its `generate` blocks write and its `remote_state` backend. Expressions are evaluated by
 * ./expression.ts; what cannot be known is kept as unknown and listed in `unresolved`, never dropped.
 *
 * Merge order (https://terragrunt.gruntwork.io/docs/reference/hcl/blocks/#include): included
 * configurations are merged in the order of the `include` blocks, later ones over earlier ones, and
 * the unit's own configuration over all of them. Functions in an included file are evaluated for the
 * including unit: `get_terragrunt_dir()` and `find_in_parent_folders()` start from the unit's
 * directory, `get_parent_terragrunt_dir()` is the included file's directory, and relative paths in
 * `terraform.source` are relative to the unit.
 */
import { posix } from 'node:path';
import type { HclBlock, HclBody } from '../../hcl';
import { templateParts } from '../../hcl';
import type { InputKind, SourceLocation } from '../../model';
import {
  classifyModuleSource,
  isOutsideArchive,
  parseTerragruntRegistrySource,
  resolveLocalTarget,
} from '../../addrs';
import type { ModuleSourceKind } from '../../addrs';
import type { Expr } from './expression';
import {
  ARCHIVE_ROOT,
  Unknown,
  evaluate,
  evaluateParsed,
  isUnknown,
  parseExpression,
  toArchivePath,
  unknownReasons,
} from './expression';
import type { Scope, Value } from './expression';

/** A `generate` block of a unit (or of a file it includes). */
export interface GeneratedFile {
  /** The file name the block writes into the working directory (`provider.tf`). */
  name: string;
  /** The archive file whose content is generated (`file("./common/provider.tf")`), or null when
   * the contents are written inline. */
  from: string | null;
  /** Inline contents with the static parts evaluated, when `from` is null; null when nothing of
   * them could be evaluated. Unknown interpolations inside quoted strings are kept as written (the
   * generated file then holds an expression tfguard treats as unknown); others are left out. */
  inline: string | null;
  /** For a heredoc whose evaluation kept the line structure: the line of `terragrunt.hcl` (or the
   * included file) that holds the generated file's first line. */
  firstLine: number | null;
  /** The `generate` block. */
  location: SourceLocation;
  /** Why parts of the contents are unknown (empty when all were evaluated). */
  unknown: string[];
  /** True when what the block generates may declare providers tfguard cannot see: the contents
   * call `run_cmd`, or an unknown part sits outside a quoted string. */
  partial: boolean;
}

/** Something of a unit that could not be resolved statically, for a notice. */
export interface Unresolved {
  /** What: `terraform source`, `include "root"`, `generate "provider"`. */
  what: string;
  reasons: string[];
  location: SourceLocation;
  /** True when the unit's tree may miss providers because of it (lock checks turn partial). */
  partial: boolean;
}

export interface TerragruntUnit {
  /** The unit's directory. */
  dir: string;
  /** `terragrunt.hcl` of the unit. */
  file: string;
  /** `terraform { source = … }` as written; null when the unit names no source (then the unit's
   * own directory is the module, as Terragrunt runs it). */
  source: string | null;
  sourceKind: ModuleSourceKind;
  /** The archive directory a local source points to (`//` joins the package and its subdirectory). */
  target: string | null;
  location: SourceLocation;
  generated: GeneratedFile[];
  /** `remote_state { backend = "s3" }` (of the unit or an included file). */
  backend: { type: string; location: SourceLocation } | null;
  /** Files included with `include { path = … }` that were found in the archive. */
  includes: string[];
  /** What could not be resolved statically. */
  unresolved: Unresolved[];
  /** Remote sources a conditional could also select (the local branch is `target`). */
  alternatives: string[];
  /** A `tfr://` source: the registry module it names and its `?version=` (the call's `version`). */
  registry?: { source: string; version: string | null };
}

export interface UnitInput {
  bodies: ReadonlyMap<string, HclBody>;
  exists(path: string): boolean;
  read(path: string): string | null;
  /** What was scanned, as reasons name it; absent: an archive. */
  input?: InputKind;
}

function attr(body: HclBody, name: string): { value: unknown; line: number } | null {
  const a = body.attributes.find((x) => x.name === name);
  return a === undefined ? null : { value: a.value, line: a.line };
}

function blocksOf(body: HclBody, type: string): HclBlock[] {
  return body.blocks.filter((b) => b.type === type);
}

/** Locals of one file, evaluated on demand with a guard against cycles. */
function localsOf(body: HclBody, scopeOf: () => Scope): (name: string) => Value {
  const raw = new Map<string, unknown>();
  for (const l of blocksOf(body, 'locals')) for (const a of l.body.attributes) raw.set(a.name, a.value);
  const done = new Map<string, Value>();
  const busy = new Set<string>();
  return (name) => {
    const hit = done.get(name);
    if (hit !== undefined) return hit;
    if (!raw.has(name)) return new Unknown([`local.${name}, which is not defined`]);
    if (busy.has(name)) return new Unknown([`local.${name}, which refers to itself`]);
    busy.add(name);
    const v = evaluate(raw.get(name), scopeOf());
    busy.delete(name);
    done.set(name, v);
    return v;
  };
}

/** A source or include path as an archive path: absolute (`get_repo_root()`…) or relative to the
 * unit. Null when it leaves the archive. */
function archivePath(unitDir: string, p: string): string | null {
  if (p.startsWith('/')) return toArchivePath(p);
  const r = resolveLocalTarget(unitDir, p);
  return isOutsideArchive(r) ? null : r;
}

/** A source's kind and, for a local one, its archive directory (`pkg//sub` → `pkg/sub`). */
function resolveSource(unitDir: string, s: string): { kind: ModuleSourceKind; target: string | null } {
  if (s.startsWith(ARCHIVE_ROOT)) {
    const [pkg = '', ...rest] = s.split('//');
    const sub = rest.join('/');
    const t = toArchivePath(sub === '' ? pkg : `${pkg}/${sub}`);
    return { kind: 'local', target: t === null ? null : t };
  }
  const kind = classifyModuleSource(s);
  if (kind !== 'local') return { kind, target: null };
  const [pkg = '', ...rest] = s.split('//');
  const sub = rest.join('/');
  return { kind, target: archivePath(unitDir, sub === '' ? pkg : `${pkg}/${sub}`) };
}

/** `file("…")` as the whole value: the archive file it reads. */
function fileCall(value: unknown): Extract<Expr, { t: 'call' }> | null {
  if (typeof value !== 'string') return null;
  const parts = templateParts(value);
  if (parts === null || parts.length !== 1 || parts[0]?.kind !== 'interpolation') return null;
  const e = parseExpression(parts[0].expr);
  return e !== null && e.t === 'call' && e.name === 'file' && e.args.length === 1 ? e : null;
}

interface Layer {
  file: string;
  body: HclBody;
  scope: Scope;
}

/** An include of a unit as the expressions see it (`include.<name>`, `get_parent_terragrunt_dir()`). */
interface IncludeView {
  dir: string;
  local(name: string): Value;
}

const NO_INCLUDES: ReadonlyMap<string, IncludeView> = new Map();

/** A scope (the same shape for every file a unit reads, so that the evaluator's property reads stay
 * monomorphic). */
function scopeOf(
  unitDir: string,
  fileDir: string,
  parentDir: string | null,
  local: (name: string) => Value,
  includes: ReadonlyMap<string, IncludeView>,
  input: UnitInput,
  readConfig: (path: string) => { local(name: string): Value } | null,
): Scope {
  return {
    unitDir,
    fileDir,
    parentDir,
    exists: input.exists,
    read: input.read,
    readConfig,
    input: input.input,
    local,
    include: (n) => includes.get(n) ?? null,
    includeNames: () => [...includes.keys()],
  };
}

export function readUnit(dir: string, path: string, body: HclBody, input: UnitInput): TerragruntUnit {
  const unresolved: Unresolved[] = [];
  const includes = new Map<
    string,
    { file: string; dir: string; body: HclBody; scope: Scope; merged: boolean } & IncludeView
  >();
  // `read_terragrunt_config(path)`: the file is parsed as a configuration of its own (its
  // functions see its directory); its locals are read on demand, once per unit.
  const configs = new Map<string, { local(name: string): Value } | null>();
  const readConfig = (file: string): { local(name: string): Value } | null => {
    if (configs.has(file)) return configs.get(file) ?? null;
    const b = input.bodies.get(file);
    let config: { local(name: string): Value } | null = null;
    if (b !== undefined) {
      const d = posix.dirname(file);
      const scope = scopeOf(d, d, null, (n) => local(n), NO_INCLUDES, input, readConfig);
      const local = localsOf(b, () => scope);
      config = { local };
    }
    configs.set(file, config);
    return config;
  };
  // The unit's scope and its included files' scopes see the unit's includes; `parentDir` (what
  // `get_parent_terragrunt_dir()` without a name returns) is the included file's own directory.
  const unitScope = scopeOf(dir, dir, null, (n) => unitLocal(n), includes, input, readConfig);
  const unitLocal = localsOf(body, () => unitScope);
  // Include paths are read before the locals that may refer to the includes.
  const pathScope = scopeOf(dir, dir, null, unitLocal, NO_INCLUDES, input, readConfig);
  for (const inc of blocksOf(body, 'include')) {
    const name = inc.labels[0] ?? '';
    const what = name === '' ? 'include' : `include "${name}"`;
    const p = attr(inc.body, 'path');
    if (p === null) continue;
    const v = evaluate(p.value, pathScope);
    const location = { file: path, line: p.line };
    if (typeof v !== 'string') {
      unresolved.push({
        what,
        reasons: isUnknown(v) ? v.reasons : ['a path that is not a string'],
        location,
        partial: true,
      });
      continue;
    }
    const file = archivePath(dir, v);
    const included = file === null ? undefined : input.bodies.get(file);
    if (file === null || included === undefined) {
      const shown = v.startsWith(ARCHIVE_ROOT) ? (toArchivePath(v) ?? v) : v;
      unresolved.push({
        what,
        reasons: [
          file !== null && input.exists(file)
            ? `${file} does not parse`
            : `its path ${JSON.stringify(shown)} is not a file of the ${input.input ?? 'archive'}`,
        ],
        location,
        partial: true,
      });
      continue;
    }
    const incDir = posix.dirname(file);
    // `get_parent_terragrunt_dir("root")` in an included file names the unit's include.
    const incScope = scopeOf(dir, incDir, incDir, (n) => incLocal(n), includes, input, readConfig);
    const incLocal = localsOf(included, () => incScope);
    // `merge_strategy = "no_merge"`: the file's blocks are not merged in (its locals stay readable).
    const strategy = attr(inc.body, 'merge_strategy');
    const merged = strategy === null || evaluate(strategy.value, pathScope) !== 'no_merge';
    includes.set(name, { file, dir: incDir, body: included, local: incLocal, scope: incScope, merged });
  }

  // Precedence: the unit, then the included files, the last include first.
  const layers: Layer[] = [{ file: path, body, scope: unitScope }];
  for (const inc of [...includes.values()].reverse()) {
    if (inc.merged) layers.push({ file: inc.file, body: inc.body, scope: inc.scope });
  }

  let source: { raw: string; value: Value; line: number; file: string } | null = null;
  let backend: TerragruntUnit['backend'] = null;
  const generated = new Map<string, GeneratedFile>();
  for (const layer of layers) {
    for (const tf of blocksOf(layer.body, 'terraform')) {
      const s = attr(tf.body, 'source');
      if (source === null && s !== null) {
        source = {
          raw: typeof s.value === 'string' ? s.value : JSON.stringify(s.value),
          value: evaluate(s.value, layer.scope),
          line: s.line,
          file: layer.file,
        };
      }
    }
    for (const rs of blocksOf(layer.body, 'remote_state')) {
      const b = attr(rs.body, 'backend');
      if (backend !== null || b === null) continue;
      const v = evaluate(b.value, layer.scope);
      if (typeof v === 'string') backend = { type: v, location: { file: layer.file, line: b.line } };
    }
    for (const g of blocksOf(layer.body, 'generate')) {
      const label = g.labels[0] ?? '';
      const location = { file: layer.file, line: g.line };
      const what = `generate "${label}"`;
      const disable = attr(g.body, 'disable');
      if (disable !== null && evaluate(disable.value, layer.scope) === true) continue;
      const nameAttr = attr(g.body, 'path');
      const contents = attr(g.body, 'contents');
      if (nameAttr === null || contents === null) continue;
      const name = evaluate(nameAttr.value, layer.scope);
      if (typeof name !== 'string') {
        unresolved.push({ what, reasons: unknownReasons(name), location, partial: true });
        continue;
      }
      // Terragrunt generates by block name: the unit's block replaces an included one.
      if (generated.has(name)) continue;
      const read = readContents(contents, layer, location);
      generated.set(name, {
        name,
        from: read.from,
        inline: read.inline,
        firstLine: read.firstLine,
        location: read.location,
        unknown: read.unknown,
        partial: read.partial,
      });
      // Unknown values inside quoted strings (a region, a tag) change no provider requirement and
      // stay quiet; an unknown source or version shows in the provider rules. Only what may hide
      // declarations is said.
      if (read.partial) {
        unresolved.push({
          what: `${what} (${name})`,
          reasons: read.unknown,
          location,
          partial: read.partial,
        });
      }
    }
  }

  let sourceKind: ModuleSourceKind = 'local';
  let target: string | null = dir;
  let registry: TerragruntUnit['registry'];
  const alternatives: string[] = [];
  if (source !== null) {
    const location = { file: source.file, line: source.line };
    const v = source.value;
    const tfr = typeof v === 'string' ? parseTerragruntRegistrySource(v) : null;
    if (tfr !== null) {
      sourceKind = 'registry';
      target = null;
      registry = tfr;
    } else if (typeof v === 'string') {
      ({ kind: sourceKind, target } = resolveSource(dir, v));
    } else {
      const branches = isUnknown(v)
        ? (v.branches ?? []).filter((b): b is string => typeof b === 'string')
        : [];
      const resolved = branches.map((b) => ({ b, ...resolveSource(dir, b) }));
      const local = resolved.find((r) => r.kind === 'local' && r.target !== null);
      for (const r of resolved) if (r.kind !== 'local') alternatives.push(r.b);
      if (local !== undefined) {
        sourceKind = 'local';
        target = local.target;
        unresolved.push({
          what: 'terraform source',
          reasons: [
            `a conditional (${unknownReasons(v).join('; ')}) chooses the source; tfguard follows its local branch ` +
              `${JSON.stringify(shown(local.b))}` +
              (alternatives.length > 0
                ? ` and records the remote one${alternatives.length > 1 ? 's' : ''} (${alternatives.join(', ')}) unchecked`
                : ''),
          ],
          location,
          partial: alternatives.length > 0,
        });
      } else if (remoteHead(source.raw)) {
        // `git::https://…?ref=${get_env("VERSION")}`: remote whatever the unknown part is; recorded
        // like a remote module (module-unresolved says what was not checked).
        sourceKind = 'remote';
        target = null;
      } else {
        sourceKind = 'unknown';
        target = null;
        unresolved.push({ what: 'terraform source', reasons: unknownReasons(v), location, partial: true });
      }
    }
  }
  return {
    dir,
    file: path,
    source: source?.raw ?? null,
    sourceKind,
    target,
    location: source === null ? { file: path, line: 1 } : { file: source.file, line: source.line },
    generated: [...generated.values()],
    backend,
    includes: [...includes.values()].map((i) => i.file),
    unresolved,
    alternatives,
    ...(registry === undefined ? {} : { registry }),
  };
}

/** True when a template's literal start already makes it a remote address (a go-getter forced
 * getter `git::`, a URL scheme, or a well-known VCS host). */
function remoteHead(raw: string): boolean {
  const parts = templateParts(raw);
  const head = parts?.[0]?.kind === 'literal' ? parts[0].text : '';
  return /^[a-z0-9]+::|^[a-z][a-z0-9+.-]*:\/\/|^(github\.com|bitbucket\.org|gitlab\.com)\/|^git@/i.test(head);
}

/** A path as the messages show it: archive-relative instead of the evaluator's absolute form. */
function shown(p: string): string {
  if (!p.startsWith(ARCHIVE_ROOT)) return p;
  return p
    .split('//')
    .map((x, i) => (i === 0 ? (toArchivePath(x) ?? x) : x))
    .join('//');
}

/** The archive file `file(arg)` in a `generate` block reads: relative to the configuration that
 * calls it, else to the unit's directory; null when neither exists. */
function generatedFrom(arg: string, scope: Scope): string | null {
  if (arg.startsWith('/')) {
    const p = toArchivePath(arg);
    return p !== null && scope.exists(p) ? p : null;
  }
  const own = resolveLocalTarget(scope.fileDir, arg);
  if (scope.exists(own)) return own;
  if (scope.unitDir === scope.fileDir) return null;
  const unit = resolveLocalTarget(scope.unitDir, arg);
  return scope.exists(unit) ? unit : null;
}

/** Generated contents tfguard cannot read, and why. */
function notRead(location: SourceLocation, why: string): Omit<GeneratedFile, 'name'> {
  return { from: null, inline: null, firstLine: null, location, unknown: [why], partial: true };
}

function readContents(
  contents: { value: unknown; line: number },
  layer: Layer,
  location: SourceLocation,
): Omit<GeneratedFile, 'name'> {
  // `file("./common/provider.tf")`: the archive file itself (relative to the configuration that
  // calls it; the unit's directory as a fallback).
  const fc = fileCall(contents.value);
  if (fc !== null) {
    const arg = evaluateParsed(fc.args[0] as Expr, layer.scope);
    if (typeof arg === 'string') {
      const from = generatedFrom(arg, layer.scope);
      if (from !== null)
        return { from, inline: null, firstLine: null, location, unknown: [], partial: false };
      return notRead(
        location,
        `file(${JSON.stringify(shown(arg))}) is not in the ${layer.scope.input ?? 'archive'}`,
      );
    }
  }
  const raw = contents.value;
  if (typeof raw !== 'string') return notRead(location, 'contents that are not a string');
  const parts = templateParts(raw);
  if (parts === null) {
    return notRead(location, 'a template directive (%{ … }) in the contents');
  }
  let text = '';
  const reasons = new Set<string>();
  let partial = false;
  let keepsLines = true;
  for (const p of parts) {
    if (p.kind === 'literal') {
      text += p.text;
      continue;
    }
    const e = parseExpression(p.expr);
    const v: Value =
      e === null ? new Unknown([`the expression "${p.expr}"`]) : evaluateParsed(e, layer.scope);
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      const t = String(v);
      if (t.includes('\n')) keepsLines = false;
      text += t;
      continue;
    }
    const why =
      isUnknown(v) || Array.isArray(v) || (v !== null && typeof v === 'object') ? unknownReasons(v) : [];
    for (const r of why.length > 0 ? why : ['a value that is not a string']) reasons.add(r);
    if (why.some((r) => r.startsWith('run_cmd('))) partial = true;
    if (insideQuotes(text)) {
      // Kept as written: the generated file holds an expression whose value tfguard does not know.
      text += `\${${p.expr}}`;
    } else {
      partial = true;
      if (p.expr.includes('\n')) keepsLines = false;
    }
  }
  // A heredoc's first line follows the `contents = <<EOT` line.
  const heredoc = keepsLines && !raw.includes('\n') ? false : keepsLines;
  return {
    from: null,
    inline: text,
    firstLine: heredoc ? contents.line + 1 : null,
    location,
    unknown: [...reasons],
    partial,
  };
}

/** True when the end of `text` is inside a quoted string of its last line (HCL strings do not span
 * lines; `#` and `//` comments end at the line's end). */
function insideQuotes(text: string): boolean {
  const line = text.slice(text.lastIndexOf('\n') + 1);
  let inside = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (inside && c === '\\') i++;
    else if (c === '"') inside = !inside;
    else if (!inside && (c === '#' || (c === '/' && line[i + 1] === '/'))) return false;
  }
  return inside;
}
