/**
 * Remote module source addresses, read the way Terraform reads them (hashicorp/terraform
 * internal/addrs/module_source.go and go-getter's detectors), for what remote resolution needs:
 *
 * - registry addresses `[HOST/]NAMESPACE/NAME/SYSTEM[//SUBDIR]` (the engine's registry by default);
 * - git sources on GitHub and GitLab (`github.com/o/r`, `git::https://github.com/o/r.git`,
 *   `git@github.com:o/r.git`, `git::ssh://git@gitlab.com/g/r.git`, `?ref=`), fetched as the host's
 *   archive of that ref (`/o/r/archive/REF.tar.gz`, `/g/r/-/archive/REF/r-REF.tar.gz`);
 * - HTTP(S) archives (`https://host/x.zip`, `.tar.gz`, `.tgz`, `?archive=`), with go-getter's
 *   `?checksum=[TYPE:]HEX` (md5, sha1, sha256, sha512; the type guessed from the length when not
 *   named), taken off the URL and checked against what is downloaded;
 * - anything else (other git hosts, `git::file://`, `hg::`, `s3::`, `gcs::`, Bitbucket, plain HTTP
 *   pages) is recorded and never fetched.
 *
 * `//SUBDIR` is split off by `addrs`' `splitPackageSubdir`, the one reading of it that the rules
 * share: the first `//` after the scheme and before the query separates the package from the
 * directory inside it; a query written after the subdirectory belongs to the package.
 */
import { classifyModuleSource, defaultRegistryHost, splitPackageSubdir } from '../../addrs';
import type { Engine } from '../../model';

export interface RegistryModuleAddress {
  kind: 'registry';
  host: string;
  namespace: string;
  name: string;
  system: string;
  /** Directory inside the package, cleaned (`'.'` for the package root). */
  subdir: string;
}

/** A package fetched as one archive over HTTP(S). */
export interface ArchivePackage {
  kind: 'archive';
  /** The host whose permission the download needs (the git host for git sources). */
  host: string;
  /** What the package is, for messages and cache keys (`git::https://github.com/o/r.git?ref=v1`). */
  address: string;
  /** The download URL when the host is not mapped to another base URL. */
  url: string;
  /** The ref for git sources (null: the default branch), else null. */
  ref: string | null;
  /** The download URL's path and query, appended to the operator's base URL for the host. */
  path: string;
  /** Git host archives wrap the tree in one top directory (`r-v1/`), which is stripped. */
  stripTopDirectory: boolean;
  subdir: string;
  /** An HTTP archive's `?checksum=` (go-getter), which the download must match; else null. */
  checksum: ArchiveChecksum | null;
}

export interface ArchiveChecksum {
  type: 'md5' | 'sha1' | 'sha256' | 'sha512';
  /** Lower-case hex. */
  hex: string;
}

const CHECKSUM_LENGTHS: Readonly<Record<number, ArchiveChecksum['type']>> = {
  32: 'md5',
  40: 'sha1',
  64: 'sha256',
  128: 'sha512',
};

/** go-getter's `checksum` parameter (`TYPE:HEX`, or `HEX` typed by its length); a reason when it is
 * not one tfguard can check. */
export function parseChecksum(raw: string): ArchiveChecksum | { error: string } {
  const colon = raw.indexOf(':');
  const type = colon === -1 ? null : raw.slice(0, colon).toLowerCase();
  const hex = (colon === -1 ? raw : raw.slice(colon + 1)).toLowerCase();
  if (type === 'file') return { error: 'checksum files (checksum=file:...) are not fetched' };
  if (!/^[0-9a-f]+$/.test(hex)) return { error: `the checksum "${raw}" is not hexadecimal` };
  const byLength = CHECKSUM_LENGTHS[hex.length];
  if (type === null) {
    if (byLength === undefined) return { error: `the checksum "${raw}" has no type and an unknown length` };
    return { type: byLength, hex };
  }
  if (!(Object.values(CHECKSUM_LENGTHS) as string[]).includes(type)) {
    return { error: `checksums of type "${type}" are not supported (md5, sha1, sha256, sha512)` };
  }
  if (byLength !== type) return { error: `the ${type} checksum "${hex}" has the wrong length` };
  return { type: type as ArchiveChecksum['type'], hex };
}

export interface UnsupportedSource {
  kind: 'unsupported';
  reason: string;
}

