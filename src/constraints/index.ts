/**
 * Terraform's provider version-constraint language in one place: parsing (with Terraform's exact
 * accept/reject behaviour), matching and selection, the lock file's normalized form,
 * satisfiability of several modules' constraints, and the best-practice suggestions.
 *
 * Behaviour follows apparentlymart/go-versions and hashicorp/go-version as Terraform 1.11 combines
 * them, checked against the real `terraform init` (test/constraints/oracle.test.ts).
 *
 * Module versions follow go-version alone and differ (`~> 5` is `>= 5` there): module.ts.
 */
export { ConstraintSyntaxError, compareVersions, formatVersion, parseVersion } from './version';
export type { Version } from './version';
export { parseConstraints, validateConstraints } from './parse';
export type { Constraint, Grammar, Operator, ParseOptions } from './parse';
export { findConflict, isSatisfiable, maxSatisfying, satisfies } from './semantics';
export type { SatisfiesOptions } from './semantics';
export { formatConstraint, isNormalized, normalizeConstraints } from './normalize';
export {
  hasUpperBound,
  suggestMinimumOnly,
  suggestUpperBound,
  suggestUpperBoundAt,
  upperBounding,
} from './advice';
export {
  compareModuleVersions,
  moduleConstraintBounded,
  moduleVersionAllowed,
  parseModuleConstraints,
  parseModuleVersion,
  selectModuleRelease,
  unboundedPessimistic,
  validateModuleConstraints,
} from './module';
export type { ModuleConstraint, ModuleOperator, ModuleVersion } from './module';
