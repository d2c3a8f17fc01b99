import type {
  ArchiveLimits,
  BackendInfo,
  Engine,
  Finding,
  ModuleCall,
  ModuleKind,
  RootProvider,
  Severity,
  SourceLocation,
} from '../model';

/** JSON report, `schemaVersion: 1`, documented by docs/report.schema.json. A public contract. */
export interface Report {
  schemaVersion: 1;
  tool: { name: 'tfguard'; version: string };
  source: { name: string; sha256: string; format: string; files: number; configFiles: number };
  engine: Engine;
  /** Where settings came from (`.tfguard.hcl`, `--config FILE`), in the order applied. */
  configFiles: string[];
  modules: ModuleReport[];
  roots: RootReport[];
  findings: Finding[];
  summary: Summary;
}

export interface Summary {
  error: number;
  warning: number;
  notice: number;
  total: number;
  modules: number;
  roots: number;
}

export interface ProviderReport {
  name: string;
  source: string;
  constraints: string | null;
  declared: SourceLocation | null;
  implicit: boolean;
  configurationAliases: string[];
}

export interface ModuleReport {
  path: string;
  kind: ModuleKind;
  kindReason: string;
  files: string[];
  providers: ProviderReport[];
  providerConfigs: { name: string; alias: string | null; file: string; line: number }[];
  moduleCalls: Array<
    Pick<ModuleCall, 'name' | 'source' | 'sourceKind' | 'version' | 'providers' | 'target'> & SourceLocation
  >;
  backend: BackendInfo | null;
  requiredVersion: string[];
  lockFile: string | null;
}

export interface RootReport {
  path: string;
  modules: string[];
  remoteModules: { module: string; name: string; source: string | null; version: string | null }[];
  providers: Array<Pick<RootProvider, 'source' | 'constraints'>>;
  /** The root's `.terraform.lock.hcl` and the versions it locks; null without a lock file. */
  lock: { file: string; providers: { source: string; version: string | null }[] } | null;
}

/** `codequality`: GitLab Code Quality JSON (`artifacts:reports:codequality`). */
export type ReportFormat = 'text' | 'json' | 'sarif' | 'markdown' | 'codequality';
export const REPORT_FORMATS: readonly ReportFormat[] = ['text', 'json', 'sarif', 'markdown', 'codequality'];
export type FailOn = Severity | 'never';

export type { ArchiveLimits };
