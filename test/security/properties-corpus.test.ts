/**
 * Threat model, property rows (docs/security.md §6), on archives of unmodified corpus files only: they
 * all scan (no rejection), with the same properties as properties.test.ts.
 */
import fc from 'fast-check';
import { describeWithCorpus } from '../support/external';
import { loadCorpusFiles, type CorpusFile, type GeneratedArchive } from '../support/generators';
import { checkArchive } from '../support/scan-properties';

describeWithCorpus('scan properties over archives of corpus files', () => {
  let corpus: CorpusFile[] = [];

  beforeAll(async () => {
    corpus = await loadCorpusFiles();
  });

  test('archives of unmodified corpus files all scan; paths inside; byte-identical on rerun and in any entry order', async () => {
    let scanned = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.constantFrom(...corpus), {
          minLength: 1,
          maxLength: 8,
          selector: (f) => f.path.normalize('NFKD').toLowerCase().toUpperCase(),
        }),
        fc.constantFrom<GeneratedArchive['format']>('tar.gz', 'zip'),
        fc.nat(),
        async (files, format, seed) => {
          const generated: GeneratedArchive = {
            format,
            entries: files.map((f) => ({ path: f.path, content: f.content })),
          };
          const first = await checkArchive(generated, seed);
          if (first.kind === 'rejected') {
            throw new Error(
              `a corpus-only archive was rejected: ${first.error.code}: ${first.error.message}`,
            );
          }
          scanned += 1;
        },
      ),
      { numRuns: 10 },
    );
    expect(scanned).toBe(10);
  }, 120_000);
});
