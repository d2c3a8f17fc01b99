/**
 * The parsing layer: every `.tf`, `.tf.json`, `.tofu`, `.tofu.json`, `.terraform.lock.hcl` and
 * `.tfguard.hcl` file goes through `HclParser.parse`.
 *
 * Native syntax, fast path: decode → `verifyHcl` (a conservative TypeScript verifier that either
 * proves hcl2json would accept the file or gives up) → structure checks → values read from the
 * tokens by `evaluateExpression`; values it cannot read are sent to hcl2json as small snippets,
 * batched across files (`extract` only; `parse` takes the full path instead).
 * Native syntax, full path (the verifier gave up, or a snippet batch failed): decode → scan
 * (structure, lexical errors, nesting depth; too deep → error without calling hcl2json) → hcl2json
 * in a worker (values and the authoritative syntax verdict) → merge.
 * JSON syntax (`*.json`): decode → `parseJsonConfig`, in the calling thread.
 *
 * So the WebAssembly module is loaded (lazily, in a worker) only when a file needs the full parse
 * or a value the evaluator cannot read.
 */
import os from 'node:os';
import type { HclAttribute, HclBlock, HclBody, ParseErrorInfo, ParseResult } from './types';
import { decodeSource } from './decode';
import { evaluateExpression, NOT_EVALUABLE } from './fast/evaluate';
import { parseJsonConfig } from './json';
import { checkStructure, HCL2JSON_FILENAME, MergeError, mergeBody, parseHcl2JsonError } from './full/merge';
import { Hcl2JsonPool } from './full/pool';
import { hcl2jsonMain } from './full/locate';
import { buildTree, EMPTY_BODY, FULL_SPEC, projectBody } from './projection';
import type { BlockSpec } from './projection';
import { scanHcl } from './full/scanner';
import { checkpoint } from '../util/deadline';
import { elementRanges, itemRanges, PositionMap } from './positions';
import { expressionOffset, objectItems, tupleElements, verifyHcl } from './fast/verify';
import type { Tokens } from './fast/verify';
import {
  ELEMENTS_ATTRIBUTE,
  ELEMENTS_BLOCK,
  ITEMS_BLOCK,
  locatesElements,
  syntaxOfPath,
  type SyntaxAttribute,
  type SyntaxBlock,
  type SyntaxBody,
} from './syntax';

export interface HclParserOptions {
  /** Deeper bracket/brace/paren/template nesting is a parse error and never reaches hcl2json. */
  maxNestingDepth?: number;
  /** Per-file budget for hcl2json; default 10 s + 5 s per MiB. */
  timeoutMs?: number;
  /** Worker threads for hcl2json; default `Math.min(2, os.availableParallelism())`. */
  workers?: number;
  /** Use the verifier and evaluator (default true). `false` parses every native-syntax file in
   * full with hcl2json: the reference the differential tests and the benchmark baseline use. */
  fastPath?: boolean;
}

export const DEFAULT_MAX_NESTING_DEPTH = 128;

/** Per-call options of `parse` / `extract`. */
export interface ParseCallOptions {
  /**
   * Abandons the parse when aborted: a full hcl2json parse in flight is terminated (its worker is
   * replaced), and the call rejects with the signal's reason instead of resolving. The signal is
   * also polled inside the synchronous passes over the text (src/util/deadline.ts), so a time limit
   * that passes while a large file is lexed stops the parse there, not after the pass.
   */
  signal?: AbortSignal | undefined;
}

/** Rejects with the signal's reason once it fires (snippet batches shared with other files are
 * left to finish under their own budget). */
function abandonOnAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** The default per-file budget: 10 s plus 5 s per MiB (hcl2json needs ~3 s per MB). */
export function defaultTimeoutMs(bytes: number): number {
  return Math.ceil(10_000 + (5_000 * bytes) / (1024 * 1024));
}

