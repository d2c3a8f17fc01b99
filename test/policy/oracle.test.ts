/**
 * terraform 1.11 as the oracle for the narrowing fix of `policy-provider-version`
 * (src/policy/ranges.ts): for each root constraint and policy range, a root that declares the
 * narrowed constraint must make `terraform init` select exactly what a root constrained by both
 * (its own constraint, and the policy's range in a child module) selects, over a filesystem mirror
 * whose versions sit on every boundary; offline.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { parseConstraints } from '../../src/constraints';
import { intersectConstraints } from '../../src/policy';
import { describeWithTerraform } from '../support/external';
import {
  mapLimit,
  readLockFile,
  requiredProvidersTf,
  terraformInit,
  withMirror,
  writeTree,
  type Mirror,
} from '../support/terraform';

const FAKE = 'registry.terraform.io/hashicorp/fake';
const VERSIONS = [
  '4.9.0',
  '5.0.0',
  '5.39.9',
  '5.40.0',
  '5.46.0',
  '5.47.0',
  '5.99.0',
  '6.0.0',
  '6.2.0',
  '6.9.9',
  '7.0.0',
  '7.1.0',
];
/** [root constraint, policy range]: every case where the rule offers the fix. */
const CASES: Array<[string, string]> = [
  ['>= 5.0', '>= 5.40, < 7.0'],
  ['~> 5.0', '>= 5.40, < 7.0'],
  ['>= 6.2', '>= 5.40, < 7.0'],
  ['< 6.0', '>= 5.40, != 5.99.0'],
  ['>=5.10,<8', '>= 5.40, < 7.0'],
  ['!= 6.9.9', '~> 6.0'],
  ['~> 5.0', '~> 5.40.0'],
];

describeWithTerraform('policy range narrowing against terraform init', () => {
  let mirror: Mirror;
  let work: string;
  beforeAll(async () => {
    mirror = await withMirror(VERSIONS.map((version) => ({ source: 'hashicorp/fake', version })));
    work = await mkdtemp(join(mirror.dir, 'work-'));
  });
  afterAll(async () => {
    await mirror?.cleanup();
  });

  async function selected(dir: string, files: Record<string, string>): Promise<string> {
    await writeTree(dir, files);
    const r = await terraformInit(dir, mirror);
    if (r.code !== 0)
      return `init failed: ${r.stderr.split('\n').find((l) => l.includes('Error')) ?? r.code}`;
    return readLockFile(dir).get(FAKE)?.version ?? 'nothing locked';
  }

  test('the narrowed constraint selects what both constraints together select', async () => {
    const rows = await mapLimit(CASES, 2, async ([root, policy], i) => {
      const narrowed = intersectConstraints(parseConstraints(root), parseConstraints(policy));
      if (narrowed === null) throw new Error(`no intersection for ${root} and ${policy}`);
      const both = await selected(join(work, `both-${i}`), {
        'main.tf': `${requiredProvidersTf({ fake: { source: 'hashicorp/fake', version: root } })}module "policy" {\n  source = "./policy"\n}\n`,
        'policy/main.tf': requiredProvidersTf({ fake: { source: 'hashicorp/fake', version: policy } }),
      });
      const fixed = await selected(join(work, `fixed-${i}`), {
        'main.tf': requiredProvidersTf({ fake: { source: 'hashicorp/fake', version: narrowed } }),
      });
      return { root, policy, narrowed, both, fixed };
    });
    for (const r of rows) expect({ ...r, fixed: r.both }).toEqual(r);
    // Not vacuous: the cases select different versions.
    expect(new Set(rows.map((r) => r.both)).size).toBeGreaterThan(3);
  });
});
