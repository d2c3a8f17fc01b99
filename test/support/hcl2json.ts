/**
 * hcl2json (`@cdktf/hcl2json`, an oracle we did not write) as the reference for the HCL parser
 * tests, in its two forms:
 * - `referenceParse(text)`: hcl2json's own JSON for a text, untouched by tfguard's conversion;
 *   `hcl2jsonShape(body)` regroups a parsed body the way hcl2json groups it, to compare the two.
 * - `referenceParser()`: tfguard's parser with the fast path off, so every file is parsed in full by
 *   hcl2json; `projected` cuts its result down to a `BlockSpec`, and `sameResult` / `render`
 *   compare and show results exactly. This is the `ParseResult` the fast path must equal.
 */
import { HclParser, projectBody } from '../../src/hcl';
import type { BlockSpec } from '../../src/hcl';
import { Hcl2JsonPool } from '../../src/hcl/full/pool';
import type { HclBody, ParseResult } from '../../src/hcl';

let pool: Hcl2JsonPool | null = null;

/** hcl2json's own output for `text` (in a worker thread, untouched by tfguard's merge). */
export async function referenceParse(text: string): Promise<unknown> {
  pool ??= new Hcl2JsonPool({ size: 1, hcl2jsonPath: require.resolve('@cdktf/hcl2json') });
  const outcome = await pool.run('input.hcl', text, 60_000);
  if (outcome.kind !== 'ok') throw new Error(`hcl2json failed: ${JSON.stringify(outcome)}`);
  return outcome.json;
}

/** Stops the worker behind `referenceParse` (call it in `afterAll`). */
export async function closeReference(): Promise<void> {
  await pool?.close();
  pool = null;
}

/**
 * Rebuilds the JSON hcl2json produces for a body from an `HclBody`: blocks grouped as
 * `obj[type][label1]...[labelN]` = array of bodies, attributes as `obj[name]`.
 */
export function hcl2jsonShape(body: HclBody): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const b of body.blocks) {
    let node = out;
    const keys = [b.type, ...b.labels];
    for (const k of keys.slice(0, -1)) {
      node[k] ??= {};
      node = node[k] as Record<string, unknown>;
    }
    const last = keys[keys.length - 1] as string;
    ((node[last] ??= []) as unknown[]).push(hcl2jsonShape(b.body));
  }
  for (const a of body.attributes) out[a.name] = a.value;
  return out;
}

/** A parser that parses every native-syntax file in full with hcl2json (the caller closes it). */
export function referenceParser(): HclParser {
  return new HclParser({ fastPath: false, workers: 2 });
}

/** What `extract(path, content, spec)` must return: the full hcl2json parse, projected. */
export function projected(full: ParseResult, spec: BlockSpec): ParseResult {
  return full.ok ? { ok: true, file: { ...full.file, body: projectBody(full.file.body, spec) } } : full;
}

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
