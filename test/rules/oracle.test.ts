/**
 * The real `terraform init` (offline, fake providers in a filesystem mirror) as the oracle for the
 * rules that describe configurations Terraform refuses: for every scenario, the kinds of error
 * terraform reports must be exactly the error rules tfguard's full pipeline (tar.gz → parser →
 * loader → rules) reports. Scenarios are chosen so that whenever a common version exists, one is
 * in the mirror (otherwise "no version satisfies" and "none available" would differ).
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { scanFiles } from '../support/scan';
import { mapLimit, terraformInit, withMirror, writeTree, type Mirror } from '../support/terraform';
import { describeWithTerraform } from '../support/external';
import { lines } from '../support/rule-table';

const FAKE_VERSIONS = ['1.0.0', '1.2.0', '1.2.5', '2.0.0', '2.3.1', '3.0.0'];

/** Terraform error → the rule that must report the same problem. */
const ORACLE: Array<{ rule: string; error: RegExp }> = [
  { rule: 'incompatible-constraints', error: /no available releases match the given constraints/ },
  { rule: 'invalid-version-constraint', error: /Error: Invalid version constraint/ },
  { rule: 'duplicate-required-providers', error: /Error: Duplicate required providers configuration/ },
  { rule: 'module-source-missing', error: /Error: Unreadable module directory/ },
  {
    rule: 'parse-error',
    error:
      /Error: (Unclosed configuration block|Argument or block definition required|Missing newline after argument|Invalid expression|Missing item separator|Missing expression|Missing attribute value|Invalid JSON)/,
  },
];

const fake = (version: string, name = 'fake') =>
  `    ${name} = { source = "hashicorp/fake", version = "${version}" }`;
const rp = (...entries: string[]) => lines('terraform {', '  required_providers {', ...entries, '  }', '}');
const call = (name: string, source: string) => lines(`module "${name}" {`, `  source = "${source}"`, '}');

interface Scenario {
  name: string;
  files: Record<string, string>;
}

const SCENARIOS: Scenario[] = [
  { name: 'root only, satisfiable', files: { 'main.tf': rp(fake('~> 1.2')) } },
  {
    name: 'root ~> 1.0 vs module >= 2.0',
    files: { 'main.tf': rp(fake('~> 1.0')) + call('m', './m'), 'm/main.tf': rp(fake('>= 2.0')) },
  },
  {
    name: 'two modules disagree, root unconstrained',
    files: {
      'main.tf': rp(fake('>= 1.0')) + call('a', './a') + call('b', './b'),
      'a/main.tf': rp(fake('< 2.0')),
      'b/main.tf': rp(fake('>= 2.0')),
    },
  },
  {
    name: 'exclusion leaves a patch release',
    files: { 'main.tf': rp(fake('~> 1.2.0')) + call('m', './m'), 'm/main.tf': rp(fake('>= 1.2, != 1.2.0')) },
  },
  {
    name: 'pin excluded by a module',
    files: { 'main.tf': rp(fake('1.2.0')) + call('m', './m'), 'm/main.tf': rp(fake('>= 1.0, != 1.2.0')) },
  },
  {
    name: 'patch-level ~> and a minimum inside it',
    files: { 'main.tf': rp(fake('~> 2.3.0')) + call('m', './m'), 'm/main.tf': rp(fake('>= 2.3.1')) },
  },
  {
    name: '~> 2.3 vs ~> 2.0.0',
    files: { 'main.tf': rp(fake('~> 2.3')) + call('m', './m'), 'm/main.tf': rp(fake('~> 2.0.0')) },
  },
  {
    name: 'legacy string form in the root vs a module',
    files: {
      'main.tf':
        lines('terraform {', '  required_providers {', '    fake = "~> 1.0"', '  }', '}') + call('m', './m'),
      'm/main.tf': rp(fake('>= 3.0')),
    },
  },
  {
    name: 'compound local name for the same source',
    files: {
      'main.tf': rp(fake('~> 1.0')) + call('m', './m'),
      'm/main.tf': rp(fake('>= 3.0', 'hashicorp-fake')),
    },
  },
  {
    name: 'diamond: a module reached twice, compatible',
    files: {
      'main.tf': rp(fake('~> 2.0')) + call('a', './a') + call('b', './b'),
      'a/main.tf': call('c', '../c'),
      'b/main.tf': call('c', '../c'),
      'c/main.tf': rp(fake('>= 2.3')),
    },
  },
  {
    name: 'override file makes the constraints compatible',
    files: {
      'main.tf': rp(fake('~> 1.0')) + call('m', './m'),
      'override.tf': rp(fake('~> 3.0')),
      'm/main.tf': rp(fake('>= 3.0')),
    },
  },
  {
    name: 'override file in a module makes them incompatible',
    files: {
      'main.tf': rp(fake('~> 2.0')) + call('m', './m'),
      'm/main.tf': rp(fake('>= 2.0')),
      'm/m_override.tf': rp(fake('< 2.0')),
    },
  },
  {
    name: 'JSON module against an HCL root',
    files: {
      'main.tf': rp(fake('~> 1.0')) + call('m', './m'),
      'm/main.tf.json': JSON.stringify({
        terraform: { required_providers: { fake: { source: 'hashicorp/fake', version: '>= 2.0' } } },
      }),
    },
  },
  {
    name: "a provider block's deprecated version argument is ANDed in",
    files: { 'main.tf': rp(fake('>= 2.0')) + lines('provider "fake" {', '  version = "< 2.0"', '}') },
  },
  {
    name: 'a compatible deprecated provider block version',
    files: { 'main.tf': rp(fake('>= 2.0')) + lines('provider "fake" {', '  version = "~> 2.0"', '}') },
  },
  { name: 'invalid constraint in the root', files: { 'main.tf': rp(fake('~> 1.x')) } },
  {
    name: 'invalid constraint in a JSON module',
    files: {
      'main.tf': call('m', './m'),
      'm/main.tf.json': JSON.stringify({
        terraform: { required_providers: { fake: { source: 'hashicorp/fake', version: '>= v1' } } },
      }),
    },
  },
  { name: 'empty constraint', files: { 'main.tf': rp(fake('')) } },
  {
    name: 'duplicate required_providers across files',
    files: { 'a.tf': rp(fake('~> 1.0')), 'b.tf': rp('    other = { source = "hashicorp/fake" }') },
  },
  {
    name: 'missing local module directory',
    files: { 'main.tf': rp(fake('~> 1.0')) + call('m', './nowhere') },
  },
  {
    name: 'syntax error',
    files: {
      'main.tf': lines('terraform {', '  required_providers {', '    fake = { source = "hashicorp/fake"'),
    },
  },
];

