/**
 * Provider packages kept inside the uploaded archive, in the layouts Terraform's filesystem mirror
 * reads (hashicorp/terraform internal/getproviders/filesystem_search.go):
 *
 * - packed:   `MIRROR/HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`
 * - unpacked: `MIRROR/HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/...`
 *
 * Mirrors are looked for in every `terraform.d/plugins/` directory (Terraform's implied local mirror
 * of the working directory that contains it), every `.terraform/providers/` cache (unpacked layout)
 * and every directory listed in `.tfguard.hcl` `plugin_dirs`.
 */
import type { ArchiveEntry, LoadedArchive } from '../archive';
import { parseVersion, formatVersion } from '../constraints';
import { parseProviderSource } from '../addrs';
import type { PackageLocation, ProviderPackage } from './types';
import { compareUtf8 } from './hash';

const PACKED_NAME = /^terraform-provider-(.+)_([^_]+)_([a-z0-9]+_[a-z0-9]+)\.zip$/;
const PLATFORM = /^[a-z0-9]+_[a-z0-9]+$/;

/** File names the scan must load for `analyzeLocks` to hash them (`terraform-provider-*_*_*_*.zip`). */
export function isProviderPackageZip(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return /^terraform-provider-[^/]*_[^_/]+_[^_/]+_[^_/]+\.zip$/.test(base);
}

interface Mirror {
  dir: string;
  location: PackageLocation;
  owner: string | null;
}

function cleanDir(p: string): string {
  const parts = p.split('/').filter((s) => s !== '' && s !== '.');
  return parts.length === 0 ? '.' : parts.join('/');
}

/** The mirror directories present in the archive (derived from file paths; tar needs no dir entries). */
function findMirrors(entries: readonly ArchiveEntry[], pluginDirs: readonly string[]): Mirror[] {
  const mirrors = new Map<string, Mirror>();
  const add = (m: Mirror): void => {
    if (!mirrors.has(m.dir)) mirrors.set(m.dir, m);
  };
  for (const e of entries) {
    // Nearly no path has either mirror segment: skip those without splitting them.
    if (!e.path.includes('terraform.d/plugins') && !e.path.includes('.terraform/providers')) continue;
    const parts = e.path.split('/');
    for (let i = 0; i + 1 < parts.length; i++) {
      const a = parts[i];
      const b = parts[i + 1];
      const location =
        a === 'terraform.d' && b === 'plugins'
          ? 'plugins'
          : a === '.terraform' && b === 'providers'
            ? 'cache'
            : null;
      if (location === null) continue;
      const owner = i === 0 ? '.' : parts.slice(0, i).join('/');
      add({ dir: parts.slice(0, i + 2).join('/'), location, owner });
    }
  }
  for (const raw of pluginDirs) {
    const dir = cleanDir(raw);
    if (dir.split('/').includes('..')) continue;
    add({ dir, location: 'plugin-dir', owner: null });
  }
  // A plugin_dirs entry wins over the automatic classification of the same directory.
  for (const raw of pluginDirs) {
    const dir = cleanDir(raw);
    if (mirrors.get(dir)?.location !== 'plugin-dir')
      mirrors.set(dir, { dir, location: 'plugin-dir', owner: null });
  }
  return [...mirrors.values()];
}

function canonicalVersion(v: string): string | null {
  try {
    const canon = formatVersion(parseVersion(v));
    return canon === v ? canon : null;
  } catch {
    return null;
  }
}

function canonicalSource(host: string, ns: string, type: string): string | null {
  const parsed = parseProviderSource(`${host}/${ns}/${type}`, 'terraform');
  return parsed.ok ? parsed.source : null;
}

/**
 * Every provider package in the archive's mirrors, sorted by path. `pluginDirs` are
 * archive-relative directories from `.tfguard.hcl`. Unpacked packages list their files with the
 * content hashes the archive reader computed (`files` is null when one is unknown).
 */
