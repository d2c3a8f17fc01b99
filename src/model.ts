/**
 * The vocabulary every layer shares: severities, engines, source positions and ranges, text edits,
 * and the scan settings (limits, lock mode, module policies) that several layers read. Each layer's
 * own types live with it: `src/archive/types.ts`, `src/hcl/types.ts`, `src/modules/types.ts`,
 * `src/addrs/types.ts`, `src/lockfile/types.ts`, `src/rules/types.ts` (findings), and are exported
 * from the layer's index. Field names that appear in the JSON report are a public contract (see
 * docs/report.schema.json): change them only when an issue asks.
 */

export type Severity = 'error' | 'warning' | 'notice';

export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'notice'];

export type Engine = 'terraform' | 'opentofu';
export const ENGINES: readonly Engine[] = ['terraform', 'opentofu'];

/** What was scanned: a directory on disk or an archive file (tar, tar.gz, zip). Messages name the
 * input as the user gave it ("not in the directory", "not in the archive"). */
export type InputKind = 'directory' | 'archive';

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

/** `module_ref_policy`: which git refs pin a module (`module-ref-unpinned`). */
export type ModuleRefPolicy = 'tag-or-sha' | 'sha';

export const MODULE_REF_POLICIES: readonly ModuleRefPolicy[] = ['tag-or-sha', 'sha'];

/** `module_version_style`: the form of registry module versions in root modules (`module-version-style`). */
export type ModuleVersionStyle = 'any' | 'exact' | 'pessimistic';

export const MODULE_VERSION_STYLES: readonly ModuleVersionStyle[] = ['any', 'exact', 'pessimistic'];

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
  /** Registry hostname → token (`credentials "HOST" { token = ... }` in `--config` only; never set by
   * the scanned archive, never reported). */
  credentials?: Record<string, string>;
  /** `lock_mode` (default `default`); explicit `rule "<id>" { severity = ... }` settings still win. */
  lockMode: LockMode;
  /** `module_ref_policy` (default `tag-or-sha`): git module sources pinned by a tag or a commit, or
   * (`sha`) only by a full commit SHA. */
  moduleRefPolicy: ModuleRefPolicy;
  /** `module_version_style` (default `any`): registry module versions in root modules must be an
   * exact version (`exact`) or use `~>` (`pessimistic`). */
  moduleVersionStyle: ModuleVersionStyle;
  /** Where the configuration came from (for the report). */
  configFiles: string[];
}
