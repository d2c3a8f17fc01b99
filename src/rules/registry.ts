/**
 * The rule registry and the engine that runs rules over a loaded configuration. Every rule is listed
 * here, once, explicitly (no directory scanning) so the bundle holds exactly these and their order
 * (the report order of equal positions, and the order of the docs index) is stable. Adding a rule:
 * CONTRIBUTING.md.
 */
import type { Finding, RuleFinding } from './types';
import type { Severity } from '../model';
import { builtinTerraformProvider } from './builtin-terraform-provider';
import { configurationNotChecked } from './configuration-not-checked';
import { declarationInvalid } from './declaration-invalid';
import { declaredRootMissing } from './declared-root-missing';
import { duplicateRequiredProviders } from './duplicate-required-providers';
import { compareStrings } from './helpers';
import { mergeSameLocation } from './merge';
import { incompatibleConstraints } from './incompatible-constraints';
import { invalidVersionConstraint } from './invalid-version-constraint';
import { lockConstraintsDrift } from './lock-constraints-drift';
import { lockHashMalformed } from './lock-hash-malformed';
import { lockHashMismatch } from './lock-hash-mismatch';
import { lockHashUnknown } from './lock-hash-unknown';
import { lockMissing } from './lock-missing';
import { lockParseError } from './lock-parse-error';
import { lockPlatformCoverage } from './lock-platform-coverage';
import { lockProviderMissing } from './lock-provider-missing';
import { lockProviderStale } from './lock-provider-stale';
import { lockRegistryUnavailable } from './lock-registry-unavailable';
import { lockRegistryUnsigned } from './lock-registry-unsigned';
import { lockSignatureInvalid } from './lock-signature-invalid';
import { lockVersionMismatch } from './lock-version-mismatch';
import { missingConfigurationAlias } from './missing-configuration-alias';
import { missingProviderSource } from './missing-provider-source';
import { missingVersionConstraint } from './missing-version-constraint';
import { moduleCycle } from './module-cycle';
import { moduleRefUnpinned } from './module-ref-unpinned';
import { moduleSourceMissing } from './module-source-missing';
import { moduleUnresolved } from './module-unresolved';
import { moduleVersionMissing } from './module-version-missing';
import { moduleVersionStyle } from './module-version-style';
import { parseError } from './parse-error';
import { policyExceptionExpired } from './policy-exception-expired';
import { applyPolicyExceptions } from './policy-helpers';
import { policyModuleSource } from './policy-module-source';
import { policyPlatformMissing } from './policy-platform-missing';
import { policyProviderDenied } from './policy-provider-denied';
import { policyProviderVersion } from './policy-provider-version';
import { policyRegistryDenied } from './policy-registry-denied';
import { providerVersionUnknown } from './provider-version-unknown';
import { requiredVersionMissing } from './required-version-missing';
import { requiredVersionTooOldForFeature } from './required-version-too-old-for-feature';
import { rootModuleUnbounded } from './root-module-unbounded';
import { sharedModuleProviderConfig } from './shared-module-provider-config';
import { sharedModuleUpperBound } from './shared-module-upper-bound';
import { stackLegacyFile } from './stack-legacy-file';
import { applySuppressions } from './suppress';
import { suppressionInvalid } from './suppression-invalid';
import { suppressionUnused } from './suppression-unused';
import { terragruntUnresolved } from './terragrunt-unresolved';
import { undeclaredProvider } from './undeclared-provider';
import type { Rule, RuleContext } from './types';

export type { Finding, Fix, Rule, RuleContext, RuleFinding, Suppression } from './types';
export { ruleContext, type LoadedForRules } from './context';
export { readAnnotations, type Annotation, type AnnotatedFile } from './suppress';
export { sameEdit } from './fix-helpers';

/** The id of the finding that replaces the output of a rule that threw (a bug in tfguard). */
export const INTERNAL_ERROR_RULE_ID = 'internal-error';

export const RULES: readonly Rule[] = Object.freeze([
  sharedModuleUpperBound,
  rootModuleUnbounded,
  missingVersionConstraint,
  missingProviderSource,
  undeclaredProvider,
  sharedModuleProviderConfig,
  missingConfigurationAlias,
  builtinTerraformProvider,
  invalidVersionConstraint,
  providerVersionUnknown,
  incompatibleConstraints,
  moduleVersionMissing,
  moduleRefUnpinned,
  moduleVersionStyle,
  requiredVersionMissing,
  requiredVersionTooOldForFeature,
  parseError,
  moduleSourceMissing,
  moduleUnresolved,
  terragruntUnresolved,
  moduleCycle,
  duplicateRequiredProviders,
  // Roots declared by deployment tooling, and Terraform Stacks (src/modules/declarations).
  declaredRootMissing,
  declarationInvalid,
  stackLegacyFile,
  configurationNotChecked,
  // Dependency lock file rules: they read `RuleContext.lock`, which `analyzeLocks` (src/lockfile)
  // fills before the rules run; `lock-missing` needs only the modules.
  lockMissing,
  lockParseError,
  lockProviderMissing,
  lockProviderStale,
  lockVersionMismatch,
  lockConstraintsDrift,
  lockHashMalformed,
  lockHashMismatch,
  lockPlatformCoverage,
  lockHashUnknown,
  lockSignatureInvalid,
  lockRegistryUnavailable,
  lockRegistryUnsigned,
  // The organisation's policy (`--policy FILE`, src/policy): they read `RuleContext.policy`.
  policyProviderDenied,
  policyProviderVersion,
  policyRegistryDenied,
  policyModuleSource,
  policyPlatformMissing,
  policyExceptionExpired,
  // Inline suppressions (src/rules/suppress.ts).
  suppressionInvalid,
  suppressionUnused,
]);

