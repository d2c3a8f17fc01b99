/**
 * The access policy (`TFGUARD_ACCESS_POLICY`): the documented examples (one role per repository,
 * one role per organisation, direct writers by principal id, an auditor), pattern semantics, and
 * unusable documents refused with the entry named.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mayRead, mayWrite, parseAccessPolicy, type Caller } from '../../src/service/access';
import { loadServiceSettings, SettingsError } from '../../src/service/settings';

const ACCOUNT = '123456789012';
const session = (role: string, name = 'GitHubActions', id = 'AROAX'): Caller => ({
  arn: `arn:aws:sts::${ACCOUNT}:assumed-role/${role}/${name}`,
  principalId: `AWS:${id}:${name}`,
});

// The two examples of docs/service.md ("Tenants"), as written there.
const DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'service.md'), 'utf8');
const TENANTS = DOC.slice(DOC.indexOf('## Tenants'));
const [PER_REPOSITORY, PER_ORGANISATION] = [...TENANTS.matchAll(/```json\n([\s\S]*?)```/g)].map(
  (m) => JSON.parse(m[1]!) as unknown,
);

const perRepository = parseAccessPolicy(JSON.stringify(PER_REPOSITORY))!;
const perOrganisation = parseAccessPolicy(JSON.stringify(PER_ORGANISATION))!;

test.each<[string, typeof perRepository, Caller, string, boolean]>([
  ['the role of the repository', perRepository, session('tfguard-acme-network'), 'acme/network', true],
  [
    'whatever session name it chose',
    perRepository,
    session('tfguard-acme-network', 'acme-billing'),
    'acme/network',
    true,
  ],
  ['another repository', perRepository, session('tfguard-acme-network'), 'acme/billing', false],
  [
    'a repository whose name extends it',
    perRepository,
    session('tfguard-acme-network'),
    'acme/network-2',
    false,
  ],
  ['a role whose name extends it', perRepository, session('tfguard-acme-network-x'), 'acme/network', false],
  ['the auditor (reads only)', perRepository, session('security-audit'), 'acme/network', false],
  ['no caller at all', perRepository, { arn: null, principalId: null }, 'acme/network', false],
  [
    'the organisation role, one of its repositories',
    perOrganisation,
    session('tfguard-acme'),
    'acme/anything',
    true,
  ],
  [
    'the organisation role, a deeper name (* is one segment)',
    perOrganisation,
    session('tfguard-acme'),
    'acme/a/b',
    false,
  ],
  [
    'the organisation role, another organisation',
    perOrganisation,
    session('tfguard-acme'),
    'globex/a',
    false,
  ],
  ['** is any depth', perOrganisation, session('tfguard-globex'), 'globex/group/sub/repo', true],
  ['** needs a segment', perOrganisation, session('tfguard-globex'), 'globex', false],
  [
    'a direct writer by principal id (S3 event)',
    perOrganisation,
    { arn: null, principalId: 'AWS:AROAEXAMPLEUPLOADER:pipeline-7' },
    'acme/x',
    true,
  ],
  [
    'another principal id',
    perOrganisation,
    { arn: null, principalId: 'AWS:AROAOTHER:pipeline-7' },
    'acme/x',
    false,
  ],
])('mayWrite: %s', (_label, policy, caller, repository, expected) => {
  expect(mayWrite(policy, caller, repository)).toBe(expected);
});

test('mayRead: the allowed callers and every auditor; a scan that names no repository only auditors', () => {
  expect(mayRead(perRepository, session('tfguard-acme-network'), 'acme/network')).toBe(true);
  expect(mayRead(perRepository, session('tfguard-acme-billing'), 'acme/network')).toBe(false);
  expect(mayRead(perRepository, session('security-audit'), 'acme/network')).toBe(true);
  expect(mayRead(perRepository, session('security-audit'), null)).toBe(true);
  expect(mayRead(perRepository, session('tfguard-acme-network'), null)).toBe(false);
});

test('no policy: a single-tenant install, where everyone may do everything', () => {
  expect(parseAccessPolicy(undefined)).toBeNull();
  expect(parseAccessPolicy('  ')).toBeNull();
  const nobody = { arn: null, principalId: null };
  expect(mayWrite(null, nobody, 'acme/network')).toBe(true);
  expect(mayRead(null, nobody, null)).toBe(true);
});

test.each([
  ['not JSON', '{', /TFGUARD_ACCESS_POLICY is not JSON/],
  ['an array', '[]', /must be a JSON object/],
  ['an unknown field', '{"callers": [], "readers": []}', /unknown field "readers"/],
  ['nothing granted', '{"callers": []}', /grants nothing to anyone; leave it unset/],
  [
    'a grant without repositories',
    '{"callers": [{"principal": "arn:aws:iam::1:user/a"}]}',
    /callers\[0\]\.repositories must be/,
  ],
  [
    'a principal that is no ARN',
    '{"callers": [{"principal": "ci", "repositories": "a/b"}]}',
    /must be an IAM ARN pattern/,
  ],
  [
    'every caller',
    '{"callers": [{"principal": "arn:*", "repositories": "a/b"}]}',
    /would match every caller/,
  ],
  [
    'a role session name',
    `{"callers": [{"principal": "arn:aws:sts::${ACCOUNT}:assumed-role/ci/acme-network", "repositories": "acme/network"}]}`,
    /names a role session: end it in "\/\*"/,
  ],
  [
    'a role session by principal id',
    '{"callers": [{"principal": "AWS:AROAEXAMPLE:acme-network", "repositories": "acme/network"}]}',
    /names a role session: end it in ":\*"/,
  ],
  [
    'a traversing repository',
    '{"callers": [{"principal": "arn:aws:iam::1:user/a", "repositories": "../x"}]}',
    /repositories\[0\] must be a repository name/,
  ],
  [
    '** inside',
    '{"callers": [{"principal": "arn:aws:iam::1:user/a", "repositories": "a/**/b"}]}',
    /"\*\*" may only be the last segment/,
  ],
])('an unusable policy (%s) fails the settings, naming the variable', (_label, text, message) => {
  const env = { TFGUARD_UPLOADS_BUCKET: 'tfguard-uploads-x', TFGUARD_ACCESS_POLICY: text };
  expect(() => loadServiceSettings(env)).toThrow(SettingsError);
  expect(() => loadServiceSettings(env)).toThrow(message);
});

test('the settings carry the parsed policy', () => {
  const settings = loadServiceSettings({
    TFGUARD_UPLOADS_BUCKET: 'tfguard-uploads-x',
    TFGUARD_ACCESS_POLICY: JSON.stringify(PER_REPOSITORY),
  });
  expect(settings.accessPolicy?.source).toEqual({ grants: 2, auditors: 1 });
  expect(loadServiceSettings({ TFGUARD_UPLOADS_BUCKET: 'tfguard-uploads-x' }).accessPolicy).toBeNull();
});
