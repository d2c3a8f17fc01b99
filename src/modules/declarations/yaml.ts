/**
 * YAML for declaration files, with lines: js-yaml's `listener` reports where every node opens, so
 * each mapping or sequence of the document is mapped to its first line (1-based). Scalars have no
 * identity: `keyLine` finds the line of a key inside the lines of its mapping.
 */
import { load, YAMLException } from 'js-yaml';

export interface YamlDocument {
  value: unknown;
  /** The first line (1-based) of a mapping or sequence of `value`, or null. */
  lineOf(node: unknown): number | null;
  /** The line of `key:` inside the mapping `node` (searched from its first line up to, not
   * including, `before`), falling back to the mapping's own line. */
  keyLine(node: unknown, key: string, before?: number | null): number;
}

export type YamlResult = { ok: true; doc: YamlDocument } | { ok: false; line: number; message: string };

/** Parses one YAML document; a syntax error is a result, never an exception. */
export function parseYaml(text: string): YamlResult {
  const open: number[] = [];
  const lines = new WeakMap<object, number>();
  let value: unknown;
  try {
    value = load(text, {
      json: true,
      listener(event, state) {
        if (event === 'open') {
          open.push(state.line);
          return;
        }
        const line = open.pop();
        const result: unknown = state.result;
        if (line !== undefined && result !== null && typeof result === 'object' && !lines.has(result)) {
          lines.set(result, line + 1);
        }
      },
    });
  } catch (err) {
    if (err instanceof YAMLException) {
      const line = (err.mark?.line ?? 0) + 1;
      return { ok: false, line, message: err.reason || err.message };
    }
    throw err;
  }
  const textLines = text.split(/\r?\n/);
  const lineOf = (node: unknown): number | null =>
    node !== null && typeof node === 'object' ? (lines.get(node) ?? null) : null;
  const keyLine = (node: unknown, key: string, before?: number | null): number => {
    const start = lineOf(node) ?? 1;
    const end = Math.min(before ?? textLines.length + 1, textLines.length + 1);
    const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const re = new RegExp(`^\\s*(?:-\\s+)?["']?${escaped}["']?\\s*:`);
    for (let l = start; l < end; l++) if (re.test(textLines[l - 1] ?? '')) return l;
    return start;
  };
  return { ok: true, doc: { value, lineOf, keyLine } };
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A plain string without interpolation (`${…}`, `{{ … }}`), or null. */
export function staticString(v: unknown): string | null {
  if (typeof v !== 'string' || v === '') return null;
  if (v.includes('${') || v.includes('{{')) return null;
  return v;
}
