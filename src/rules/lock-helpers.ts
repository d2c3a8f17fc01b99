/**
 * Helpers shared by the `lock-*` rules: which providers a root needs, which
 * lock entries count, and how to tell whether the loaded tree is complete enough to judge an entry.
 */
import { posix } from 'node:path';
import type { Engine, ScanConfig, Severity } from '../model';
import type { RootProvider, RootTree } from '../modules';
import type { LockProviderEntry, RegistryCheck, RootLockAnalysis } from '../lockfile';
import type { RuleContext } from './types';

/** The rules that report only when the registry cross-check ran (`--registry`, `registry = true`). */
export const REGISTRY_RULE_IDS: readonly string[] = Object.freeze([
  'lock-hash-unknown',
  'lock-signature-invalid',
  'lock-registry-unavailable',
  'lock-registry-unsigned',
]);

/** The command-line program of `engine`, as the commands in notes name it: `terraform` or `tofu`. */
export function cliName(engine: Engine): string {
  return engine === 'opentofu' ? 'tofu' : 'terraform';
}

/** An archive path as a command run in `root`'s directory names it (`live/prod/terraform.d/plugins`
 * → `terraform.d/plugins` for root `live/prod`). */
export function pathFromRoot(root: string, archivePath: string): string {
  return posix.relative(root === '.' ? '' : root, archivePath) || '.';
}

/**
 * The severity of a rule whose finding `init -lockfile=readonly` fails on (`lock-missing`,
 * `lock-provider-stale`): `error` under `lock_mode = "readonly"` (a CI that runs that command
 * fails), `fallback` otherwise.
 */
export function readonlySeverity(config: ScanConfig, fallback: Severity): Severity {
  return config.lockMode === 'readonly' ? 'error' : fallback;
}

/** Built-in providers (`terraform.io/builtin/...`) are never installed and never locked. */
export function isLockable(source: string): boolean {
  return !source.toLowerCase().startsWith('terraform.io/builtin/');
}

/** The providers a root's module tree requires that belong in its lock file. */
export function requiredProviders(tree: RootTree): RootProvider[] {
  return tree.providers.filter((p) => isLockable(p.source));
}

/** Entries the checks look at: a valid address, and not a second block for the same provider. */
export function liveEntries(a: RootLockAnalysis): LockProviderEntry[] {
  if (a.lock === null || !a.lock.readable) return [];
  return a.lock.providers.filter((e) => e.source !== null && !e.duplicate);
}

export function treeOf(ctx: RuleContext, root: string): RootTree | undefined {
  return byRoot(ctx.roots).get(root);
}

/** The lock analysis of `root` (deployable roots only), if the scan ran one. */
export function lockAnalysisOf(ctx: RuleContext, root: string): RootLockAnalysis | undefined {
  return byRoot(lockRoots(ctx)).get(root);
}

const rootIndexes = new WeakMap<readonly { root: string }[], Map<string, { root: string }>>();

/** The first item of `list` for each root path, indexed once per list (the rules ask for every
 * root of a monorepo, several times). */
function byRoot<T extends { root: string }>(list: readonly T[]): ReadonlyMap<string, T> {
  let index = rootIndexes.get(list);
  if (index === undefined) {
    index = new Map();
    for (const item of list) if (!index.has(item.root)) index.set(item.root, item);
    rootIndexes.set(list, index);
  }
  return index as Map<string, T>;
}

/** True when some module of the tree failed to parse: its requirements are unknown. */
export function treeHasParseErrors(ctx: RuleContext, tree: RootTree): boolean {
  const mods = new Set(tree.modules);
  return ctx.diagnostics.some((d) => d.kind === 'parse-error' && mods.has(d.module));
}

/** True when a module of the tree declares a provider whose `source` reads a value tfguard could not
 * evaluate (Terraform 1.17): which provider it is, and so which lock entries the tree needs, is
 * unknown. */
export function treeHasUnknownSources(ctx: RuleContext, tree: RootTree): boolean {
  return tree.modules.some((path) =>
    ctx.moduleByPath.get(path)?.providers.some((p) => p.sourceExpression?.status === 'unknown'),
  );
}

