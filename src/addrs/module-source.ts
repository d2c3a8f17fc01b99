/**
 * Module source addresses, classified the way Terraform does (hashicorp/terraform
 * internal/addrs/module_source.go `ParseModuleSource`): local paths, registry addresses, remote
 * (go-getter) sources; checked against `terraform get` 1.11.
 */
import type { ModuleSourceKind } from './types';

const LOCAL_PREFIXES = ['./', '../', '.\\', '..\\'];
const REGISTRY_NAME = /^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?$/;
const REGISTRY_TARGET_SYSTEM = /^[0-9a-z]{1,64}$/;

export function isLocalModuleSource(raw: string): boolean {
  return LOCAL_PREFIXES.some((p) => raw.startsWith(p));
}

/**
 * The one reading of go-getter's `//subdir` suffix, as Terraform does it for every module source
 * (registry, git, HTTP, ...): hashicorp/terraform internal/getmodules `SplitPackageSubdir` and
 * terraform-registry-address `splitPackageSubdir`, both go-getter's `SourceDirSubdir` followed by
 * Go's `path.Clean` of a non-empty subdirectory.
 *
 * - Only the part before the first `?` is searched, after any `scheme://`: a `//` (or `://`) in the
 *   query is part of the query (`repo.git?ref=v1//sub` is the ref `v1//sub`, no subdirectory);
 * - a query written after the subdirectory belongs to the package (`repo.git//sub?ref=v1` is the
 *   package `repo.git?ref=v1`, subdirectory `sub`);
 * - the subdirectory is cleaned (`a//b/` → `a/b`, `./sub` → `sub`, `a/../b` → `b`); a rooted one
 *   (`repo.git///sub`) lands in the package all the same (Terraform joins it to the package's
 *   directory), so it is given relative; `''` when there is none or it is the package root.
 *
 * Checked with `terraform get` 1.11 on `git::file://` sources (test/addrs/module-source-oracle.test.ts):
 * it prints the package it downloads and the directory it installs.
 */
export function splitPackageSubdir(raw: string): { pkg: string; subdir: string } {
  const q = raw.indexOf('?');
  const stop = q === -1 ? raw.length : q;
  const scheme = raw.slice(0, stop).indexOf('://');
  const offset = scheme === -1 ? 0 : scheme + 3;
  const sub = raw.slice(offset, stop).indexOf('//');
  if (sub === -1) return { pkg: raw, subdir: '' };
  const at = offset + sub;
  let subdir = raw.slice(at + 2);
  let pkg = raw.slice(0, at);
  const query = subdir.indexOf('?');
  if (query !== -1) {
    pkg += subdir.slice(query);
    subdir = subdir.slice(0, query);
  }
  return { pkg, subdir: cleanSubdir(subdir) };
}

/** Go's `path.Clean` of a package subdirectory, made relative to the package (`''` for its root). */
function cleanSubdir(subdir: string): string {
  if (subdir === '') return '';
  // A rooted path cannot climb above its root: `/../x` is `/x`.
  const cleaned = subdir.startsWith('/')
    ? cleanRelativePath(subdir).replace(/^(?:\.\.(?:\/|$))+/, '')
    : cleanRelativePath(subdir);
  return cleaned === '.' ? '' : cleaned;
}

