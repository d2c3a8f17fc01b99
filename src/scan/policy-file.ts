/**
 * Reading the organisation's policy file (src/policy) with the scan's shared HCL parser, and the
 * `PolicyInput` a scan is given: the policy, the repository and today's date.
 */
import { parsePolicy, utcDay, type Policy, type PolicyInput } from '../policy';
import { RULES } from '../rules';
import type { HclParserSettings } from './types';
import { sharedHclParser } from './pipeline';

const KNOWN_RULES: ReadonlySet<string> = new Set(RULES.map((r) => r.id));

/**
 * Parses policy text. `name` is how messages name the file (`policy.hcl`, `s3://bucket/key`).
 * Throws `InputError('invalid-policy')` naming the file and line: a policy is never applied in part.
 */
export async function readPolicy(
  name: string,
  content: Buffer,
  parser: HclParserSettings = {},
): Promise<Policy> {
  // The parser picks the syntax from the name: a policy is always native syntax.
  const parseName = name.endsWith('.json') ? `${name}.hcl` : name;
  const result = await sharedHclParser(parser).parse(parseName, content);
  const named = result.ok ? result : { ok: false as const, error: { ...result.error, path: name } };
  return parsePolicy(name, named, KNOWN_RULES);
}

/** What a scan checks against: `now` decides which exceptions have expired (UTC days). */
export function policyInput(policy: Policy, repository: string | null, now: Date): PolicyInput {
  return { policy, repository, today: utcDay(now) };
}
