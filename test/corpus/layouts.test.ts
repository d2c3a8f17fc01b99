/**
 * The layout archives of ../shared/corpus (see LAYOUTS.md there): real repositories, each directory's
 * kind written down here from LAYOUTS.md's reading and checked, and the findings each archive must
 * (and must not) produce with default settings.
 */
import { promises as fs } from 'node:fs';
import { matchGlob } from '../../src/modules';
import { scanBytes } from '../../src/scan';
import { corpusFile, describeWithCorpus } from '../support/external';
import type { Report } from '../../src/report/types';

type Kind = 'root' | 'shared' | 'example' | 'test' | 'fragment';

interface Layout {
  archive: string;
  /** First matching glob decides the expected kind of a module directory. */
  kinds: Array<[glob: string, kind: Kind]>;
  /** Expected number of modules of each kind (LAYOUTS.md's "Expected" line). */
  counts: Partial<Record<Kind, number>>;
  /** Findings per rule id ("rule severity" → count); anything else is a failure. */
  findings: Record<string, number>;
}

const LAYOUTS: Layout[] = [
  {
    archive: 'terraform-aws-modules_terraform-aws-rds.tar.gz',
    kinds: [
      ['examples/*', 'example'],
      ['*', 'shared'],
      ['**', 'shared'],
    ],
    counts: { shared: 14, example: 12 },
    // the examples' registry modules (vpc, security-group, ...): not fetched without --remote-modules
    findings: { 'module-unresolved notice': 32 },
  },
  {
    archive: 'uktrade_platform-tools.tar.gz',
    kinds: [
      ['dbt_platform_helper/templates/**', 'fragment'],
      ['terraform/*/e2e-tests/setup', 'test'],
      ['terraform/example', 'example'],
      ['terraform/**', 'shared'],
    ],
    counts: { shared: 28, example: 1, test: 2, fragment: 1 },
    findings: {
      'shared-module-upper-bound error': 26,
      // library modules nothing in the archive calls: a guess, so notices
      'shared-module-upper-bound notice': 10,
      'shared-module-provider-config error': 4,
      'undeclared-provider warning': 6,
      'parse-error notice': 1,
    },
  },
  {
    archive: 'cds-snc_terraform-modules.tar.gz',
    kinds: [
      ['terraform', 'root'],
      ['.github/**', 'test'],
      ['*/examples', 'example'],
      ['*/examples/*', 'example'],
      ['*/tests/setup', 'test'],
      ['*/tests/setup/*', 'test'],
      ['*', 'shared'],
    ],
    counts: { root: 1, shared: 37, example: 38, test: 9 },
    findings: {
      'undeclared-provider warning': 91,
      'missing-provider-source warning': 3,
      // DocumentDB/examples/secured_setup calls "./../", a directory that holds no module
      'module-source-missing error': 1,
      'required-version-missing notice': 1,
      // S3?ref=main in athena_access_logs/tests/setup (2) and ecs; no ref in two examples
      'module-ref-unpinned warning': 5,
      'module-unresolved notice': 13,
    },
  },
  {
    archive: 'cds-snc_scan-files.tar.gz',
    kinds: [
      ['terragrunt/aws/*', 'shared'],
      ['terragrunt/env/staging/*', 'root'],
      ['terragrunt/env/production/*', 'root'],
      ['terragrunt/env/common', 'fragment'],
      ['terragrunt/env', 'fragment'],
    ],
    counts: { root: 12, shared: 6, fragment: 2 },
    // Terragrunt generates aws's declaration into every unit; template's is really missing.
    findings: { 'undeclared-provider warning': 2, 'module-unresolved notice': 19 },
  },
  {
    archive: 'DFE-Digital_access-your-teaching-qualifications.tar.gz',
    kinds: [['terraform/**', 'root']],
    counts: { root: 3 },
    findings: { 'module-unresolved notice': 11, 'undeclared-provider warning': 1 },
  },
  {
    archive: 'thecomalley_terraform-azurerm-python-function.tar.gz',
    kinds: [
      ['.', 'shared'],
      ['examples/main', 'example'],
      ['tests/*', 'test'],
      ['src', 'fragment'],
    ],
    counts: { shared: 1, example: 1, test: 2, fragment: 1 },
    findings: { 'shared-module-upper-bound error': 3, 'undeclared-provider warning': 1 },
  },
  {
    archive: 'langburd_terraform-proxmox.tar.gz',
    kinds: [
      ['.', 'root'],
      ['modules/lxc', 'shared'],
    ],
    counts: { root: 1, shared: 1 },
    findings: { 'root-module-unbounded error': 1 },
  },
  {
    archive: 'keycloak_keycloak-benchmark.tar.gz',
    kinds: [['provision/opentofu/**', 'root']],
    counts: { root: 3 },
    findings: {
      'module-version-missing warning': 2,
      'root-module-unbounded error': 2,
      'lock-missing notice': 1,
      'required-version-missing notice': 1,
      'undeclared-provider warning': 1,
      'module-unresolved notice': 4,
    },
  },
  {
    archive: 'ministryofjustice_analytical-platform.tar.gz',
    kinds: [
      ['**/modules/**', 'shared'],
      ['**', 'root'],
    ],
    counts: { root: 57, shared: 14 },
    findings: {
      'lock-version-mismatch error': 4,
      'lock-constraints-drift warning': 4,
      'undeclared-provider warning': 4,
      'missing-version-constraint error': 10,
      'shared-module-upper-bound error': 2,
      'root-module-unbounded error': 2,
      // terraform-dms-module?ref=update-dms-module (a branch); its other git refs are full SHAs or tags
      'module-ref-unpinned warning': 1,
      'module-unresolved notice': 230,
    },
  },
  {
    archive: 'joatmon08_terraform-aws-hcp.tar.gz',
    kinds: [
      ['.', 'shared'],
      ['modules/*', 'shared'],
      ['example', 'example'],
      ['example/consul', 'example'],
      ['tests/*', 'test'],
    ],
    counts: { shared: 3, example: 2, test: 2 },
    findings: { 'undeclared-provider warning': 3, 'module-unresolved notice': 3 },
  },
];

