import type { RuleFinding } from './types';
import { describeAnnotation, moduleOfFile } from './suppress';
import type { Rule } from './types';

/**
 * An inline annotation that cannot be honoured (no reason, an unknown rule id, `ignore-file` after
 * the first block, a line annotation in JSON, an unknown `tfguard:` directive). It suppresses
 * nothing, so the finding it was meant for stays visible; this says why.
 */
export const suppressionInvalid: Rule = {
  id: 'suppression-invalid',
  defaultSeverity: 'warning',
  summary:
    'An inline tfguard:ignore / tfguard:ignore-file annotation must name known rule ids and give a reason; otherwise it suppresses nothing.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const a of ctx.annotations ?? []) {
      if (a.problems.length === 0) continue;
      out.push({
        module: moduleOfFile(ctx, a.file),
        file: a.file,
        line: a.line,
        message: `annotation "${describeAnnotation(a)}" suppresses nothing: ${a.problems.join('; ')}`,
        note:
          'Write "# tfguard:ignore <rule-id>[,<rule-id>...] <reason>" on the line or directly above it, or ' +
          '"# tfguard:ignore-file <rule-id> <reason>" before the first block of the file (docs/suppressions.md).',
      });
    }
    return out;
  },
};
