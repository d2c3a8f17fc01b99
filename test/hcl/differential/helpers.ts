/**
 * What only the fast-path suites share: a seeded random generator for mutations. The corpus
 * archives they walk and their files come from test/support/corpus.ts, the hcl2json reference
 * from test/support/hcl2json.ts.
 */

/** Deterministic pseudo-random numbers (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
