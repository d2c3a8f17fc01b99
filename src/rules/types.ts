import type { LockAnalysis } from '../lockfile/types';
import type { FieldSetting } from '../util/settings';
import type { Engine, InputKind, ScanConfig, Severity, SourceRange, TextEdit } from '../model';
import type { LoadDiagnostic, ModuleInfo, RootTree } from '../modules';
import type { PolicyInput } from '../policy';

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
  /** What was scanned, for messages that name it (`inputNoun`); absent: an archive. */
  input?: InputKind;
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
  /** The organisation's policy (`--policy FILE`, the service's policy object), the repository the
   * scan is for and today's date: what the `policy-*` rules judge; absent: no policy. */
  policy?: PolicyInput;
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
  /** The settings only this rule reads (`module_ref_policy`), declared here and nowhere else: the
   * settings file parser, the defaults and the README's settings table take them from the rule. */
  options?: readonly FieldSetting<keyof ScanConfig>[];
}

/** A mechanical fix a finding can offer (for example the replacement constraint string). */
export interface Fix {
  description: string;
  /** The replacement text for the offending value (e.g. a constraint string). */
  replacement: string;
  /** The edits that apply the fix to the files, when the fix is safe to apply mechanically.
   * Edits of one fix never overlap; applying them all leaves every file syntactically valid. */
  edits?: TextEdit[];
  /** For a fix of one edit: the whole lines it touches (`startLine` to `endLine` of `file`) as they
   * read after it, line endings as `\n`. What a line-based review suggestion (a GitHub
   * ```suggestion block) replaces those lines with. */
  suggestion?: { file: string; startLine: number; endLine: number; text: string };
}

/** One finding in a report. */
export interface Finding {
  ruleId: string;
  severity: Severity;
  message: string;
  /** Module path relative to the archive root, `"."` for the top directory. */
  module: string;
  /** When one location serves several modules (Terragrunt units sharing a generated file), every
   * module the finding applies to, sorted; `module` is the first. Absent otherwise. */
  modules?: string[];
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
export type RuleFinding = Omit<Finding, 'ruleId' | 'severity' | 'suppressed'> & {
  /** Steps below the rule's (configured) severity this finding is reported at, for a rule whose
   * findings differ in weight (`policy-provider-version`: a locked version outside the policy is an
   * error, a constraint that merely admits one a warning). Never in the report. */
  lower?: 1 | 2;
  /** The provider source (`HOST/NAMESPACE/TYPE`) a policy finding is about: a policy exception
   * that names a provider applies to it. Never in the report. */
  provider?: string;
};

export type AnnotationScope = 'line' | 'file';

/** One `tfguard:` annotation found in a file. */
export interface Annotation {
  file: string;
  /** Line of the comment (of the `"//"` property in JSON). */
  line: number;
  scope: AnnotationScope;
  /** The directive as written, e.g. `tfguard:ignore`. */
  directive: string;
  /** Rule ids named, in the order written, without duplicates. */
  ruleIds: string[];
  /** The reason, white space collapsed; empty when none was given. */
  reason: string;
  /** Line scope: the lines whose findings it covers, ascending. Empty for file scope. */
  covers: number[];
  /** Why it suppresses nothing; empty for a valid annotation. */
  problems: string[];
}