function availableParallelism(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Counters of which path each file took (for tests, the benchmark and diagnostics). */
export interface ParserStats {
  /** Native-syntax files proven well-formed by the verifier (no full hcl2json parse). */
  verified: number;
  /** Native-syntax files parsed in full by hcl2json. */
  fullParses: number;
  /** hcl2json calls made for values the evaluator cannot read, and the values sent. */
  snippetBatches: number;
  snippets: number;
}

interface Snippet {
  /** `name = expr`, verbatim from the file. */
  text: string;
  name: string;
  resolve: (value: { ok: true; value: unknown } | { ok: false }) => void;
}

/** Largest snippet batch handed to hcl2json in one call (characters). */
const MAX_BATCH_CHARS = 256 * 1024;

export class HclParser {
  private readonly maxNestingDepth: number;
  private readonly timeoutMs: number | undefined;
  private readonly pool: Hcl2JsonPool;
  private readonly fastPath: boolean;
  private snippetQueue: Snippet[] = [];
  private flushScheduled = false;
  readonly stats: ParserStats = { verified: 0, fullParses: 0, snippetBatches: 0, snippets: 0 };

  constructor(options: HclParserOptions = {}) {
    this.maxNestingDepth = options.maxNestingDepth ?? DEFAULT_MAX_NESTING_DEPTH;
    this.timeoutMs = options.timeoutMs;
    this.fastPath = options.fastPath ?? true;
    this.pool = new Hcl2JsonPool({
      size: options.workers ?? Math.min(2, availableParallelism()),
      hcl2jsonPath: hcl2jsonMain(),
    });
  }

  /**
   * Parses one file. `.json` suffix → JSON syntax, anything else → native syntax. Never rejects:
   * bad input (and even an internal failure) becomes `{ ok: false, error }` — except with the
   * reason of `options.signal` once it fired.
   */
  async parse(path: string, content: Buffer, options: ParseCallOptions = {}): Promise<ParseResult> {
    return this.extract(path, content, FULL_SPEC, options);
  }

  /**
   * Parses only what `spec` selects: the result is exactly `projectBody(parse(...).body, spec)` for
   * a file that parses, and the same error for one that does not. Never rejects (but see `parse`).
   */
  async extract(
    path: string,
    content: Buffer,
    spec: BlockSpec,
    options: ParseCallOptions = {},
  ): Promise<ParseResult> {
    const signal = options.signal;
    try {
      checkpoint(signal);
      // A parse that finished stands even if the signal fires meanwhile: the caller checks its
      // deadline before using it, and the timeout then names the file whose parse it cut short.
      return await this.parseUnsafe(path, content, spec, signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      return failure(path, `internal parser error: ${describe(err)}`, 1, 1);
    }
  }

  /** True once a hcl2json worker (and so the WebAssembly module) has been started. */
  get wasmStarted(): boolean {
    return this.pool.everStarted;
  }

  /** hcl2json parses running in a worker right now (tests and diagnostics). */
  get busyWorkers(): number {
    return this.pool.busyCount;
  }

  /** Terminates the workers (parses in progress end with an error). Safe to call twice; a later
   * `parse` starts new workers. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /**
   * `extract` when it needs neither hcl2json nor a wait, synchronously: the result of a file whose
   * bytes do not decode, of a JSON-syntax file, or of a native-syntax file the verifier proves
   * well-formed and the evaluator reads in full; null otherwise (only `extract` can tell). The
   * result is the one `extract` gives (the directory reader parses files ahead with it while it
   * waits for its reader thread: src/scan/ahead.ts). `check` is called now and then during the
   * verification; what it throws ends this call with null.
   */
  extractNow(path: string, content: Buffer, spec: BlockSpec, check?: () => void): ParseResult | null {
    try {
      const settled = this.settle(path, content, spec, check);
      return 'result' in settled ? settled.result : null;
    } catch {
      // `extract` turns an internal failure into a result of its own: it decides this file.
      return null;
    }
  }

  /** The synchronous part of a parse: its result when that needs no hcl2json, else the decoded
   * text and what the fast path made of it (null when the verifier gave up). */
  private settle(
    path: string,
    content: Buffer,
    spec: BlockSpec,
    check: (() => void) | undefined,
  ):
    | { result: ParseResult }
    | { text: string; positions: PositionMap; fast: { body: HclBody; pending: PendingValue[] } | null } {
    const decoded = decodeSource(path, content);
    if (!decoded.ok) return { result: decoded };
    const text = decoded.text;
    const positions = new PositionMap(path, text, decoded.bomBytes, content.length);
    if (syntaxOfPath(path) === 'json') {
      const result = parseJsonConfig(path, text, { maxNestingDepth: this.maxNestingDepth, positions });
      return {
        result:
          spec === FULL_SPEC || !result.ok
            ? result
            : { ok: true, file: { ...result.file, body: projectBody(result.file.body, spec) } },
      };
    }
    const fast = this.fastPath ? fastParse(path, text, spec, this.maxNestingDepth, positions, check) : null;
    if (fast !== null && 'result' in fast) {
      this.stats.verified++;
      return { result: fast.result };
    }
    return { text, positions, fast };
  }

  private async parseUnsafe(
    path: string,
    content: Buffer,
    spec: BlockSpec,
    signal: AbortSignal | undefined,
  ): Promise<ParseResult> {
    const check = signal === undefined ? undefined : (): void => checkpoint(signal);
    const settled = this.settle(path, content, spec, check);
    if ('result' in settled) return settled.result;
    const { text, positions, fast } = settled;
    const full = spec === FULL_SPEC;
    if (fast !== null && !full) {
      const { body, pending } = fast;
      const values = await abandonOnAbort(
        Promise.all(pending.map((p) => this.snippetValue(p.text, p.name))),
        signal,
      );
      if (values.every((v) => v.ok)) {
        pending.forEach((p, i) => {
          p.attr.value = (values[i] as { ok: true; value: unknown }).value;
        });
        this.stats.verified++;
        return { ok: true, file: { path, syntax: 'hcl', body } };
      }
    }
    this.stats.fullParses++;
    checkpoint(signal);
    const result = await this.fullParse(path, text, content.length, positions, signal);
    return full || !result.ok
      ? result
      : { ok: true, file: { ...result.file, body: projectBody(result.file.body, spec) } };
  }

  /** The value hcl2json gives the attribute `snippet` (`name = expr`), batched with others. */
  private snippetValue(text: string, name: string): Promise<{ ok: true; value: unknown } | { ok: false }> {
    return new Promise((resolve) => {
      this.snippetQueue.push({ text, name, resolve });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => {
          this.flushScheduled = false;
          void this.flushSnippets();
        });
      }
    });
  }

  private async flushSnippets(): Promise<void> {
    const queue = this.snippetQueue;
    this.snippetQueue = [];
    let i = 0;
    while (i < queue.length) {
      const batch: Snippet[] = [];
      let doc = '';
      while (i < queue.length && (batch.length === 0 || doc.length < MAX_BATCH_CHARS)) {
        const s = queue[i++] as Snippet;
        doc += `s${batch.length} {\n${s.text}\n}\n`;
        batch.push(s);
      }
      this.stats.snippetBatches++;
      this.stats.snippets += batch.length;
      const outcome = await this.pool.run(
        HCL2JSON_FILENAME,
        doc,
        this.timeoutMs ?? defaultTimeoutMs(doc.length),
      );
      batch.forEach((s, k) => {
        const body = outcome.kind === 'ok' ? blockBody(outcome.json, `s${k}`) : null;
        if (body !== null && Object.prototype.hasOwnProperty.call(body, s.name)) {
          s.resolve({ ok: true, value: body[s.name] });
        } else {
          s.resolve({ ok: false });
        }
      });
    }
  }

  private async fullParse(
    path: string,
    text: string,
    bytes: number,
    positions: PositionMap,
    signal: AbortSignal | undefined,
  ): Promise<ParseResult> {
    const scan = scanHcl(path, text, {
      depthLimit: this.maxNestingDepth,
      ...(signal !== undefined ? { checkpoint: () => checkpoint(signal) } : {}),
    });
    if (scan.depthLimitExceeded !== null) {
      const { line, column } = scan.depthLimitExceeded;
      return failure(
        path,
        `nesting depth ${scan.maxDepth} exceeds the limit of ${this.maxNestingDepth}`,
        line,
        column,
      );
    }
    // Blocks of one type with different label counts can make hcl2json's converter panic; it never
    // sees such a file.
    const structureIssue = scan.errors.length === 0 ? checkStructure(scan.body) : null;
    if (structureIssue !== null && structureIssue.message.startsWith('blocks of type')) {
      return failure(path, structureIssue.message, structureIssue.line, 1);
    }

    const budget = this.timeoutMs ?? defaultTimeoutMs(bytes);
    checkpoint(signal);
    const outcome = await this.pool.run(HCL2JSON_FILENAME, text, budget, signal);
    switch (outcome.kind) {
      case 'aborted':
        throw signal?.reason ?? new Error('the parse was aborted');
      case 'timeout':
        return failure(path, `parser timed out after ${budget} ms`, 1, 1);
      case 'crash':
        return failure(path, `parser crashed (${outcome.detail})`, 1, 1);
      case 'error': {
        const diag = parseHcl2JsonError(outcome.message, path);
        if (diag !== null) return failure(path, diag.message, diag.line, diag.column);
        const first = scan.errors[0];
        if (first !== undefined) return failure(path, first.message, first.line, first.column);
        return failure(path, `hcl2json: ${outcome.message}`, 1, 1);
      }
      case 'ok':
        break;
    }
    const lexical = scan.errors[0];
    if (lexical !== undefined) return failure(path, lexical.message, lexical.line, lexical.column);
    if (structureIssue !== null) return failure(path, structureIssue.message, structureIssue.line, 1);
    try {
      return {
        ok: true,
        file: {
          path,
          syntax: 'hcl',
          body: mergeBody(scan.body, outcome.json, text, positions, locatesElements(path)),
        },
      };
    } catch (err) {
      if (err instanceof MergeError) {
        return failure(path, `internal parser error: ${err.message}`, err.line, 1);
      }
      throw err;
    }
  }
}

