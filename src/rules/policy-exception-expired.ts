import { shortSource } from '../addrs';
import { forRepository, isExpired } from './policy-helpers';
import type { Rule, RuleFinding } from './types';

/**
 * A policy exception for the scanned repository whose `expires` date has passed: it no longer
 * applies (the findings it covered count again), and this says so, pointing at the exception in
 * the policy file. The date itself still counts; days are UTC.
 */
export const policyExceptionExpired: Rule = {
  id: 'policy-exception-expired',
  defaultSeverity: 'warning',
  summary: 'A policy exception for this repository is past its expiry date and no longer applies.',
  check(ctx) {
    const input = ctx.policy;
    if (input === undefined) return [];
    const out: RuleFinding[] = [];
    for (const e of input.policy.exceptions) {
      if (!forRepository(e, input) || !isExpired(e, input)) continue;
      const about = e.provider === null ? '' : ` for provider ${shortSource(e.provider.text)}`;
      out.push({
        module: '.',
        file: input.policy.file,
        line: e.line,
        message:
          `the policy exception to ${e.rule}${about} for ${input.repository ?? ''} (repository = "${e.repository}") ` +
          `expired on ${e.expires}, so it no longer applies; its reason was: "${e.reason}"`,
        note: 'Fix what it excused, or renew the exception with a new expires date in the policy file.',
      });
    }
    return out;
  },
};