export type RemotePackage = ArchivePackage | UnsupportedSource;

/** The package and its subdirectory (`'.'` for the package root), split as Terraform splits every
 * module source: the one implementation in `addrs` (go-getter's `SourceDirSubdir` + `path.Clean`). */
export function packageAndDir(raw: string): { pkg: string; subdir: string } {
  const { pkg, subdir } = splitPackageSubdir(raw);
  return { pkg, subdir: subdir === '' ? '.' : subdir };
}

/** A registry source, normalized; null when `raw` is not a registry address. */
export function parseRegistrySource(raw: string, engine: Engine): RegistryModuleAddress | null {
  if (classifyModuleSource(raw) !== 'registry') return null;
  const { pkg, subdir } = packageAndDir(raw);
  const parts = pkg.split('/');
  const host = parts.length === 4 ? (parts.shift() as string).toLowerCase() : defaultRegistryHost(engine);
  const [namespace, name, system] = parts as [string, string, string];
  return {
    kind: 'registry',
    host: host.replace(/:443$/, ''),
    namespace: namespace.toLowerCase(),
    name: name.toLowerCase(),
    system: system.toLowerCase(),
    subdir,
  };
}

/** `registry.terraform.io/ns/name/system`, with `//subdir` when it has one. */
export function registryAddress(a: RegistryModuleAddress, withSubdir = true): string {
  const base = `${a.host}/${a.namespace}/${a.name}/${a.system}`;
  return withSubdir && a.subdir !== '.' ? `${base}//${a.subdir}` : base;
}

const ARCHIVE_EXTENSIONS = ['.tar.gz', '.tgz', '.tar', '.zip', '.tar.bz2', '.tbz2', '.tar.xz', '.txz'];
const READABLE_ARCHIVES = new Set(['tar.gz', 'tgz', 'tar', 'zip']);

function unsupported(reason: string): UnsupportedSource {
  return { kind: 'unsupported', reason };
}

/** The `ref` query parameter and the rest of the query of a git URL. */
function refOf(url: URL): { ref: string | null; other: string[] } {
  const other: string[] = [];
  let ref: string | null = null;
  for (const [k, v] of url.searchParams) {
    if (k === 'ref') ref = v;
    else other.push(k);
  }
  return { ref, other };
}

/** What git's `check-ref-format` refuses in a ref name and a download of an archive would read
 * otherwise (`v1//sub`: a `//` in the query is part of the ref, not a subdirectory). */
function validRefName(ref: string): boolean {
  if (ref === '' || ref.startsWith('/') || ref.endsWith('/') || ref.endsWith('.')) return false;
  if (ref.includes('//') || ref.includes('..') || ref.includes('@{')) return false;
  return ref.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'));
}

