/**
 * Fix mode: planning and applying the mechanical fixes findings carry (`Fix.edits`), and showing
 * them as unified diffs. Pure; `tfguard fix` (src/cli) reads and writes the files.
 */
export { applyEdits, planFixes, suggestionFor } from './edits';
export type { FixPlan, PlannedRewrites, SkippedFix } from './edits';
export { LOCK_FIX_RULES, planLockFixes } from './lock';
export type { LockFixInput, LockFixPlan, LockFixSource } from './lock';
export { gitQuotedName, unifiedDiff, unpatchablePath } from './diff';
export { EditPlacer, inToolState, realFile, twinPath } from './files';
export type { FileView, Placement } from './files';
