/** The module layer's model: modules, their calls, provider requirements and root trees. */
import type { ModuleSourceKind } from '../addrs';
import type { HclObjectItem } from '../hcl';
import type { Engine, SourceLocation, SourceRange } from '../model';

export interface ProviderRequirement {
  /** Module-local name (the key in `required_providers`, or the implied name). */
  name: string;
  /** Fully-qualified source address `HOST/NAMESPACE/TYPE` (implied `hashicorp/NAME` when absent). */
  source: string;
  /** True when the entry has an explicit `source`. */
  sourceExplicit: boolean;
  /** Constraint string exactly as written, or null when the entry has none. */
  constraints: string | null;
  /** Location of the `version` argument (or of the entry when there is none). */
  constraintLocation: SourceLocation | null;
  /** `configuration_aliases`, as `NAME.ALIAS` strings. */
  configurationAliases: string[];
  /** Where the entry is declared in `required_providers`; null for implicit providers. */
  declared: SourceLocation | null;
  /** True when the provider is only used (resource type, provider block), never declared. */
  implicit: boolean;
  /** `NAME = "VERSION"` legacy form. */
  legacyString: boolean;
  /** Set when `version` is an expression over variables and locals (Terraform 1.17) rather than a
   * literal: what tfguard made of it. `known`: `constraints` holds the value; `unknown`:
   * `constraints` is null and nothing is claimed about it; `rejected`: `constraints` holds the text
   * as written. */
  versionExpression?: ValueExpression;
  /** Likewise for `source` (`unknown`: `source` is the implied one and must not be relied on). */
  sourceExpression?: ValueExpression;
  /** The entry's value where the parser located it (an object constructor, a JSON object or the
   * legacy string) and, for an object, its items: where a fix inserts a missing `source`,
   * `version` or `configuration_aliases`. Absent for implicit providers. */
  entry?: { valueRange: SourceRange; items?: HclObjectItem[] };
}

/** A `required_providers` value written as an expression, as tfguard evaluated it. */
export interface ValueExpression {
  /** The expression as written (hcl2json's rendering in native syntax), e.g. `${var.aws_version}`. */
  text: string;
  /** `known`: a constant tfguard evaluated; `unknown`: tfguard cannot tell (the engine may still
   * accept it); `rejected`: the engine rejects it during init. */
  status: 'known' | 'unknown' | 'rejected';
  /** Where the value comes from (`known`), or why it is unknown or rejected: a clause for messages,
   * e.g. `var.aws_version (its default, variables.tf:3)`. */
  detail: string;
  /** The variables and locals it reads, directly or through locals: `var.x`, `local.y`. */
  references: string[];
  /** Where the expression is written (its value's range in `required_providers`). */
  location?: SourceLocation;
}

export type ProviderUseKind = 'resource' | 'data' | 'ephemeral' | 'provider-block' | 'module-providers';

/** A use of a provider: a resource/data type's implied provider, a `provider =` argument, a
 * `provider` block, or a reference in a module call's `providers` map. */
export interface ProviderUse {
  /** Local provider name (`aws`). */
  name: string;
  /** Alias when referenced as `NAME.ALIAS`. */
  alias: string | null;
  kind: ProviderUseKind;
  /** What uses it, e.g. `aws_instance.web`, `data.aws_ami.x`, `provider.aws`, `module.vpc`. */
  address: string;
  /** True when it comes from an explicit `provider = ...` / `providers = {...}` argument. */
  explicit: boolean;
  location: SourceLocation;
}

export interface ProviderConfig {
  name: string;
  alias: string | null;
  location: SourceLocation;
  /** True when the block sets anything besides `alias` (and the deprecated `version`): a real
   * configuration, not an empty proxy block through which a caller passes an aliased provider. */
  configured?: boolean;
  /** The block's deprecated `version` argument, when set: Terraform still ANDs it into the
   * provider's version constraints (and warns). */
  version?: { value: string; location: SourceLocation };
}

export interface ModuleCall {
  name: string;
  source: string | null;
  sourceKind: ModuleSourceKind;
  version: string | null;
  /** `providers` map: child reference → parent reference, e.g. `{"aws.east": "aws.usw2"}`. */
  providers: Record<string, string>;
  /** Archive-relative directory of a local module, resolved from the caller; null if not local. */
  target: string | null;
  location: SourceLocation;
  /** Where the `source` and `version` arguments are written (findings about them point there);
   * absent when the call has no such argument or was not written as a `module` block. */
  sourceLocation?: SourceLocation;
  versionLocation?: SourceLocation;
  /** The `source` argument (name to value), where a fix inserts a missing `version` after it. */
  sourceRange?: SourceRange;
  /** A `source` / `version` written as an expression (Terraform 1.15 const variables and locals,
   * OpenTofu 1.8 early evaluation), as tfguard evaluated it for the engine: `known`, `source` /
   * `version` hold the value; otherwise they hold the text as written and nothing is resolved
   * from it. */
  sourceExpression?: ValueExpression;
  versionExpression?: ValueExpression;
}

export interface BackendInfo {
  kind: 'backend' | 'cloud';
  /** Backend type (`s3`), or `cloud`. */
  type: string;
  location: SourceLocation;
}

