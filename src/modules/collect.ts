/**
 * Turns an assembled module into the provider requirements, provider uses, provider
 * configurations, module calls and `terraform` block settings of `ModuleInfo`.
 *
 * Implied provider requirements follow `Config.addProviderRequirements` in hashicorp/terraform
 * internal/configs/config.go, checked with `terraform providers` 1.11: managed, data (including a
 * `check` block's scoped data source) and ephemeral resources, `import` blocks (their `provider`, or
 * the type of their `to` resource) and `provider` blocks imply a requirement for their local name
 * when `required_providers` does not declare one resolving to the same provider. A module call's
 * `providers` map does not. The built-in `terraform` provider (`terraform_remote_state`) is never
 * an implied requirement: it is not installed and never appears in a lock file.
 */
import { hasInterpolation, stripTemplate } from '../hcl';
import type { Engine, SourceLocation } from '../model';
import type { ModuleCall, ProviderConfig, ProviderRequirement, ProviderUse, ValueExpression } from './types';
import type { AssembledModule, RequiredProviderEntry, SrcAttr } from './assemble';
import { attr, loc } from './assemble';
import { evaluateConstant, moduleSourceRules } from './constants';
import type { ConstantScope, Evaluated } from './constants';
import { compareUtf8 } from '../archive';
import {
  isBuiltinProviderSource,
  classifyModuleSource,
  impliedProviderName,
  impliedProviderSource,
  isValidProviderName,
  parseProviderSource,
  resolveLocalTarget,
} from '../addrs';

export interface CollectedModule {
  providers: ProviderRequirement[];
  providerUses: ProviderUse[];
  providerConfigs: ProviderConfig[];
  moduleCalls: ModuleCall[];
  requiredVersions: { value: string; location: SourceLocation }[];
}

/** Where an argument's value is written (its range: the value expression, e.g. the string literal). */
function valueLocation(a: SrcAttr): SourceLocation {
  return { file: a.range.file, line: a.line, range: a.valueRange };
}

/** `"${aws.east}"` → `aws.east`; JSON gives the bare string already. */
function strip(s: string): string {
  const v = stripTemplate(s);
  return typeof v === 'string' ? v : s;
}

/** Reads a reference such as `aws.east` (HCL gives `"${aws.east}"`, JSON the bare string). */
function reference(value: unknown): { name: string; alias: string | null } | null {
  if (typeof value !== 'string') return null;
  const m = /^([A-Za-z_][A-Za-z0-9_-]*)(?:\.([A-Za-z_][A-Za-z0-9_-]*))?$/.exec(strip(value).trim());
  if (m === null) return null;
  return { name: m[1] as string, alias: m[2] ?? null };
}

