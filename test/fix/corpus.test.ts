/**
 * Convergence of `tfguard fix` on every corpus archive (real configurations we did not write),
 * unpacked into a directory: after one run a scan shows none of the fixed findings, a second run
 * changes nothing, and no file changes except where a fixed finding's edits point, in that
 * finding's module.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Finding } from '../../src/rules';
import { scanPath } from '../../src/scan';
import { fixPath } from '../../src/scan/fix';
import { readCorpusArchive, tarGzFiles } from '../support/corpus';
import { corpusArchives, describeWithCorpus } from '../support/external';
import { readTree, writeTree } from '../support/terraform';

/** What identifies a finding across an edit that moves lines: rule, module and message. */
const key = (f: Finding): string => `${f.ruleId}\u0000${f.module}\u0000${f.message}`;

const dirOf = (file: string): string => (file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.');

describeWithCorpus('tfguard fix converges on every corpus archive', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-fix-corpus-'));
  });
  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  const archives = corpusArchives();
  it('has archives to run on', () => expect(archives.length).toBeGreaterThan(0));

  it.each(archives.map((a) => [path.basename(a)]))('%s', async (name) => {
    const files = await tarGzFiles(await readCorpusArchive(name));
    await writeTree(tmp, files);
    const before = new Map(Object.entries(await readTree(tmp)));

    const outcome = await fixPath(tmp);
    for (const c of outcome.changes) await fs.writeFile(path.join(tmp, ...c.path.split('/')), c.after);
    const after = new Map(Object.entries(await readTree(tmp)));

    // Only files that a fixed finding's edits point at changed, each in that finding's module, and
    // the lock files whose findings a rewrite fixed.
    const targets = new Set<string>();
    // A shared module's cap moves to the roots that use it: that fix also edits (or
    // creates a versions.tf in) those roots.
    const rootsOf = (module: string): string[] =>
      outcome.report.roots.filter((t) => t.modules.includes(module)).map((t) => t.path);
    for (const f of outcome.fixed) {
      if (f.ruleId.startsWith('lock-') && f.file !== null) targets.add(f.file);
      for (const e of f.fix?.edits ?? []) {
        const allowed =
          f.ruleId === 'shared-module-upper-bound' ? [f.module, ...rootsOf(f.module)] : [f.module];
        expect(allowed).toContain(dirOf(e.range.file));
        targets.add(e.range.file);
      }
    }
    const changed = [...after.keys()].filter(
      (p) => !before.has(p) || !(before.get(p) as Buffer).equals(after.get(p) as Buffer),
    );
    expect(changed.sort()).toEqual(outcome.changes.map((c) => c.path).sort());
    for (const p of changed) expect(targets).toContain(p);
    const created = outcome.changes.filter((c) => c.created).map((c) => c.path);
    expect([...after.keys()].sort()).toEqual([...before.keys(), ...created].sort());
    for (const p of created) expect(p).toMatch(/(^|\/)(versions|terraform|providers_versions)\.(tf|tofu)$/);

    // The fixed findings are gone.
    const rescan = await scanPath(tmp);
    const left = new Set(rescan.findings.map(key));
    expect(
      outcome.fixed.filter((f) => left.has(key(f))).map((f) => `${f.ruleId} ${f.file}:${f.line}`),
    ).toEqual([]);
    // Nothing new appears: lock files record the constraints the fixes wrote in the same run. Only a
    // drift no rewrite can settle stays (remote modules may add constraints tfguard cannot see, so
    // the finding offers no fix).
    const had = new Set(outcome.report.findings.map((f) => `${f.ruleId}\u0000${f.module}`));
    const fresh = rescan.findings.filter(
      (f) =>
        !had.has(`${f.ruleId}\u0000${f.module}`) &&
        !(f.ruleId === 'lock-constraints-drift' && f.fix === undefined),
    );
    expect(fresh.map((f) => `${f.ruleId} ${f.file}:${f.line} ${f.message}`)).toEqual([]);

    // Idempotent.
    const again = await fixPath(tmp);
    expect(again.changes.map((c) => c.path)).toEqual([]);
    expect(again.fixed).toEqual([]);
  });
});
