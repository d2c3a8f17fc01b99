/**
 * Moving bounds up: a provider's maximum belongs in the root module. When a shared
 * module's cap is removed, or when only shared modules' minimums constrain a provider, the roots
 * that use it need a bound of their own. This file decides which roots need one, what bound, and
 * the edits that write it into the root's `required_providers`. Not a rule itself: read by
 * `root-module-unbounded` and `shared-module-upper-bound`.
 */
import { shortSource } from '../addrs';
import { hasUpperBound, suggestMinimumOnly, suggestUpperBound, suggestUpperBoundAt } from '../constraints';
import type { TextEdit } from '../model';
import type { ModuleInfo, ProviderRequirement, RootProvider, RootTree } from '../modules';
import { posAt, sourceText, type SourceText } from './fix-helpers';
import {
  checkableConstraint,
  inputNoun,
  isDeployable,
  lockedVersion,
  releaseLine,
  requirementEdits,
  safelySatisfies,
} from './helpers';
import type { RuleContext } from './types';

export function capsSafely(c: string): boolean {
  try {
    return hasUpperBound(c);
  } catch {
    return false;
  }
}

/** The constraint of `source` that a fix of `shared-module-upper-bound` rewrites to its minimum in
 * module `path` (a shared module on strong evidence whose cap has a minimum to keep), or null. */
export function removableCap(ctx: RuleContext, path: string, source: string): string | null {
  const m = ctx.moduleByPath.get(path);
  if (m === undefined || m.kind !== 'shared' || m.unitSourceOf !== undefined || m.kindEvidence === 'weak')
    return null;
  const p = m.providers.find((q) => q.source === source);
  const c = p === undefined ? null : checkableConstraint(p);
  if (c === null || !capsSafely(c) || suggestMinimumOnly(c) === null) return null;
  return c;
}

/** True when something other than a shared module's removable cap bounds `rp` in its tree: the
 * root's own constraint, a unit's generated files, a remote module, a cap no fix removes. */
export function boundedWithoutSharedCaps(ctx: RuleContext, rp: RootProvider): boolean {
  return rp.contributions.some(
    (k) =>
      capsSafely(k.constraints) &&
      (k.remote !== undefined || removableCap(ctx, k.module, rp.source) !== k.constraints),
  );
}

/** A root the bound would go to, or why it cannot take one. */
export type RootBound =
  /** `module`: where the bound goes (the root, or the source module of a Terragrunt unit). */
  { edits: TextEdit[]; bound: string; module: string } | { reason: string };

/**
 * The source as an entry of a root's `required_providers` writes it: as the module the requirement
 * comes from spells it (`Azure/azapi`, not the normalized `azure/azapi`) when that literal names
 * the same provider in the same short form, else tfguard's short form.
 */
function sourceText_(source: string, tree: RootTree, spelled: string | undefined): string {
  const short = shortSource(source, tree.engine);
  return spelled !== undefined && spelled !== short && spelled.toLowerCase() === short.toLowerCase()
    ? spelled
    : short;
}

/** The `source` literal of a `required_providers` entry as written, when it is a plain string. */
export function sourceAsWritten(ctx: RuleContext, p: ProviderRequirement): string | undefined {
  const item = p.entry?.items?.find((i) => i.key === 'source');
  const src = sourceOf(ctx, item?.valueRange.file);
  if (item === undefined || src === undefined) return undefined;
  const raw = src.bytes.subarray(item.valueRange.start.byte, item.valueRange.end.byte).toString('utf8');
  return /^"[A-Za-z0-9._/-]+"$/.test(raw) ? raw.slice(1, -1) : undefined;
}

/**
 * The edits that give `tree`'s root a bound for `rp`: `~> MAJOR.MINOR` of the version its lock
 * records, else `fallback` (the cap a fix removes, or the release line of the combined minimum).
 * Written over the root's own unbounded constraint, as an item of its entry, as a new entry of its
 * `required_providers` block, or in a new `versions.tf` when it has none.
 */
