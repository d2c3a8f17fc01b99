/** Keys the parsers add to locate nodes in the source (see `SourceRange` in src/model.ts). */
const RANGE_KEYS = new Set(['range', 'valueRange', 'items', 'elements', 'entry', 'sourceRange']);

function isNode(v: Record<string, unknown>): boolean {
  if (typeof v.file === 'string' && typeof v.line === 'number') return true; // a location or finding
  // A provider requirement (`entry`) or a module call (`sourceRange`).
  if (typeof v.name === 'string' && ('declared' in v || 'sourceKind' in v)) return true;
  return typeof v.line === 'number' && typeof v.endLine === 'number' && ('name' in v || 'type' in v);
}

/**
 * A deep copy of `value` without the source ranges of attributes, blocks, locations and findings
 * (`range`, `valueRange`, `items`, `elements`; a provider requirement's `entry`, a
 * module call's `sourceRange`), for tests about
 * structure and values (ranges have their own tests: test/hcl/ranges.test.ts). Attribute values are
 * kept as they are, whatever keys they have.
 */
export function withoutRanges<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => withoutRanges(v)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Record<string, unknown>;
  const node = isNode(obj);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (node && RANGE_KEYS.has(k)) continue;
    out[k] = node && k === 'value' ? v : withoutRanges(v);
  }
  return out as T;
}
