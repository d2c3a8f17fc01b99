/**
 * The dependency-lock-file rules (issue 3), in report order. They read `RuleContext.lock`, which
 * `analyzeLocks` (src/lockfile) fills before the rules run; `lock-missing` needs only the modules.
 */
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
import type { Rule } from './types';

export const LOCK_RULES: readonly Rule[] = Object.freeze([
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
]);

/** The rules that report only when the registry cross-check ran (`--registry`, `registry = true`). */
export const REGISTRY_RULE_IDS: readonly string[] = Object.freeze([
  lockHashUnknown.id,
  lockSignatureInvalid.id,
  lockRegistryUnavailable.id,
  lockRegistryUnsigned.id,
]);
