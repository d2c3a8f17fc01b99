/**
 * Terraform's JSON configuration syntax (`.tf.json`, `.tofu.json`).
 *
 * A small position-tracking JSON parser (RFC 8259, strict: no comments, no trailing commas, no
 * duplicate keys in one object), then the conversion of the document into the same `HclBody` tree
 * the native syntax produces, following the rules of
 * https://developer.hashicorp.com/terraform/language/syntax/json and HCL's JSON body decoding
 * (hashicorp/hcl json/structure.go): a body is an object or an array of objects, each label level
 * is an object (or an array of objects) whose property names are the labels, and the innermost
 * value is one body (object), several bodies (array) or none (null). A property named `"//"` in a
 * body is a comment and is ignored. Which properties are blocks is decided by a schema of the
 * Terraform language constructs (provider-defined nested blocks are not known, so they stay
 * attributes with their JSON value).
 */
import type { HclAttribute, HclBlock, HclBody, ParseErrorInfo, ParseResult } from './types';
import { itemRanges, PositionMap } from './positions';

// ---------------------------------------------------------------------------------------------
// Position-tracking JSON parser
// ---------------------------------------------------------------------------------------------

/** Where a node is: 1-based line/column of its first character, the line of its last, and its
 * UTF-16 offsets [start, end). */
interface JsonSpan {
  line: number;
  column: number;
  endLine: number;
  start: number;
  end: number;
}

export type JsonNode =
  | (JsonSpan & { kind: 'object'; props: JsonProperty[] })
  | (JsonSpan & { kind: 'array'; items: JsonNode[] })
  | (JsonSpan & { kind: 'string'; value: string })
  | (JsonSpan & { kind: 'number'; value: number })
  | (JsonSpan & { kind: 'boolean'; value: boolean })
  | (JsonSpan & { kind: 'null' });

export interface JsonProperty {
  key: string;
  line: number;
  column: number;
  /** UTF-16 offsets of the quoted key. */
  keyStart: number;
  keyEnd: number;
  value: JsonNode;
}

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/**
 * Parses strict JSON with line/column positions (columns count code points). Nesting deeper than
 * `maxDepth` is an error, which keeps the recursion bounded.
 */