/** The dependency-lock-file rules (`lock-*`), in report order. */
export const LOCK_RULES: readonly Rule[] = Object.freeze(RULES.filter((r) => r.id.startsWith('lock-')));

const BY_ID: ReadonlyMap<string, Rule> = new Map(RULES.map((r) => [r.id, r]));

export function ruleById(id: string): Rule | undefined {
  return BY_ID.get(id);
}

/**
 * Runs `rules` (default: all) over `ctx`. A rule disabled in `ctx.config.rules[id]` is skipped; a
 * configured severity replaces the default (the rule's `severityFor` the settings, e.g. `lock_mode`,
 * or else its `defaultSeverity`). A rule that throws (a bug, never a violation) yields
 * one `internal-error` finding naming it and the scan goes on. The policy's exceptions that apply
 * (`ctx.policy`) then suppress `policy-*` findings, the other findings are matched against
 * `ctx.annotations` (covered ones get `suppressed`), and the `after-suppression` rules run last. Output is sorted by file, line, ruleId, module, message (findings without a file first).
 */
export function runRules(ctx: RuleContext, rules: readonly Rule[] = RULES): Finding[] {
  const findings: Finding[] = [];
  const providers = new Map<Finding, string>();
  for (const rule of rules) if (rule.stage === undefined) runRule(rule, ctx, findings, providers);
  if (ctx.policy !== undefined) applyPolicyExceptions(findings, ctx.policy, providers);
  const outcome = applySuppressions(findings, ctx.annotations ?? []);
  const after: RuleContext = { ...ctx, suppressionsUsed: outcome.used };
  for (const rule of rules)
    if (rule.stage === 'after-suppression') runRule(rule, after, outcome.findings, providers);
  return outcome.findings.sort(compareFindings);
}

const SEVERITY_STEPS: readonly Severity[] = ['notice', 'warning', 'error'];

function runRule(rule: Rule, ctx: RuleContext, findings: Finding[], providers: Map<Finding, string>): void {
  const setting = Object.prototype.hasOwnProperty.call(ctx.config.rules, rule.id)
    ? ctx.config.rules[rule.id]
    : undefined;
  if (setting?.enabled === false) return;
  const severity: Severity = setting?.severity ?? rule.severityFor?.(ctx.config) ?? rule.defaultSeverity;
  let produced: RuleFinding[];
  try {
    produced = rule.check(ctx);
    if (!Array.isArray(produced)) throw new TypeError(`check() returned ${typeof produced}, not an array`);
  } catch (err) {
    findings.push(internalError(rule.id, err));
    return;
  }
  // A finding that rests on a guess (a module kind decided on weak evidence) never fails a build:
  // it is a notice whatever the rule's severity, and says what it assumes. A rule's findings are
  // data it built for this call: they are completed in place (a copy of each showed in profiles).
  for (const f of produced) {
    const { lower, provider } = f;
    delete f.lower;
    delete f.provider;
    const finding = f as Finding;
    finding.ruleId = rule.id;
    finding.severity =
      f.confidence === 'low'
        ? 'notice'
        : lower === undefined
          ? severity
          : (SEVERITY_STEPS[Math.max(0, SEVERITY_STEPS.indexOf(severity) - lower)] as Severity);
    if (provider !== undefined) providers.set(finding, provider);
  }
  // One finding per location naming the modules that share it (src/rules/merge.ts).
  findings.push(...mergeSameLocation(produced as Finding[]));
}

function internalError(ruleId: string, err: unknown): Finding {
  const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return {
    ruleId: INTERNAL_ERROR_RULE_ID,
    severity: 'error',
    message: `rule "${ruleId}" failed with an internal error and its checks were skipped: ${detail}`,
    module: '.',
    file: null,
    line: null,
    note: 'This is a bug in tfguard, not in the configuration; please report it with the input.',
  };
}

export function compareFindings(a: Finding, b: Finding): number {
  return (
    compareNullable(a.file, b.file, compareStrings) ||
    compareNullable(a.line, b.line, (x, y) => x - y) ||
    compareStrings(a.ruleId, b.ruleId) ||
    compareStrings(a.module, b.module) ||
    compareStrings(a.message, b.message)
  );
}

function compareNullable<T>(a: T | null, b: T | null, cmp: (x: T, y: T) => number): number {
  if (a === null) return b === null ? 0 : -1;
  if (b === null) return 1;
  return cmp(a, b);
}
