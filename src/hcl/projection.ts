/**
 * Projections: the part of a file's body a consumer reads. `HclParser.extract(path, content, spec)`
 * returns exactly `projectBody(parse(path, content).body, spec)` — same verdict, same blocks, same
 * values — but only evaluates what the spec selects.
 */
import { createHash } from 'node:crypto';
import type { HclAttribute, HclBlock, HclBody } from '../model';

export interface BlockSpec {
  /** Arguments whose values are kept (`'all'`: every argument). Default: none. */
  readonly attributes?: readonly string[] | 'all';
  /** Nested block types kept, each with its own spec. */
  readonly blocks?: Readonly<Record<string, BlockSpec>>;
  /** Keep nested blocks of types not listed in `blocks` too, with type, labels and lines only. */
  readonly otherBlocks?: boolean;
  /** Keep the arguments not selected by `attributes` too, by name and lines only: their value is
   * `null`, never evaluated (what a block sets, without the cost of reading it). */
  readonly attributeNames?: boolean;
}

const EMPTY: BlockSpec = {};

/** Which spec applies to a nested block of `type`, or null when the block is dropped. */
export function nestedSpec(spec: BlockSpec, type: string): BlockSpec | null {
  if (spec === FULL_SPEC) return FULL_SPEC;
  const own = spec.blocks !== undefined && Object.prototype.hasOwnProperty.call(spec.blocks, type);
  if (own) return (spec.blocks as Record<string, BlockSpec>)[type] as BlockSpec;
  return spec.otherBlocks === true ? EMPTY : null;
}

export function wantsAttribute(spec: BlockSpec, name: string): boolean {
  const a = spec.attributes;
  return a === 'all' || (a !== undefined && a.includes(name));
}

/** How an argument is kept: with its value, by name only (value `null`), or not at all. */
export function attributeMode(spec: BlockSpec, name: string): 'value' | 'name' | null {
  if (wantsAttribute(spec, name)) return 'value';
  return spec.attributeNames === true ? 'name' : null;
}

/** True when the spec keeps every argument and every nested block (a full parse). */
export function isFullSpec(spec: BlockSpec): boolean {
  return spec === FULL_SPEC;
}

/** Everything: `projectBody(body, FULL_SPEC)` is a copy of `body`. */
export const FULL_SPEC: BlockSpec = Object.freeze({ attributes: 'all', otherBlocks: true });

/** The projection of a parsed body. Iterative. */
export function projectBody(body: HclBody, spec: BlockSpec): HclBody {
  const out: HclBody = { attributes: [], blocks: [] };
  const pending: { from: HclBody; to: HclBody; spec: BlockSpec }[] = [{ from: body, to: out, spec }];
  while (pending.length > 0) {
    const { from, to, spec: s } = pending.pop() as (typeof pending)[number];
    for (const a of from.attributes) {
      const mode = attributeMode(s, a.name);
      if (mode !== null) {
        let attr: HclAttribute = { ...a };
        if (mode !== 'value') {
          // Read by name only: no value, so no object items either.
          const { items: _items, ...located } = a;
          attr = { ...located, value: null };
        }
        to.attributes.push(attr);
      }
    }
    for (const b of from.blocks) {
      const inner = nestedSpec(s, b.type);
      if (inner === null) continue;
      const block: HclBlock = { ...b, labels: [...b.labels], body: { attributes: [], blocks: [] } };
      to.blocks.push(block);
      pending.push({ from: b.body, to: block.body, spec: inner });
    }
  }
  return out;
}

/** A stable fingerprint of a spec (part of cache keys). */
export function specFingerprint(spec: BlockSpec): string {
  if (isFullSpec(spec)) return 'full';
  const canonical = (s: BlockSpec): unknown => ({
    a: s.attributes === 'all' ? 'all' : [...(s.attributes ?? [])].sort(),
    o: s.otherBlocks === true,
    n: s.attributeNames === true,
    b: Object.keys(s.blocks ?? {})
      .sort()
      .map((k) => [k, canonical((s.blocks as Record<string, BlockSpec>)[k] as BlockSpec)]),
  });
  return createHash('sha256')
    .update(JSON.stringify(canonical(spec)))
    .digest('hex')
    .slice(0, 16);
}