export function rootBound(
  ctx: RuleContext,
  tree: RootTree,
  rp: RootProvider,
  localName: string,
  fallback: string | null,
  spelled?: string,
): RootBound {
  const root = ctx.moduleByPath.get(tree.root);
  if (root === undefined) return { reason: `it is not in the ${inputNoun(ctx)}` };
  if (root.kindEvidence === 'weak') return { reason: `its kind is a guess (${root.kindReason})` };
  // A Terragrunt unit runs its source module: the bound goes there (it is the units' configuration,
  // docs/classification.md), agreeing with every unit's lock, unless the units generate its
  // required_providers (a second block, or a file of the same name, would break them).
  let r = root;
  let lockRoots = [tree.root];
  if (root.terragrunt !== undefined) {
    const s = unitSourceOf(ctx, root);
    if (s === undefined)
      return { reason: `it is a Terragrunt unit whose source module is not in the ${inputNoun(ctx)}` };
    if ((s.generatedDeclarations ?? []).length > 0)
      return {
        reason: `its Terragrunt units generate the required_providers of ${s.path}: bound the provider there`,
      };
    r = s;
    lockRoots = s.unitSourceOf ?? [tree.root];
  }
  const locks = lockRoots.map((l) => lockedVersion(ctx, l, rp.source));
  for (const l of locks)
    if (l.status === 'unreadable') return { reason: `tfguard could not read its entry in ${l.lockFile}` };
  const versions = locks.flatMap((l) => (l.status === 'locked' ? [l] : []));
  const lines = new Set(versions.map((v) => releaseLine(v.version)));
  // One release line locked everywhere: that line; none locked: the fallback, which must then admit
  // every locked version (a pre-release, or units locking different lines).
  const locked = versions.length > 0 && lines.size === 1 && !lines.has(null) ? versions[0] : undefined;
  if (locked === undefined && versions.length > 0) {
    if (fallback === null || !versions.every((v) => safelySatisfies(v.version, fallback)))
      return {
        reason: `no one release line admits what its lock files record (${versions.map((v) => `${v.version} in ${v.lockFile}`).join(', ')})`,
      };
  }
  const own = r.providers.find((q) => q.source === rp.source && !q.implicit);
  const ownC = own === undefined ? null : checkableConstraint(own);
  if (own !== undefined && ownC !== null) {
    // The root declares a minimum only: bound it as root-module-unbounded's fix does (same edit).
    const s = locked !== undefined ? suggestUpperBoundAt(ownC, locked.version) : suggestUpperBound(ownC);
    const edits = s === null ? undefined : requirementEdits(own, s);
    if (s === null || edits === undefined || !versions.every((v) => safelySatisfies(v.version, s)))
      return { reason: `its constraint "${ownC}" cannot be bounded mechanically` };
    return { edits, bound: s, module: r.path };
  }
  if (own !== undefined && (own.constraints !== null || own.versionExpression !== undefined))
    return { reason: 'its version constraint is an expression or invalid' };
  const bound = locked !== undefined ? releaseLine(locked.version) : fallback;
  if (bound === null) return { reason: 'there is no lock entry and no cap to carry over' };
  if (own !== undefined) {
    // An entry without a version: the version goes in as its last item.
    const src = sourceOf(ctx, own.entry?.valueRange.file);
    const edits =
      src === undefined || own.entry === undefined
        ? undefined
        : insertVersion(src, own.entry.valueRange.start.byte, own.entry.valueRange.end.byte, bound);
    return edits === undefined
      ? { reason: 'its entry has a shape tfguard does not edit' }
      : { edits, bound, module: r.path };
  }
  const name = r.providers.find((q) => q.source === rp.source)?.name ?? localName;
  if (r.providers.some((q) => q.name === name && q.source !== rp.source))
    return { reason: `the local name "${name}" means another provider there` };
  const entry = { name, source: sourceText_(rp.source, tree, spelled), version: bound };
  const generated = new Set(
    lockRoots
      .flatMap((u) => ctx.moduleByPath.get(u)?.terragrunt?.generated ?? [])
      .map((g) => g.split('/').pop()),
  );
  const edits = entryEdits(ctx, r, entry, generated);
  return typeof edits === 'string' ? { reason: edits } : { edits, bound, module: r.path };
}

