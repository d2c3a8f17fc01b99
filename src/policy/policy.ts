/**
 * The organisation's policy file: which providers, versions, registry hosts, module
 * sources and lock-file platforms are allowed, and the exceptions granted to repositories. One HCL
 * file per organisation, parsed with tfguard's own HCL parser; docs/policy.md describes it.
 *
 * ```hcl
 * provider "hashicorp/aws" {
 *   versions = ">= 5.40, < 7.0"
 * }
 * provider "hashicorp/template" {
 *   deny   = true
 *   reason = "archived upstream; use templatefile()"
 * }
 * allowed_registries = ["registry.terraform.io", "registry.opentofu.org"]
 * module_sources     = ["terraform-aws-modules/*", "git::https://github.com/acme/*"]
 * required_platforms = ["linux_amd64", "darwin_arm64"]
 * exception {
 *   repository = "acme/legacy"
 *   rule       = "policy-provider-version"
 *   provider   = "hashicorp/aws"
 *   reason     = "migration planned for Q1"
 *   expires    = "2027-03-31"
 * }
 * ```
 *
 * Anything the file gets wrong (an unknown block or argument, a bad constraint or date, an exception
 * without reason or expiry) rejects it with `InputError('invalid-policy')` naming the file and
 * line: a policy is never applied in part. This module only reads and matches; the `policy-*`
 * rules (src/rules) judge.
 */
import {
  OPENTOFU_REGISTRY_HOST,
  TERRAFORM_REGISTRY_HOST,
  isLocalModuleSource,
  parseProviderSource,
} from '../addrs';
import { ConstraintSyntaxError, parseConstraints, type Constraint } from '../constraints';
import { InputError } from '../errors';
import type { HclAttribute, HclBlock, ParseResult } from '../hcl';

/** The rule ids of the policy (`policy-*`): an exception names one of them. */
export const POLICY_RULE_IDS: readonly string[] = Object.freeze([
  'policy-provider-denied',
  'policy-provider-version',
  'policy-registry-denied',
  'policy-module-source',
  'policy-platform-missing',
  'policy-exception-expired',
]);

/** A provider as the policy names it: `NAMESPACE/TYPE` (either public registry) or `HOST/NAMESPACE/TYPE`. */
export interface ProviderPattern {
  /** As written. */
  text: string;
  /** Lower-case host, or null when the policy gave none (then both public registries match). */
  host: string | null;
  /** Lower-case `NAMESPACE/TYPE`. */
  name: string;
}

export interface PolicyProvider {
  pattern: ProviderPattern;
  /** `versions`: the allowed range, as written and parsed; null when the block sets none. */
  versions: { text: string; constraints: Constraint[] } | null;
  deny: boolean;
  /** `reason` (required with `deny = true`). */
  reason: string | null;
  line: number;
}

export interface PolicyException {
  /** Repository glob (`acme/*`). */
  repository: string;
  rule: string;
  provider: ProviderPattern | null;
  reason: string;
  /** `YYYY-MM-DD`: the last day the exception applies (UTC). */
  expires: string;
  line: number;
}

export interface Policy {
  /** The file's name as the user gave it (`--policy FILE`, or the service's `s3://bucket/key`). */
  file: string;
  providers: PolicyProvider[];
  /** Allowed provider hosts (lower case); null: not restricted. */
  allowedRegistries: string[] | null;
  /** Allowed module source globs; null: not restricted. */
  moduleSources: string[] | null;
  requiredPlatforms: string[];
  exceptions: PolicyException[];
}

/** What a scan checks against a policy. */
export interface PolicyInput {
  policy: Policy;
  /** The repository the scan is for (`owner/name`), matched against exceptions' globs; null: unknown
   * (then no exception applies, and expired ones are not reported). */
  repository: string | null;
  /** Today (UTC, `YYYY-MM-DD`), for exception expiry. */
  today: string;
}

