import { policyAnswers, providerHost } from '../policy';
import { describeProvider } from './helpers';
import { isJudged, lockOnlyEntries, providerWhere } from './policy-helpers';
import type { Rule, RuleFinding } from './types';

/**
 * A provider whose registry host the policy does not allow (`allowed_registries`): a provider
 * without a host in its `source` comes from the engine's public registry (registry.terraform.io,
 * registry.opentofu.org for OpenTofu), as `terraform init` installs it.
 */
export const policyRegistryDenied: Rule = {
  id: 'policy-registry-denied',
  defaultSeverity: 'error',
  summary: "A provider's registry host must be one the policy file allows (allowed_registries).",
  check(ctx) {
    const input = ctx.policy;
    const allowed = input?.policy.allowedRegistries;
    if (input === undefined || allowed === null || allowed === undefined) return [];
    const out: RuleFinding[] = [];
    const answers = policyAnswers(input.policy);
    for (const m of ctx.modules) {
      for (const p of m.providers) {
        // The policy's answer first (remembered per source): most hosts are allowed.
        if (answers.registryAllowed(p.source) || !isJudged(p)) continue;
        const host = providerHost(p.source);
        out.push({
          module: m.path,
          ...providerWhere(m, p),
          message:
            `provider ${describeProvider(p)} is installed from ${host}${p.sourceExplicit ? '' : ' (the default registry: its source has no host)'}, ` +
            `which the policy does not allow (allowed_registries: ${allowed.join(', ') || 'none'})`,
          note: 'Install the provider from an allowed registry (a mirror of it), or ask for the host to be allowed in the policy.',
          provider: p.source,
        });
      }
    }
    for (const { root, lockFile, entry } of lockOnlyEntries(ctx)) {
      if (answers.registryAllowed(entry.source as string)) continue;
      const host = providerHost(entry.source as string);
      out.push({
        module: root,
        file: lockFile,
        line: entry.line,
        range: entry.range,
        message:
          `the lock file selects provider ${entry.source as string} from ${host}, which the policy does not allow ` +
          `(allowed_registries: ${allowed.join(', ') || 'none'}); no module tfguard read declares it (a remote module requires it)`,
        note: 'Install the provider from an allowed registry (a mirror of it), or ask for the host to be allowed in the policy.',
        provider: entry.source as string,
      });
    }
    return out;
  },
};
