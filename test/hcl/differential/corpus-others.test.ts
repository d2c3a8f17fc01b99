import { robustnessArchives } from '../../support/corpus';
import { describeWithCorpus } from '../../support/external';
import { differential } from '../../support/hcl-differential';

describeWithCorpus('fast path vs hcl2json: the other corpus archives', () => {
  // cloudposse and modernisation-platform have test files of their own. `it.each`, not
  // `describe.each`: without the corpus the list is empty, which only `it.each` accepts.
  it.each(robustnessArchives().filter((a) => !a.startsWith('cloudposse') && !a.includes('modernisation')))(
    '%s the fast path equals a full hcl2json parse for every file, without calling hcl2json',
    async (archive) => {
      const outcome = await differential(archive);
      expect(outcome.files).toBeGreaterThan(3);
      expect(outcome.differences).toEqual([]);
      expect(outcome.fullParses).toBe(0);
      expect(outcome.snippets).toBe(0);
      expect(outcome.wholeBodies).toBeGreaterThan(0);
      expect(outcome.syntaxTrees).toBeGreaterThan(0);
    },
    180_000,
  );
});
