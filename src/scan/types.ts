import type { LockAnalysis } from '../lockfile/types';
import type { ArchiveLimits, ScanConfig } from '../model';
import type { RemoteNetworkOptions } from '../modules';
import type { ObjectStore } from '../storage/types';
import type { CacheStats } from './cache';
import type { Clock } from '../util/deadline';
import type { PolicyInput } from '../policy';

export interface HclParserSettings {
  workers?: number | undefined;
  timeoutMs?: number | undefined;
  /** `false`: parse every file in full with hcl2json (the pre-fast-path behaviour; benchmarks). */
  fastPath?: boolean | undefined;
}

export interface ScanOptions {
  /** Settings that override the defaults and the archive's own `.tfguard.hcl`, e.g. from the CLI. */
  /** Directory input only: read just these directories of it (and its `.tfguard.hcl`), see
   * `ReadOptions.directories`. */
  directories?: readonly string[];
  config?: Partial<ScanConfig>;
  /** Text of a `--config FILE` (same grammar as `.tfguard.hcl`), applied after the archive's own file. */
  configText?: { name: string; text: string };
  limits?: Partial<ArchiveLimits>;
  parser?: HclParserSettings;
  /** Registry cross-check of lock files; overrides `registry` in the config files. */
  registry?: boolean;
  /** Where verified registry SHA256SUMS (and, unless `remoteModuleCache` says otherwise, remote
   * module answers) are cached. */
  store?: ObjectStore;
  /**
   * Resolve remote modules over the network (registries, allowed git and HTTP hosts): the CLI's
   * `--remote-modules`, on by default in the Lambda functions. Installed copies in the archive
   * (`.terraform/modules`) are used either way.
   */
  remoteModules?: boolean;
  /** The operator's registry tokens, hostname → token (`TF_TOKEN_*`, src/config.ts): they win over
   * `credentials` blocks of `--config`, and go only to that registry's own host. */
  registryTokens?: Record<string, string>;
  /** Where remote module answers are cached (keys under `remote-modules/v1/`); default `store`. */
  remoteModuleCache?: ObjectStore;
  /** Tuning of remote resolution (timeouts, retries, download size, version-list lifetime, the
   * lifetime of cached mutable references, the per-scan request and download budget, the
   * process-wide concurrency limit: src/modules/remote/budget.ts). */
  remoteModuleSettings?: Pick<
    RemoteNetworkOptions,
    | 'timeoutMs'
    | 'retries'
    | 'backoffMs'
    | 'maxDownloadBytes'
    | 'maxResponseBytes'
    | 'versionsTtlMs'
    | 'mutableTtlMs'
    | 'maxRequests'
    | 'maxDownloads'
    | 'maxConcurrent'
    | 'fetch'
  >;
  /** Who the scan is for (the service: the repository): remote content behind a mutable reference
   * (a git branch or tag, an archive without checksum) is cached for this tenant only. Unset: the
   * cache has one owner (the CLI). */
  remoteModuleTenant?: string;
  /** What the notices of unresolved modules say when `remoteModules` is off (each shell says how it
   * is turned on there). */
  remoteModulesOffReason?: string;
  /** Called once per scan that resolved remote modules over the network, with the requests sent
   * and the packages downloaded. */
  onRemoteStats?: (stats: { requests: number; downloads: number }) => void;
  /**
   * Content-addressed cache of per-file extraction results (see src/scan/cache.ts; keys start with
   * `extract/`): a rescan of an unchanged archive parses nothing, and never loads the
   * WebAssembly parser.
   */
  cache?: ObjectStore;
  /** A stable name of the repository (e.g. `github.com/org/repo`): with `cache`, a scan of a new
   * commit reuses the results of the previous scan under this name for unchanged files. */
  cacheLineage?: string;
  /** Called once the lock files are analysed, with the settings the scan resolved and the analysis
   * (`tfguard fix` plans lock-file rewrites from them). */
  onLockAnalysis?: (analysis: LockAnalysis, config: ScanConfig) => void;
  /** Called once per scan with what the cache did (hits, misses, requests, bytes). */
  onCacheStats?: (stats: CacheStats) => void;
  /** Directory scans (`scanPath`): called once the scan is done, with the files parsed while the
   * directory was being read and those of them module loading took (src/scan/ahead.ts). */
  onParseAheadStats?: (stats: { parsed: number; taken: number }) => void;
  /**
   * Time limit of the whole scan in milliseconds, from its start (CLI `--timeout`,
   * `TFGUARD_SCAN_TIMEOUT_MS`). Over it the scan throws `InputError('scan-timeout')`.
   */
  timeoutMs?: number | undefined;
  /**
   * Stops the scan when aborted (e.g. the Lambda invocation's deadline, see `timeLimit`): it is
   * checked between stages and before each file, an hcl2json parse in flight is terminated, and
   * the scan throws `InputError('scan-timeout')`. A scan returns a report only when it finished
   * before the signal fired: nothing partial is ever returned as complete.
   */
  signal?: AbortSignal | undefined;
  /**
   * Where the scan's own time limit (`timeoutMs`) and its elapsed time come from; default the
   * process's monotonic clock. Tests pass a clock they move by hand (test/support/clock.ts).
   */
  clock?: Clock | undefined;
  /**
   * The organisation's policy (`--policy FILE`, the service's policy object; read with
   * `readPolicy`), the repository the scan is for and today's date: the `policy-*` rules judge
   * the scan against it. Absent: no policy, and those rules report nothing.
   */
  policy?: PolicyInput | undefined;
}