/** A git repository on GitHub or GitLab, fetched as the host's archive of the ref. */
function gitHostArchive(host: string, repoPath: string, ref: string | null, subdir: string): RemotePackage {
  const clean = repoPath
    .replace(/^\/+/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  const segments = clean.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..' || !/^[A-Za-z0-9._-]+$/.test(s))) {
    return unsupported(`"${repoPath}" is not a repository path tfguard can download`);
  }
  if (ref !== null && !validRefName(ref)) {
    return unsupported(
      `the ref "${ref}" is not a valid git ref name (git check-ref-format), so terraform init cannot check it out`,
    );
  }
  if (ref !== null && !/^[A-Za-z0-9._/+-]+$/.test(ref)) {
    return unsupported(`the ref "${ref}" cannot be downloaded as an archive`);
  }
  const r = ref ?? 'HEAD';
  const address = `git::https://${host}/${clean}.git${ref === null ? '' : `?ref=${ref}`}`;
  // The archive of the ref that each host serves (codeload-style URLs, no API token needed).
  let path: string;
  const refPath = r.split('/').map(encodeURIComponent).join('/');
  if (host === 'github.com') {
    if (segments.length !== 2) return unsupported(`"${clean}" is not a GitHub owner/repository`);
    path = `/${clean}/archive/${refPath}.tar.gz`;
  } else if (host === 'gitlab.com') {
    if (segments.length < 2) return unsupported(`"${clean}" is not a GitLab group/project`);
    const project = segments[segments.length - 1] as string;
    const flat = r.replace(/\//g, '-');
    path = `/${clean}/-/archive/${refPath}/${project}-${encodeURIComponent(flat)}.tar.gz`;
  } else {
    return unsupported(
      `git host ${host} offers no archive download tfguard knows (only github.com and gitlab.com are downloaded)`,
    );
  }
  return {
    kind: 'archive',
    host,
    address,
    url: `https://${host}${path}`,
    ref,
    path,
    stripTopDirectory: true,
    subdir,
    checksum: null,
  };
}

/**
 * How a non-registry source is fetched, or why it is not. Relative to nothing: local sources are
 * not remote packages.
 */
export function parseRemotePackage(raw: string): RemotePackage {
  const { pkg, subdir } = packageAndDir(raw.trim());
  if (subdir.startsWith('..')) return unsupported(`the subdirectory "${subdir}" leaves the package`);
  const forced = /^([A-Za-z0-9]+)::(.*)$/.exec(pkg);
  const getter = forced?.[1]?.toLowerCase() ?? null;
  let rest = forced?.[2] ?? pkg;
  if (getter !== null && getter !== 'git' && getter !== 'http' && getter !== 'https') {
    return unsupported(`"${getter}::" sources are not fetched`);
  }
  // go-getter's GitHub detector and scp-like git addresses.
  if (/^github\.com\//i.test(rest)) rest = `https://${rest}`;
  const scp = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+):(?!\/\/)(.+)$/.exec(rest);
  if (scp !== null) rest = `ssh://${scp[1]}@${scp[2]}/${scp[3]}`;
  if (/^bitbucket\.org\//i.test(rest)) return unsupported('Bitbucket sources are not fetched');
  let url: URL;
  try {
    url = new URL(rest);
  } catch {
    return unsupported(`"${raw}" is not a source tfguard can fetch`);
  }
  const host = url.hostname.toLowerCase();
  if (url.protocol === 'oci:') return unsupported('OCI registry sources (OpenTofu 1.10+) are not fetched');
  if (url.protocol === 'file:')
    return unsupported('file:// sources name files on the machine that runs init');
  if (url.username !== '' && url.protocol !== 'ssh:')
    return unsupported('sources with credentials are not fetched');
  const isGit =
    getter === 'git' ||
    url.protocol === 'ssh:' ||
    url.pathname.endsWith('.git') ||
    /^https?:\/\/github\.com\//i.test(rest);
  if (isGit) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:' && url.protocol !== 'ssh:') {
      return unsupported(`git over ${url.protocol.replace(/:$/, '')} is not fetched`);
    }
    const { ref, other } = refOf(url);
    if (other.length > 0)
      return unsupported(`git options ${other.map((o) => `"${o}"`).join(', ')} are not supported`);
    return gitHostArchive(host, url.pathname, ref, subdir);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return unsupported(`${url.protocol.replace(/:$/, '')} sources are not fetched`);
  }
  const archiveParam = url.searchParams.get('archive');
  const ext = ARCHIVE_EXTENSIONS.find((e) => url.pathname.toLowerCase().endsWith(e));
  const kind = archiveParam ?? ext?.slice(1) ?? null;
  if (kind === null) {
    return unsupported('an HTTP source that is not an archive (.zip, .tar.gz, .tgz, .tar) is not fetched');
  }
  if (!READABLE_ARCHIVES.has(kind.toLowerCase())) return unsupported(`${kind} archives are not read`);
  if (archiveParam !== null) url.searchParams.delete('archive');
  // The address keeps the checksum (it is part of what the package is); the download URL does not
  // (go-getter takes it off before the request).
  const address = url.href;
  let checksum: ArchiveChecksum | null = null;
  const checksumParam = url.searchParams.get('checksum');
  if (checksumParam !== null) {
    const parsed = parseChecksum(checksumParam);
    if ('error' in parsed) return unsupported(parsed.error);
    checksum = parsed;
    url.searchParams.delete('checksum');
  }
  return {
    kind: 'archive',
    host: url.host.toLowerCase(),
    address,
    url: url.href,
    ref: null,
    path: `${url.pathname}${url.search}`,
    stripTopDirectory: false,
    subdir,
    checksum,
  };
}

/** The URL a package is downloaded from: under the operator's base URL for its host, if it maps
 * one, else the package's own URL. */
export function archiveUrl(p: ArchivePackage, base: string | undefined): URL {
  return base === undefined ? new URL(p.url) : new URL(`${base.replace(/\/+$/, '')}${p.path}`);
}
