import { readdirSync } from 'node:fs';
import { robustnessArchives } from '../../support/corpus';
import { corpusFile, corpusStatus, describeWithCorpus } from '../../support/external';
import { differential } from '../../support/hcl-differential';

/** The corpus archives added after the robustness set (SOURCES.md, LAYOUTS.md): real layouts the
 * evaluator was not written against. */
function newerArchives(): string[] {
  if (!corpusStatus().ok) return [];
  const robust = new Set(robustnessArchives());
  return readdirSync(corpusFile('.'))
    .filter((f) => f.endsWith('.tar.gz') && !robust.has(f))
    .sort();
}

/** Files only hcl2json can settle: uktrade/platform-tools has a Jinja template named `main.tf`. */
const FULL_PARSES: Record<string, number> = { 'uktrade_platform-tools.tar.gz': 1 };

describeWithCorpus('fast path vs hcl2json: the newer corpus archives', () => {
  it.each(newerArchives())(
    '%s the fast path equals a full hcl2json parse for every file, hcl2json only where it must',
    async (archive) => {
      const outcome = await differential(archive);
      expect(outcome.files).toBeGreaterThan(3);
      expect(outcome.differences).toEqual([]);
      expect(outcome.fullParses).toBe(FULL_PARSES[archive] ?? 0);
      expect(outcome.snippets).toBe(0);
      expect(outcome.wholeBodies).toBeGreaterThan(0);
    },
    180_000,
  );
});