export function parseJsonWithPositions(text: string, maxDepth: number): JsonNode {
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const n = text.length;

  const column = (at: number): number => {
    let col = 1;
    for (let k = lineStart; k < at; k++) {
      const c = text.charCodeAt(k);
      if (c < 0xdc00 || c > 0xdfff) col++;
    }
    return col;
  };
  const error = (message: string, at = i): JsonSyntaxError => new JsonSyntaxError(message, line, column(at));
  const describe = (at: number): string => {
    if (at >= n) return 'end of file';
    const cp = text.codePointAt(at) as number;
    return cp < 0x20 || cp === 0x7f
      ? `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`
      : `"${String.fromCodePoint(cp)}"`;
  };

  const skipWs = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0d) i++;
      else if (c === 0x0a) {
        i++;
        line++;
        lineStart = i;
      } else break;
    }
  };

  const parseString = (): string => {
    // text[i] === '"'
    const startCol = i;
    i++;
    let out = '';
    let chunk = i;
    while (true) {
      if (i >= n) throw error('invalid JSON: unterminated string', startCol);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(chunk, i);
        i++;
        return out;
      }
      if (c < 0x20) throw error(`invalid JSON: control character ${describe(i)} in a string must be escaped`);
      if (c === 0x5c) {
        out += text.slice(chunk, i);
        const e = text[i + 1];
        switch (e) {
          case '"':
          case '\\':
          case '/':
            out += e;
            i += 2;
            break;
          case 'b':
            out += '\b';
            i += 2;
            break;
          case 'f':
            out += '\f';
            i += 2;
            break;
          case 'n':
            out += '\n';
            i += 2;
            break;
          case 'r':
            out += '\r';
            i += 2;
            break;
          case 't':
            out += '\t';
            i += 2;
            break;
          case 'u': {
            const hex = text.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex))
              throw error('invalid JSON: "\\u" must be followed by four hex digits');
            out += String.fromCharCode(parseInt(hex, 16));
            i += 6;
            break;
          }
          default:
            throw error(`invalid JSON: invalid escape sequence "\\${e ?? ''}" in a string`);
        }
        chunk = i;
        continue;
      }
      i++;
    }
  };

  const parseValue = (depth: number): JsonNode => {
    skipWs();
    if (i >= n) throw error('invalid JSON: unexpected end of file, expected a value');
    const startLine = line;
    const startCol = column(i);
    const startOff = i;
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth >= maxDepth) throw error(`nesting depth ${depth + 1} exceeds the limit of ${maxDepth}`);
      i++;
      if (c === '{') {
        const props: JsonProperty[] = [];
        const seen = new Map<string, number>();
        skipWs();
        if (text[i] === '}') {
          i++;
          return {
            kind: 'object',
            line: startLine,
            column: startCol,
            endLine: line,
            start: startOff,
            end: i,
            props,
          };
        }
        while (true) {
          skipWs();
          if (text[i] !== '"')
            throw error(`invalid JSON: expected a property name string, found ${describe(i)}`);
          const keyLine = line;
          const keyCol = column(i);
          const keyStart = i;
          const key = parseString();
          const keyEnd = i;
          const first = seen.get(key);
          if (first !== undefined) {
            throw new JsonSyntaxError(
              `duplicate key ${JSON.stringify(key)} in a JSON object (first defined at line ${first})`,
              keyLine,
              keyCol,
            );
          }
          seen.set(key, keyLine);
          skipWs();
          if (text[i] !== ':')
            throw error(`invalid JSON: expected ":" after a property name, found ${describe(i)}`);
          i++;
          const value = parseValue(depth + 1);
          props.push({ key, line: keyLine, column: keyCol, keyStart, keyEnd, value });
          skipWs();
          if (text[i] === ',') {
            i++;
            continue;
          }
          if (text[i] === '}') {
            i++;
            return {
              kind: 'object',
              line: startLine,
              column: startCol,
              endLine: line,
              start: startOff,
              end: i,
              props,
            };
          }
          throw error(`invalid JSON: expected "," or "}" in an object, found ${describe(i)}`);
        }
      }
      const items: JsonNode[] = [];
      skipWs();
      if (text[i] === ']') {
        i++;
        return {
          kind: 'array',
          line: startLine,
          column: startCol,
          endLine: line,
          start: startOff,
          end: i,
          items,
        };
      }
      while (true) {
        items.push(parseValue(depth + 1));
        skipWs();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return {
            kind: 'array',
            line: startLine,
            column: startCol,
            endLine: line,
            start: startOff,
            end: i,
            items,
          };
        }
        throw error(`invalid JSON: expected "," or "]" in an array, found ${describe(i)}`);
      }
    }
    if (c === '"') {
      const value = parseString();
      return {
        kind: 'string',
        line: startLine,
        column: startCol,
        endLine: line,
        start: startOff,
        end: i,
        value,
      };
    }
    for (const [word, node] of [
      ['true', { kind: 'boolean', value: true }],
      ['false', { kind: 'boolean', value: false }],
      ['null', { kind: 'null' }],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return {
          ...node,
          line: startLine,
          column: startCol,
          endLine: line,
          start: startOff,
          end: i,
        } as JsonNode;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m !== null && m[0] !== '-') {
      i += m[0].length;
      return {
        kind: 'number',
        line: startLine,
        column: startCol,
        endLine: line,
        start: startOff,
        end: i,
        value: Number(m[0]),
      };
    }
    throw error(`invalid JSON: unexpected ${describe(i)}, expected a value`);
  };

  const root = parseValue(0);
  skipWs();
  if (i < n) throw error(`invalid JSON: unexpected ${describe(i)} after the end of the document`);
  return root;
}

