/**
 * Provider source addresses, parsed the way Terraform does (hashicorp/terraform
 * internal/addrs/provider.go `ParseProviderSourceString`, `ImpliedProviderForUnqualifiedType`,
 * `IsBuiltIn`), checked against `terraform providers` 1.11. The one place that decides what a
 * provider address is, how it is shortened for messages and whether it is built in.
 */
import type { Engine } from '../model';

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
// A namespace may also hold underscores between its letters and digits: Terraform 1.16
// (hashicorp/terraform 48a878091e, #38894, ".changes/v1.16/BUG FIXES-20260721-105245.yaml") parses
// namespaces with terraform-registry-address v0.5.0's `ParseProviderNamespace`, so HCP Terraform
// organizations such as `my_org` can publish private providers; provider *types* are still parsed
// with `ParseProviderPart` (no underscores: they name resource type prefixes).
const PROVIDER_NAMESPACE = /^[\p{L}\p{N}](?:[\p{L}\p{N}_-]*[\p{L}\p{N}])?$/u;

function providerPart(part: string, what: 'namespace' | 'type', raw: string): string | { error: string } {
  const normalized = part.normalize('NFC').toLowerCase();
  const namespace = what === 'namespace';
  // `ParseProviderPart` rejects consecutive dashes ("cannot use multiple consecutive dashes"), which
  // also keeps out the punycode prefix `xn--`.
  if (normalized.includes('--')) {
    return {
      error: `invalid provider ${what} "${part}" in source "${raw}": cannot use multiple consecutive dashes`,
    };
  }
  if (!(namespace ? PROVIDER_NAMESPACE : PROVIDER_PART).test(normalized)) {
    return {
      error: namespace
        ? `invalid provider namespace "${part}" in source "${raw}": must contain only letters, digits, dashes and underscores, and may not use leading or trailing dashes or underscores`
        : `invalid provider type "${part}" in source "${raw}": must contain only letters, digits, and dashes, and may not use leading or trailing dashes`,
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
  // terraform-registry-address `ParseProviderSource`: any "terraform-" prefix is redundant and refused.
  if (type.startsWith('terraform-')) {
    return {
      ok: false,
      error: `invalid provider type "${type}" in source "${raw}": the prefix "terraform-" is redundant and not allowed in a provider type`,
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

/** Namespace of Terraform's built-in providers (`terraform.io/builtin/NAME`), as `IsBuiltIn`. */
const BUILTIN_PREFIX = 'terraform.io/builtin/';

/** Whether a normalized source is a built-in provider: never installed, never locked. */
export function isBuiltinProviderSource(source: string): boolean {
  return source.toLowerCase().startsWith(BUILTIN_PREFIX);
}

/**
 * A source as messages show it, the way Terraform's `ForDisplay` does: the default registry host
 * left out (`registry.terraform.io/hashicorp/aws` → `hashicorp/aws`), any other host kept. With an
 * engine, only that engine's registry is the default (so in a repository with Terraform and OpenTofu
 * lock files two messages never name different providers the same way); without one, both public
 * registries are. Hosts compare case-insensitively.
 */
export function shortSource(source: string, engine?: Engine): string {
  const memo = SHORT[engine ?? 'any'];
  let short = memo.get(source);
  if (short === undefined) {
    short = computeShortSource(source, engine);
    if (memo.size >= 4096) memo.clear();
    memo.set(source, short);
  }
  return short;
}

/** `shortSource` results per engine (rules and reports ask for the same few addresses often). */
const SHORT: Record<Engine | 'any', Map<string, string>> = {
  terraform: new Map(),
  opentofu: new Map(),
  any: new Map(),
};

function computeShortSource(source: string, engine?: Engine): string {
  const parts = source.split('/');
  if (parts.length !== 3) return source;
  const host = (parts[0] as string).toLowerCase();
  const defaults =
    engine === undefined ? [TERRAFORM_REGISTRY_HOST, OPENTOFU_REGISTRY_HOST] : [defaultRegistryHost(engine)];
  return defaults.includes(host) ? parts.slice(1).join('/') : source;
}
