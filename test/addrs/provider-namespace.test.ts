/**
 * Which provider source addresses are valid today (issue 21, item 7: underscores in provider
 * namespaces), so tfguard neither rejects a valid source nor accepts an invalid one.
 *
 * The rule, from the languages' source:
 * - Terraform 1.16 parses namespaces with terraform-registry-address v0.5.0 `ParseProviderNamespace`,
 *   which accepts underscores between letters and digits (hashicorp/terraform 48a878091e, PR #38894,
 *   `.changes/v1.16/BUG FIXES-20260721-105245.yaml`: "Allow underscores in provider source address
 *   namespaces"; its tests use `example.com/my_org/foo` and `my_org/*`). Provider *types* still go
 *   through `ParseProviderPart` (internal/addrs/provider.go at that commit): no underscores.
 * - `ParseProviderPart` refuses consecutive dashes and (in `ParseProviderSource`) any type with the
 *   redundant `terraform-` prefix (hashicorp/terraform-registry-address provider.go, v0.4.0).
 * - Terraform 1.11 (the binary here) predates underscores: the rows it agrees with are run through
 *   `terraform providers`, and the underscore rows are checked to fail there with "Invalid provider
 *   namespace", so the test notices if the oracle or the rule moves.
 * - OpenTofu: opentofu/registry-address v2 (main at d0a99bd, 2025-06) still refuses underscores and its
 *   1.12 changelog does not mention them; tfguard accepts them under both engines (it never reports
 *   a source as invalid on this ground) so a valid Terraform source never becomes a false error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseProviderSource } from '../../src/addrs';
import { describeWithTerraform } from '../support/external';
import { runTerraform, writeTree } from '../support/terraform';
import { findingsOf, scanFiles } from '../support/scan';

interface Case {
  raw: string;
  /** The normalized address, or a pattern the error must match. */
  want: string | RegExp;
  /** What terraform 1.11 says: the same ('agrees'), or it refuses a source that 1.16 accepts. */
  tf111: 'agrees' | 'refuses-underscore';
}

const CASES: Case[] = [
  { raw: 'my_org/foo', want: 'registry.terraform.io/my_org/foo', tf111: 'refuses-underscore' },
  {
    raw: 'app.terraform.io/openai_inc/kube',
    want: 'app.terraform.io/openai_inc/kube',
    tf111: 'refuses-underscore',
  },
  { raw: 'My_Org/Foo', want: 'registry.terraform.io/my_org/foo', tf111: 'refuses-underscore' },
  { raw: 'a_b_c/foo', want: 'registry.terraform.io/a_b_c/foo', tf111: 'refuses-underscore' },
  { raw: 'my-org/foo', want: 'registry.terraform.io/my-org/foo', tf111: 'agrees' },
  { raw: '_org/foo', want: /namespace "_org".*leading or trailing dashes or underscores/, tf111: 'agrees' },
  { raw: 'org_/foo', want: /namespace "org_"/, tf111: 'agrees' },
  { raw: 'acme/foo_bar', want: /type "foo_bar"/, tf111: 'agrees' },
  { raw: 'acme/a--b', want: /type "a--b".*consecutive dashes/, tf111: 'agrees' },
  { raw: 'a--b/foo', want: /namespace "a--b".*consecutive dashes/, tf111: 'agrees' },
  { raw: 'acme/terraform-foo', want: /prefix "terraform-"/, tf111: 'agrees' },
  { raw: 'acme/terraform-provider-foo', want: /prefix "terraform-provider-"/, tf111: 'agrees' },
  { raw: 'my.org/foo', want: /namespace "my.org"/, tf111: 'agrees' },
];

describe('provider namespaces and types (Terraform 1.16 rules)', () => {
  test.each(CASES.map((c) => [c.raw, c] as const))('%s', (_raw, c) => {
    for (const engine of ['terraform', 'opentofu'] as const) {
      const r = parseProviderSource(c.raw, engine);
      if (typeof c.want === 'string') {
        const want =
          engine === 'opentofu' ? c.want.replace('registry.terraform.io', 'registry.opentofu.org') : c.want;
        expect(r).toEqual({ ok: true, source: want });
      } else {
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.error).toMatch(c.want);
      }
    }
  });

  test('an underscore namespace is one provider from requirement to lock entry (no false error)', async () => {
    const report = await scanFiles({
      'main.tf': [
        'terraform {',
        '  required_version = ">= 1.16"',
        '  required_providers {',
        '    kube = { source = "app.terraform.io/openai_inc/kube", version = "~> 1.2" }',
        '  }',
        '}',
        '',
      ].join('\n'),
      '.terraform.lock.hcl': [
        '# This file is maintained automatically by "terraform init".',
        '# Manual edits may be lost in future updates.',
        '',
        'provider "app.terraform.io/openai_inc/kube" {',
        '  version     = "1.2.3"',
        '  constraints = "~> 1.2"',
        '  hashes = [',
        '    "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",',
        '  ]',
        '}',
        '',
      ].join('\n'),
    });
    const errors = report.findings.filter((f) => f.severity === 'error');
    expect(errors).toEqual([]);
    for (const id of [
      'lock-parse-error',
      'lock-provider-missing',
      'lock-provider-stale',
      'lock-constraints-drift',
    ])
      expect(findingsOf(report, id)).toEqual([]);
    expect(report.roots[0]?.providers.map((p) => p.source)).toEqual(['app.terraform.io/openai_inc/kube']);
  });
});

describeWithTerraform('terraform 1.11 on the same sources', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tfguard-ns-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test.each(CASES.map((c, i) => [c.raw, c, i] as const))('%s', async (_raw, c, i) => {
    const work = path.join(dir, `c${i}`);
    await writeTree(work, {
      'main.tf': `terraform {\n  required_providers {\n    x = { source = "${c.raw}" }\n  }\n}\n`,
    });
    const r = await runTerraform(['providers', '-no-color'], work);
    if (c.tf111 === 'refuses-underscore') {
      // 1.11 predates terraform-registry-address v0.5.0; 1.16 accepts these (see the header).
      expect(r.code).not.toBe(0);
      expect(r.output).toMatch(/Invalid provider namespace/);
    } else if (typeof c.want === 'string') {
      expect(r.code).toBe(0);
      expect(r.output).toContain(`provider[${c.want}]`);
    } else {
      expect(r.code).not.toBe(0);
      expect(r.output).toMatch(/Invalid provider (type|namespace)/);
    }
  });
});
