/**
 * Small helpers shared by the provider-version rules. Not a rule itself.
 */
import { isBuiltinProviderSource, shortSource } from '../addrs';
import { parseVersion, satisfies, validateConstraints } from '../constraints';
import { stripTemplate } from '../hcl';
import type { LoadDiagnostic, ModuleInfo, ProviderRequirement, RootTree, ValueExpression } from '../modules';
import type { SourceLocation, SourceRange, TextEdit } from '../model';
import type { Fix } from './types';
import { kindLabel } from '../modules';
import { sourceText, type SourceText } from './fix-helpers';
import { liveEntries, lockAnalysisOf } from './lock-helpers';
import type { RuleContext } from './types';

/**
 * The edit that writes `constraint` over the version constraint at `loc` (a string literal in native
 * syntax, a JSON string in `.tf.json`), when the parser located it and the text can be written as a
 * plain literal; undefined otherwise (the fix then stays advice).
 */
export function constraintEdits(loc: SourceLocation | null, constraint: string): TextEdit[] | undefined {
  const range = loc?.range;
  if (range === undefined) return undefined;
  if (range.file.endsWith('.json')) return [{ range, text: JSON.stringify(constraint) }];
  if (/["\\\n]|[$%]\{/.test(constraint)) return undefined;
  return [{ range, text: `"${constraint}"` }];
}

/**
 * The edits of a fix that rewrites a requirement's constraint: none when the constraint was evaluated
 * from variables and locals (Terraform 1.17), whose value lives elsewhere; writing a literal over the
 * reference would quietly drop the indirection, so the fix stays advice.
 */
export function requirementEdits(
  p: Pick<ProviderRequirement, 'constraintLocation' | 'versionExpression'>,
  constraint: string,
): TextEdit[] | undefined {
  return p.versionExpression === undefined ? constraintEdits(p.constraintLocation, constraint) : undefined;
}

/** For a constraint evaluated from variables and locals (Terraform 1.17), where its value came from:
 * ` (from var.v (its default, variables.tf:3))`; empty for a literal. */
export function constraintOrigin(p: Pick<ProviderRequirement, 'versionExpression'>): string {
  const e = p.versionExpression;
  return e?.status === 'known' ? ` (from ${e.detail})` : '';
}

/** An expression as written, for messages: `var.v` for a lone reference (hcl2json renders it
 * `"${var.v}"`), otherwise the quoted template. */
export function expressionText(e: Pick<ValueExpression, 'text'>): string {
  const inner = stripTemplate(e.text);
  return inner !== e.text && typeof inner === 'string' ? inner : JSON.stringify(e.text);
}

/** A `Fix`, with `edits` only when there are some. */
export function fixWith(description: string, replacement: string, edits: TextEdit[] | undefined): Fix {
  return edits === undefined ? { description, replacement } : { description, replacement, edits };
}

/** The provider as it appears in messages: `"aws" (hashicorp/aws)`. */
export function describeProvider(p: Pick<ProviderRequirement, 'name' | 'source'>): string {
  return `"${p.name}" (${shortSource(p.source)})`;
}

/**
 * True for the built-in `terraform` provider (`terraform.io/builtin/terraform`). Terraform maps the
 * local name `terraform` without a `source` to it (checked with `terraform providers`), so a
 * loader's naive implied `hashicorp/terraform` for that name is the built-in one too.
 */
export function isBuiltinProvider(
  p: Pick<ProviderRequirement, 'name' | 'source' | 'sourceExplicit'>,
): boolean {
  if (isBuiltinProviderSource(p.source)) return true;
  return !p.sourceExplicit && p.name === 'terraform';
}

/** True when the entry explicitly declares the legacy `hashicorp/terraform` provider. */
export function isLegacyTerraformProvider(
  p: Pick<ProviderRequirement, 'source' | 'sourceExplicit'>,
): boolean {
  return p.sourceExplicit && shortSource(p.source).toLowerCase() === 'hashicorp/terraform';
}

/**
 * Whether a requirement's constraint is one the constraint-shape rules should judge: it exists, is
 * valid syntax (otherwise `invalid-version-constraint` owns it) and the provider is neither the
 * built-in one nor the legacy `hashicorp/terraform` (owned by `builtin-terraform-provider`).
 */
export function checkableConstraint(p: ProviderRequirement): string | null {
  if (p.constraints === null) return null;
  if (isBuiltinProvider(p) || isLegacyTerraformProvider(p)) return null;
  if (validateConstraints(p.constraints) !== null) return null;
  return p.constraints;
}

/** Paths of the modules that have at least one file that failed to parse. Rules that report the
 * *absence* of something skip those modules: the missing piece may be in the unparsed file. */
export function modulesWithParseErrors(ctx: RuleContext): Set<string> {
  const out = new Set<string>();
  for (const d of diagnosticsOf(ctx, 'parse-error')) out.add(d.module);
  return out;
}

/** The diagnostics of a context by kind, in their order: grouped once, on the first question, as a
 * dozen rules each ask for one kind (and four for the parse errors) of a thousand diagnostics. */
const byKind = new WeakMap<readonly LoadDiagnostic[], Map<string, LoadDiagnostic[]>>();

export function diagnosticsOf<K extends LoadDiagnostic['kind']>(
  ctx: RuleContext,
  kind: K,
): Extract<LoadDiagnostic, { kind: K }>[] {
  let groups = byKind.get(ctx.diagnostics);
  if (groups === undefined) {
    groups = new Map();
    for (const d of ctx.diagnostics) {
      const list = groups.get(d.kind);
      if (list === undefined) groups.set(d.kind, [d]);
      else list.push(d);
    }
    byKind.set(ctx.diagnostics, groups);
  }
  // A copy: a caller may sort or change the list it gets, as it could the filter's result before.
  return [...(groups.get(kind) ?? [])] as Extract<LoadDiagnostic, { kind: K }>[];
}

/** `file`/`line` (and `range` when the parser located it) of a finding from an optional location. */
export function at(loc: SourceLocation | null | undefined): {
  file: string | null;
  line: number | null;
  range?: SourceRange;
} {
  if (!loc) return { file: null, line: null };
  return loc.range === undefined
    ? { file: loc.file, line: loc.line }
    : { file: loc.file, line: loc.line, range: loc.range };
}

/** Where a module-level finding with no better anchor goes: its first file, line 1. */
export function moduleAnchor(m: ModuleInfo): { file: string | null; line: number | null } {
  const first = m.files[0];
  return first === undefined ? { file: null, line: null } : { file: first, line: 1 };
}

/** Locale-independent string order (UTF-16 code units), so output never depends on the host. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareLocations(a: SourceLocation, b: SourceLocation): number {
  return compareStrings(a.file, b.file) || a.line - b.line;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** What was scanned as messages name it: "directory" or "archive" (never "the archive"
 * for a directory). */
export function inputNoun(ctx: Pick<RuleContext, 'input'>): 'directory' | 'archive' {
  return ctx.input ?? 'archive';
}

/** The engine's display name for messages. */
export function engineName(ctx: RuleContext): string {
  return ctx.engine === 'opentofu' ? 'OpenTofu' : 'Terraform';
}

/** Modules held to the deployable-root rules (lock files, pinning, required_version): roots, and
 * examples too when the settings say `strict_examples = true`. */
export function isDeployable(m: Pick<ModuleInfo, 'kind'>, ctx: RuleContext): boolean {
  return m.kind === 'root' || (m.kind === 'example' && ctx.config.strictExamples === true);
}

/** The trees whose lock files are verified (see `isDeployable`). */
export function deployableTrees(ctx: RuleContext): RootTree[] {
  return ctx.roots.filter((t) => isDeployable(t, ctx));
}

/**
 * For a finding that holds only if the module is what tfguard took it for: when that was decided on
 * weak evidence, the finding is marked low-confidence (the engine lowers its severity one step),
 * its message ends with the assumption, and it offers no fix (a fix right for one kind is wrong
 * for the other).
 */
export function kindCaveat(m: Pick<ModuleInfo, 'path' | 'kind' | 'kindReason' | 'kindEvidence'>): {
  weak: boolean;
  suffix: string;
} {
  if (m.kindEvidence !== 'weak') return { weak: false, suffix: '' };
  return {
    weak: true,
    suffix: ` (if "${m.path}" is a ${kindLabel(m.kind)}; tfguard's guess, because: ${m.kindReason})`,
  };
}

/** The file's bytes for an inserting fix, when the scan passed them (`RuleContext.sources`). */
export function sourceFor(ctx: RuleContext, file: string | undefined): SourceText | undefined {
  if (file === undefined) return undefined;
  const bytes = ctx.sources?.get(file);
  return bytes === undefined ? undefined : sourceText(file, bytes);
}

/** What a root's lock file says about one provider source. */
export type LockedVersion =
  | { status: 'locked'; version: string; lockFile: string }
  | { status: 'no-lock' }
  | { status: 'no-entry'; lockFile: string }
  /** The lock file or its entry could not be read (the lock rules report why). */
  | { status: 'unreadable'; lockFile: string };

/** The version the lock file of `root` records for `source` (lock analysis of deployable roots). */
export function lockedVersion(ctx: RuleContext, root: string, source: string): LockedVersion {
  const a = lockAnalysisOf(ctx, root);
  if (a === undefined || a.lockFile === null) return { status: 'no-lock' };
  if (a.lock === null || !a.lock.readable) return { status: 'unreadable', lockFile: a.lockFile };
  const entries = a.lock.providers.filter((e) => e.source === source);
  if (entries.length === 0) return { status: 'no-entry', lockFile: a.lockFile };
  const e = liveEntries(a).find((x) => x.source === source);
  if (e === undefined || e.version === null || entries.length > 1)
    return { status: 'unreadable', lockFile: a.lockFile };
  return { status: 'locked', version: e.version, lockFile: a.lockFile };
}

/** The trees a module is part of. */
export function treesWith(ctx: RuleContext, modulePath: string): RootTree[] {
  return ctx.roots.filter((t) => t.modules.includes(modulePath));
}

/** The combined constraints of `source` in `tree` ('' when nothing constrains it, null when a
 * constraint is invalid or the tree does not require it). */
export function treeConstraints(tree: RootTree, source: string): string | null {
  const p = tree.providers.find((rp) => rp.source === source);
  return p === undefined ? null : p.constraints;
}

/** True when `version` satisfies `constraints` (false for an invalid constraint). */
export function safelySatisfies(version: string, constraints: string): boolean {
  if (constraints === '') return true;
  try {
    return satisfies(version, constraints);
  } catch {
    return false;
  }
}

/** `~> MAJOR.MINOR` of a version; null for a pre-release (only an exact constraint selects one). */
export function releaseLine(version: string): string | null {
  try {
    const v = parseVersion(version);
    return v.prerelease === '' ? `~> ${v.major}.${v.minor}` : null;
  } catch {
    return null;
  }
}

/** The call-name paths (`["network", "eks"]`) by which `tree`'s root reaches `modulePath`: the
 * module keys `terraform init` records in `.terraform/modules/modules.json`, without the last
 * call. The root itself is reached by the empty path. */
export function callPaths(tree: RootTree, modulePath: string): string[][] {
  const out: string[][] = [];
  const walk = (at: string, path: string[], seen: Set<string>): void => {
    if (at === modulePath) out.push(path);
    if (out.length > 64) return;
    for (const c of tree.calls) {
      if (c.from !== at || seen.has(c.to)) continue;
      walk(c.to, [...path, c.name], new Set([...seen, c.to]));
    }
  };
  walk(tree.root, [], new Set([tree.root]));
  return out;
}

interface InstalledModule {
  key: string;
  source: string;
  version: string | null;
}

/** The entries of `<root>/.terraform/modules/modules.json` (written by `terraform init`), or null
 * when the archive has none or it cannot be read. */
export function installedModules(ctx: RuleContext, root: string): InstalledModule[] | null {
  const file = root === '.' ? '.terraform/modules/modules.json' : `${root}/.terraform/modules/modules.json`;
  const bytes = ctx.sources?.get(file);
  if (bytes === undefined) return null;
  try {
    const doc = JSON.parse(bytes.toString('utf8')) as { Modules?: unknown };
    if (!Array.isArray(doc.Modules)) return null;
    const out: InstalledModule[] = [];
    for (const m of doc.Modules as Record<string, unknown>[]) {
      if (typeof m?.Key !== 'string' || typeof m.Source !== 'string') continue;
      out.push({ key: m.Key, source: m.Source, version: typeof m.Version === 'string' ? m.Version : null });
    }
    return out;
  } catch {
    return null;
  }
}

/** A registry module address without the public registries' host, lowercased, for comparing the
 * configuration's `source` with what `terraform init` recorded. */
export function registryModuleKey(source: string): string {
  return source.replace(/^(registry\.terraform\.io|registry\.opentofu\.org)\//i, '').toLowerCase();
}