function blockBody(json: unknown, type: string): Record<string, unknown> | null {
  if (typeof json !== 'object' || json === null) return null;
  const list = (json as Record<string, unknown>)[type];
  const body = Array.isArray(list) ? (list[0] as unknown) : undefined;
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : null;
}

/**
 * The fast path alone, synchronously: the result for a native-syntax file the verifier proves
 * well-formed (`{ result }`), or its body with the values the evaluator could not read still
 * missing (`{ body, pending }`), or null when the verifier gives up (only hcl2json can decide).
 * `check` is called now and then during the verification (see `VerifyOptions.checkpoint`).
 */
export function fastParse(
  path: string,
  text: string,
  spec: BlockSpec,
  maxNestingDepth: number = DEFAULT_MAX_NESTING_DEPTH,
  positions: PositionMap = new PositionMap(path, text, 0),
  check?: () => void,
): { result: ParseResult } | { body: HclBody; pending: PendingValue[] } | null {
  // A proven file is accepted by hcl2json and passes the full path's structure checks too (the
  // verifier gives up on a structure problem, so its message comes from the full path).
  const verified = verifyHcl(text, { depthLimit: maxNestingDepth, checkpoint: check });
  if (!verified.ok) return null;
  positions.borrowLineStarts(verified.lines.starts, verified.lines.count);
  let built: ReturnType<typeof buildBody>;
  try {
    built = buildBody(text, verified.body, verified.tokens, spec, positions, locatesElements(path));
  } finally {
    positions.releaseLineStarts();
  }
  if (built.pending.length === 0)
    return { result: { ok: true, file: { path, syntax: 'hcl', body: built.body } } };
  return built;
}

