/**
 * Module source addresses, classified the way Terraform does (hashicorp/terraform
 * internal/addrs/module_source.go `ParseModuleSource`): local paths, registry addresses, remote
 * (go-getter) sources; checked against `terraform get` 1.11.
 */
import type { ModuleSourceKind } from '../model';

const LOCAL_PREFIXES = ['./', '../', '.\\', '..\\'];
const REGISTRY_NAME = /^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?$/;
const REGISTRY_TARGET_SYSTEM = /^[0-9a-z]{1,64}$/;

export function isLocalModuleSource(raw: string): boolean {
  return LOCAL_PREFIXES.some((p) => raw.startsWith(p));
}

/** Splits go-getter's `//subdir` suffix off a package address (ignoring the `://` of a scheme). */
function splitSubdir(raw: string): string {
  let start = 0;
  const scheme = raw.indexOf('://');
  if (scheme !== -1) start = scheme + 3;
  const sub = raw.indexOf('//', start);
  return sub === -1 ? raw : raw.slice(0, sub);
}

function isRegistryModuleSource(raw: string): boolean {
  const pkg = splitSubdir(raw);
  const parts = pkg.split('/');
  if (parts.length !== 3 && parts.length !== 4) return false;
  if (parts.length === 4) {
    const host = (parts.shift() as string).toLowerCase();
    if (!host.includes('.') || host.includes('--') || host === 'github.com' || host === 'bitbucket.org')
      return false;
    if (!/^[\p{L}\p{N}.-]+(?::[0-9]+)?$/u.test(host)) return false;
  }
  const [namespace, name, system] = parts as [string, string, string];
  return REGISTRY_NAME.test(namespace) && REGISTRY_NAME.test(name) && REGISTRY_TARGET_SYSTEM.test(system);
}

/** `local` for `./`/`../` paths, `registry` for `[host/]namespace/name/system[//subdir]`, else `remote`. */
export function classifyModuleSource(raw: string | null): ModuleSourceKind {
  if (raw === null || raw === '') return 'unknown';
  if (isLocalModuleSource(raw)) return 'local';
  if (isRegistryModuleSource(raw)) return 'registry';
  return 'remote';
}

/**
 * Normalizes a `/`-separated path the way Go's `path.Clean` does, for a relative path. Returns
 * `"."` for the top directory; a result starting with `..` lies above the top directory.
 */
export function cleanRelativePath(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else out.push('..');
    } else {
      out.push(seg);
    }
  }
  return out.length === 0 ? '.' : out.join('/');
}

/** The archive-relative directory a local module source points to, from the caller's directory. */
export function resolveLocalTarget(callerDir: string, raw: string): string {
  const rel = raw.replace(/\\/g, '/');
  return cleanRelativePath(callerDir === '.' ? rel : `${callerDir}/${rel}`);
}

/** True when a cleaned path leaves the archive (`..` or `../x`). */
export function isOutsideArchive(cleaned: string): boolean {
  return cleaned === '..' || cleaned.startsWith('../');
}