/** `YYYY-MM-DD` of `date` in UTC. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function fail(file: string, line: number | null, message: string): never {
  const where = line === null ? file : `${file}:${line}`;
  throw new InputError('invalid-policy', `policy ${where}: ${message}`, { entry: file });
}

function stringValue(file: string, attr: HclAttribute): string {
  if (typeof attr.value !== 'string') fail(file, attr.line, `"${attr.name}" must be a string`);
  if (/\$\{|%\{/.test(attr.value))
    fail(file, attr.line, `"${attr.name}" must be a literal string, not a template or reference`);
  return attr.value;
}

function stringList(file: string, attr: HclAttribute): string[] {
  if (!Array.isArray(attr.value) || attr.value.some((v) => typeof v !== 'string' || /\$\{|%\{/.test(v))) {
    fail(file, attr.line, `"${attr.name}" must be a list of literal strings`);
  }
  return attr.value as string[];
}

const PLATFORM = /^[a-z0-9]+_[a-z0-9]+$/;
const HOST = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A provider address of the policy: `[HOST/]NAMESPACE/TYPE`. */
function providerPattern(file: string, line: number, text: string): ProviderPattern {
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3) {
    fail(file, line, `provider "${text}" must be written NAMESPACE/TYPE or HOST/NAMESPACE/TYPE`);
  }
  const parsed = parseProviderSource(text, 'terraform');
  if (!parsed.ok) fail(file, line, parsed.error);
  const full = parsed.source.toLowerCase().split('/');
  return {
    text,
    host: parts.length === 3 ? (full[0] as string) : null,
    name: `${full[1] as string}/${full[2] as string}`,
  };
}

function versionsOf(file: string, attr: HclAttribute): { text: string; constraints: Constraint[] } {
  const text = stringValue(file, attr);
  try {
    const constraints = parseConstraints(text);
    if (constraints.length === 0) fail(file, attr.line, '"versions" is empty: give the allowed range');
    return { text, constraints };
  } catch (err) {
    if (err instanceof ConstraintSyntaxError) {
      fail(file, attr.line, `"versions" is not a valid version constraint: ${err.message}`);
    }
    throw err;
  }
}

