/**
 * The seeded pseudo-random generator for tests and scripts (mulberry32): a seed always gives the
 * same sequence, so a seeded suite keeps its cases and a soak seed reproduces its archives.
 */

/** Numbers in [0, 1) from `seed` (taken as an unsigned 32-bit integer), mulberry32. */
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
