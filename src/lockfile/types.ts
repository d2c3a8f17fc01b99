import type { Engine, SourceRange } from '../model';
/**
 * Data produced by the lock-file analysis (`analyzeLocks`) and read by the `lock-*` rules. Rules stay
 * pure and synchronous: every piece of I/O (package hashing, the registry cross-check) happens
 * before they run and its outcome is recorded here.
 */

/** One string of a lock entry's `hashes` list. */
export interface LockHash {
  value: string;
  /** Line of the string literal (the `hashes` line when it cannot be told apart). */
  line: number;
  /** The string literal (the whole `hashes` argument when it cannot be told apart). */
  range: SourceRange;
}

/** One `provider "ADDRESS" { ... }` block. */
export interface LockProviderEntry {
  /** The block label as written. */
  address: string;
  /** Normalized `HOST/NAMESPACE/TYPE` when the label is a valid, lockable, normalized address;
   * null otherwise (the block is then reported by `lock-parse-error` and ignored by other rules). */
  source: string | null;
  line: number;
  endLine: number;
  /** The whole block. */
  range: SourceRange;
  /** The locked version when it is present and one exact, normalized version; else null. */
  version: string | null;
  versionLine: number | null;
  /** The `version` argument, null when absent. */
  versionRange: SourceRange | null;
  /** The recorded `constraints` string as written, or null when absent. */
  constraints: string | null;
  constraintsLine: number | null;
  /** The `constraints` argument, null when absent. */
  constraintsRange: SourceRange | null;
  /** True when `constraints` is present but not valid or not in Terraform's normalized form. */
  constraintsInvalid: boolean;
  hashes: LockHash[];
  /** Line of the `hashes` argument, null when absent. */
  hashesLine: number | null;
  /** The `hashes` argument, null when absent. */
  hashesRange: SourceRange | null;
  /** True for a second block for the same provider (Terraform rejects the file). */
  duplicate: boolean;
}

export interface LockParseError {
  message: string;
  line: number;
  /** The exact span, when known. */
  range?: SourceRange;
}

export interface LockFile {
  /** Archive-relative path of the `.terraform.lock.hcl`. */
  path: string;
  /** False when the file could not be read as HCL at all (then `providers` is empty). */
  readable: boolean;
  providers: LockProviderEntry[];
  errors: LockParseError[];
}

/** Where a provider package was found. */
export type PackageLocation =
  /** `terraform.d/plugins/` (Terraform's implied local mirror of the directory it contains). */
  | 'plugins'
  /** A directory named in `.tfguard.hcl` `plugin_dirs`. */
  | 'plugin-dir'
  /** `.terraform/providers/` (the working directory's installed-package cache). */
  | 'cache';

/** A provider package inside the uploaded archive, in one of the filesystem-mirror layouts. */
export interface ProviderPackage {
  /** `packed`: `HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`;
   * `unpacked`: `HOST/NS/TYPE/VERSION/OS_ARCH/` directory. */
  kind: 'packed' | 'unpacked';
  location: PackageLocation;
  /** Archive path of the mirror directory the layout starts in. */
  mirror: string;
  /** The directory the package serves: the one containing `terraform.d/` or `.terraform/`; null for
   * `plugin_dirs` (they serve every root). */
  owner: string | null;
  /** Archive path of the zip, or of the `OS_ARCH` directory. */
  path: string;
  /** Normalized `HOST/NAMESPACE/TYPE`. */
  source: string;
  version: string;
  /** `OS_ARCH`. */
  platform: string;
  /** Unpacked packages: every file under the directory (path relative to it, lowercase hex sha256);
   * null when some file's content hash is not known. */
  files: { path: string; sha256: string }[] | null;
}

/** A package with the hashes computed from it. */
export interface HashedPackage extends ProviderPackage {
  /** Hash-scheme-1 hashes Terraform compares with the lock for this package: for an unpacked
   * directory its dirhash; for a zip `dirhash.HashZip`, which counts directory entries as files. */
  h1: string | null;
  /** For a zip: the h1 of its content once unpacked (what `terraform init` records). */
  h1Unpacked: string | null;
  /** For a zip: `zh:` + sha256 of the zip. */
  zh: string | null;
  /** Why the package could not be hashed (corrupt zip, rejected entry names, content not loaded). */
  error: string | null;
}

export type TrustLevel = 'official' | 'partner' | 'community';

/** What the registry says about one provider version. */
export type RegistryOutcome =
  | {
      status: 'verified';
      /** `unsigned`: the registry returned no signing keys and the engine (OpenTofu) skips the
       * signature check; the checksums are then the registry's word, not a verified signature. */
      trust: TrustLevel | 'unsigned';
      /** Key id (16 hex) that verified the signature, null when unsigned. */
      keyId: string | null;
      /** `SHA256SUMS` entries: file name → lowercase hex. */
      sums: Record<string, string>;
      /** `OS_ARCH` → `zh:` hash of that platform's zip, from the sums. */
      platforms: Record<string, string>;
      /** OpenTofu-style `packages` hashes (`OS_ARCH` → hashes), null when the response has none. */
      packages: Record<string, string[]> | null;
      /** True when the result came from the cache. */
      cached: boolean;
    }
  | { status: 'signature-invalid'; reason: string }
  | { status: 'not-found'; reason: string }
  | { status: 'unavailable'; reason: string };

/** Registry result for one lock entry of one root. */
export interface RegistryCheck {
  source: string;
  version: string;
  outcome: RegistryOutcome;
}

/** The lock analysis of one root module. */
export interface RootLockAnalysis {
  /** The engine that runs the root (its lock file's registry host, `.tofu` files, settings). */
  engine: Engine;
  root: string;
  /** Archive path of the lock file, null when the root has none. */
  lockFile: string | null;
  lock: LockFile | null;
  /** Packages that serve this root, with their hashes. */
  packages: HashedPackage[];
  /** Registry results keyed by `SOURCE VERSION`; empty when the registry check is off. */
  registry: RegistryCheck[];
}

export interface LockAnalysis {
  /** Whether the registry cross-check ran. */
  registryChecked: boolean;
  /** Platforms the lock files must cover (from the configuration). */
  platforms: string[];
  roots: RootLockAnalysis[];
}
