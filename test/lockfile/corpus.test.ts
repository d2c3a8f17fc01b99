/**
 * The corpus archive with lock files (ministryofjustice/cloud-platform-infrastructure, 12 lock
 * files), through the real archive reader, HCL parser, module loader, analyzeLocks and the lock
 * rules: every lock file parses (no lock-parse-error), every recorded hash is well formed, and the
 * lock findings are exactly those listed here (verified by hand against the sources: two roots
 * without a lock file, and one lock file whose recorded constraints predate the pins in versions.tf).
 */
import { readInput } from '../../src/archive';
import { HclParser } from '../../src/hcl';
import { analyzeLocks, isProviderPackageZip } from '../../src/lockfile';
import type { LockAnalysis } from '../../src/lockfile';
import { loadModules } from '../../src/modules';
import type { Finding } from '../../src/rules';
import { ruleContext, runRules } from '../../src/rules';
import { LOCK_RULES } from '../../src/rules';
import { shouldLoad } from '../../src/scan';
import { DEFAULT_CONFIG } from '../../src/scan/config-file';
import { corpusFile, describeWithCorpus } from '../support/external';

const ARCHIVE = 'ministryofjustice_cloud-platform-infrastructure.tar.gz';
const ACCOUNT = 'terraform/aws-accounts/cloud-platform-aws/account';

describeWithCorpus('corpus: ministryofjustice cloud-platform-infrastructure', () => {
  let analysis: LockAnalysis;
  let findings: Finding[];
  let parser: HclParser;

  beforeAll(async () => {
    parser = new HclParser();
    const archive = await readInput(corpusFile(ARCHIVE), {
      shouldLoad: (p) => shouldLoad(p) || isProviderPackageZip(p),
    });
    const loaded = await loadModules({ archive, config: DEFAULT_CONFIG, parser });
    analysis = await analyzeLocks({
      archive,
      modules: loaded.modules,
      roots: loaded.roots,
      config: DEFAULT_CONFIG,
      parser,
      engine: loaded.engine,
    });
    findings = runRules(ruleContext(loaded, DEFAULT_CONFIG, analysis), LOCK_RULES);
  }, 120_000);

  afterAll(async () => {
    await parser.close();
  });

  it('parses all 12 lock files without an error', () => {
    const locks = analysis.roots.flatMap((r) => (r.lock === null ? [] : [r.lock]));
    expect(locks).toHaveLength(12);
    for (const lock of locks) {
      expect({ path: lock.path, readable: lock.readable, errors: lock.errors }).toEqual({
        path: lock.path,
        readable: true,
        errors: [],
      });
      expect(lock.providers.length).toBeGreaterThan(0);
      for (const e of lock.providers) {
        expect(e.version).toMatch(/^\d+\.\d+\.\d+$/);
        expect(e.hashes.length).toBeGreaterThan(0);
        expect(e.hashes.every((h) => h.line > e.line && h.line < e.endLine)).toBe(true);
      }
    }
    expect(findings.filter((f) => f.ruleId === 'lock-parse-error')).toEqual([]);
  });

  it('reports exactly these lock findings', () => {
    const lock = findings
      .filter((f) => f.ruleId.startsWith('lock-'))
      .map((f) => `${f.severity} ${f.ruleId} ${f.file}:${f.line}`);
    expect(lock).toEqual([
      `warning lock-constraints-drift ${ACCOUNT}/.terraform.lock.hcl:181`,
      `warning lock-constraints-drift ${ACCOUNT}/.terraform.lock.hcl:202`,
      'warning lock-missing terraform/aws-accounts/cloud-platform-aws/inspection/backend.tf:1',
      'warning lock-missing terraform/aws-accounts/cloud-platform-aws/transit-gateway/backend.tf:1',
    ]);
    const drift = findings.filter((f) => f.ruleId === 'lock-constraints-drift').map((f) => f.message);
    expect(drift).toEqual([
      expect.stringContaining('hashicorp/null records constraints ">= 2.0.0", which lack "3.2.3"'),
      expect.stringContaining('hashicorp/random records constraints ">= 3.0.0", which lack "~> 3.6.3"'),
    ]);
  });
});