export interface PendingValue {
  text: string;
  name: string;
  attr: HclAttribute;
}

/**
 * The body of a verified file with the attributes `spec` selects; values the evaluator cannot read
 * are left `undefined` and listed in `pending`. Synchronous (the tokens are only valid until the
 * next verification).
 */
function buildBody(
  text: string,
  root: SyntaxBody,
  tokens: Tokens,
  spec: BlockSpec,
  positions: PositionMap,
  withElements: boolean,
): { body: HclBody; pending: PendingValue[] } {
  const pending: PendingValue[] = [];
  const body = buildTree<SyntaxAttribute, SyntaxBlock, null>(root, null, spec, {
    attribute(a, mode, type) {
      const valueStart = expressionOffset(tokens, a.exprStart, a.exprEnd);
      const [range, valueRange] = positions.rangesTo(a.start, valueStart, a.end, a.line, a.endLine);
      if (mode === 'name') {
        return { name: a.name, value: null, line: a.line, endLine: a.endLine, range, valueRange };
      }
      const value = evaluateExpression(text, tokens, a.exprStart, a.exprEnd);
      const attr: HclAttribute = {
        name: a.name,
        value: value === NOT_EVALUABLE ? undefined : value,
        line: a.line,
        endLine: a.endLine,
        range,
        valueRange,
      };
      const items = type === ITEMS_BLOCK ? objectItems(text, tokens, a.exprStart, a.exprEnd) : null;
      if (items !== null) attr.items = itemRanges(items, positions);
      if (withElements && type === ELEMENTS_BLOCK && a.name === ELEMENTS_ATTRIBUTE) {
        const elements = tupleElements(text, tokens, a.exprStart, a.exprEnd);
        if (elements !== null) attr.elements = elementRanges(elements, positions);
      }
      if (value === NOT_EVALUABLE) pending.push({ text: text.slice(a.start, a.end), name: a.name, attr });
      return attr;
    },
    block(b) {
      const range = positions.range(b.start, b.end, b.line, b.endLine);
      const block: HclBlock = {
        type: b.type,
        labels: b.labels,
        line: b.line,
        endLine: b.endLine,
        range,
        body: EMPTY_BODY,
      };
      return { block, body: b.body, state: null };
    },
  });
  return { body, pending };
}

function failure(path: string, message: string, line: number, column: number): ParseResult {
  const error: ParseErrorInfo = { path, message, line, column };
  return { ok: false, error };
}
