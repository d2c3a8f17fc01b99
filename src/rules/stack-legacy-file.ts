import type { RuleFinding } from './types';
import { at, diagnosticsOf } from './helpers';
import type { Rule } from './types';

/**
 * Terraform Stacks' public beta wrote component configuration in `*.tfstack.hcl` files; current
 * Terraform reads only `*.tfcomponent.hcl` (src/modules/declarations/stacks.ts cites the docs), so
 * a leftover `.tfstack.hcl` file is silently ignored: its components are not deployed.
 */
export const stackLegacyFile: Rule = {
  id: 'stack-legacy-file',
  defaultSeverity: 'error',
  summary:
    'A Terraform Stack must not keep *.tfstack.hcl files: Terraform 1.14 and later ignore them and read component configuration only from *.tfcomponent.hcl.',
  check(ctx) {
    return diagnosticsOf(ctx, 'stack-legacy-file').map((d): RuleFinding => {
      const name = d.location.file.slice(d.location.file.lastIndexOf('/') + 1);
      const renamed = name.replace(/\.tfstack\.hcl$/, '.tfcomponent.hcl');
      const beside =
        d.components.length > 0
          ? ` The Stack's component configuration is read from ${d.components.join(', ')}.`
          : ' This directory has no *.tfcomponent.hcl file, so Terraform finds no Stack here.';
      return {
        module: d.module,
        ...at(d.location),
        message: `${d.location.file} is a Terraform Stacks beta file that Terraform 1.14 and later ignore: its blocks are not part of the Stack.${beside}`,
        note: `Rename it to ${renamed} (and deployment files to *.tfdeploy.hcl), or delete it if its blocks moved already.`,
      };
    });
  },
};