let mirror: Mirror;

describeWithTerraform('the error rules against terraform init', () => {
  beforeAll(async () => {
    mirror = await withMirror(FAKE_VERSIONS.map((version) => ({ source: 'hashicorp/fake', version })));
  });

  afterAll(async () => {
    await mirror?.cleanup();
  });

  it('terraform init fails exactly when, and for the reasons, the error rules report', async () => {
    const results = await mapLimit(SCENARIOS, 4, async (s) => {
      const work = await mkdtemp(join(mirror.dir, 'work-'));
      await writeTree(work, s.files);
      const [tf, report] = await Promise.all([terraformInit(work, mirror), scanFiles(s.files)]);
      const terraformSays = ORACLE.filter((o) => o.error.test(tf.output))
        .map((o) => o.rule)
        .sort();
      const tfguardSays = [
        ...new Set(
          report.findings.filter((f) => ORACLE.some((o) => o.rule === f.ruleId)).map((f) => f.ruleId),
        ),
      ].sort();
      return {
        name: s.name,
        terraformOk: tf.code === 0,
        terraformSays,
        tfguardSays,
        // Shown only when the comparison fails.
        output: tf.code === 0 || terraformSays.length > 0 ? '' : tf.output,
      };
    });
    // Every scenario at once, so one run shows all disagreements. A failure terraform reports must be
    // one the oracle table knows (else its output is shown).
    const disagreements = results
      .filter(
        (r) =>
          !(r.terraformOk || r.terraformSays.length > 0) || r.tfguardSays.join() !== r.terraformSays.join(),
      )
      .map((r) => ({ name: r.name, terraform: r.terraformSays, tfguard: r.tfguardSays, output: r.output }));
    expect(disagreements).toEqual([]);
    // The table exercises both outcomes for every rule it maps.
    for (const o of ORACLE)
      expect([o.rule, results.some((r) => r.terraformSays.includes(o.rule))]).toEqual([o.rule, true]);
    expect(results.filter((r) => r.terraformOk).length).toBeGreaterThanOrEqual(4);
  });
});