export function findProviderPackages(
  archive: LoadedArchive,
  pluginDirs: readonly string[] = [],
): ProviderPackage[] {
  const mirrors = findMirrors(archive.entries, pluginDirs);
  if (mirrors.length === 0) return [];
  const byPath = new Map(archive.entries.map((e) => [e.path, e]));
  const out: ProviderPackage[] = [];
  const unpacked = new Map<
    string,
    { pkg: ProviderPackage; files: { path: string; sha256: string | undefined }[] }
  >();
  // Longest mirror first, so a file under nested mirrors belongs to the innermost one.
  const ordered = [...mirrors].sort((a, b) => b.dir.length - a.dir.length);
  for (const e of archive.entries) {
    if (e.type === 'directory') continue;
    const mirror = ordered.find((m) => m.dir === '.' || e.path.startsWith(`${m.dir}/`));
    if (mirror === undefined) continue;
    const rel = mirror.dir === '.' ? e.path : e.path.slice(mirror.dir.length + 1);
    const parts = rel.split('/');
    if (parts.length === 4 && mirror.location !== 'cache') {
      const [host, ns, type, file] = parts as [string, string, string, string];
      const m = PACKED_NAME.exec(file);
      if (m === null || m[1] !== type) continue;
      const version = canonicalVersion(m[2] as string);
      const source = canonicalSource(host, ns, type);
      if (version === null || source === null) continue;
      out.push({
        kind: 'packed',
        location: mirror.location,
        mirror: mirror.dir,
        owner: mirror.owner,
        path: e.path,
        source,
        version,
        platform: m[3] as string,
        files: null,
      });
      continue;
    }
    if (parts.length >= 6) {
      const [host, ns, type, rawVersion, platform] = parts as [string, string, string, string, string];
      if (!PLATFORM.test(platform)) continue;
      const version = canonicalVersion(rawVersion);
      const source = canonicalSource(host, ns, type);
      if (version === null || source === null) continue;
      const dir = [mirror.dir === '.' ? '' : mirror.dir, host, ns, type, rawVersion, platform]
        .filter((s) => s !== '')
        .join('/');
      let group = unpacked.get(dir);
      if (group === undefined) {
        group = {
          pkg: {
            kind: 'unpacked',
            location: mirror.location,
            mirror: mirror.dir,
            owner: mirror.owner,
            path: dir,
            source,
            version,
            platform,
            files: null,
          },
          files: [],
        };
        unpacked.set(dir, group);
      }
      group.files.push({ path: parts.slice(5).join('/'), sha256: contentHash(e, byPath) });
    }
  }
  for (const { pkg, files } of unpacked.values()) {
    const known = files.every((f) => f.sha256 !== undefined);
    out.push({
      ...pkg,
      files: known ? files.map((f) => ({ path: f.path, sha256: f.sha256 as string })) : null,
    });
  }
  return out.sort((a, b) => compareUtf8(a.path, b.path));
}

/** The content hash of a file entry; for a link, of the file it resolves to. */
function contentHash(e: ArchiveEntry, byPath: ReadonlyMap<string, ArchiveEntry>): string | undefined {
  let cur: ArchiveEntry | undefined = e;
  for (let hops = 0; cur !== undefined && hops < 40; hops++) {
    if (cur.type === 'file') return cur.sha256;
    if (cur.type === 'directory' || cur.linkTarget === undefined) return undefined;
    cur = byPath.get(cur.linkTarget);
  }
  return undefined;
}

/**
 * Whether a package serves a root module: packages under the root's own `terraform.d/plugins` or
 * `.terraform/providers`, a `terraform.d/plugins` at the archive root (a repository-wide mirror),
 * and every `plugin_dirs` package.
 */
export function packageServesRoot(pkg: ProviderPackage, root: string): boolean {
  if (pkg.owner === null || pkg.owner === root) return true;
  return pkg.owner === '.' && pkg.location === 'plugins';
}