/** True when a Terragrunt unit of the tree has parts tfguard could not resolve statically that may
 * require providers (a source built from `get_env`, `run_cmd` in a `generate` block…). */
export function treeHasUnresolvedTerragrunt(ctx: RuleContext, tree: RootTree): boolean {
  const mods = new Set(tree.modules);
  return ctx.diagnostics.some((d) => d.kind === 'terragrunt-unresolved' && d.partial && mods.has(d.module));
}

/** True when the tree calls modules whose requirements tfguard does not know: remote modules that
 * stayed unresolved (or were never resolved), and installed copies the archive lacks. They may
 * require more providers and add constraints that tfguard cannot see. */
export function treeHasRemoteModules(tree: RootTree): boolean {
  if (tree.remoteModules === undefined) return tree.remoteCalls.length > 0;
  return (
    tree.remoteCalls.some((c) => c.installed === true) || tree.remoteModules.some((r) => r.origin === null)
  );
}

/** True when the tree calls any module (local or remote): commands that read the whole
 * configuration, such as `terraform providers lock`, then need the modules installed first. */
export function treeCallsModules(tree: RootTree): boolean {
  return tree.calls.length > 0 || tree.remoteCalls.length > 0;
}

export function registryCheckFor(a: RootLockAnalysis, e: LockProviderEntry): RegistryCheck | undefined {
  return a.registry.find((c) => c.source === e.source && c.version === e.version);
}

/** Each `, `-separated piece of a normalized constraint string. */
export function constraintPieces(s: string): string[] {
  return s
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** The lock analyses of the scan, or none when it did not run. */
/**
 * A Terraform Stack's root (src/modules/declarations/stacks.ts). Its lock file is written by
 * `terraform stacks providers lock`, which records no `constraints` and may keep entries no
 * component requires (HashiCorp's learn-terraform-stacks-deploy-gcp locks hashicorp/archive and
 * hashicorp/local that nothing declares), and no `init -lockfile=readonly` ever reads it: the
 * rules about recorded constraints and stale entries do not apply to it.
 */
export function isStackRoot(ctx: RuleContext, root: string): boolean {
  return ctx.moduleByPath.get(root)?.terraformStack === true;
}

export function lockRoots(ctx: RuleContext): RootLockAnalysis[] {
  return ctx.lock?.roots ?? [];
}

/** A root's lock analysis with its lock file there. */
export type LockedRoot = RootLockAnalysis & { readonly lock: NonNullable<RootLockAnalysis['lock']> };

/** A root that has a lock file and a loaded module tree: what the rules that hold a lock file
 * against its root's tree walk, with the CLI their commands name. */
export interface LockedTree {
  readonly root: LockedRoot;
  readonly tree: RootTree;
  readonly cli: string;
}

/**
 * The roots with a lock file and a module tree. `withStacks: false` leaves out Stacks, whose lock
 * files record no constraints and which no `init` reads (`isStackRoot`).
 */
export function lockedTrees(ctx: RuleContext, options: { withStacks?: boolean } = {}): LockedTree[] {
  const out: LockedTree[] = [];
  for (const a of lockRoots(ctx)) {
    const tree = treeOf(ctx, a.root);
    if (a.lock === null || tree === undefined) continue;
    if (options.withStacks === false && isStackRoot(ctx, a.root)) continue;
    out.push({ root: a as LockedRoot, tree, cli: cliName(a.engine) });
  }
  return out;
}

/** Every live lock entry that has a registry answer, with its root and lock file: what the
 * registry-based rules walk. */
export function registryChecks(
  ctx: RuleContext,
): { root: RootLockAnalysis; lockFile: string; entry: LockProviderEntry; check: RegistryCheck }[] {
  const out = [];
  for (const root of lockRoots(ctx)) {
    if (root.lock === null) continue;
    for (const entry of liveEntries(root)) {
      const check = registryCheckFor(root, entry);
      if (check !== undefined) out.push({ root, lockFile: root.lock.path, entry, check });
    }
  }
  return out;
}