function dateOf(file: string, attr: HclAttribute): string {
  const text = stringValue(file, attr);
  const m = DATE.exec(text);
  const valid =
    m !== null &&
    (() => {
      const d = new Date(`${text}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && utcDay(d) === text;
    })();
  if (!valid)
    fail(file, attr.line, `"expires" must be a date written YYYY-MM-DD, got ${JSON.stringify(text)}`);
  return text;
}

function providerBlock(file: string, block: HclBlock): PolicyProvider {
  if (block.labels.length !== 1) {
    fail(
      file,
      block.line,
      'a provider block needs one label, the provider: provider "hashicorp/aws" { ... }',
    );
  }
  const pattern = providerPattern(file, block.line, block.labels[0] as string);
  for (const b of block.body.blocks)
    fail(file, b.line, `unexpected block "${b.type}" in provider "${pattern.text}"`);
  let versions: PolicyProvider['versions'] = null;
  let deny = false;
  let reason: string | null = null;
  for (const attr of block.body.attributes) {
    switch (attr.name) {
      case 'versions':
        versions = versionsOf(file, attr);
        break;
      case 'deny':
        if (typeof attr.value !== 'boolean') fail(file, attr.line, '"deny" must be true or false');
        deny = attr.value;
        break;
      case 'reason':
        reason = stringValue(file, attr).trim();
        if (reason === '') fail(file, attr.line, '"reason" must not be empty');
        break;
      default:
        fail(
          file,
          attr.line,
          `unknown argument "${attr.name}" in provider "${pattern.text}" (expected versions, deny or reason)`,
        );
    }
  }
  if (deny && reason === null)
    fail(file, block.line, `provider "${pattern.text}" is denied without a reason`);
  if (deny && versions !== null) {
    fail(file, block.line, `provider "${pattern.text}" is denied: "versions" would never apply`);
  }
  if (!deny && versions === null) {
    fail(file, block.line, `provider "${pattern.text}" sets neither versions nor deny = true`);
  }
  return { pattern, versions, deny, reason, line: block.line };
}

function exceptionBlock(file: string, block: HclBlock, knownRules: ReadonlySet<string>): PolicyException {
  if (block.labels.length !== 0) fail(file, block.line, 'an exception block takes no label');
  for (const b of block.body.blocks) fail(file, b.line, `unexpected block "${b.type}" in an exception`);
  const out: Partial<PolicyException> = { provider: null, line: block.line };
  for (const attr of block.body.attributes) {
    switch (attr.name) {
      case 'repository': {
        const glob = stringValue(file, attr).trim();
        if (glob === '') fail(file, attr.line, '"repository" must not be empty');
        out.repository = glob;
        break;
      }
      case 'rule': {
        const rule = stringValue(file, attr);
        if (!POLICY_RULE_IDS.includes(rule) || rule === 'policy-exception-expired' || !knownRules.has(rule)) {
          const list = POLICY_RULE_IDS.filter((r) => r !== 'policy-exception-expired').join(', ');
          fail(file, attr.line, `"rule" must be a policy rule (${list}), got ${JSON.stringify(rule)}`);
        }
        out.rule = rule;
        break;
      }
      case 'provider':
        out.provider = providerPattern(file, attr.line, stringValue(file, attr));
        break;
      case 'reason': {
        const reason = stringValue(file, attr).trim();
        if (reason === '') fail(file, attr.line, '"reason" must not be empty');
        out.reason = reason;
        break;
      }
      case 'expires':
        out.expires = dateOf(file, attr);
        break;
      default:
        fail(
          file,
          attr.line,
          `unknown argument "${attr.name}" in an exception (expected repository, rule, provider, reason and expires)`,
        );
    }
  }
  for (const required of ['repository', 'rule', 'reason', 'expires'] as const) {
    if (out[required] === undefined) fail(file, block.line, `the exception has no "${required}" (required)`);
  }
  return out as PolicyException;
}

/**
 * Reads a policy file. `knownRules`: the registered rule ids (an exception must name a policy rule
 * tfguard has). Throws `InputError('invalid-policy')` naming the file and line.
 */
export function parsePolicy(file: string, result: ParseResult, knownRules: ReadonlySet<string>): Policy {
  if (!result.ok) fail(file, result.error.line, `cannot be parsed: ${result.error.message}`);
  if (result.file.syntax !== 'hcl') fail(file, null, 'must be written in HCL native syntax');
  const body = result.file.body;
  const policy: Policy = {
    file,
    providers: [],
    allowedRegistries: null,
    moduleSources: null,
    requiredPlatforms: [],
    exceptions: [],
  };
  for (const attr of body.attributes) {
    switch (attr.name) {
      case 'allowed_registries': {
        const hosts = stringList(file, attr).map((h) => h.trim().toLowerCase());
        for (const h of hosts) if (!HOST.test(h)) fail(file, attr.line, `"${h}" is not a registry hostname`);
        policy.allowedRegistries = hosts;
        break;
      }
      case 'module_sources':
        policy.moduleSources = stringList(file, attr).map((s) => s.trim());
        if (policy.moduleSources.some((s) => s === ''))
          fail(file, attr.line, '"module_sources" has an empty glob');
        break;
      case 'required_platforms': {
        const platforms = stringList(file, attr);
        for (const p of platforms)
          if (!PLATFORM.test(p))
            fail(file, attr.line, `platform "${p}" is not of the form os_arch (e.g. linux_amd64)`);
        policy.requiredPlatforms = [...new Set(platforms)];
        break;
      }
      default:
        fail(
          file,
          attr.line,
          `unknown setting "${attr.name}" (expected allowed_registries, module_sources, required_platforms, provider and exception blocks)`,
        );
    }
  }
  for (const block of body.blocks) {
    if (block.type === 'provider') {
      const p = providerBlock(file, block);
      const twice = policy.providers.find(
        (q) => q.pattern.name === p.pattern.name && q.pattern.host === p.pattern.host,
      );
      if (twice !== undefined) {
        fail(file, block.line, `provider "${p.pattern.text}" is already set on line ${twice.line}`);
      }
      policy.providers.push(p);
    } else if (block.type === 'exception') {
      policy.exceptions.push(exceptionBlock(file, block, knownRules));
    } else {
      fail(
        file,
        block.line,
        `unknown block "${block.type}" (expected provider "<address>" { ... } or exception { ... })`,
      );
    }
  }
  return freezePolicy(policy);
}

/**
 * A parsed policy is read-only: the answers below are remembered per policy object (`answers`), so
 * a policy that changed after they were given would get stale ones. Frozen, it cannot.
 */
function freezePolicy(policy: Policy): Policy {
  for (const p of policy.providers) {
    Object.freeze(p.pattern);
    if (p.versions !== null) Object.freeze(Object.freeze(p.versions).constraints);
    Object.freeze(p);
  }
  for (const e of policy.exceptions) {
    if (e.provider !== null) Object.freeze(e.provider);
    Object.freeze(e);
  }
  Object.freeze(policy.providers);
  Object.freeze(policy.exceptions);
  if (policy.allowedRegistries !== null) Object.freeze(policy.allowedRegistries);
  if (policy.moduleSources !== null) Object.freeze(policy.moduleSources);
  Object.freeze(policy.requiredPlatforms);
  return Object.freeze(policy);
}

/**
 * What the policy rules ask of a policy, answered once per policy object and question: the CLI,
 * the bench and a warm Lambda parse the policy once and scan with it many times, and a repository
 * asks the same few questions (a handful of provider sources, module sources and constraint
 * strings) hundreds of times. One per policy object (`policyAnswers`), so a re-read policy starts
 * afresh; each map is emptied when it grows past `MAX_ANSWERS` (a policy may live for a whole
 * fleet audit). A rule takes it once and asks it for every module, call and lock entry.
 */
export class PolicyAnswers {
  private readonly providers = new Map<string, PolicyProvider | null>();
  private readonly registries = new Map<string, boolean>();
  private readonly modules = new Map<string, boolean>();

  constructor(readonly policy: Policy) {}

  /** `providerPolicy`. */
  provider(source: string): PolicyProvider | undefined {
    let rule = this.providers.get(source);
    if (rule === undefined) rule = remember(this.providers, source, blockFor(this.policy, source) ?? null);
    return rule ?? undefined;
  }

  /** Whether a provider source's host is one `allowed_registries` allows (true when it lists none). */
  registryAllowed(source: string): boolean {
    const allowed = this.policy.allowedRegistries;
    if (allowed === null) return true;
    const answer = this.registries.get(source);
    return answer ?? remember(this.registries, source, allowed.includes(providerHost(source)));
  }

  /** `moduleSourceAllowed`. */
  moduleSourceAllowed(source: string): boolean {
    if (this.policy.moduleSources === null) return true;
    const answer = this.modules.get(source);
    return answer ?? remember(this.modules, source, sourceAllowed(this.policy.moduleSources, source));
  }
}

/** What the `policy-provider-version` rule asks of one provider block's `versions` range. */
export interface RangeAnswers {
  /** Whether a locked version is inside the range, by version. */
  locked: Map<string, boolean>;
  /** Whether a constraint string admits versions outside the range, by constraint string. */
  outside: Map<string, boolean>;
  /** A constraint string narrowed into the range (`intersectConstraints`), by constraint string. */
  narrowed: Map<string, string | null>;
}

const MAX_ANSWERS = 4096;
const answerSets = new WeakMap<Policy, PolicyAnswers>();
const rangeAnswerSets = new WeakMap<PolicyProvider, RangeAnswers>();

/** The remembered answers about `policy` (see `PolicyAnswers`). */
export function policyAnswers(policy: Policy): PolicyAnswers {
  let a = answerSets.get(policy);
  if (a === undefined) {
    a = new PolicyAnswers(policy);
    answerSets.set(policy, a);
  }
  return a;
}

/** The remembered answers about a provider block's range (empty at first; fill them with `remember`). */
export function rangeAnswers(block: PolicyProvider): RangeAnswers {
  let a = rangeAnswerSets.get(block);
  if (a === undefined) {
    a = { locked: new Map(), outside: new Map(), narrowed: new Map() };
    rangeAnswerSets.set(block, a);
  }
  return a;
}

/** Records an answer (in a map of `rangeAnswers`), emptying the map when it is full. */
export function remember<T>(map: Map<string, T>, key: string, value: T): T {
  if (map.size >= MAX_ANSWERS) map.clear();
  map.set(key, value);
  return value;
}

const PUBLIC_REGISTRIES = [TERRAFORM_REGISTRY_HOST, OPENTOFU_REGISTRY_HOST];

/** Whether a provider source (`HOST/NAMESPACE/TYPE`, as the loader and lock files give it) is the
 * one `pattern` names; without a host in the pattern, on either public registry. */
export function providerMatches(pattern: ProviderPattern, source: string): boolean {
  const parts = source.toLowerCase().split('/');
  if (parts.length !== 3) return false;
  const host = parts[0] as string;
  if (`${parts[1] as string}/${parts[2] as string}` !== pattern.name) return false;
  return pattern.host === null ? PUBLIC_REGISTRIES.includes(host) : pattern.host === host;
}

/** The policy's block for a provider source: a block with a host wins over one without. */
export function providerPolicy(policy: Policy, source: string): PolicyProvider | undefined {
  return policyAnswers(policy).provider(source);
}

function blockFor(policy: Policy, source: string): PolicyProvider | undefined {
  const matching = policy.providers.filter((p) => providerMatches(p.pattern, source));
  return matching.find((p) => p.pattern.host !== null) ?? matching[0];
}

/** Whether a provider source's host is one `allowed_registries` allows (true when it lists none). */
export function registryAllowed(policy: Policy, source: string): boolean {
  return policyAnswers(policy).registryAllowed(source);
}

/** The host of a provider source, lower case. */
export function providerHost(source: string): string {
  return (source.split('/')[0] as string).toLowerCase();
}

const globCache = new Map<string, RegExp>();

/** A glob as policies write them: `*` any text (`/` included), `?` one character; case-insensitive. */
export function globMatches(glob: string, text: string): boolean {
  let re = globCache.get(glob);
  if (re === undefined) {
    const body = glob
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
      .join('');
    re = new RegExp(`^${body}$`, 'is');
    if (globCache.size > 1024) globCache.clear();
    globCache.set(glob, re);
  }
  return re.test(text);
}

/**
 * Whether a module source is allowed: local paths always; otherwise the source as written, or a
 * registry address without the public registry's host (`registry.terraform.io/acme/vpc/aws` as
 * `acme/vpc/aws`), must match one of `module_sources`. Null `module_sources`: everything is.
 */
export function moduleSourceAllowed(policy: Policy, source: string): boolean {
  return policyAnswers(policy).moduleSourceAllowed(source);
}

function sourceAllowed(globs: readonly string[], source: string): boolean {
  if (isLocalModuleSource(source)) return true;
  const forms = [source];
  const host = PUBLIC_REGISTRY_PREFIX.exec(source);
  if (host !== null) forms.push(host[2] as string);
  return globs.some((g) => forms.some((f) => globMatches(g, f)));
}

const PUBLIC_REGISTRY_PREFIX = /^(registry\.terraform\.io|registry\.opentofu\.org)\/(.*)$/i;
