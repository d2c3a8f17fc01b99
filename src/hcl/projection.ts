/**
 * Projections: the part of a file's body a consumer reads. `HclParser.extract(path, content, spec)`
 * returns exactly `projectBody(parse(path, content).body, spec)` — same verdict, same blocks, same
 * values — but only evaluates what the spec selects.
 *
 * `buildTree` is the one walk that builds an `HclBody` under a spec: the fast path builds from the
 * verifier's syntax tree, the full path merges the scanner's tree with hcl2json's values, and
 * `projectBody` copies a parsed body.
 */
import { createHash } from 'node:crypto';
import type { HclAttribute, HclBlock, HclBody } from './types';

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

/** A tree to build from: syntax bodies, or `HclBody` itself (projections). */
export interface SourceBody<A, B> {
  readonly attributes: readonly A[];
  readonly blocks: readonly B[];
}

/**
 * A block body with nothing in it, shared (frozen) by every block `buildTree` keeps nothing of: most
 * blocks a projection keeps are read for their type and labels only, and parse results live for
 * the whole scan. Bodies are read-only once built.
 */
export const EMPTY_BODY: HclBody = Object.freeze({
  attributes: Object.freeze([]) as unknown as HclAttribute[],
  blocks: Object.freeze([]) as unknown as HclBlock[],
});

/**
 * How `buildTree` makes nodes. Each callback is told where the node sits: `type`, the type of the
 * block whose body holds it ('' at the file's root), and `state`, the builder's own state for that
 * body.
 */
export interface TreeBuilder<A, B, C> {
  /** The node for an attribute `spec` keeps, with its value or by name only (value `null`). */
  attribute(a: A, mode: 'value' | 'name', type: string, state: C): HclAttribute;
  /** The node for a block `spec` keeps (its `body` `EMPTY_BODY`: the walk gives it a body of its
   * own when it keeps something in it), the source body to read next and the builder's state for
   * that body. */
  block(b: B, type: string, state: C): { block: HclBlock; body: SourceBody<A, B>; state: C };
}

/**
 * Builds the `HclBody` of a tree: every attribute and nested block `spec` keeps, in source order.
 * Iterative (no recursion on deep input); bodies are visited depth-first.
 */
export function buildTree<A extends { name: string }, B extends { type: string }, C>(
  root: SourceBody<A, B>,
  rootState: C,
  spec: BlockSpec,
  builder: TreeBuilder<A, B, C>,
): HclBody {
  const out = { body: EMPTY_BODY };
  const work: { from: SourceBody<A, B>; to: { body: HclBody }; spec: BlockSpec; type: string; state: C }[] = [
    { from: root, to: out, spec, type: '', state: rootState },
  ];
  while (work.length > 0) {
    const { from, to, spec: s, type, state } = work.pop() as (typeof work)[number];
    let attributes: HclAttribute[] | null = null;
    let blocks: HclBlock[] | null = null;
    for (const a of from.attributes) {
      const mode = attributeMode(s, a.name);
      if (mode !== null) (attributes ??= []).push(builder.attribute(a, mode, type, state));
    }
    for (const b of from.blocks) {
      const inner = nestedSpec(s, b.type);
      if (inner === null) continue;
      const made = builder.block(b, type, state);
      (blocks ??= []).push(made.block);
      work.push({ from: made.body, to: made.block, spec: inner, type: b.type, state: made.state });
    }
    if (attributes !== null || blocks !== null)
      to.body = { attributes: attributes ?? [], blocks: blocks ?? [] };
  }
  // The file's own body is never the shared one.
  return out.body === EMPTY_BODY ? { attributes: [], blocks: [] } : out.body;
}

/** The projection of a parsed body. */
export function projectBody(body: HclBody, spec: BlockSpec): HclBody {
  return buildTree<HclAttribute, HclBlock, null>(body, null, spec, {
    attribute(a, mode) {
      if (mode === 'value') return { ...a };
      // Read by name only: no value, so no object items or elements either.
      const { items: _items, elements: _elements, ...located } = a;
      return { ...located, value: null };
    },
    block(b) {
      return {
        block: { ...b, labels: [...b.labels], body: EMPTY_BODY },
        body: b.body,
        state: null,
      };
    },
  });
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