/**
 * What a directory is: `root` (deployed on its own: plan/apply run there), `shared` (reusable: meant
 * to be called through a `module` block), `example` (shows how to call a reusable module),
 * `test` (used by `terraform test` or a test procedure), `fragment` (files that are not a module
 * on their own: Terragrunt `generate` snippets, files linked or templated into other directories).
 */
export type ModuleKind = 'root' | 'shared' | 'example' | 'test' | 'fragment';

export const MODULE_KINDS: readonly ModuleKind[] = ['root', 'shared', 'example', 'test', 'fragment'];

/** How strong the signal that decided `kind` is. Findings that depend on a kind decided on weak
 * evidence are phrased conditionally and one severity lower, and offer no fix. */
export type KindEvidence = 'strong' | 'weak';

export interface ModuleInfo {
  /** Archive-relative directory, `"."` for the top directory. */
  path: string;
  /** Selected configuration files of this module (archive-relative), sorted. */
  files: string[];
  /** Files that were ignored the way Terraform ignores them (`.x.tf`, `x.tf~`, `#x.tf#`). */
  ignoredFiles: string[];
  kind: ModuleKind;
  kindReason: string;
  kindEvidence: KindEvidence;
  /** The id of the classification signal that decided (`settings`, `backend`…; docs/classification.md);
   * absent for installed copies of remote modules. */
  kindSignal?: string;
  /** Provider local names that Terragrunt `generate` blocks declare for this module when it runs as
   * a unit's source (their `required_providers` land in the module's working copy). */
  generatedDeclarations?: string[];
  /** For an installed copy of a remote module read from `.terraform/modules/` (third-party code:
   * it joins the trees that call it, but no rule judges it on its own): which remote module. */
  installedCopy?: string;
  /** For a module that only Terragrunt units run (no `module` block calls it): those units, sorted.
   * It is their roots' configuration, not a reusable module: the shared-module rules do not apply,
   * and its constraints together with the units' generated files must be bounded. */
  unitSourceOf?: string[];
  /** For a Terraform Stack's directory (declarations/stacks.ts): its component configuration is the
   * module, and the CLI version comes from `.terraform-version`, not `required_version`. */
  terraformStack?: true;
  /** For a Terragrunt unit: its `terragrunt.hcl`. */
  terragrunt?: { file: string; source: string | null; generated: string[] };
  /** Declared and implicit provider requirements after override merging, sorted by name. */
  providers: ProviderRequirement[];
  providerUses: ProviderUse[];
  providerConfigs: ProviderConfig[];
  moduleCalls: ModuleCall[];
  backend: BackendInfo | null;
  /** `required_version` constraint strings (one per terraform block that sets it). */
  requiredVersions: { value: string; location: SourceLocation }[];
  /** Location of every `required_providers` block seen (more than one is a Terraform error). */
  requiredProvidersBlocks: SourceLocation[];
  /** Archive-relative path of the module's `.terraform.lock.hcl`, or null. */
  lockFile: string | null;
}

/** One module's contribution to a root's combined constraints for a provider source. */
export interface ConstraintContribution {
  /** The archive path of the module; for a remote module, its address and version
   * (`terraform-aws-modules/eks/aws 20.8.4`). */
  module: string;
  constraints: string;
  /** For a remote module: the call in the archive that leads to it. */
  location: SourceLocation | null;
  /** Set when a remote module of the tree adds the constraint (see `RootTree.remoteModules`). */
  remote?: { key: string; address: string; version: string | null };
}

export interface RootProvider {
  source: string;
  /** Terraform's normalized combined form (what `terraform init` writes to the lock file);
   * empty string when no module constrains it. Null when a constraint is invalid. */
  constraints: string | null;
  contributions: ConstraintContribution[];
  /** Modules of the tree whose constraint for this provider tfguard could not evaluate (a
   * `version` over variables without a constant value): `constraints` then lacks theirs. */
  unknownContributions?: string[];
}

export interface RootTree {
  /** Path of the root module (for an example or test configuration: its directory). */
  root: string;
  /** What the tree's top module is: lock files and pinning are checked only for `root` trees;
   * `example` and `test` trees are checked for consistency (satisfiable constraints, sources). */
  kind: 'root' | 'example' | 'test';
  /** The engine that runs this tree (its lock file's registry host, `.tofu` files, settings). */
  engine: Engine;
  /** Module paths in the tree (root first, then depth-first by call order, each once). */
  modules: string[];
  /** Local calls: caller → callee, with the call name. */
  calls: { from: string; to: string; name: string }[];
  /** Remote module calls in the tree (not followed), and local calls into installed copies of
   * remote modules that the archive does not hold (`.terraform/modules/…`, vendored `…//…`). */
  remoteCalls: {
    module: string;
    name: string;
    source: string | null;
    version: string | null;
    /** Set for a local path into an installed copy of a remote module. */
    installed?: boolean;
    /** When remote resolution ran: the module key, the package address, the selected version and
     * where its requirements came from (null: unresolved). */
    key?: string;
    address?: string;
    resolvedVersion?: string | null;
    origin?: RemoteOrigin | null;
  }[];
  providers: RootProvider[];
  /** Every remote module of the tree (nested ones and the local modules of remote packages too),
   * resolved or not, when remote resolution ran (src/modules/remote). */
  remoteModules?: RemoteModule[];
}

