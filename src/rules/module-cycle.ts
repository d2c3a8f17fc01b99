import type { RuleFinding } from './types';
import { at, diagnosticsOf } from './helpers';
import type { Rule } from './types';

/** Local module calls that lead back to a calling module can never be instantiated. */
export const moduleCycle: Rule = {
  id: 'module-cycle',
  defaultSeverity: 'error',
  summary: 'Local module calls must not form a cycle.',
  check(ctx) {
    return diagnosticsOf(ctx, 'module-cycle').map((d): RuleFinding => ({
      module: d.module,
      ...at(d.location),
      message: `local module calls form a cycle: ${d.cycle.map((p) => `"${p}"`).join(' → ')}`,
    }));
  },
};
