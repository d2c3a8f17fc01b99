/**
 * `.terraform/modules/modules.json`, which `terraform init` / `terraform get` write in the root
 * module's directory: `{"Modules": [{"Key": "vpc.sub", "Source": "...", "Version": "5.1.0", "Dir":
 * ".terraform/modules/vpc"}]}` (hashicorp/terraform internal/modsdir/manifest.go). An archive uploaded
 * after `init` carries it with the installed modules: they are read without any network.
 */
import { cleanRelativePath, isOutsideArchive } from '../../addrs';
import type { LoadedArchive } from '../../archive';
import { parseRegistrySource, packageAndDir } from './source';
import type { Engine } from '../../model';

export const MODULES_MANIFEST = '.terraform/modules/modules.json';
export const INSTALL_DIR = '.terraform/modules';

/** Whether an archive path is a modules.json the scan should load. */
export function isModulesManifest(path: string): boolean {
  return path === MODULES_MANIFEST || path.endsWith(`/${MODULES_MANIFEST}`);
}

export interface ManifestEntry {
  key: string;
  source: string;
  version: string | null;
  /** The installed directory, relative to `.terraform/modules` of the root (`vpc/modules/x`); null
   * when the entry points elsewhere (a local module of the root's own tree). */
  dir: string | null;
}

/** The manifest of a root (`root/.terraform/modules/modules.json`): entries by key; null when the
 * archive has none or it is not a manifest. */
export function readModulesManifest(archive: LoadedArchive, root: string): Map<string, ManifestEntry> | null {
  const path = root === '.' ? MODULES_MANIFEST : `${root}/${MODULES_MANIFEST}`;
  const content = archive.files.get(path);
  if (content === undefined) return null;
  let doc: unknown;
  try {
    doc = JSON.parse(content.toString('utf8'));
  } catch {
    return null;
  }
  const list = (doc as { Modules?: unknown } | null)?.Modules;
  if (!Array.isArray(list)) return null;
  const out = new Map<string, ManifestEntry>();
  for (const e of list as unknown[]) {
    if (typeof e !== 'object' || e === null) continue;
    const { Key, Source, Version, Dir } = e as Record<string, unknown>;
    if (typeof Key !== 'string' || typeof Source !== 'string' || typeof Dir !== 'string') continue;
    const cleaned = cleanRelativePath(Dir.replace(/\\/g, '/'));
    const inside =
      !isOutsideArchive(cleaned) && (cleaned === INSTALL_DIR || cleaned.startsWith(`${INSTALL_DIR}/`));
    out.set(Key, {
      key: Key,
      source: Source,
      version: typeof Version === 'string' && Version !== '' ? Version : null,
      dir: inside ? cleanRelativePath(cleaned.slice(INSTALL_DIR.length + 1) || '.') : null,
    });
  }
  return out;
}

/** `github.com/o/r` → `git::https://github.com/o/r.git`, as Terraform records it. */
function normalizeRemote(raw: string): string {
  const { pkg, subdir } = packageAndDir(raw.trim());
  let p = pkg;
  const gh = /^github\.com\/([^/?]+)\/([^/?]+?)(\.git)?(\?.*)?$/i.exec(p);
  if (gh !== null) p = `git::https://github.com/${gh[1]}/${gh[2]}.git${gh[4] ?? ''}`;
  return subdir === '.' ? p : `${p}//${subdir}`;
}

/** Whether the manifest's recorded source is the call's source (registry addresses compared
 * normalized, others after go-getter's shorthand expansion). A changed source means the installed
 * copy is stale: Terraform asks for `init` again. */
export function sameSource(recorded: string, written: string, engine: Engine): boolean {
  const a = parseRegistrySource(recorded, engine);
  const b = parseRegistrySource(written, engine);
  if (a !== null || b !== null) {
    return (
      a !== null &&
      b !== null &&
      a.host === b.host &&
      a.namespace === b.namespace &&
      a.name === b.name &&
      a.system === b.system &&
      a.subdir === b.subdir
    );
  }
  return normalizeRemote(recorded) === normalizeRemote(written);
}

/** The files under `root/.terraform/modules/`, re-rooted there (for loading the installed
 * modules as one package), or null when there are none. */
export function installedPackage(archive: LoadedArchive, root: string): LoadedArchive | null {
  const prefix = root === '.' ? `${INSTALL_DIR}/` : `${root}/${INSTALL_DIR}/`;
  const entries = archive.entries
    .filter((e) => e.path.startsWith(prefix) && e.path.length > prefix.length)
    .map((e) => ({
      ...e,
      path: e.path.slice(prefix.length),
      ...(e.linkTarget !== undefined && e.linkTarget.startsWith(prefix)
        ? { linkTarget: e.linkTarget.slice(prefix.length) }
        : {}),
    }));
  if (entries.length === 0) return null;
  const files = new Map<string, Buffer>();
  for (const [p, c] of archive.files) if (p.startsWith(prefix)) files.set(p.slice(prefix.length), c);
  return {
    name: `${archive.name}:${prefix}`,
    sha256: archive.sha256,
    format: archive.format,
    entries,
    files,
  };
}
