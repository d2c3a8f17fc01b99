/**
 * Runs one classification signal on small trees loaded through the real pipeline (tar.gz, archive
 * reader, HCL parser, repository signals), with the context the classification itself builds.
 */
import { buildContext, classifyModules, subjectOf } from '../../src/modules';
import type { ClassifyInput, Signal } from '../../src/modules';
import type { ScanConfig } from '../../src/model';
import { localCallers } from '../../src/modules/tree';
import { readArchiveBytes } from '../../src/archive';
import { loadModules } from '../../src/modules';
import { buildTarGz } from './archive';
import type { FileMap } from './archive';
import { BASE_CONFIG, sharedParser } from './modules';

export { closeParser } from './modules';

export interface Row {
  name: string;
  files: FileMap;
  /** Symbolic links: archive path → link target. */
  links?: Record<string, string>;
  config?: Partial<ScanConfig>;
  /** Per module path: `kind/evidence` of the signal's decision, or null when it says nothing. */
  expect: Record<string, string | null>;
  /** A pattern the reason of every decision must match. */
  reason?: RegExp;
}

/** The signal's decision for every module of the tree (modules not in `expect` included). */
export async function judge(signal: Signal, row: Row): Promise<Record<string, string | null>> {
  const entries = [
    ...Object.entries(row.files).map(([name, data]) => ({ name, data })),
    ...Object.entries(row.links ?? {}).map(([name, linkname]) => ({
      name,
      type: 'symlink' as const,
      linkname,
    })),
  ];
  const archive = await readArchiveBytes('inline.tar.gz', await buildTarGz(entries));
  const loaded = await loadModules({
    archive,
    config: { ...BASE_CONFIG, ...row.config },
    parser: sharedParser(),
  });
  const modules = new Map(loaded.modules.map((m) => [m.path, m]));
  const config = { roots: [], shared: [], examples: [], tests: [], fragments: [], ...row.config };
  const input: ClassifyInput = {
    modules,
    callers: localCallers(modules),
    signals: loaded.signals,
    config,
    templateFiles: loaded.templateFiles,
  };
  const fragments = new Set(
    [...classifyModules(input)].filter(([, d]) => d.kind === 'fragment').map(([p]) => p),
  );
  const ctx = buildContext(input, fragments);
  const out: Record<string, string | null> = {};
  for (const m of loaded.modules) {
    const d = signal.decide(subjectOf(m), ctx);
    if (d !== null && row.reason !== undefined) expect(d.reason).toMatch(row.reason);
    out[m.path] = d === null ? null : `${d.kind}/${d.evidence}`;
  }
  return out;
}

/** One `test.each` table for a signal. */
export function signalTable(signal: Signal, rows: Row[]): void {
  describe(`signal ${signal.id}`, () => {
    test.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
      const got = await judge(signal, row);
      const wanted = Object.fromEntries(
        Object.keys(row.expect).map((p) => [p, p in got ? got[p] : 'not a module']),
      );
      expect(wanted).toEqual(row.expect);
    });
  });
}
