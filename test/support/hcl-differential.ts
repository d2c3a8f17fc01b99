/**
 * The differential check behind the corpus tests: for every configuration and lock file of an
 * archive, the fast path and a full hcl2json parse agree exactly —
 * - `extract(path, content, LOADER_PROJECTION)` equals the full parse projected on it (same
 *   verdict, message, line and column for errors; same blocks, labels, lines and values);
 * - the fast path over the whole body (`fastParse` with `FULL_SPEC`, wherever the evaluator reads
 *   every value) equals the full hcl2json parse, so every value the evaluator produces anywhere in
 *   the corpus is checked against hcl2json's.
 */
import { decodeSource, FULL_SPEC, fastParse, HclParser, scanHcl, verifyHcl } from '../../src/hcl';
import { isDeepStrictEqual } from 'node:util';
import type { ParseResult } from '../../src/hcl';
import { LOADER_PROJECTION } from '../../src/modules';
import { mapLimit } from '../../src/util/map-limit';
import { corpusFiles } from './corpus';
import { describeWithCorpus } from './external';
import { projected, referenceParser, render, sameResult } from './hcl2json';

export interface DifferentialOutcome {
  files: number;
  /** Paths where the fast path and the reference disagree (with both results, shortened). */
  differences: string[];
  /** Files `extract` could not settle without hcl2json (full parses, snippet values). */
  fullParses: number;
  snippets: number;
  /** Files whose whole body the fast path evaluated (compared value by value). */
  wholeBodies: number;
  /** Native files whose verifier and scanner syntax trees were compared. */
  syntaxTrees: number;
}

export async function differential(
  archive: string,
  shard: { index: number; count: number } = { index: 0, count: 1 },
): Promise<DifferentialOutcome> {
  const fast = new HclParser({ workers: 1 });
  const reference = referenceParser();
  const outcome: DifferentialOutcome = {
    files: 0,
    differences: [],
    fullParses: 0,
    snippets: 0,
    wholeBodies: 0,
    syntaxTrees: 0,
  };
  try {
    const files = [...(await corpusFiles(archive))].filter((_, i) => i % shard.count === shard.index);
    const extracted = await mapLimit(files, 8, ([p, c]) => fast.extract(p, c, LOADER_PROJECTION));
    outcome.fullParses = fast.stats.fullParses;
    outcome.snippets = fast.stats.snippets;
    const full = await mapLimit(files, 4, ([p, c]) => reference.parse(p, c));
    files.forEach(([p, c], i) => {
      outcome.files++;
      const ref = full[i] as ParseResult;
      const want = projected(ref, LOADER_PROJECTION);
      if (!sameResult(extracted[i], want)) {
        outcome.differences.push(
          `${p} extract ${render(extracted[i]).slice(0, 300)} != ${render(want).slice(0, 300)}`,
        );
      }
      const decoded = decodeSource(p, c);
      if (!decoded.ok || p.endsWith('.json')) return;
      const verified = verifyHcl(decoded.text);
      if (verified.ok) {
        outcome.syntaxTrees++;
        const scanned = scanHcl(p, decoded.text);
        if (scanned.errors.length > 0 || !isDeepStrictEqual(scanned.body, verified.body)) {
          outcome.differences.push(`${p} scanner tree differs from the verifier's`);
        }
      }
      const whole = fastParse(p, decoded.text, FULL_SPEC);
      if (whole === null || !('result' in whole)) return;
      outcome.wholeBodies++;
      if (!sameResult(whole.result, ref)) {
        outcome.differences.push(
          `${p} parse ${render(whole.result).slice(0, 300)} != ${render(ref).slice(0, 300)}`,
        );
      }
    });
  } finally {
    await fast.close();
    await reference.close();
  }
  return outcome;
}

const CLOUDPOSSE = 'cloudposse_terraform-aws-components.tar.gz';
const CLOUDPOSSE_SHARDS = 3;

/**
 * The test of one shard of the largest archive (cloudposse: 1,801 files, 4.9 MB of HCL), for a test
 * file of its own: the full hcl2json reference parse takes most of the time, so the shards live in
 * corpus-cloudposse-1.test.ts … -3.test.ts and jest runs them in parallel.
 */
export function describeCloudposseShard(index: number): void {
  const shard = `${index + 1}/${CLOUDPOSSE_SHARDS}`;
  describeWithCorpus(`fast path vs hcl2json: cloudposse shard ${shard}`, () => {
    it(`cloudposse, shard ${shard}: the fast path equals a full hcl2json parse for every file, without calling hcl2json`, async () => {
      const outcome = await differential(CLOUDPOSSE, { index, count: CLOUDPOSSE_SHARDS });
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
}
