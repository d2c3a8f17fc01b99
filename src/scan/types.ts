import type { ArchiveLimits, ScanConfig } from '../model';
import type { ObjectStore } from '../storage/types';

export interface HclParserSettings {
  workers?: number | undefined;
  timeoutMs?: number | undefined;
}

export interface ScanOptions {
  /** Settings that override the defaults and the archive's own `.tfguard.hcl`, e.g. from the CLI. */
  config?: Partial<ScanConfig>;
  /** Text of a `--config FILE` (same grammar as `.tfguard.hcl`), applied after the archive's own file. */
  configText?: { name: string; text: string };
  limits?: Partial<ArchiveLimits>;
  parser?: HclParserSettings;
  /** Registry cross-check of lock files (issue 3); overrides `registry` in the config files. */
  registry?: boolean;
  /** Where verified registry SHA256SUMS are cached. */
  store?: ObjectStore;
}
