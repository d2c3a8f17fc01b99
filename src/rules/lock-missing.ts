import { shortSource } from '../addrs';
import { cliName, readonlySeverity, requiredProviders } from './lock-helpers';
import type { RuleFinding } from './types';
import { deployableTrees, kindCaveat, moduleAnchor } from './helpers';
import type { Rule } from './types';

/**
 * Without `.terraform.lock.hcl`, every `terraform init` may select different provider versions and
 * nothing pins the package checksums; `init -lockfile=readonly` fails.
 */
export const lockMissing: Rule = {
  id: 'lock-missing',
  defaultSeverity: 'warning',
  severityFor: (config) => readonlySeverity(config, 'warning'),
  summary: 'A root module that requires providers must have a dependency lock file (.terraform.lock.hcl).',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const tree of deployableTrees(ctx)) {
      const cli = cliName(tree.engine);
      const m = ctx.moduleByPath.get(tree.root);
      if (m === undefined || m.lockFile !== null) continue;
      const caveat = kindCaveat(m);
      const required = requiredProviders(tree);
      if (required.length === 0) continue;
      const names = required.map((p) => shortSource(p.source, tree.engine));
      if (m.terraformStack === true) {
        // A Terraform Stack: `terraform stacks providers-lock` writes its lock file
        // (https://developer.hashicorp.com/terraform/cli/commands/stacks/providers-lock).
        out.push({
          module: tree.root,
          ...moduleAnchor(m),
          message:
            `Terraform Stack "${tree.root}" requires ${names.length === 1 ? 'provider' : 'providers'} ${names.join(', ')} ` +
            'but has no .terraform.lock.hcl beside its component files, so provider versions and checksums are not pinned',
          note: 'Run "terraform stacks providers-lock" in this directory and commit .terraform.lock.hcl.',
        });
        continue;
      }
      out.push({
        module: tree.root,
        ...moduleAnchor(m),
        message:
          `root module "${tree.root}" requires ${names.length === 1 ? 'provider' : 'providers'} ${names.join(', ')} ` +
          'but has no .terraform.lock.hcl, so provider versions and checksums are not pinned ' +
          `(${cli} init -lockfile=readonly fails)` +
          caveat.suffix,
        ...(caveat.weak ? { confidence: 'low' as const } : {}),
        note:
          `Run "${cli} init" in this directory, which writes the lock file (add the checksums of every other ` +
          `platform the team uses with "${cli} providers lock -platform=..."), and commit .terraform.lock.hcl.`,
      });
    }
    return out;
  },
};
