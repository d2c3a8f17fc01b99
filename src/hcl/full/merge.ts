/**
 * Combining the scanner's structure (names, kinds, lines) with hcl2json's values.
 *
 * hcl2json (tmccombs/hcl2json's converter, as packaged by cdktf) renders a body as one JSON object:
 * blocks are grouped as `obj[type][label1]...[labelN]` = array of bodies in source order, and each
 * attribute is `obj[name]`, written after the blocks, so an attribute silently replaces a block of
 * the same name. Blocks of one type with different label counts make it fail without a position
 * (or worse). `checkStructure` finds both situations first and reports them with a line.
 */
import type { HclAttribute, HclBlock, HclBody } from '../types';
import { elementRanges, itemRanges } from '../positions';
import type { PositionMap } from '../positions';
import {
  ELEMENTS_ATTRIBUTE,
  ELEMENTS_BLOCK,
  ITEMS_BLOCK,
  type SyntaxAttribute,
  type SyntaxBlock,
  type SyntaxBody,
} from '../syntax';
import { buildTree, EMPTY_BODY, FULL_SPEC } from '../projection';
import { objectItems, tupleElements, verifyHcl, type Tokens } from '../fast/verify';

export interface StructureIssue {
  message: string;
  line: number;
}

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Finds what hcl2json cannot represent: a name used as both an argument and a block type, and
 * blocks of one type with different numbers of labels (Terraform rejects both). Iterative. */
export function checkStructure(root: SyntaxBody): StructureIssue | null {
  const pending: SyntaxBody[] = [root];
  let issue: StructureIssue | null = null;
  const consider = (candidate: StructureIssue): void => {
    if (issue === null || candidate.line < issue.line) issue = candidate;
  };
  while (pending.length > 0) {
    const body = pending.pop() as SyntaxBody;
    const attrs = new Map<string, number>();
    for (const a of body.attributes) if (!attrs.has(a.name)) attrs.set(a.name, a.line);
    const firstOfType = new Map<string, SyntaxBlock>();
    for (const b of body.blocks) {
      const attrLine = attrs.get(b.type);
      if (attrLine !== undefined) {
        consider({
          message: `"${b.type}" is defined both as an argument (line ${attrLine}) and as a block (line ${b.line}) in the same body`,
          line: Math.max(attrLine, b.line),
        });
      }
      const first = firstOfType.get(b.type);
      if (first === undefined) {
        firstOfType.set(b.type, b);
      } else if (first.labels.length !== b.labels.length) {
        consider({
          message: `blocks of type "${b.type}" have different numbers of labels: ${first.labels.length} at line ${first.line}, ${b.labels.length} at line ${b.line}`,
          line: b.line,
        });
      }
      pending.push(b.body);
    }
  }
  return issue;
}

export class MergeError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/** The merge's state for one body: its hcl2json object and the next unused index per
 * `type\0label1\0...` path (blocks with the same path are listed in source order). */
interface MergeState {
  json: Record<string, unknown>;
  used: Map<string, number>;
}

/**
 * Builds the `HclBody` for a file from the scanner's body and hcl2json's JSON. Throws `MergeError`
 * when the two disagree (which means one of them misread the file). Iterative.
 */
export function mergeBody(
  scanRoot: SyntaxBody,
  jsonRoot: unknown,
  text: string,
  positions: PositionMap,
  withElements = false,
): HclBody {
  if (!isRecord(jsonRoot)) {
    throw new MergeError(`hcl2json returned ${JSON.stringify(jsonRoot)?.slice(0, 40)} for a body`, 1);
  }
  return buildTree<SyntaxAttribute, SyntaxBlock, MergeState>(
    scanRoot,
    { json: jsonRoot, used: new Map() },
    FULL_SPEC,
    {
      attribute(a, _mode, type, state) {
        if (!hasOwn(state.json, a.name)) {
          throw new MergeError(`hcl2json has no value for the argument "${a.name}"`, a.line);
        }
        const valueStart = expressionStart(text, a.start, a.end);
        const attr: HclAttribute = {
          name: a.name,
          value: state.json[a.name],
          line: a.line,
          endLine: a.endLine,
          range: positions.range(a.start, a.end),
          valueRange: positions.range(valueStart, a.end),
        };
        const items = type === ITEMS_BLOCK ? snippet(text, valueStart, a.end, '{', objectItems) : null;
        if (items !== null) attr.items = itemRanges(items, positions);
        if (withElements && type === ELEMENTS_BLOCK && a.name === ELEMENTS_ATTRIBUTE) {
          const elements = snippet(text, valueStart, a.end, '[', tupleElements);
          if (elements !== null) attr.elements = elementRanges(elements, positions);
        }
        return attr;
      },
      block(b, _type, state) {
        let node: unknown = state.json;
        for (const key of [b.type, ...b.labels]) {
          node = isRecord(node) && hasOwn(node, key) ? node[key] : undefined;
        }
        const pathKey = [b.type, ...b.labels].join('\0');
        const index = state.used.get(pathKey) ?? 0;
        state.used.set(pathKey, index + 1);
        const bodyJson = Array.isArray(node) ? (node[index] as unknown) : undefined;
        if (!isRecord(bodyJson)) {
          const header = [b.type, ...b.labels.map((l) => JSON.stringify(l))].join(' ');
          throw new MergeError(
            `hcl2json has no body for the block ${header} (occurrence ${index + 1})`,
            b.line,
          );
        }
        const block: HclBlock = {
          type: b.type,
          labels: [...b.labels],
          line: b.line,
          endLine: b.endLine,
          range: positions.range(b.start, b.end),
          body: EMPTY_BODY,
        };
        return { block, body: b.body, state: { json: bodyJson, used: new Map() } };
      },
    },
  );
}

