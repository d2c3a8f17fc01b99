/**
 * Threat model, property rows (docs/security.md §6): for random archives built from corpus files plus
 * random noise, the scan
 *   1. never throws anything but `InputError` (and never hangs: each run is bounded by jest);
 *   2. never reports a path outside the archive;
 *   3. gives byte-identical JSON reports on reruns and regardless of entry order.
 * The report's `source.sha256` is the SHA-256 of the uploaded bytes, so a re-packed archive has a
 * different one by definition; order independence is checked with that one field masked.
 */
import fc from 'fast-check';
import type { Report } from '../../src/report/types';
import { scanBytes } from '../../src/scan';
import { makeTarGz } from '../support/archive';
import { describeWithCorpus } from '../support/external';
import { archiveArbitrary, loadCorpusFiles, type CorpusFile } from '../support/generators';
import { checkArchive, checkPaths, PropertyViolation } from '../support/scan-properties';

describeWithCorpus('scan properties over random corpus-based archives', () => {
  let corpus: CorpusFile[] = [];

  beforeAll(async () => {
    corpus = await loadCorpusFiles();
  });

  test('only InputError, paths inside the archive, byte-identical reports on rerun and in any entry order', async () => {
    expect(corpus.length).toBeGreaterThan(100);
    await fc.assert(
      fc.asyncProperty(archiveArbitrary(corpus), fc.nat(), async (generated, seed) => {
        await checkArchive(generated, seed);
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});

describe('module-call targets in the path property', () => {
  const files = {
    'live/prod/main.tf': [
      'module "net" {\n  source = "../../modules/net"\n}',
      'module "gone" {\n  source = "../../modules/gone"\n}',
      'module "out" {\n  source = "../../../outside"\n}',
      'module "reg" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.0.0"\n}',
      '',
    ].join('\n'),
    'modules/net/main.tf': 'variable "x" {}\n',
  };

  test('targets are archive directories, or null (above the root, not local); missing ones are reported', async () => {
    const bytes = await makeTarGz(files);
    const report = await scanBytes('targets.tar.gz', bytes);
    const calls = report.modules.flatMap((m) => m.moduleCalls.map((c) => [c.name, c.sourceKind, c.target]));
    expect(calls).toEqual([
      ['net', 'local', 'modules/net'],
      ['gone', 'local', 'modules/gone'],
      ['out', 'local', null],
      ['reg', 'registry', null],
    ]);
    await checkPaths('targets.tar.gz', bytes, report);
  });

  test('the check catches a target outside the archive, a remote target, and an unreported missing one', async () => {
    const bytes = await makeTarGz(files);
    const report = await scanBytes('targets.tar.gz', bytes);
    const tamper = (change: (r: Report) => void): Report => {
      const copy = JSON.parse(JSON.stringify(report)) as Report;
      change(copy);
      return copy;
    };
    const call = (r: Report, name: string) =>
      r.modules.flatMap((m) => m.moduleCalls).find((c) => c.name === name)!;
    const outside = tamper((r) => (call(r, 'out').target = '../outside'));
    await expect(checkPaths('targets.tar.gz', bytes, outside)).rejects.toThrow(
      new PropertyViolation(
        'module "out" in "live/prod" (live/prod/main.tf:7): target "../outside" is outside the archive',
      ),
    );
    const remote = tamper((r) => (call(r, 'reg').target = 'modules/net'));
    await expect(checkPaths('targets.tar.gz', bytes, remote)).rejects.toThrow(
      /a registry source has a target/,
    );
    const unreported = tamper((r) => {
      r.findings = r.findings.filter((f) => f.ruleId !== 'module-source-missing');
    });
    await expect(checkPaths('targets.tar.gz', bytes, unreported)).rejects.toThrow(
      /module "gone" .*: target "modules\/gone" is not in the archive and not reported by module-source-missing/,
    );
    const aboveRoot = tamper((r) => {
      r.findings = r.findings.filter((f) => !(f.ruleId === 'module-source-missing' && f.line === 7));
    });
    await expect(checkPaths('targets.tar.gz', bytes, aboveRoot)).rejects.toThrow(
      /module "out" .*: local source "..\/..\/..\/outside" has no target and no module-source-missing finding/,
    );
  });
});
