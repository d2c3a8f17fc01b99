/**
 * Who may scan, upload and read which repository: the operator's access policy
 * (`TFGUARD_ACCESS_POLICY`, docs/service.md "Tenants"). Pure: the policy is parsed from the text of
 * the setting and decisions are made over the caller's identities as API Gateway's IAM authorizer
 * or the S3 event names them.
 *
 * A caller is known by up to two identities:
 * - its ARN (`requestContext.authorizer.iam.userArn`: `arn:aws:sts::<account>:assumed-role/<role>/<session>`
 *   or `arn:aws:iam::<account>:user/<name>`), which only the API has;
 * - its principal id, `AWS:<unique id>` (`AWS:AROA…:<session>` for a role session, `AWS:AIDA…` for
 *   a user): what an S3 event's `userIdentity.principalId` says about a direct writer, and what
 *   the API's `authorizer.iam.userId` is once prefixed with `AWS:`.
 *
 * A principal pattern matches either; `*` matches any run of characters, `?` one (as in IAM
 * policies). A role session's name is chosen by whoever assumes the role, so a pattern must not
 * depend on it: an `assumed-role` ARN pattern has to end in `/*`, a role principal-id pattern
 * (`AWS:AROA…`) in `:*`.
 *
 * Repository patterns are `/`-separated like repository names: `*` matches any run of characters
 * within one segment, and a last segment `**` one or more segments (`acme/**`: every repository
 * under `acme/`, however deep).
 *
 * Without a policy the install is single-tenant: every caller may do everything (as before
 * policies existed).
 */
import { normalizeRepository } from './keys';

/** Who is calling, as far as the service can tell. */
export interface Caller {
  /** The IAM ARN (API only). */
  arn: string | null;
  /** `AWS:<unique id>[:<session>]` (API: `AWS:` + `authorizer.iam.userId`; S3 event: `principalId`). */
  principalId: string | null;
}

export const NO_CALLER: Caller = { arn: null, principalId: null };

interface Grant {
  principals: RegExp[];
  repositories: RegExp[];
}

export interface AccessPolicy {
  grants: readonly Grant[];
  /** May read every repository's scans (not scan or upload for them). */
  auditors: readonly RegExp[];
  /** The patterns as written, for logs. */
  source: { grants: number; auditors: number };
}

/** The policy cannot be used: the message says what is wrong, for the setting `name`. */
export class AccessPolicyError extends Error {
  override readonly name = 'AccessPolicyError';
}

const escape = (s: string): string => s.replace(/[.+^${}()|[\]\\]/g, '\\$&');

function principalPattern(raw: unknown, where: string): RegExp {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new AccessPolicyError(`${where} must be a non-empty string`);
  }
  const pattern = raw.trim();
  const isArn = pattern.startsWith('arn:');
  const isId = pattern.startsWith('AWS:');
  if (!isArn && !isId) {
    throw new AccessPolicyError(
      `${where} ${JSON.stringify(pattern)} must be an IAM ARN pattern (arn:…) or a principal id pattern (AWS:…)`,
    );
  }
  if (pattern === 'arn:*' || pattern === 'AWS:*') {
    throw new AccessPolicyError(`${where} ${JSON.stringify(pattern)} would match every caller`);
  }
  if (/:assumed-role\//.test(pattern) && !pattern.endsWith('/*')) {
    throw new AccessPolicyError(
      `${where} ${JSON.stringify(pattern)} names a role session: end it in "/*" (whoever assumes ` +
        'the role chooses the session name, so it proves nothing)',
    );
  }
  if (/^AWS:AROA/.test(pattern) && !pattern.endsWith(':*')) {
    throw new AccessPolicyError(
      `${where} ${JSON.stringify(pattern)} names a role session: end it in ":*" (whoever assumes ` +
        'the role chooses the session name, so it proves nothing)',
    );
  }
  const body = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : escape(c)))
    .join('');
  return new RegExp(`^${body}$`);
}

function repositoryPattern(raw: unknown, where: string): RegExp {
  const pattern = typeof raw === 'string' ? normalizeRepository(raw) : null;
  if (pattern === null) {
    throw new AccessPolicyError(`${where} must be a repository name or pattern, got ${JSON.stringify(raw)}`);
  }
  const segments = pattern.split('/');
  const parts = segments.map((segment, i) => {
    if (segment === '**') {
      if (i !== segments.length - 1) {
        throw new AccessPolicyError(`${where} ${JSON.stringify(pattern)}: "**" may only be the last segment`);
      }
      return '[^/]+(?:/[^/]+)*';
    }
    if (segment.includes('**')) {
      throw new AccessPolicyError(`${where} ${JSON.stringify(pattern)}: "**" must be a whole segment`);
    }
    return segment
      .split('')
      .map((c) => (c === '*' ? '[^/]*' : escape(c)))
      .join('');
  });
  return new RegExp(`^${parts.join('/')}$`);
}

