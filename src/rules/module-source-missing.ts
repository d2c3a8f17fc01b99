import type { RuleFinding } from './types';
import { at, diagnosticsOf, inputNoun } from './helpers';
import type { Rule } from './types';

/** A local module source must point to a directory that exists; otherwise `init` fails. */
export const moduleSourceMissing: Rule = {
  id: 'module-source-missing',
  defaultSeverity: 'error',
  summary:
    'A local module call must point to a directory that is present in the scanned directory or archive.',
  check(ctx) {
    return diagnosticsOf(ctx, 'module-missing').map((d): RuleFinding => {
      const call = ctx.moduleByPath.get(d.module)?.moduleCalls.find((c) => c.name === d.call);
      const source = call?.source ? ` source "${call.source}"` : '';
      return {
        module: d.module,
        ...at(d.location),
        message: `module "${d.call}"${source} points to directory "${d.target}", which is not in the ${inputNoun(ctx)}`,
      };
    });
  },
};
