/**
 * Shared data model of the tfguard core. Every capability (archive, hcl, modules, constraints,
 * lockfile, rules, report) exchanges these types. Field names that appear in the JSON report are a
 * public contract (see docs/report.schema.json): change them only when an issue asks.
 */

export type Severity = 'error' | 'warning' | 'notice';
export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'notice'];

export type Engine = 'terraform' | 'opentofu';

/** A position inside the uploaded archive. `file` is archive-relative with `/`; `line` is 1-based. */
export interface SourceLocation {
  file: string;
  line: number;
  /** The exact span, when the parser located it (findings copy it: `Finding.range`). */
  range?: SourceRange;
}

/**
 * A point in a source file, as Terraform's `hcl.Pos`: `line` and `column` are 1-based, `column`
 * counts Unicode code points from the start of the line, `byte` is the 0-based offset into the
 * file's bytes as uploaded (UTF-8, a BOM included).
 */
export interface SourcePos {
  line: number;
  column: number;
  byte: number;
}

/** A span of one source file, `start` inclusive and `end` exclusive (as `hcl.Range`). `file` is the
 * archive-relative path. An empty range (`start` equal to `end`) marks an insertion point. */
export interface SourceRange {
  file: string;
  start: SourcePos;
  end: SourcePos;
}

/** Replace the text of `range` with `text` (an empty range inserts). */
export interface TextEdit {
  range: SourceRange;
  text: string;
}

/** A mechanical fix a finding can offer (for example the replacement constraint string). */
export interface Fix {
  description: string;
  /** The replacement text for the offending value (e.g. a constraint string). */
  replacement: string;
  /** The edits that apply the fix to the files, when the fix is safe to apply mechanically.
   * Edits of one fix never overlap; applying them all leaves every file syntactically valid. */
  edits?: TextEdit[];
}

/** One finding in a report. */
export interface Finding {
  ruleId: string;
  severity: Severity;
  message: string;
  /** Module path relative to the archive root, `"."` for the top directory. */
  module: string;
  file: string | null;
  line: number | null;
  /** The exact span the finding is about (start and end line, column and byte), when known. Its
   * `start.line` equals `line`. */
  range?: SourceRange;
  fix?: Fix;
  /** Extra advice that is not a mechanical fix. */
  note?: string;
  /** `low` when the finding depends on a guess (a module kind decided on weak evidence): its
   * severity was lowered one step and its message says what it assumes. */
  confidence?: 'low';
  /** Set when an inline `tfguard:ignore` / `tfguard:ignore-file` annotation covers the finding
   * (src/rules/suppress.ts): it stays in the report but counts in no summary count or exit code. */
  suppressed?: Suppression;
}

/** Where and why a finding was suppressed: the annotation's reason and location. */
export interface Suppression {
  reason: string;
  file: string;
  line: number;
}

/** What a rule returns: the engine adds `ruleId`, the (possibly overridden) `severity` and, when an
 * annotation covers it, `suppressed`. */
export type RuleFinding = Omit<Finding, 'ruleId' | 'severity' | 'suppressed'>;

// ---------------------------------------------------------------------------------------------
// Archive
// ---------------------------------------------------------------------------------------------

export type EntryType = 'file' | 'directory' | 'symlink' | 'hardlink';

export interface ArchiveEntry {
  /** Normalised archive-relative path, `/` separators, no leading `./`, no trailing `/`. */
  path: string;
  type: EntryType;
  /** Uncompressed size in bytes (0 for directories and links). */
  size: number;
  /** Lowercase hex SHA-256 of the content, for regular files. */
  sha256?: string;
  /** Unix permission bits when the container records them. */
  mode?: number;
  /** For links: the target, resolved to an archive-relative path. */
  linkTarget?: string;
}

export interface LoadedArchive {
  /** Display name: the file name of the archive or the directory given. */
  name: string;
  /** Lowercase hex SHA-256 of the archive bytes (for a directory: of a canonical listing). */
  sha256: string;
  format: 'directory' | 'tar' | 'tar.gz' | 'zip';
  /** Every entry, sorted by path (byte order). */
  entries: ArchiveEntry[];
  /** Contents of the files selected for loading (see `shouldLoad`), keyed by entry path. */
  files: Map<string, Buffer>;
}

// ---------------------------------------------------------------------------------------------
// HCL (native syntax and JSON syntax), with positions
// ---------------------------------------------------------------------------------------------

/** An argument (`name = expr`). `value` is the JSON rendering hcl2json gives: literals as JSON,
 * anything else as a `"${...}"` template string (e.g. `aws.east` → `"${aws.east}"`). */