function sourceOf(ctx: RuleContext, file: string | undefined): SourceText | undefined {
  if (file === undefined) return undefined;
  const bytes = ctx.sources?.get(file);
  return bytes === undefined ? undefined : sourceText(file, bytes);
}

function eolOf(src: SourceText): string {
  const i = src.text.indexOf('\n');
  return i > 0 && src.text[i - 1] === '\r' ? '\r\n' : '\n';
}

/** `version = "…"` as a new line before the closing brace of a multi-line entry object. */
function insertVersion(src: SourceText, open: number, end: number, bound: string): TextEdit[] | undefined {
  if (src.file.endsWith('.json')) return undefined;
  const close = end - 1;
  if (src.text[open] !== '{' || src.text[close] !== '}') return undefined;
  const lineStart = src.text.lastIndexOf('\n', close - 1) + 1;
  const closeIndent = src.text.slice(lineStart, close);
  if (!/^[ \t]*$/.test(closeIndent) || lineStart <= open) return undefined;
  // Every item on its own line, `=` aligned as terraform fmt aligns them: `version` is 7 wide.
  const body = src.text.slice(open + 1, lineStart);
  const itemLines = body.split(/\r?\n/).filter((l) => l.trim() !== '');
  const items = itemLines.map((l) => /^([ \t]*)([A-Za-z_][\w-]*)([ \t]*)=/.exec(l));
  if (items.some((x) => x === null) || items.length === 0) return undefined;
  const indent = (items[0] as RegExpExecArray)[1] as string;
  const width = Math.max(7, ...items.map((x) => ((x as RegExpExecArray)[2] as string).length));
  const edits: TextEdit[] = [];
  let at = open + 1;
  for (const l of itemLines) {
    const i = src.text.indexOf(l, at);
    const x = /^([ \t]*)([A-Za-z_][\w-]*)([ \t]*)=/.exec(l) as RegExpExecArray;
    const gapAt = i + (x[1] as string).length + (x[2] as string).length;
    const gap = ' '.repeat(width - (x[2] as string).length + 1);
    if (gap !== x[3]) edits.push(replace(src, gapAt, gapAt + (x[3] as string).length, gap));
    at = i + l.length;
  }
  const eol = eolOf(src);
  edits.push(
    replace(src, lineStart, lineStart, `${indent}version${' '.repeat(width - 6)}= "${bound}"${eol}`),
  );
  return edits;
}

function replace(src: SourceText, start: number, end: number, text: string): TextEdit {
  // Positions from the file's line starts: a fix that bounds a hundred roots edits a hundred files.
  return { range: { file: src.file, start: posAt(src, start), end: posAt(src, end) }, text };
}

/** The lines of a new `required_providers` entry, indented by `indent`, as terraform fmt writes it. */
function entryLines(
  e: { name: string; source: string; version: string },
  indent: string,
  eol: string,
): string {
  return [
    `${indent}${e.name} = {`,
    `${indent}  source  = "${e.source}"`,
    `${indent}  version = "${e.version}"`,
    `${indent}}`,
  ]
    .map((l) => l + eol)
    .join('');
}

/** File names tried, in order, for a new `terraform` block. */
const NEW_FILE_NAMES = ['versions', 'terraform', 'providers_versions'];

