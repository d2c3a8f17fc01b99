import { describeWithCorpus } from '../../support/external';
import { differential } from './differential';

describeWithCorpus('fast path vs hcl2json: cloudposse shard 1/3', () => {
  // The largest archive (1,801 files, 4.9 MB of HCL) in three shards: the full hcl2json reference
  // parse takes most of the time.
  it('cloudposse, shard 1/3: the fast path equals a full hcl2json parse for every file, without calling hcl2json', async () => {
    const outcome = await differential('cloudposse_terraform-aws-components.tar.gz', { index: 0, count: 3 });
    expect(outcome.files).toBeGreaterThan(590);
    expect(outcome.differences).toEqual([]);
    // Every file was proven well-formed by the verifier and every value the loader reads was
    // evaluated in TypeScript: a scan of this archive never loads the WebAssembly parser.
    expect(outcome.fullParses).toBe(0);
    expect(outcome.snippets).toBe(0);
    expect(outcome.wholeBodies).toBeGreaterThan(100);
    expect(outcome.syntaxTrees).toBeGreaterThan(100);
  }, 180_000);
});