/** The plain JavaScript value of a node (objects get own properties, even for `__proto__`). */
export function jsonValue(node: JsonNode): unknown {
  switch (node.kind) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const p of node.props) {
        Object.defineProperty(out, p.key, {
          value: jsonValue(p.value),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    case 'array':
      return node.items.map(jsonValue);
    case 'null':
      return null;
    default:
      return node.value;
  }
}

// ---------------------------------------------------------------------------------------------
// Terraform JSON syntax → HclBody
// ---------------------------------------------------------------------------------------------

interface BodySchema {
  /** Nested block types of this body. */
  blocks: Map<string, BlockSchema>;
  /** Every property is an attribute (`locals`, `required_providers`). */
  justAttributes?: boolean;
}

interface BlockSchema {
  labels: number;
  body: BodySchema;
}

const body = (blocks: Record<string, BlockSchema> = {}, justAttributes = false): BodySchema => ({
  blocks: new Map(Object.entries(blocks)),
  justAttributes,
});
const block = (labels: number, schema: BodySchema = body()): BlockSchema => ({ labels, body: schema });

const conditionBlocks = { precondition: block(0), postcondition: block(0) };
const connection = block(0);
const provisioner = block(1, body({ connection }));
// `dynamic "x" { for_each = ..., content { ... } }`; the content may hold further dynamic blocks.
const dynamicContent = body();
const dynamic = block(1, body({ content: block(0, dynamicContent) }));
dynamicContent.blocks.set('dynamic', dynamic);
const lifecycle = block(0, body(conditionBlocks));
const resourceBody = body({ lifecycle, provisioner, connection, dynamic });
const dataBody = body({ lifecycle, dynamic });

/** The top-level constructs of the Terraform language and their nested Terraform-defined blocks. */
export const TERRAFORM_JSON_SCHEMA: BodySchema = body({
  resource: block(2, resourceBody),
  data: block(2, dataBody),
  ephemeral: block(2, dataBody),
  provider: block(1, body({ dynamic })),
  module: block(1),
  variable: block(1, body({ validation: block(0) })),
  output: block(1, body({ precondition: block(0) })),
  check: block(1, body({ data: block(2, dataBody), assert: block(0) })),
  import: block(0),
  moved: block(0),
  removed: block(0, body({ lifecycle, provisioner, connection })),
  locals: block(0, body({}, true)),
  // OpenTofu 1.12 (opentofu/opentofu internal/configs/language.go); Terraform has no such block.
  language: block(0, body({ compatible_with: block(0) })),
  terraform: block(
    0,
    body({
      required_providers: block(0, body({}, true)),
      backend: block(1),
      cloud: block(0, body({ workspaces: block(0) })),
      provider_meta: block(1),
    }),
  ),
});

class JsonConfigError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

/** The objects making up a body: one object, an array of objects, or nothing for null. */
function bodyObjects(node: JsonNode, what: string): Extract<JsonNode, { kind: 'object' }>[] {
  if (node.kind === 'object') return [node];
  if (node.kind === 'null') return [];
  if (node.kind === 'array') {
    return node.items.map((item) => {
      if (item.kind !== 'object') {
        throw new JsonConfigError(
          `Incorrect JSON value type; a JSON object is required here, ${what}`,
          item.line,
          item.column,
        );
      }
      return item;
    });
  }
  throw new JsonConfigError(
    `Incorrect JSON value type; a JSON object or an array of objects is required here, ${what}`,
    node.line,
    node.column,
  );
}

function convertBody(
  node: JsonNode,
  schema: BodySchema,
  depth: number,
  maxDepth: number,
  positions: PositionMap,
  type = '',
): HclBody {
  if (depth > maxDepth) {
    throw new JsonConfigError(
      `nesting depth ${depth} exceeds the limit of ${maxDepth}`,
      node.line,
      node.column,
    );
  }
  const out: HclBody = { attributes: [], blocks: [] };
  const attrLines = new Map<string, number>();
  for (const obj of bodyObjects(node, 'to define arguments and child blocks')) {
    for (const prop of obj.props) {
      if (prop.key === '//') continue;
      const blockSchema = schema.justAttributes ? undefined : schema.blocks.get(prop.key);
      if (blockSchema !== undefined) {
        const at = { line: prop.line, start: prop.keyStart };
        unpackBlock(prop.value, prop.key, blockSchema, [], at, out.blocks, depth, maxDepth, positions);
        continue;
      }
      const first = attrLines.get(prop.key);
      if (first !== undefined) {
        throw new JsonConfigError(
          `Duplicate argument; the argument "${prop.key}" was already set at line ${first}`,
          prop.line,
          prop.column,
        );
      }
      attrLines.set(prop.key, prop.line);
      const attr: HclAttribute = {
        name: prop.key,
        value: jsonValue(prop.value),
        line: prop.line,
        endLine: prop.value.endLine,
        range: positions.range(prop.keyStart, prop.value.end),
        valueRange: positions.range(prop.value.start, prop.value.end),
      };
      if (type === 'required_providers' && prop.value.kind === 'object') {
        attr.items = itemRanges(
          prop.value.props.map((p) => ({
            key: p.key,
            keyStart: p.keyStart,
            keyEnd: p.keyEnd,
            valueStart: p.value.start,
            valueEnd: p.value.end,
          })),
          positions,
        );
      }
      out.attributes.push(attr);
    }
  }
  return out;
}

function unpackBlock(
  node: JsonNode,
  type: string,
  schema: BlockSchema,
  labels: string[],
  key: { line: number; start: number },
  out: HclBlock[],
  depth: number,
  maxDepth: number,
  positions: PositionMap,
): void {
  if (labels.length < schema.labels) {
    const which = `to specify the labels of this "${type}" block`;
    const props = bodyObjects(node, which).flatMap((obj) => obj.props);
    if (props.length === 0) {
      // HCL: "Missing block label"; an empty object (or null) at a label level declares nothing.
      throw new JsonConfigError(
        `Missing block label; at least one object property is required, whose name is a label of the "${type}" block`,
        node.line,
        node.column,
      );
    }
    for (const prop of props) {
      const at = { line: prop.line, start: prop.keyStart };
      unpackBlock(prop.value, type, schema, [...labels, prop.key], at, out, depth, maxDepth, positions);
    }
    return;
  }
  const add = (bodyNode: JsonNode, line: number, start: number): void => {
    out.push({
      type,
      labels,
      line,
      endLine: bodyNode.endLine,
      range: positions.range(start, bodyNode.end),
      body: convertBody(bodyNode, schema.body, depth + 1, maxDepth, positions, type),
    });
  };
  switch (node.kind) {
    case 'null':
      return;
    case 'object':
      add(node, key.line, key.start);
      return;
    case 'array':
      for (const item of node.items) {
        // Several blocks with the same header: each one is located at its own opening brace.
        add(item, item.line, item.start);
      }
      return;
    default:
      throw new JsonConfigError(
        `Incorrect JSON value type; a JSON object or an array is required here, representing the contents of one or more "${type}" blocks`,
        node.line,
        node.column,
      );
  }
}

/**
 * Parses a `.tf.json` / `.tofu.json` file into the shared `HclBody` tree. Attribute values are the
 * JSON values; strings stay strings (`"aws.east"`, `"${var.x}"`), use `stripTemplate` to read
 * references written either way.
 */
export function parseJsonConfig(
  path: string,
  text: string,
  options: { maxNestingDepth?: number; positions?: PositionMap } = {},
): ParseResult {
  const positions = options.positions ?? new PositionMap(path, text, 0);
  const maxDepth = options.maxNestingDepth ?? 128;
  const fail = (message: string, line: number, column: number): ParseResult => {
    const error: ParseErrorInfo = { path, message, line, column };
    return { ok: false, error };
  };
  let root: JsonNode;
  try {
    root = parseJsonWithPositions(text, maxDepth);
  } catch (err) {
    if (err instanceof JsonSyntaxError) return fail(err.message, err.line, err.column);
    throw err;
  }
  if (root.kind !== 'object') {
    return fail('the root of a .tf.json file must be an object', root.line, root.column);
  }
  try {
    return {
      ok: true,
      file: { path, syntax: 'json', body: convertBody(root, TERRAFORM_JSON_SCHEMA, 0, maxDepth, positions) },
    };
  } catch (err) {
    if (err instanceof JsonConfigError) return fail(err.message, err.line, err.column);
    throw err;
  }
}