/** The edits that add a `required_providers` entry to root `r`, or why they cannot be made. */
function entryEdits(
  ctx: RuleContext,
  r: ModuleInfo,
  e: { name: string; source: string; version: string },
  generated: ReadonlySet<string | undefined>,
): TextEdit[] | string {
  if (!/^[A-Za-z][\w-]*$/.test(e.name)) return `the local name "${e.name}" cannot be written as a key`;
  const blocks = r.requiredProvidersBlocks;
  if (blocks.length > 1) return 'it has more than one required_providers block';
  if (blocks.length === 1) {
    const range = (blocks[0] as (typeof blocks)[number]).range;
    const src = sourceOf(ctx, range?.file);
    if (range === undefined || src === undefined)
      return 'tfguard could not read its required_providers block';
    if (src.file.endsWith('.json'))
      return 'its required_providers block is JSON, which tfguard does not extend';
    const close = range.end.byte - 1;
    if (src.text[close] !== '}') return 'its required_providers block has a shape tfguard does not edit';
    const lineStart = src.text.lastIndexOf('\n', close - 1) + 1;
    const closeIndent = src.text.slice(lineStart, close);
    if (!/^[ \t]*$/.test(closeIndent) || lineStart <= range.start.byte)
      return 'its required_providers block is written on one line';
    return [replace(src, lineStart, lineStart, entryLines(e, `${closeIndent}  `, eolOf(src)))];
  }
  // No required_providers block: a new file holds a terraform block with one.
  const dir = r.path === '.' ? '' : `${r.path}/`;
  const tofu = r.files.length > 0 && r.files.every((f) => f.endsWith('.tofu') || f.endsWith('.tofu.json'));
  const ext = tofu ? '.tofu' : '.tf';
  const taken = (f: string): boolean =>
    ctx.sources?.has(f) === true ||
    r.files.includes(f) ||
    r.ignoredFiles.includes(f) ||
    generated.has(f.split('/').pop());
  const name = NEW_FILE_NAMES.map((n) => `${dir}${n}${ext}`).find((f) => !taken(f) && !taken(`${f}.json`));
  if (name === undefined) return 'no free file name for a new terraform block';
  const text = `terraform {\n  required_providers {\n${entryLines(e, '    ', '\n')}  }\n}\n`;
  const zero = { line: 1, column: 1, byte: 0 };
  return [{ range: { file: name, start: zero, end: zero }, text }];
}

/**
 * The trees a module is part of whose root someone runs: the deployable roots, and the examples
 * (run as their README shows, whether or not `strict_examples` holds them to the root rules). A fix
 * that removes a shared cap keeps every one of them as bounded as it was: an example the cap
 * bounded is still bounded after the fix (the repair study, docs/fix.md).
 */
export function rootTreesWith(ctx: RuleContext, path: string): RootTree[] {
  let index = runTrees.get(ctx.roots);
  if (index === undefined) {
    // Indexed once per scan: asked for every capped provider of every shared module.
    index = new Map();
    for (const t of ctx.roots) {
      const r = ctx.moduleByPath.get(t.root);
      // Deployable (a root, or an example under strict_examples) or an example: a root or an example.
      if (r === undefined || !(isDeployable(r, ctx) || r.kind === 'example')) continue;
      for (const p of new Set(t.modules)) {
        const list = index.get(p);
        if (list === undefined) index.set(p, [t]);
        else list.push(t);
      }
    }
    runTrees.set(ctx.roots, index);
  }
  return [...(index.get(path) ?? [])];
}

/** The trees of `rootTreesWith` by module path, per scan (`ctx.roots`). */
const runTrees = new WeakMap<readonly RootTree[], Map<string, RootTree[]>>();

/** The module a Terragrunt unit runs, when only units run it (`unitSourceOf`). */
export function unitSourceOf(ctx: RuleContext, m: ModuleInfo): ModuleInfo | undefined {
  if (m.terragrunt === undefined) return undefined;
  for (const call of m.moduleCalls) {
    if (call.name !== 'terragrunt' || call.target === null) continue;
    const t = ctx.moduleByPath.get(call.target);
    if (t?.unitSourceOf?.includes(m.path) === true) return t;
  }
  return undefined;
}
