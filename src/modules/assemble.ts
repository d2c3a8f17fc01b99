/**
 * Combines the parsed files of one directory into one module, the way Terraform's `NewModule`
 * does (hashicorp/terraform internal/configs/module.go `appendFile` / `mergeFile` and
 * module_merge.go), keeping the file and line of every value:
 *
 * - primary files are appended in lexical order; a second `required_providers` block is an error
 *   and is ignored (Terraform: "Duplicate required providers configuration"), the first backend /
 *   cloud block wins, a duplicate provider configuration, module call or resource keeps the first;
 * - override files are then merged one by one in lexical order. A top-level block merges into the
 *   block with the same header (`resource`/`data`/`ephemeral`: type + name; `module`: name;
 *   `provider`: name + `alias`): attributes are replaced, and nested blocks of a type present in
 *   the override replace all nested blocks of that type. An override block without a base block
 *   is ignored (Terraform reports an error), except a default (non-aliased) `provider` block, which
 *   is added. `import`/`moved`/`check` blocks of override files are ignored (Terraform: error).
 * - `terraform` blocks of override files: each `required_providers` entry replaces the WHOLE entry
 *   of the same name (checked with `terraform providers` 1.11: an override `aws = { version = ... }`
 *   drops the original entry's `source`); entries of other names are kept. `required_version` in an
 *   override file replaces every original one; a `backend` or `cloud` block replaces either.
 */
import type { HclAttribute, HclBlock, HclBody } from '../hcl';
import type { SourceLocation, SourceRange } from '../model';

/** An attribute of a module's files: its range names the file it came from (`range.file`). */
export type SrcAttr = HclAttribute;

/** A block of a module's files. After an override merge its body mixes items of several files;
 * each keeps its own `range.file`. */
export type SrcBlock = HclBlock;

export interface SrcFile {
  path: string;
  body: HclBody;
}

export function attr(block: SrcBlock, name: string): SrcAttr | undefined {
  return block.body.attributes.find((a) => a.name === name);
}

export function loc(item: { line: number; range: SourceRange }): SourceLocation {
  return { file: item.range.file, line: item.line, range: item.range };
}

/** Override semantics for an ordinary block: attributes replaced, nested block types replaced. */
export function mergeBlock(base: SrcBlock, over: SrcBlock): SrcBlock {
  const overAttrs = over.body.attributes;
  const attributes = base.body.attributes.filter((a) => !overAttrs.some((o) => o.name === a.name));
  attributes.push(...overAttrs);
  const overTypes = new Set(over.body.blocks.map((b) => b.type));
  const blocks = base.body.blocks.filter((b) => !overTypes.has(b.type));
  blocks.push(...over.body.blocks);
  return { ...base, body: { attributes, blocks } };
}

export type ResourceMode = 'resource' | 'data' | 'ephemeral';

export interface ResourceDecl {
  mode: ResourceMode;
  type: string;
  name: string;
  block: SrcBlock;
}

export interface BackendDecl {
  kind: 'backend' | 'cloud';
  type: string;
  location: SourceLocation;
}

/** A `required_providers` entry: `NAME = { ... }` or the legacy `NAME = "VERSION"`. */
export type RequiredProviderEntry = SrcAttr;

export interface AssembledModule {
  requiredProviders: Map<string, RequiredProviderEntry>;
  /** Every `required_providers` block of the primary files, in order. */
  requiredProvidersBlocks: SourceLocation[];
  requiredVersions: { value: unknown; location: SourceLocation }[];
  backend: BackendDecl | null;
  providerConfigs: SrcBlock[];
  moduleCalls: SrcBlock[];
  resources: ResourceDecl[];
  imports: SrcBlock[];
  /** Top-level `language` blocks of the primary files (OpenTofu 1.12; OpenTofu refuses them in
   * override files) with their `compatible_with { opentofu = "..." }` constraint, if any. */
  languages: LanguageDecl[];
}

export interface LanguageDecl {
  location: SourceLocation;
  /** The `opentofu` argument of a `compatible_with` block: the value and where it is. */
  opentofu: { value: unknown; location: SourceLocation } | null;
}

/** The `required_providers` blocks of a `terraform` block: where each is and its entries. (Written
 * as an argument, `required_providers = {...}`, it is a Terraform error and declares nothing.) */
function requiredProvidersBlocks(
  terraformBlock: SrcBlock,
): { location: SourceLocation; entries: RequiredProviderEntry[] }[] {
  return terraformBlock.body.blocks
    .filter((b) => b.type === 'required_providers')
    .map((b) => ({ location: loc(b), entries: b.body.attributes }));
}

function backends(terraformBlock: SrcBlock): BackendDecl[] {
  const out: BackendDecl[] = [];
  for (const b of terraformBlock.body.blocks) {
    if (b.type === 'backend') out.push({ kind: 'backend', type: b.labels[0] ?? '', location: loc(b) });
    else if (b.type === 'cloud') out.push({ kind: 'cloud', type: 'cloud', location: loc(b) });
  }
  return out;
}

function providerKey(b: SrcBlock): string {
  const alias = attr(b, 'alias');
  const a = typeof alias?.value === 'string' ? alias.value : '';
  return `${b.labels[0] ?? ''}.${a}`;
}

