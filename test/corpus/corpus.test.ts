import { promises as fs } from 'node:fs';
import { scanBytes } from '../../src/scan';
import { robustnessArchives } from '../support/corpus';
import { corpusFile, describeWithCorpus } from '../support/external';

describeWithCorpus('real-world corpus', () => {
  it.each(robustnessArchives())(
    '%s scans completely, with no parse-error or internal error',
    async (name) => {
      const bytes = await fs.readFile(corpusFile(name));
      const report = await scanBytes(name, bytes);
      const broken = report.findings.filter(
        (f) => f.ruleId === 'parse-error' || f.ruleId === 'internal-error',
      );
      expect(broken).toEqual([]);
      expect(report.modules.length).toBeGreaterThan(0);
      expect(report.roots.length).toBeGreaterThan(0);
      // Every finding is anchored in a file of the archive.
      const files = new Set(report.modules.flatMap((m) => m.files));
      for (const f of report.findings) {
        if (f.file !== null && !f.ruleId.startsWith('lock-')) expect(files).toContain(f.file);
        if (f.file !== null) expect(f.line).not.toBeNull();
      }
      // Every module in a root's tree exists, and every .tf file of the archive belongs to a module.
      const paths = new Set(report.modules.map((m) => m.path));
      for (const r of report.roots) for (const m of r.modules) expect(paths).toContain(m);
      expect(report.modules.reduce((n, m) => n + m.files.length, 0)).toBeGreaterThan(0);
    },
    120_000,
  );
});
