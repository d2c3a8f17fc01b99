import type { RuleFinding } from './types';
import { at, diagnosticsOf } from './helpers';
import type { Rule } from './types';

/**
 * A deployment declaration file (atlantis.yaml, digger.yml, .spacelift/config.yml, atmos.yaml and
 * its stack manifests, env0.workflow.yml) that cannot be read: its tool fails on
 * it too, and tfguard falls back to its own classification for the directories it would declare.
 */
export const declarationInvalid: Rule = {
  id: 'declaration-invalid',
  defaultSeverity: 'warning',
  summary:
    'A deployment declaration file (atlantis.yaml, digger.yml, .spacelift/config.yml, atmos.yaml and stack manifests, env0.workflow.yml) must be valid YAML of the shape its tool reads.',
  check(ctx) {
    return diagnosticsOf(ctx, 'declaration-invalid').map((d): RuleFinding => ({
      module: d.module,
      ...at(d.location),
      message: d.message,
      note: `tfguard decided the kinds of the directories it would declare from its other signals (docs/classification.md).`,
    }));
  },
};