function list(value: unknown, where: string): unknown[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.length > 0) return value;
  throw new AccessPolicyError(`${where} must be a string or a non-empty array of strings`);
}

/**
 * Parses the policy document:
 *
 * ```json
 * { "callers": [ { "principal": "<pattern>" | ["<pattern>", …], "repositories": "<pattern>" | [ … ] }, … ],
 *   "auditors": [ "<pattern>", … ] }
 * ```
 *
 * `text` undefined or blank: no policy (single-tenant), null. Anything unusable throws
 * `AccessPolicyError` naming the entry.
 */
export function parseAccessPolicy(
  text: string | undefined,
  name = 'TFGUARD_ACCESS_POLICY',
): AccessPolicy | null {
  if (text === undefined || text.trim() === '') return null;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new AccessPolicyError(`${name} is not JSON: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new AccessPolicyError(`${name} must be a JSON object with "callers" (and optionally "auditors")`);
  }
  const { callers, auditors, ...rest } = doc as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) {
    throw new AccessPolicyError(
      `${name}: unknown field ${JSON.stringify(unknown[0])} (expected "callers", "auditors")`,
    );
  }
  if (!Array.isArray(callers)) throw new AccessPolicyError(`${name}: "callers" must be an array`);
  const grants = callers.map((entry: unknown, i): Grant => {
    const where = `${name} callers[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new AccessPolicyError(`${where} must be an object with "principal" and "repositories"`);
    }
    const { principal, repositories, ...extra } = entry as Record<string, unknown>;
    const other = Object.keys(extra);
    if (other.length > 0) {
      throw new AccessPolicyError(
        `${where}: unknown field ${JSON.stringify(other[0])} (expected "principal", "repositories")`,
      );
    }
    return {
      principals: list(principal, `${where}.principal`).map((p, j) =>
        principalPattern(p, `${where}.principal[${j}]`),
      ),
      repositories: list(repositories, `${where}.repositories`).map((r, j) =>
        repositoryPattern(r, `${where}.repositories[${j}]`),
      ),
    };
  });
  const auditorPatterns =
    auditors === undefined
      ? []
      : Array.isArray(auditors)
        ? auditors.map((a, i) => principalPattern(a, `${name} auditors[${i}]`))
        : (() => {
            throw new AccessPolicyError(`${name}: "auditors" must be an array`);
          })();
  if (grants.length === 0 && auditorPatterns.length === 0) {
    throw new AccessPolicyError(
      `${name} grants nothing to anyone; leave it unset for a single-tenant install`,
    );
  }
  return {
    grants,
    auditors: auditorPatterns,
    source: { grants: grants.length, auditors: auditorPatterns.length },
  };
}

function identities(caller: Caller): string[] {
  return [caller.arn, caller.principalId].filter((x): x is string => x !== null && x !== '');
}

function matchesCaller(patterns: readonly RegExp[], caller: Caller): boolean {
  const ids = identities(caller);
  return patterns.some((p) => ids.some((id) => p.test(id)));
}

/** May `caller` scan and upload archives of `repository` (and so move its `latest` pointer)? */
export function mayWrite(
  policy: AccessPolicy | null | undefined,
  caller: Caller,
  repository: string,
): boolean {
  if (policy === null || policy === undefined) return true;
  return policy.grants.some(
    (g) => matchesCaller(g.principals, caller) && g.repositories.some((r) => r.test(repository)),
  );
}

/** May `caller` read the scans of `repository` (`null`: a scan that names none)? */
export function mayRead(
  policy: AccessPolicy | null | undefined,
  caller: Caller,
  repository: string | null,
): boolean {
  if (policy === null || policy === undefined) return true;
  if (matchesCaller(policy.auditors, caller)) return true;
  return repository !== null && mayWrite(policy, caller, repository);
}

/** How a caller is named in messages and records: the ARN, else the principal id, else null. */
export function callerName(caller: Caller): string | null {
  return caller.arn ?? caller.principalId ?? null;
}
