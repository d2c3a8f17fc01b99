import type { ArchiveLimits, Engine, Severity, SourceLocation } from '../model';
import type {
  BackendInfo,
  KindEvidence,
  ModuleCall,
  ModuleKind,
  RemoteModule,
  RootProvider,
  RootTree,
} from '../modules';
import type { Finding } from '../rules';

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

/** Counts of the findings that are not suppressed; `suppressed` counts the others. */
export interface Summary {
  error: number;
  warning: number;
  notice: number;
  /** error + warning + notice. */
  total: number;
  modules: number;
  roots: number;
  /** Findings an inline annotation suppressed (in `findings` with `suppressed` set). */
  suppressed: number;
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
  /** `weak` when the kind is a guess: findings that depend on it are low-confidence notices. */
  kindEvidence: KindEvidence;
  /** For a module that only Terragrunt units run (no `module` block calls it): those units. It is
   * their configuration (`kind` stays `shared`), so the shared-module rules do not apply to it. */
  unitSourceOf?: string[];
  /** For a Terragrunt unit: its terragrunt.hcl, source and the files its generate blocks write. */
  terragrunt?: { file: string; source: string | null; generated: string[] };
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

/** A remote module of a root's tree: what it resolved to and where its requirements came from. */
export type RemoteModuleReport = Omit<RemoteModule, 'location'> & { file: string; line: number };

export interface RootReport {
  path: string;
  /** `root` for a deployable root; `example` / `test` for configurations checked for consistency. */
  kind: RootTree['kind'];
  /** The engine that runs this tree (lock-file host, `.tofu` files, settings). */
  engine: Engine;
  modules: string[];
  remoteModules: RootTree['remoteCalls'];
  /** Every remote module of the tree, when remote resolution ran (src/modules/remote). */
  remoteModuleTree?: RemoteModuleReport[];
  providers: Array<Pick<RootProvider, 'source' | 'constraints'>>;
  /** The root's `.terraform.lock.hcl` and the versions it locks; null without a lock file. */
  lock: { file: string; providers: { source: string; version: string | null }[] } | null;
}

/** `codequality`: GitLab Code Quality JSON (`artifacts:reports:codequality`). */
export type ReportFormat = 'text' | 'json' | 'sarif' | 'markdown' | 'codequality';
export const REPORT_FORMATS: readonly ReportFormat[] = ['text', 'json', 'sarif', 'markdown', 'codequality'];
export type FailOn = Severity | 'never';

export type { ArchiveLimits };