function isRegistryModuleSource(raw: string): boolean {
  const { pkg } = splitPackageSubdir(raw);
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
  if (isCleanRelativePath(p)) return p;
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

/** True when `p` is already clean and relative (`cleanRelativePath` returns it unchanged): not
 * empty, no leading or trailing `/`, and no segment that is empty, `.` or `..`. A check without
 * allocation, for the paths that are clean already (most of them). */
export function isCleanRelativePath(p: string): boolean {
  if (p === '') return false;
  let start = 0;
  for (let i = 0; i <= p.length; i++) {
    if (i < p.length && p.charCodeAt(i) !== 0x2f /* / */) continue;
    const len = i - start;
    if (len === 0) return false;
    if (
      p.charCodeAt(start) === 0x2e /* . */ &&
      (len === 1 || (len === 2 && p.charCodeAt(start + 1) === 0x2e))
    )
      return false;
    start = i + 1;
  }
  return true;
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

/**
 * The go-getter installation method Terraform uses for a remote module package (the getters of
 * hashicorp/terraform internal/getmodules): `git`, `hg` (Mercurial), `http` (plain or archive
 * download; also `https`), `s3`, `gcs`, `file` (an absolute path); and OpenTofu's `oci` (1.10+:
 * `oci://REGISTRY/REPOSITORY[//subdir][?tag=NAME|?digest=ALGORITHM:HEX]`, an artifact of an OCI
 * Distribution registry, tag `latest` when neither is given; opentofu/opentofu
 * website/docs/language/modules/sources.mdx, "OCI Distribution Repository"). Terraform has no `oci`
 * getter and rejects such a source.
 */
export type ModuleGetter = 'git' | 'hg' | 'http' | 's3' | 'gcs' | 'file' | 'oci';

const GETTERS: Readonly<Record<string, ModuleGetter>> = {
  git: 'git',
  hg: 'hg',
  http: 'http',
  https: 'http',
  s3: 's3',
  gcs: 'gcs',
  file: 'file',
  oci: 'oci',
};

/** A remote (go-getter) module source, as Terraform reads it to install the package. */
export interface RemoteModuleSource {
  /**
   * The getter Terraform picks: the forced `X::` prefix, else the URL scheme, else the shorthand
   * detectors (`github.com/…`, `git@host:…`, `bitbucket.org/…`, GCS and S3 hosts, `/abs/path`).
   * Null when Terraform has no getter for it (`terraform init` rejects the address).
   */
  getter: ModuleGetter | null;
  /** The package address as written, without the `//subdir` (a query written after it moved back). */
  pkg: string;
  subdir: string;
  /** The package's query parameters, decoded as Go's `url.ParseQuery`; the first value of each key. */
  query: ReadonlyMap<string, string>;
}

const FORCED = /^([A-Za-z0-9]+)::(.+)$/;
/** Go's `url.getScheme`: a letter, then letters, digits, `+`, `-`, `.`, up to the first `:`. */
const URL_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** go-getter's SCP-like SSH form `user@host:path` (detectGit requires the user `git`). */
const SCP_LIKE = /^(?:([^@]+)@)?([^:]+):\/?(.+)$/;

/** Go's `url.ParseQuery` (`;` is not a separator since Go 1.17; a pair that fails is dropped). */
function parseQuery(raw: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of raw.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    let key: string;
    let value: string;
    try {
      key = decodeURIComponent(rawKey.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      continue;
    }
    if (!out.has(key)) out.set(key, value);
  }
  return out;
}

/**
 * The getter go-getter's detectors (`detectRemoteSourceShorthands`, in Terraform's order) give a
 * scheme-less address; null where a detector rejects it or none claims it.
 */
function detectedGetter(src: string): ModuleGetter | null {
  if (src.startsWith('github.com/'))
    return (src.split('?')[0] as string).split('/').length >= 3 ? 'git' : null;
  const scp = SCP_LIKE.exec(src);
  if (scp !== null && scp[1] === 'git') return 'git';
  if (src.startsWith('bitbucket.org/')) return 'git';
  if (src.includes('googleapis.com/')) return src.split('/').length >= 5 ? 'gcs' : null;
  if (src.includes('.amazonaws.com/')) {
    const host = (src.split('/')[0] as string).split('.');
    const ok = host.length === 3 || host.length === 4 || (host.length === 5 && host[1] === 's3');
    return ok ? 's3' : null;
  }
  if (src.startsWith('/')) return 'file';
  return null;
}

/**
 * Reads a remote module source address (neither local nor registry: `classifyModuleSource` says
 * `remote`) the way Terraform does before it downloads it: forced getter, `//subdir`, URL scheme or
 * shorthand detector, query parameters. Null for any other address.
 */
export function parseRemoteModuleSource(raw: string): RemoteModuleSource | null {
  if (classifyModuleSource(raw) !== 'remote') return null;
  const forced = FORCED.exec(raw);
  const rest = forced === null ? raw : (forced[2] as string);
  const { pkg: body, subdir } = splitPackageSubdir(rest);
  const q = body.indexOf('?');
  const query = parseQuery(q === -1 ? '' : body.slice(q + 1));
  let getter: ModuleGetter | null;
  if (forced !== null) {
    // OpenTofu's OCI sources are written with the `oci://` scheme only.
    const named = GETTERS[forced[1] as string] ?? null;
    getter = named === 'oci' ? null : named;
  } else {
    const scheme = URL_SCHEME.exec(body);
    getter = scheme !== null ? (GETTERS[(scheme[1] as string).toLowerCase()] ?? null) : detectedGetter(body);
  }
  return { getter, pkg: forced === null ? body : `${forced[1] as string}::${body}`, subdir, query };
}

/**
 * A Terragrunt `terraform { source = "tfr://…" }` (Terragrunt 0.31.5+, gruntwork-io/terragrunt
 * internal/tfr/getter.go): `tfr://REGISTRY/NAMESPACE/NAME/SYSTEM[//subdir]?version=VERSION`, or
 * `tfr:///NAMESPACE/NAME/SYSTEM…` for the default registry (Terragrunt's `TG_TF_DEFAULT_REGISTRY_HOST`,
 * else registry.terraform.io under Terraform and registry.opentofu.org under OpenTofu). Read as the
 * registry module it downloads: `source` a registry address (without a host for the default
 * registry, so the engine's default applies) and `version` the `version` query (which Terragrunt
 * requires, exactly once). Null when it is not such an address.
 */
export function parseTerragruntRegistrySource(
  raw: string,
): { source: string; version: string | null } | null {
  const m = /^tfr:\/\/([^/?#]*)(\/[^?#]*)(?:\?([^#]*))?$/i.exec(raw.trim());
  if (m === null) return null;
  const host = (m[1] as string).toLowerCase();
  const { pkg, subdir } = splitPackageSubdir(m[2] as string);
  const segments = pkg.split('/').filter((s) => s !== '');
  if (segments.length !== 3) return null;
  const address = `${host === '' ? '' : `${host}/`}${segments.join('/')}${subdir === '' ? '' : `//${subdir}`}`;
  if (classifyModuleSource(address) !== 'registry') return null;
  const query = m[3] === undefined ? [] : m[3].split('&').filter((p) => p.startsWith('version='));
  let version: string | null = null;
  if (query.length === 1) {
    try {
      version = decodeURIComponent((query[0] as string).slice('version='.length).replace(/\+/g, ' '));
    } catch {
      version = null;
    }
  }
  return { source: address, version };
}
