import { describeWithCorpus } from '../../support/external';
import { differential } from '../../support/hcl-differential';

describeWithCorpus('fast path vs hcl2json: modernisation-platform', () => {
  it('modernisation-platform: the fast path equals a full hcl2json parse for every file, without calling hcl2json', async () => {
    const outcome = await differential('ministryofjustice_modernisation-platform.tar.gz');
    expect(outcome.files).toBeGreaterThan(1000);
    expect(outcome.differences).toEqual([]);
    expect(outcome.fullParses).toBe(0);
    expect(outcome.snippets).toBe(0);
    expect(outcome.wholeBodies).toBeGreaterThan(100);
    expect(outcome.syntaxTrees).toBeGreaterThan(100);
  }, 180_000);
});
