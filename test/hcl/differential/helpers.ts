/**
 * What only the fast-path suites share: the corpus archives they walk and a seeded random
 * generator for mutations. The hcl2json reference is test/support/hcl2json.ts; corpus files come
 * from test/support/corpus.ts.
 */

export const ARCHIVES = [
  'cloudposse_terraform-aws-components.tar.gz',
  'ministryofjustice_modernisation-platform.tar.gz',
  'ministryofjustice_cloud-platform-infrastructure.tar.gz',
  'terraform-aws-modules_terraform-aws-eks.tar.gz',
  'terraform-aws-modules_terraform-aws-vpc.tar.gz',
  'hashicorp_learn-terraform-provision-eks-cluster.tar.gz',
] as const;

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