/** The fixed file name given to hcl2json; its diagnostics are then easy to take apart. */
export const HCL2JSON_FILENAME = 'input.hcl';

const DIAG_START = /input\.hcl:(\d+),(\d+)(?:-(?:\d+,)?\d+)?: /g;

/**
 * The first diagnostic of an hcl2json error, e.g.
 * `parse config: [input.hcl:2,6-3,1: Summary; detail. input.hcl:3,1-2: ...]` →
 * `{ line: 2, column: 6, message: 'Summary; detail.' }`. References to the file inside the
 * message are rewritten to `path`. Null when the error has no position.
 */
export function parseHcl2JsonError(
  raw: string,
  path: string,
): { line: number; column: number; message: string } | null {
  const prefix = 'parse config: [';
  if (!raw.startsWith(prefix)) return null;
  const inner = raw.slice(prefix.length, raw.endsWith(']') ? -1 : undefined);
  DIAG_START.lastIndex = 0;
  const first = DIAG_START.exec(inner);
  if (first === null || first.index !== 0) return null;
  const start = DIAG_START.lastIndex;
  const next = DIAG_START.exec(inner);
  // A following diagnostic starts after a space: `... detail. input.hcl:3,1-2: ...`.
  const end = next === null ? inner.length : next.index;
  const message = inner
    .slice(start, end)
    .trim()
    .replace(/input\.hcl:(\d+)/g, (_m, l: string) => `${path}:${l}`);
  return { line: Number(first[1]), column: Number(first[2]), message };
}

/**
 * Offset of the expression of the attribute spanning [start, end): past the name, the `=` and the
 * white space and inline comments around it (a scanned attribute is lexically valid, so this is a
 * plain walk).
 */
function expressionStart(text: string, start: number, end: number): number {
  let i = start;
  while (i < end && text[i] !== '=' && !isSpaceOrComment(text, i)) i++;
  for (;;) {
    i = skipSpace(text, i, end);
    if (text[i] === '=') {
      i++;
      return skipSpace(text, i, end);
    }
    if (i >= end) return end;
    i++;
  }
}

function isSpaceOrComment(text: string, i: number): boolean {
  const c = text[i];
  return c === ' ' || c === '\t' || (c === '/' && text[i + 1] === '*');
}

function skipSpace(text: string, i: number, end: number): number {
  while (i < end) {
    const c = text[i];
    if (c === ' ' || c === '\t') i++;
    else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close === -1 ? end : close + 2;
    } else break;
  }
  return i;
}

/**
 * `read` (object items or tuple elements) applied to the expression [from, to) verified on its own
 * as `_ = <expression>`, with offsets shifted back into `text`; null when the expression does not
 * start with `opener` or the verifier gives up on it.
 */
function snippet<T extends object>(
  text: string,
  from: number,
  to: number,
  opener: string,
  read: (text: string, tokens: Tokens, from: number, to: number) => T[] | null,
): T[] | null {
  if (text[from] !== opener) return null;
  const prefix = '_ = ';
  const source = `${prefix}${text.slice(from, to)}\n`;
  const verified = verifyHcl(source);
  if (!verified.ok) return null;
  const attr = verified.body.attributes[0];
  if (attr === undefined) return null;
  const found = read(source, verified.tokens, attr.exprStart, attr.exprEnd);
  if (found === null) return null;
  const shift = from - prefix.length;
  // Every number in an item is an offset.
  return found.map((it) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(it)) out[k] = typeof v === 'number' ? v + shift : v;
    return out as T;
  });
}
