/**
 * Shared pieces of the fast-path tests: corpus files, the reference (full hcl2json) parser, the
 * expected projection, and a seeded random generator for mutations.
 */
import { readFile } from 'node:fs/promises';
import { readArchiveBytes } from '../../../src/archive';
import { HclParser, projectBody } from '../../../src/hcl';
import type { BlockSpec } from '../../../src/hcl';
import type { ParseResult } from '../../../src/model';
import { shouldLoad } from '../../../src/scan';
import { corpusFile } from '../../support/external';

export const ARCHIVES = [
  'cloudposse_terraform-aws-components.tar.gz',
  'ministryofjustice_modernisation-platform.tar.gz',
  'ministryofjustice_cloud-platform-infrastructure.tar.gz',
  'terraform-aws-modules_terraform-aws-eks.tar.gz',
  'terraform-aws-modules_terraform-aws-vpc.tar.gz',
  'hashicorp_learn-terraform-provision-eks-cluster.tar.gz',
] as const;

/** Configuration and lock files of a corpus archive (the files a scan parses). */
export async function corpusFiles(archive: string): Promise<Map<string, Buffer>> {
  const bytes = await readFile(corpusFile(archive));
  const loaded = await readArchiveBytes(archive, bytes, { shouldLoad });
  const out = new Map<string, Buffer>();
  for (const [p, content] of loaded.files) {
    if (/\.(tf|tf\.json|tofu|tofu\.json|hcl)$/.test(p)) out.set(p, content);
  }
  return out;
}

/** What `extract(path, content, spec)` must return: the full hcl2json parse, projected. */
export function projected(full: ParseResult, spec: BlockSpec): ParseResult {
  return full.ok ? { ok: true, file: { ...full.file, body: projectBody(full.file.body, spec) } } : full;
}

/** A parser that parses every native-syntax file in full with hcl2json (the reference). */
export function referenceParser(): HclParser {
  return new HclParser({ fastPath: false, workers: 2 });
}

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

export { mapLimit } from '../../../src/util/map-limit';

/**
 * Exact equality of two parse results, key order included, that does not depend on the realm an
 * object was made in (values from a worker thread have the outer realm's prototypes, jest runs
 * tests in a separate one, so `isDeepStrictEqual` would always fail): a JSON rendering that also
 * shows `undefined` and `-0`.
 */
export function sameResult(a: unknown, b: unknown): boolean {
  return render(a) === render(b);
}

export function render(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x === undefined ? '<undefined>' : Object.is(x, -0) ? '<-0>' : x,
  );
}