/** Where a remote module's provider requirements came from: the registry's provider metadata, the
 * downloaded package, or an installed copy in the archive (`.terraform/modules`). */
export type RemoteOrigin = 'metadata' | 'download' | 'archive';
export const REMOTE_ORIGINS: readonly RemoteOrigin[] = ['metadata', 'download', 'archive'];

/** A module of a root's tree that the archive does not hold as a module of its own. */
export interface RemoteModule {
  /** Terraform's module key (`modules.json`): call names from the root, joined with `.`
   * (`eks.kms`). */
  key: string;
  /** The key of the remote module whose package holds or calls it; null when an archive module
   * calls it. */
  parent: string | null;
  name: string;
  /** The `source` as written in the calling module. */
  source: string;
  /** The `version` constraint as written, or null. */
  version: string | null;
  /** The package (`registry.terraform.io/ns/name/system`, a download URL, a git address) and, after
   * `//`, the module's directory in it. */
  address: string;
  /** The version selected (registry), the ref (git), or null. */
  resolvedVersion: string | null;
  /** Null when the module stayed unresolved (`unresolved` says why). */
  origin: RemoteOrigin | null;
  unresolved?: string;
  /** The providers it requires, with the constraints it states (empty when unresolved). */
  providers: { source: string; constraints: string[] }[];
  /** The archive module whose call leads to it, and that call. */
  module: string;
  location: SourceLocation;
}

/** A problem found while loading modules (not a rule violation by itself). Rules turn these
 * into findings. */
export type LoadDiagnostic =
  | {
      kind: 'parse-error';
      module: string;
      file: string;
      line: number;
      column: number;
      message: string;
      /** The file looks like a template (`{% … %}`, `{{ … }}`), not Terraform. */
      template?: boolean;
    }
  | { kind: 'module-missing'; module: string; call: string; target: string; location: SourceLocation }
  | {
      kind: 'module-unresolved';
      module: string;
      call: string;
      source: string;
      /** Why tfguard cannot read it: e.g. an installed copy of a remote module. */
      reason: string;
      location: SourceLocation;
      /** For a remote module that stayed unresolved: its module key and the version constraint. */
      remote?: { key: string; version: string | null };
    }
  | { kind: 'module-cycle'; module: string; cycle: string[]; location: SourceLocation }
  | {
      /** A part of a Terragrunt configuration that could not be resolved statically (a source or
       * include path built from `get_env`, `run_cmd` output in a `generate` block…), or what a
       * `terragrunt.stack.hcl` generates. */
      kind: 'terragrunt-unresolved';
      module: string;
      /** `terraform source`, `include "root"`, `generate "provider" (provider.tf)`, `terragrunt.stack.hcl`. */
      what: string;
      reasons: string[];
      location: SourceLocation;
      /** The unit's tree may miss providers because of it: lock entries are then not called stale. */
      partial: boolean;
    }
  | {
      kind: 'duplicate-required-providers';
      module: string;
      location: SourceLocation;
      first: SourceLocation;
    }
  | {
      /** A directory that deployment tooling declares as a root (or a glob of them) that the
       * archive does not hold, or that holds no configuration (src/modules/declarations). */
      kind: 'declared-root-missing';
      /** The directory of the declaring file. */
      module: string;
      tool: string;
      /** What declares it: `project "net"`. */
      label: string;
      /** The directory as resolved (null for a glob). */
      dir: string | null;
      written: string;
      /** True when the directory exists but holds no configuration. */
      exists: boolean;
      /** Why the directory is only likely missing (a condition), or null when it certainly is. */
      uncertain: string | null;
      glob: boolean;
      /** Further declarations of the same directory. */
      more: number;
      location: SourceLocation;
    }
  | {
      /** A deployment declaration file that could not be read (malformed YAML, wrong shape). */
      kind: 'declaration-invalid';
      module: string;
      tool: string;
      message: string;
      location: SourceLocation;
    }
  | {
      /** Configuration tfguard deliberately leaves unchecked, said once: a tree of scanner test
       * samples (`positive1.tf`, `negative1.tf` beside `positive_expected_result.json`), or a
       * Terramate stack whose Terraform files `terramate generate` writes (not in the archive). */
      kind: 'configuration-not-checked';
      /** The fixture tree's top directory, or the Terramate stack's directory. */
      module: string;
      what: 'scanner-fixtures' | 'terramate-generated';
      /** Fixture directories skipped (scanner-fixtures), or the generated file names (terramate-generated). */
      items: string[];
      /** What the evidence is, in words. */
      evidence: string;
      location: SourceLocation;
    }
  | {
      /** A Terraform Stacks beta file (`*.tfstack.hcl`) that current Terraform ignores. */
      kind: 'stack-legacy-file';
      module: string;
      /** Component files (`*.tfcomponent.hcl`) in the same directory. */
      components: string[];
      location: SourceLocation;
    };
