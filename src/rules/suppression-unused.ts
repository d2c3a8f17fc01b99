import type { RuleFinding } from './types';
import { modulesWithParseErrors } from './helpers';
import { REGISTRY_RULE_IDS } from './lock-helpers';
import { describeAnnotation, moduleOfFile } from './suppress';
import type { Rule } from './types';

/**
 * A valid annotation that covered no finding of a rule it names in this scan: the finding was
 * fixed, the code moved away from the annotation, or the rule id is not the one that reports it.
 * Left alone, such an annotation would silently hide the next, unrelated finding on that line.
 *
 * Not reported where the scan could not have produced the finding: a rule disabled in the
 * settings, a registry-check rule in a scan without the registry check, or a module with a file
 * that failed to parse (rules skip such modules).
 */
export const suppressionUnused: Rule = {
  id: 'suppression-unused',
  defaultSeverity: 'notice',
  summary:
    'An inline tfguard:ignore / tfguard:ignore-file annotation should cover a finding of every rule it names.',
  stage: 'after-suppression',
  check(ctx) {
    const used = ctx.suppressionsUsed;
    if (used === undefined) return [];
    const unparsed = modulesWithParseErrors(ctx);
    const registry = ctx.lock?.registryChecked === true;
    const out: RuleFinding[] = [];
    for (const a of ctx.annotations ?? []) {
      if (a.problems.length > 0) continue;
      const module = moduleOfFile(ctx, a.file);
      if (unparsed.has(module)) continue;
      const covered = used.get(a);
      const unusedIds = a.ruleIds.filter(
        (id) =>
          !covered?.has(id) &&
          ctx.config.rules[id]?.enabled !== false &&
          (registry || !REGISTRY_RULE_IDS.includes(id)),
      );
      if (unusedIds.length === 0) continue;
      const where = a.scope === 'file' ? 'in this file' : `on line ${a.covers.join(' or ')}`;
      const which = unusedIds.length === 1 ? `${unusedIds[0]} finding` : `finding of ${unusedIds.join(', ')}`;
      out.push({
        module,
        file: a.file,
        line: a.line,
        message: `annotation "${describeAnnotation(a)}" covered no ${which} ${where} in this scan`,
        note:
          'If the finding is gone for good, remove the annotation (or that rule id from it), so it cannot hide a ' +
          'later, unrelated finding; if the finding moved, move the annotation with it.',
      });
    }
    return out;
  },
};
