/**
 * The engine a configuration is written for: the archive's (settings, `.tofu` files, lock files
 * from registry.opentofu.org) and each root tree's (settings, its lock file, `.tofu` files in it).
 */
import type { LoadedArchive } from '../../archive';
import { basename } from '../../archive';
import type { Engine, ScanConfig } from '../../model';
import { inToolDirectory, isIgnoredName } from '../files';
import { matchGlob } from '../glob';
import type { ModuleInfo, RootTree } from '../types';

export const LOCK_FILE_NAME = '.terraform.lock.hcl';

export const OPENTOFU_LOCK_ENTRY = /^\s*provider\s+"registry\.opentofu\.org\//im;

/**
 * The engine the archive is written for: `config.engine` when the settings set it explicitly;
 * otherwise OpenTofu when a lock file records providers from `registry.opentofu.org` or any
 * `.tofu` / `.tofu.json` file exists; otherwise Terraform.
 */
export function detectEngine(archive: LoadedArchive, config: ScanConfig): Engine {
  if (config.engineExplicit === true || config.engine === 'opentofu') return config.engine;
  for (const entry of archive.entries) {
    if (entry.type === 'directory' || inToolDirectory(entry.path)) continue;
    const name = basename(entry.path);
    if (isIgnoredName(name)) continue;
    if (name.endsWith('.tofu') || name.endsWith('.tofu.json')) return 'opentofu';
  }
  for (const [path, content] of archive.files) {
    if (
      basename(path) === LOCK_FILE_NAME &&
      !inToolDirectory(path) &&
      OPENTOFU_LOCK_ENTRY.test(content.toString('utf8'))
    )
      return 'opentofu';
  }
  return 'terraform';
}

/** The engine that runs a tree: the settings (`engine`, then `engines` globs), else the engine its
 * deployment declaration names (Digger `opentofu: true`), else its lock file's registry host, else
 * `.tofu` files in the tree, else the archive's engine. */
export function treeEngine(
  tree: RootTree,
  declaredEngines: ReadonlyMap<string, Engine>,
  modules: ReadonlyMap<string, ModuleInfo>,
  archive: LoadedArchive,
  config: ScanConfig,
  fallback: Engine,
): Engine {
  if (config.engineExplicit === true) return config.engine;
  const glob = Object.keys(config.engines ?? {}).find((g) => matchGlob(g, tree.root));
  if (glob !== undefined) return (config.engines as Record<string, Engine>)[glob] as Engine;
  const engineDeclared = declaredEngines.get(tree.root);
  if (engineDeclared !== undefined) return engineDeclared;
  const lock = modules.get(tree.root)?.lockFile ?? null;
  const text = lock === null ? undefined : archive.files.get(lock)?.toString('utf8');
  if (text !== undefined) {
    if (OPENTOFU_LOCK_ENTRY.test(text)) return 'opentofu';
    if (/^\s*provider\s+"registry\.terraform\.io\//im.test(text)) return 'terraform';
  }
  for (const path of tree.modules) {
    const m = modules.get(path);
    if (m?.files.some((f) => f.endsWith('.tofu') || f.endsWith('.tofu.json'))) return 'opentofu';
  }
  return fallback;
}