const reports = new Map<string, Promise<Report>>();
async function scan(archive: string): Promise<Report> {
  let r = reports.get(archive);
  if (r === undefined) {
    r = fs.readFile(corpusFile(archive)).then((bytes) => scanBytes(archive, bytes));
    reports.set(archive, r);
  }
  return r;
}

describeWithCorpus('layout archives of ../shared/corpus', () => {
  describe.each(LAYOUTS)('$archive', (layout) => {
    test('every directory has the kind LAYOUTS.md gives it', async () => {
      const report = await scan(layout.archive);
      const wrong: string[] = [];
      for (const m of report.modules) {
        const expected = layout.kinds.find(([glob]) => matchGlob(glob, m.path))?.[1];
        if (expected !== m.kind) wrong.push(`${m.path}: ${m.kind} (${m.kindReason}), expected ${expected}`);
      }
      expect(wrong).toEqual([]);
      const counts: Partial<Record<Kind, number>> = {};
      for (const m of report.modules) counts[m.kind] = (counts[m.kind] ?? 0) + 1;
      expect(counts).toEqual(layout.counts);
      expect(report.summary.roots).toBe(layout.counts.root ?? 0);
    });

    test('findings with default settings', async () => {
      const report = await scan(layout.archive);
      const counts: Record<string, number> = {};
      for (const f of report.findings) {
        const key = `${f.ruleId} ${f.severity}`;
        counts[key] = (counts[key] ?? 0) + 1;
      }
      expect(counts).toEqual(layout.findings);
      // A finding that rests on a guess is a notice, says so, and offers no fix.
      for (const f of report.findings.filter((x) => x.confidence === 'low')) {
        expect(f.severity).toBe('notice');
        expect(f.fix).toBeUndefined();
      }
    });
  });

  test('Terragrunt units are roots made of the source module and their own lock file', async () => {
    const report = await scan('cds-snc_scan-files.tar.gz');
    const unit = report.roots.find((r) => r.path === 'terragrunt/env/staging/api');
    expect(unit).toMatchObject({
      kind: 'root',
      modules: ['terragrunt/env/staging/api', 'terragrunt/aws/api'],
      lock: { file: 'terragrunt/env/staging/api/.terraform.lock.hcl' },
    });
    // aws comes from the file root.hcl's generate block writes (common/provider.tf: ~> 6.0).
    expect(unit?.providers.find((p) => p.source === 'registry.terraform.io/hashicorp/aws')?.constraints).toBe(
      '~> 6.0',
    );
    const production = report.roots.find((r) => r.path === 'terragrunt/env/production/api');
    expect(production?.remoteModules).toEqual([
      {
        module: 'terragrunt/env/production/api',
        name: 'terragrunt',
        source:
          'git::https://github.com/cds-snc/scan-files//terragrunt/aws/api?ref=${get_env("INFRASTRUCTURE_VERSION")}',
        version: null,
        // remote resolution ran (offline): a source with an expression is never resolved
        key: 'terragrunt',
        address:
          'git::https://github.com/cds-snc/scan-files//terragrunt/aws/api?ref=${get_env("INFRASTRUCTURE_VERSION")}',
        resolvedVersion: null,
        origin: null,
      },
    ]);
  });

  test('a repository with OpenTofu lock files: each root runs under OpenTofu', async () => {
    const report = await scan('keycloak_keycloak-benchmark.tar.gz');
    expect(report.roots.map((r) => [r.path, r.engine])).toEqual([
      ['provision/opentofu/modules/aws/accelerator', 'opentofu'],
      ['provision/opentofu/modules/rosa-hcp', 'opentofu'],
      ['provision/opentofu/remote-state', 'opentofu'],
    ]);
  });
});
