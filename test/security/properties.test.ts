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
import { closeSharedParser } from '../../src/scan';
import { archiveArbitrary, loadCorpusFiles, type CorpusFile } from './generators';
import { checkArchive } from './scan-properties';

let corpus: CorpusFile[] = [];

beforeAll(async () => {
  corpus = await loadCorpusFiles();
});
afterAll(closeSharedParser);

describe('scan properties over random corpus-based archives', () => {
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
