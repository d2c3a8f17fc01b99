/**
 * Provider source addresses and module source addresses, parsed the way Terraform does
 * (hashicorp/terraform internal/addrs/provider.go `ParseProviderSourceString` and
 * internal/addrs/module_source.go `ParseModuleSource`), checked against `terraform providers` 1.11.
 */
import type { Engine, ModuleSourceKind } from '../model';

export const TERRAFORM_REGISTRY_HOST = 'registry.terraform.io';
export const OPENTOFU_REGISTRY_HOST = 'registry.opentofu.org';
/** The built-in provider that `terraform_remote_state` belongs to; never installed, never locked. */
export const BUILTIN_TERRAFORM_PROVIDER = 'terraform.io/builtin/terraform';

export function defaultRegistryHost(engine: Engine): string {
  return engine === 'opentofu' ? OPENTOFU_REGISTRY_HOST : TERRAFORM_REGISTRY_HOST;
}

export type ProviderSourceResult = { ok: true; source: string } | { ok: false; error: string };

// Letters and digits of any script plus dashes, no leading or trailing dash (Terraform applies IDNA
// rules to each part; this is the practical subset: a part that passes here passes there).
const PROVIDER_PART = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?$/u;

function providerPart(part: string, what: string, raw: string): string | { error: string } {
  const normalized = part.normalize('NFC').toLowerCase();
  if (!PROVIDER_PART.test(normalized)) {
    return {
      error: `invalid provider ${what} "${part}" in source "${raw}": must contain only letters, digits, and dashes, and may not use leading or trailing dashes`,
    };
  }
  return normalized;
}

function hostPart(part: string, raw: string): string | { error: string } {
  let host = part.normalize('NFC').toLowerCase();
  const colon = host.lastIndexOf(':');
  let port = '';
  if (colon !== -1) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
    if (!/^[0-9]{1,5}$/.test(port) || Number(port) > 65535) {
      return { error: `invalid provider source hostname "${part}" in source "${raw}": invalid port` };
    }
    if (port === '443') port = '';
  }
  const labels = host.split('.');
  for (const label of labels) {
    if (label.startsWith('xn--')) {
      return {
        error: `invalid provider source hostname "${part}" in source "${raw}": hostname label "${label}" specified in punycode format; service hostnames must be given in unicode`,
      };
    }
    if (!PROVIDER_PART.test(label)) {
      return { error: `invalid provider source hostname "${part}" in source "${raw}"` };
    }
  }
  return port === '' ? host : `${host}:${port}`;
}

/**
 * Normalizes a `required_providers` `source` to `HOST/NAMESPACE/TYPE`: one part is a type in the
 * `hashicorp` namespace, two parts get the engine's default registry host, three parts carry their
 * own host. Namespace and type are lowercased, the hostname is lowercased and loses a `:443` port.
 */
export function parseProviderSource(raw: string, engine: Engine): ProviderSourceResult {
  const parts = raw.split('/');
  if (raw === '' || parts.length > 3) {
    return {
      ok: false,
      error: `invalid provider source string "${raw}": must be in the format "[hostname/][namespace/]name"`,
    };
  }
  let host = defaultRegistryHost(engine);
  let namespace = 'hashicorp';
  if (parts.length === 3) {
    const h = hostPart(parts[0] as string, raw);
    if (typeof h !== 'string') return { ok: false, error: h.error };
    host = h;
  }
  if (parts.length >= 2) {
    const ns = providerPart(parts[parts.length - 2] as string, 'namespace', raw);
    if (typeof ns !== 'string') return { ok: false, error: ns.error };
    namespace = ns;
  }
  const type = providerPart(parts[parts.length - 1] as string, 'type', raw);
  if (typeof type !== 'string') return { ok: false, error: type.error };
  if (type.startsWith('terraform-provider-')) {
    return {
      ok: false,
      error: `invalid provider type "${type}" in source "${raw}": the prefix "terraform-provider-" is not part of the provider type`,
    };
  }
  return { ok: true, source: `${host}/${namespace}/${type}` };
}

/**
 * The provider Terraform assumes for a local name that `required_providers` does not declare:
 * `hashicorp/NAME` on the engine's registry, except `terraform`, which is the built-in provider.
 */
export function impliedProviderSource(name: string, engine: Engine): string {
  if (name === 'terraform') return BUILTIN_TERRAFORM_PROVIDER;
  return `${defaultRegistryHost(engine)}/hashicorp/${name}`;
}

/** Whether `name` can be a provider type (letters, digits, dashes; no leading or trailing dash). */
export function isValidProviderName(name: string): boolean {
  return PROVIDER_PART.test(name);
}

/**
 * The provider local name a resource type implies: the text before the first `_`, lowercased
 * (`aws_instance` → `aws`; `null` → `null`), as Terraform's `Resource.ImpliedProvider`.
 */
export function impliedProviderName(resourceType: string): string {
  const under = resourceType.indexOf('_');
  return (under === -1 ? resourceType : resourceType.slice(0, under)).toLowerCase();
}

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
