import type { LockAnalysis } from '../lockfile/types';
import type { Annotation } from './suppress';
import type {
  Engine,
  LoadDiagnostic,
  ModuleInfo,
  RootTree,
  RuleFinding,
  ScanConfig,
  Severity,
} from '../model';

/** Everything a rule may look at. Rules are pure: they read this and return findings as data. */
export interface RuleContext {
  /** All modules, sorted by path. */
  modules: ModuleInfo[];
  moduleByPath: ReadonlyMap<string, ModuleInfo>;
  /** One tree per root module, sorted by root path. */
  roots: RootTree[];
  /** Problems found while loading (parse errors, missing local modules, cycles, ...). */
  diagnostics: LoadDiagnostic[];
  config: ScanConfig;
  engine: Engine;
  /** Lock-file analysis (lock files parsed, packages hashed, registry answers), computed by
   * `analyzeLocks` before the rules run; absent when the scan did not run it. Read by `lock-*`. */
  lock?: LockAnalysis;
  /** Inline `tfguard:` annotations of the scanned files (src/rules/suppress.ts), sorted by file and
   * line; absent when the scan did not read them. */
  annotations?: readonly Annotation[];
  /** The bytes of the scanned files by archive path (the archive's loaded files), for fixes that
   * insert text next to what the parser located; absent when the caller did not pass them (the
   * fixes that need them are then advice only). */
  sources?: ReadonlyMap<string, Buffer>;
  /** Set only for rules of the `after-suppression` stage: for each annotation that covered a
   * finding, the rule ids it covered. */
  suppressionsUsed?: ReadonlyMap<Annotation, ReadonlySet<string>>;
}

export interface Rule {
  /** Public, stable id; also the file name `src/rules/<id>.ts` and `docs/rules/<id>.md`. */
  id: string;
  defaultSeverity: Severity;
  /**
   * The default severity under the scan's settings, for a rule whose severity a setting changes
   * (`lock_mode = "readonly"` raises `lock-missing` and `lock-provider-stale` to errors); absent:
   * `defaultSeverity`. An explicit `rule "<id>" { severity = ... }` still wins over it.
   */
  severityFor?(config: ScanConfig): Severity;
  /** One sentence: what the rule checks. */
  summary: string;
  /** Never throws for a violation: returns findings (without ruleId/severity). */
  check(ctx: RuleContext): RuleFinding[];
  /** `after-suppression`: runs after every other rule's findings were matched against the inline
   * annotations, with `ctx.suppressionsUsed` set; its findings are never suppressed. */
  stage?: 'after-suppression';
}