/** A literal string argument; numbers and booleans are rendered as HCL would convert them. */
function literal(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

/** An argument that should be a string, as text even when it is not (a list, an object): rules then
 * report it as invalid rather than it silently disappearing. */
function text(value: unknown): string {
  return literal(value) ?? JSON.stringify(value) ?? String(value);
}

/**
 * Finds the line of `version` inside a multi-line entry (`aws = {\n source = ..\n version = ..\n}`):
 * the parser gives positions for attributes, not for keys of an object value.
 */
function versionLine(text: string[] | undefined, entry: SrcAttr): number {
  if (text === undefined || entry.endLine <= entry.line) return entry.line;
  for (let l = entry.line; l <= entry.endLine && l <= text.length; l++) {
    const src = text[l - 1] as string;
    const from = l === entry.line ? src.indexOf(entry.name) + entry.name.length : 0;
    if (/(^|[\s{,])"?version"?\s*[=:]/.test(src.slice(Math.max(from, 0)))) return l;
  }
  return entry.line;
}

/** Where the `version` of an entry is: its value's range, from the parser's object items. */
function versionLocation(entry: SrcAttr, lines: (file: string) => string[] | undefined): SourceLocation {
  const item = entry.items?.find((it) => it.key === 'version');
  if (item !== undefined) {
    return { file: entry.range.file, line: item.valueRange.start.line, range: item.valueRange };
  }
  return { file: entry.range.file, line: versionLine(lines(entry.range.file), entry) };
}

/**
 * A `version` or `source` written as an expression: evaluated over the module's constants under
 * Terraform (1.17 reads const variables and locals there); OpenTofu reads the value as written and
 * rejects it ("Variables not allowed"; opentofu/opentofu#1850 asks for the feature).
 */
function evaluateEntryValue(raw: unknown, engine: Engine, scope: ConstantScope | undefined): Evaluated {
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  if (engine === 'opentofu') {
    return {
      text,
      status: 'rejected',
      value: null,
      detail: 'OpenTofu does not evaluate variables or locals in required_providers',
      references: [],
    };
  }
  if (scope === undefined) {
    return {
      text,
      status: 'unknown',
      value: null,
      detail: "tfguard did not read this module's variables and locals",
      references: [],
    };
  }
  return evaluateConstant(raw, scope);
}

/**
 * A module block's `source` or `version`: a literal as written, or an expression evaluated as the
 * engine does during init:
 * - Terraform 1.15 reads `const = true` variables and locals there (the 1.15 release notes,
 *   https://danielmschmidt.de/posts/2026-04-29-what-s-new-in-terraform-1-15, and hashicorp/terraform
 *   internal/command/testdata/dynamic-module-sources); older releases reject any expression;
 * - OpenTofu 1.8 evaluates variables and locals early (any variable, `const = false` excluded since
 *   1.12: opentofu/opentofu website/docs/language/modules/sources.mdx "Support for Variable and
 *   Local Evaluation", website/docs/language/values/variables.mdx "Marking variable as constant").
 * A known value stands for the argument (with `expression` saying where it came from); an unknown
 * or rejected one keeps the text as written, so nothing is resolved from it, and `expression` says
 * why (the module-unresolved notice quotes it).
 */
function moduleArgument(
  a: SrcAttr,
  engine: Engine,
  scope: ConstantScope | undefined,
): { value: string | null; expression?: ValueExpression } {
  if (!hasInterpolation(a.value)) return { value: literal(a.value) };
  const ev: Evaluated =
    scope === undefined
      ? {
          text: typeof a.value === 'string' ? a.value : JSON.stringify(a.value),
          status: 'unknown',
          value: null,
          detail: "tfguard did not read this module's variables and locals",
          references: [],
        }
      : evaluateConstant(a.value, scope, moduleSourceRules(engine));
  const expression = expressionOf(ev, valueLocation(a));
  return { value: ev.status === 'known' ? ev.value : literal(a.value), expression };
}

function expressionOf(e: Evaluated, location: SourceLocation): ValueExpression {
  return { text: e.text, status: e.status, detail: e.detail, references: e.references, location };
}

/** Where the value of `key` inside an entry is (`source`, `version`), from the parser's object items;
 * the entry itself when the parser did not locate it. */
function itemLocation(entry: SrcAttr, key: string): SourceLocation {
  const item = entry.items?.find((it) => it.key === key);
  return item === undefined
    ? loc(entry)
    : { file: entry.range.file, line: item.valueRange.start.line, range: item.valueRange };
}

function requirement(
  entry: RequiredProviderEntry,
  engine: Engine,
  lines: (file: string) => string[] | undefined,
  scope: ConstantScope | undefined,
): ProviderRequirement {
  const declared = loc(entry);
  const base = {
    name: entry.name,
    configurationAliases: [] as string[],
    declared,
    implicit: false,
    entry:
      entry.items === undefined
        ? { valueRange: entry.valueRange }
        : { valueRange: entry.valueRange, items: entry.items },
  };
  if (typeof entry.value === 'string' || typeof entry.value === 'number') {
    // Legacy `NAME = "VERSION"`: a version constraint with the implied source.
    return {
      ...base,
      source: impliedProviderSource(entry.name, engine),
      sourceExplicit: false,
      constraints: String(entry.value),
      constraintLocation: { file: entry.range.file, line: entry.line, range: entry.valueRange },
      legacyString: true,
    };
  }
  const obj =
    entry.value !== null && typeof entry.value === 'object' && !Array.isArray(entry.value)
      ? (entry.value as Record<string, unknown>)
      : {};
  let rawSource = literal(obj.source);
  let sourceExpression: ValueExpression | undefined;
  if (hasInterpolation(obj.source)) {
    const ev = evaluateEntryValue(obj.source, engine, scope);
    sourceExpression = expressionOf(ev, itemLocation(entry, 'source'));
    // Unknown: the implied source stands in (flagged by `sourceExpression`); rejected: kept as written.
    if (ev.status === 'known') rawSource = ev.value;
  }
  let source: string;
  if (sourceExpression?.status === 'unknown') {
    source = impliedProviderSource(entry.name, engine);
  } else if (rawSource === null) {
    source = impliedProviderSource(entry.name, engine);
  } else {
    const parsed = parseProviderSource(rawSource, engine);
    // An invalid source is kept as written so rules can report it.
    source = parsed.ok ? parsed.source : rawSource;
  }
  let constraints = 'version' in obj ? text(obj.version) : null;
  let versionExpression: ValueExpression | undefined;
  if (hasInterpolation(obj.version)) {
    const ev = evaluateEntryValue(obj.version, engine, scope);
    versionExpression = expressionOf(ev, versionLocation(entry, lines));
    // Known: the value; unknown: nothing to judge; rejected: the text as written stays invalid.
    if (ev.status !== 'rejected') constraints = ev.value;
  }
  const aliases = Array.isArray(obj.configuration_aliases)
    ? obj.configuration_aliases
    : typeof obj.configuration_aliases === 'string'
      ? [obj.configuration_aliases]
      : [];
  const configurationAliases: string[] = [];
  for (const a of aliases) {
    const ref = reference(a);
    if (ref !== null && ref.alias !== null) configurationAliases.push(`${ref.name}.${ref.alias}`);
    else if (typeof a === 'string') configurationAliases.push(strip(a));
  }
  return {
    ...base,
    configurationAliases,
    source,
    sourceExplicit: rawSource !== null,
    constraints,
    constraintLocation: 'version' in obj ? versionLocation(entry, lines) : null,
    legacyString: false,
    ...(versionExpression === undefined ? {} : { versionExpression }),
    ...(sourceExpression === undefined ? {} : { sourceExpression }),
  };
}

function implicitRequirement(name: string, source: string): ProviderRequirement {
  return {
    name,
    source,
    sourceExplicit: false,
    constraints: null,
    constraintLocation: null,
    configurationAliases: [],
    declared: null,
    implicit: true,
    legacyString: false,
  };
}

/** The resource address of an `import` block's `to`, when it is a resource of this module. */
function importTarget(value: unknown): { type: string; address: string } | null {
  if (typeof value !== 'string') return null;
  const address = strip(value).trim();
  const m = /^([A-Za-z_][A-Za-z0-9_-]*)\.([A-Za-z_][A-Za-z0-9_-]*)/.exec(address);
  if (m === null || m[1] === 'module' || m[1] === 'data') return null;
  return { type: m[1] as string, address };
}

export function collectModule(
  modulePath: string,
  m: AssembledModule,
  engine: Engine,
  lines: (file: string) => string[] | undefined,
  constants?: ConstantScope,
): CollectedModule {
  const declared = new Map<string, ProviderRequirement>();
  for (const entry of m.requiredProviders.values())
    declared.set(entry.name, requirement(entry, engine, lines, constants));

  const uses: ProviderUse[] = [];
  /** Local names whose use implies a requirement, in order of first use. */
  const implying: string[] = [];

  for (const r of m.resources) {
    const providerAttr = attr(r.block, 'provider');
    const ref = providerAttr ? reference(providerAttr.value) : null;
    const name = ref?.name ?? impliedProviderName(r.type);
    const prefix = r.mode === 'resource' ? '' : `${r.mode}.`;
    // A resource type that implies no valid provider name (`resource "" "x"`) is a Terraform error
    // and implies nothing.
    if (ref === null && !isValidProviderName(name)) continue;
    uses.push({
      name,
      alias: ref?.alias ?? null,
      kind: r.mode,
      address: `${prefix}${r.type}.${r.name}`,
      explicit: ref !== null,
      location: providerAttr && ref ? loc(providerAttr) : loc(r.block),
    });
    implying.push(name);
  }

  for (const b of m.imports) {
    const to = attr(b, 'to');
    const target = to ? importTarget(to.value) : null;
    const providerAttr = attr(b, 'provider');
    const ref = providerAttr ? reference(providerAttr.value) : null;
    const implied = target === null ? null : impliedProviderName(target.type);
    const name = ref?.name ?? (implied !== null && isValidProviderName(implied) ? implied : null);
    if (name === null) continue;
    uses.push({
      name,
      alias: ref?.alias ?? null,
      kind: 'resource',
      address: target?.address ?? 'import',
      explicit: ref !== null,
      location: providerAttr && ref ? loc(providerAttr) : loc(b),
    });
    implying.push(name);
  }

  const providerConfigs: ProviderConfig[] = [];
  for (const b of m.providerConfigs) {
    const name = b.labels[0] ?? '';
    const aliasAttr = attr(b, 'alias');
    const alias = aliasAttr ? literal(aliasAttr.value) : null;
    const version = attr(b, 'version');
    providerConfigs.push({
      name,
      alias,
      location: loc(b),
      configured:
        b.body.blocks.length > 0 || b.body.attributes.some((a) => a.name !== 'alias' && a.name !== 'version'),
      ...(version ? { version: { value: text(version.value), location: loc(version) } } : {}),
    });
    uses.push({
      name,
      alias,
      kind: 'provider-block',
      address: alias === null ? `provider.${name}` : `provider.${name}.${alias}`,
      explicit: false,
      location: loc(b),
    });
    implying.push(name);
  }

  const moduleCalls: ModuleCall[] = [];
  for (const b of m.moduleCalls) {
    const name = b.labels[0] ?? '';
    const sourceAttr = attr(b, 'source');
    const versionAttr = attr(b, 'version');
    const sourceEval = sourceAttr ? moduleArgument(sourceAttr, engine, constants) : null;
    const versionEval = versionAttr ? moduleArgument(versionAttr, engine, constants) : null;
    const source = sourceEval?.value ?? null;
    const sourceKind = classifyModuleSource(source);
    const providersAttr = attr(b, 'providers');
    const providers: Record<string, string> = {};
    if (providersAttr && providersAttr.value !== null && typeof providersAttr.value === 'object') {
      for (const [k, v] of Object.entries(providersAttr.value as Record<string, unknown>)) {
        const child = strip(k);
        const parent = typeof v === 'string' ? strip(v) : text(v);
        providers[child] = parent;
        const ref = reference(v);
        if (ref !== null) {
          uses.push({
            name: ref.name,
            alias: ref.alias,
            kind: 'module-providers',
            address: `module.${name}`,
            explicit: true,
            location: loc(providersAttr),
          });
        }
      }
    }
    moduleCalls.push({
      name,
      source,
      sourceKind,
      version: versionEval?.value ?? null,
      providers,
      target: sourceKind === 'local' && source !== null ? resolveLocalTarget(modulePath, source) : null,
      location: loc(b),
      ...(sourceAttr ? { sourceLocation: valueLocation(sourceAttr) } : {}),
      ...(versionAttr ? { versionLocation: valueLocation(versionAttr) } : {}),
      ...(sourceAttr ? { sourceRange: sourceAttr.range } : {}),
      ...(sourceEval?.expression ? { sourceExpression: sourceEval.expression } : {}),
      ...(versionEval?.expression ? { versionExpression: versionEval.expression } : {}),
    });
  }

  const providers = [...declared.values()];
  const declaredSources = new Set(providers.map((p) => p.source));
  const implicitNames = new Set<string>();
  for (const name of implying) {
    if (declared.has(name) || implicitNames.has(name)) continue;
    const source = impliedProviderSource(name, engine);
    if (isBuiltinProviderSource(source) || declaredSources.has(source)) continue;
    implicitNames.add(name);
    providers.push(implicitRequirement(name, source));
  }
  providers.sort((a, b) => compareUtf8(a.name, b.name));

  const requiredVersions = m.requiredVersions.map((v) => ({
    value: text(v.value),
    location: v.location,
  }));

  uses.sort((a, b) => compareUtf8(a.location.file, b.location.file) || a.location.line - b.location.line);

  return { providers, providerUses: uses, providerConfigs, moduleCalls, requiredVersions };
}
