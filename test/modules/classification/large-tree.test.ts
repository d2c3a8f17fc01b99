/**
 * Classification of generated trees of 2,000 directories, through the real pipeline: kinds only
 * (the time of 12,000 stacks is measured by `npm run bench`, never asserted in a test). The
 * expected kinds are derived from how each tree was generated, not from the classifier.
 */
import { closeParser, load } from '../../support/modules';

afterAll(closeParser);

const N = 2000;
const TEAMS = 40;
const VERSIONS =
  'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = ">= 5.0" }\n  }\n}\n';
const RESOURCE = 'resource "aws_s3_bucket" "b" {}\n';

test('a module library of 2,000 modules, every other one calling a sibling, nothing deployed', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < N; i++) {
    // Module i calls module i + TEAMS (same team directory) when i is even.
    const call = i % 2 === 0 && i + TEAMS < N ? `module "next" {\n  source = "../m${i + TEAMS}"\n}\n` : '';
    files[`lib/team-${i % TEAMS}/m${i}/main.tf`] = VERSIONS + call + RESOURCE;
  }
  const loaded = await load(files);
  expect(loaded.modules).toHaveLength(N);
  for (const m of loaded.modules) {
    const i = Number(/m(\d+)$/.exec(m.path)?.[1]);
    const called = i % 2 === 0 && i >= TEAMS;
    if (called) {
      expect([m.path, m.kind, m.kindEvidence, m.kindReason]).toEqual([
        m.path,
        'shared',
        'strong',
        `called by module "lib/team-${i % TEAMS}/m${i - TEAMS}" (module.next)`,
      ]);
    } else if (i % 2 === 0) {
      // Uncalled even modules sit in a team directory whose other modules call each other.
      const inTeam = N / TEAMS - 1;
      const calledInTeam = inTeam; // every other module of the team is called by the one before it
      expect([m.path, m.kind, m.kindEvidence, m.kindReason]).toEqual([
        m.path,
        'shared',
        'weak',
        `it sits in the module library "lib/team-${i % TEAMS}" (${calledInTeam} of its ${inTeam} other modules are called by modules of it) and the repository has no backend or lock file`,
      ]);
    } else {
      // Odd team directories hold no calls, and "lib" holds no module directly: no library.
      expect([m.path, m.kind, m.kindEvidence, m.kindReason]).toEqual([
        m.path,
        'root',
        'weak',
        'not called by any module in the archive',
      ]);
    }
  }
});

test('2,000 stacks with backends and providers calling shared modules', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 50; i++) files[`modules/m${i}/main.tf`] = VERSIONS + RESOURCE;
  files['modules/unused/main.tf'] = VERSIONS + RESOURCE;
  for (let i = 0; i < N; i++) {
    files[`stacks/team-${i % TEAMS}/s${i}/main.tf`] =
      `terraform {\n  backend "s3" {\n    key = "s${i}"\n  }\n}\nprovider "aws" {\n  region = "eu-west-2"\n}\n` +
      `module "m" {\n  source = "../../../modules/m${i % 50}"\n}\n`;
  }
  const loaded = await load(files);
  const kinds = new Map(loaded.modules.map((m) => [m.path, `${m.kind}/${m.kindEvidence}`]));
  expect(kinds.size).toBe(N + 51);
  for (let i = 0; i < N; i++)
    expect([i, kinds.get(`stacks/team-${i % TEAMS}/s${i}`)]).toEqual([i, 'root/strong']);
  for (let i = 0; i < 50; i++) expect([i, kinds.get(`modules/m${i}`)]).toEqual([i, 'shared/strong']);
  // Nothing calls it and the repository deploys: a guess from its place, not a library.
  expect(kinds.get('modules/unused')).toBe('shared/weak');
  expect(loaded.roots).toHaveLength(N);
});