export interface HclAttribute {
  name: string;
  value: unknown;
  line: number;
  endLine: number;
  /** From the name to the end of the expression (native syntax); the property, key to value (JSON). */
  range: SourceRange;
  /** The expression alone (native syntax) or the JSON value. */
  valueRange: SourceRange;
  /** For an argument of a `required_providers` block whose expression is an object constructor
   * (`{ k = v, ... }`) or a JSON object: its items, one level deep, in source order (what a fix of
   * a provider requirement edits). Other arguments leave it out: locating every item of every
   * object would cost every scan time and memory for nothing. */
  items?: HclObjectItem[];
}

/** One item of an object constructor (`key = value` / `key: value`) or JSON object. */
export interface HclObjectItem {
  /** The key as text (quoted keys unescaped). */
  key: string;
  keyRange: SourceRange;
  valueRange: SourceRange;
}

export interface HclBlock {
  type: string;
  labels: string[];
  line: number;
  endLine: number;
  /** From the block type name to the closing brace (native); the enclosing property (JSON). */
  range: SourceRange;
  /** The `{` that opens the body and the `}` that closes it (JSON: the object's braces). */
  openBraceRange: SourceRange;
  closeBraceRange: SourceRange;
  body: HclBody;
}

export interface HclBody {
  /** Attributes in source order. Duplicate names are a parse error, so names are unique. */
  attributes: HclAttribute[];
  /** Nested blocks in source order. */
  blocks: HclBlock[];
}

export interface ParsedFile {
  /** Archive-relative path. */
  path: string;
  syntax: 'hcl' | 'json';
  body: HclBody;
}

export interface ParseErrorInfo {
  path: string;
  message: string;
  line: number;
  column: number;
}

export type ParseResult = { ok: true; file: ParsedFile } | { ok: false; error: ParseErrorInfo };

// ---------------------------------------------------------------------------------------------
// Modules
// ---------------------------------------------------------------------------------------------

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

export type ModuleSourceKind = 'local' | 'registry' | 'remote' | 'unknown';

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
  /** Provider local names that Terragrunt `generate` blocks declare for this module when it runs as
   * a unit's source (their `required_providers` land in the module's working copy). */
  generatedDeclarations?: string[];
  /** For an installed copy of a remote module read from `.terraform/modules/` (third-party code:
   * it joins the trees that call it, but no rule judges it on its own): which remote module. */
  installedCopy?: string;
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
      kind: 'duplicate-required-providers';
      module: string;
      location: SourceLocation;
      first: SourceLocation;
    };

// ---------------------------------------------------------------------------------------------
// Configuration (.tfguard.hcl, --config, defaults)
// ---------------------------------------------------------------------------------------------

export interface ArchiveLimits {
  maxEntries: number;
  maxTotalBytes: number;
  maxFileBytes: number;
  /** Uncompressed / compressed ratio beyond which an archive is treated as a bomb. */
  maxCompressionRatio: number;
  maxPathLength: number;
  maxPathDepth: number;
}

/**
 * How strictly lock files are judged (`lock_mode` in `.tfguard.hcl`): `default` keeps every rule's
 * default severity; `readonly` matches a CI that runs `terraform init -lockfile=readonly`, which
 * fails on a missing lock file and on stale entries, so `lock-missing` and `lock-provider-stale`
 * become errors.
 */
export type LockMode = 'default' | 'readonly';
export const LOCK_MODES: readonly LockMode[] = ['default', 'readonly'];

export interface RuleSetting {
  severity?: Severity;
  enabled?: boolean;
}

export interface ScanConfig {
  engine: Engine;
  /** True when `engine` was set explicitly (a settings file, `--config`, the CLI) rather than left
   * at its default; module loading then uses it instead of detecting the engine from the archive. */
  engineExplicit?: boolean;
  roots: string[];
  shared: string[];
  /** Globs of example configurations and of test configurations (`examples`, `tests`). */
  examples: string[];
  tests: string[];
  /** Globs of directories that are not modules on their own (`fragments`). */
  fragments: string[];
  /** Hold examples to the deployable-root rules too (lock files, pinning). */
  strictExamples: boolean;
  /** Root globs → the engine that runs them (`engines = { "tofu/**" = "opentofu" }`), for
   * repositories with both Terraform and OpenTofu roots. */
  engines: Record<string, Engine>;
  rules: Record<string, RuleSetting>;
  /** Platforms a lock file must cover, e.g. `linux_amd64`. */
  platforms: string[];
  pluginDirs: string[];
  registry: boolean;
  /** Registry hostname → base URL override (`registry_hosts` in `.tfguard.hcl`), e.g. a private mirror. */
  registryHosts: Record<string, string>;
  /** Git and HTTP hosts remote modules may be downloaded from, hostname → base URL (`module_hosts`
   * in `--config`, `TFGUARD_MODULE_HOSTS`); never set by the scanned archive. */
  moduleHosts?: Record<string, string>;
  /** `lock_mode` (default `default`); explicit `rule "<id>" { severity = ... }` settings still win. */
  lockMode: LockMode;
  /** Where the configuration came from (for the report). */
  configFiles: string[];
}
