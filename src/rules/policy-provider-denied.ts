import { policyAnswers } from '../policy';
import { describeProvider } from './helpers';
import { shortSource } from '../addrs';
import { isJudged, lockOnlyEntries, policyAt, providerWhere } from './policy-helpers';
import type { Rule, RuleFinding } from './types';

/**
 * A provider the organisation's policy denies (`provider "hashicorp/template" { deny = true,
 * reason = "..." }`): reported where each module declares (or uses) it, quoting the policy's reason,
 * before `terraform init` ever downloads it.
 */
export const policyProviderDenied: Rule = {
  id: 'policy-provider-denied',
  defaultSeverity: 'error',
  summary: 'A module must not require a provider the policy file denies (--policy).',
  check(ctx) {
    const input = ctx.policy;
    if (input === undefined || !input.policy.providers.some((p) => p.deny)) return [];
    const out: RuleFinding[] = [];
    const answers = policyAnswers(input.policy);
    for (const m of ctx.modules) {
      for (const p of m.providers) {
        // The policy's answer first (remembered per source): most providers are not denied.
        const rule = answers.provider(p.source);
        if (rule === undefined || !rule.deny || !isJudged(p)) continue;
        out.push({
          module: m.path,
          ...providerWhere(m, p),
          message: `provider ${describeProvider(p)} is denied by the policy (${policyAt(input, rule.line)}): "${rule.reason ?? ''}"`,
          note: 'Replace or remove the provider; an exception { ... } in the policy file can grant this repository time to.',
          provider: p.source,
        });
      }
    }
    for (const { root, lockFile, engine, entry } of lockOnlyEntries(ctx)) {
      const rule = answers.provider(entry.source as string);
      if (rule === undefined || !rule.deny) continue;
      out.push({
        module: root,
        file: lockFile,
        line: entry.line,
        range: entry.range,
        message:
          `the lock file selects provider ${shortSource(entry.source as string, engine)}, which the policy denies ` +
          `(${policyAt(input, rule.line)}): "${rule.reason ?? ''}"; no module tfguard read declares it (a remote module requires it)`,
        note: 'Replace the module that requires it, or ask for an exception { ... } in the policy file.',
        provider: entry.source as string,
      });
    }
    return out;
  },
};