function resourceKey(mode: ResourceMode, b: SrcBlock): string {
  return `${mode}.${b.labels[0] ?? ''}.${b.labels[1] ?? ''}`;
}

function isResourceMode(t: string): t is ResourceMode {
  return t === 'resource' || t === 'data' || t === 'ephemeral';
}

export interface DuplicateRequiredProviders {
  location: SourceLocation;
  first: SourceLocation;
}

/**
 * Builds one module from its primary files (lexical order) and override files (lexical order).
 * Returns the module and the duplicate `required_providers` blocks found in primary files.
 */
export function assembleModule(
  primary: SrcFile[],
  overrides: SrcFile[],
): { module: AssembledModule; duplicates: DuplicateRequiredProviders[] } {
  const m: AssembledModule = {
    requiredProviders: new Map(),
    requiredProvidersBlocks: [],
    requiredVersions: [],
    backend: null,
    providerConfigs: [],
    moduleCalls: [],
    resources: [],
    imports: [],
    languages: [],
  };
  const duplicates: DuplicateRequiredProviders[] = [];
  let firstRequiredProviders: SourceLocation | null = null;
  const providerIndex = new Map<string, number>();
  const callIndex = new Map<string, number>();
  const resourceIndex = new Map<string, number>();

  const addResource = (mode: ResourceMode, b: SrcBlock): void => {
    const key = resourceKey(mode, b);
    if (resourceIndex.has(key)) return;
    resourceIndex.set(key, m.resources.length);
    m.resources.push({ mode, type: b.labels[0] ?? '', name: b.labels[1] ?? '', block: b });
  };

  for (const file of primary) {
    for (const b of file.body.blocks) {
      switch (b.type) {
        case 'terraform': {
          const version = attr(b, 'required_version');
          if (version) m.requiredVersions.push({ value: version.value, location: loc(version) });
          for (const backend of backends(b)) if (m.backend === null) m.backend = backend;
          for (const rp of requiredProvidersBlocks(b)) {
            m.requiredProvidersBlocks.push(rp.location);
            if (firstRequiredProviders !== null) {
              duplicates.push({ location: rp.location, first: firstRequiredProviders });
              continue;
            }
            firstRequiredProviders = rp.location;
            for (const e of rp.entries) m.requiredProviders.set(e.name, e);
          }
          break;
        }
        case 'provider': {
          const key = providerKey(b);
          if (providerIndex.has(key)) break;
          providerIndex.set(key, m.providerConfigs.length);
          m.providerConfigs.push(b);
          break;
        }
        case 'module': {
          const key = b.labels[0] ?? '';
          if (callIndex.has(key)) break;
          callIndex.set(key, m.moduleCalls.length);
          m.moduleCalls.push(b);
          break;
        }
        case 'check':
          // A check block may hold one scoped data source; Terraform adds it to the module's data
          // resources (and so to the implied provider requirements).
          for (const inner of b.body.blocks) if (inner.type === 'data') addResource('data', inner);
          break;
        case 'import':
          m.imports.push(b);
          break;
        case 'language': {
          // OpenTofu ignores everything in compatible_with but `opentofu` (internal/configs/language.go).
          const compat = b.body.blocks.find((c) => c.type === 'compatible_with' && attr(c, 'opentofu'));
          const opentofu = compat === undefined ? undefined : attr(compat, 'opentofu');
          m.languages.push({
            location: loc(b),
            opentofu: opentofu === undefined ? null : { value: opentofu.value, location: loc(opentofu) },
          });
          break;
        }
        default:
          if (isResourceMode(b.type)) addResource(b.type, b);
      }
    }
  }

  for (const file of overrides) {
    const fileVersions: { value: unknown; location: SourceLocation }[] = [];
    for (const b of file.body.blocks) {
      switch (b.type) {
        case 'terraform': {
          const version = attr(b, 'required_version');
          if (version) fileVersions.push({ value: version.value, location: loc(version) });
          for (const backend of backends(b)) m.backend = backend;
          for (const rp of requiredProvidersBlocks(b)) {
            for (const e of rp.entries) m.requiredProviders.set(e.name, e);
          }
          break;
        }
        case 'provider': {
          const key = providerKey(b);
          const i = providerIndex.get(key);
          if (i !== undefined) {
            m.providerConfigs[i] = mergeBlock(m.providerConfigs[i] as SrcBlock, b);
          } else if (attr(b, 'alias') === undefined) {
            providerIndex.set(key, m.providerConfigs.length);
            m.providerConfigs.push(b);
          }
          break;
        }
        case 'module': {
          const i = callIndex.get(b.labels[0] ?? '');
          if (i !== undefined) m.moduleCalls[i] = mergeBlock(m.moduleCalls[i] as SrcBlock, b);
          break;
        }
        default:
          if (isResourceMode(b.type)) {
            const i = resourceIndex.get(resourceKey(b.type, b));
            if (i !== undefined) {
              const r = m.resources[i] as ResourceDecl;
              m.resources[i] = { ...r, block: mergeBlock(r.block, b) };
            }
          }
      }
    }
    if (fileVersions.length > 0) m.requiredVersions = fileVersions;
  }
  return { module: m, duplicates };
}
