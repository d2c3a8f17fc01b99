/**
 * The parsing layer: every `.tf`, `.tf.json`, `.tofu`, `.tofu.json`, `.terraform.lock.hcl` and
 * `.tfguard.hcl` file goes through `HclParser.parse`.
 *
 * Native syntax: decode → scan (structure, lexical errors, nesting depth; too deep → error without
 * calling hcl2json) → hcl2json in a worker (values and the authoritative syntax verdict) → merge.
 * JSON syntax (`*.json`): decode → `parseJsonConfig`, in the calling thread.
 */
import os from 'node:os';
import type { ParseErrorInfo, ParseResult } from '../model';
import { decodeSource } from './decode';
import { parseJsonConfig } from './json';
import { checkStructure, HCL2JSON_FILENAME, MergeError, mergeBody, parseHcl2JsonError } from './merge';
import { Hcl2JsonPool } from './pool';
import { scanHcl } from './scanner';

export interface HclParserOptions {
  /** Deeper bracket/brace/paren/template nesting is a parse error and never reaches hcl2json. */
  maxNestingDepth?: number;
  /** Per-file budget for hcl2json; default 10 s + 5 s per MiB. */
  timeoutMs?: number;
  /** Worker threads for hcl2json; default `Math.min(2, os.availableParallelism())`. */
  workers?: number;
}

export const DEFAULT_MAX_NESTING_DEPTH = 128;

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

export class HclParser {
  private readonly maxNestingDepth: number;
  private readonly timeoutMs: number | undefined;
  private readonly pool: Hcl2JsonPool;

  constructor(options: HclParserOptions = {}) {
    this.maxNestingDepth = options.maxNestingDepth ?? DEFAULT_MAX_NESTING_DEPTH;
    this.timeoutMs = options.timeoutMs;
    this.pool = new Hcl2JsonPool({
      size: options.workers ?? Math.min(2, availableParallelism()),
      hcl2jsonPath: require.resolve('@cdktf/hcl2json'),
    });
  }

  /**
   * Parses one file. `.json` suffix → JSON syntax, anything else → native syntax. Never rejects:
   * bad input (and even an internal failure) becomes `{ ok: false, error }`.
   */
  async parse(path: string, content: Buffer): Promise<ParseResult> {
    try {
      return await this.parseUnsafe(path, content);
    } catch (err) {
      return failure(path, `internal parser error: ${describe(err)}`, 1, 1);
    }
  }

  /** Terminates the workers (parses in progress end with an error). Safe to call twice; a later
   * `parse` starts new workers. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  private async parseUnsafe(path: string, content: Buffer): Promise<ParseResult> {
    const decoded = decodeSource(path, content);
    if (!decoded.ok) return decoded;
    const text = decoded.text;
    if (path.endsWith('.json')) return parseJsonConfig(path, text, { maxNestingDepth: this.maxNestingDepth });

    const scan = scanHcl(path, text, { depthLimit: this.maxNestingDepth });
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

    const budget = this.timeoutMs ?? defaultTimeoutMs(content.length);
    const outcome = await this.pool.run(HCL2JSON_FILENAME, text, budget);
    switch (outcome.kind) {
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
      return { ok: true, file: { path, syntax: 'hcl', body: mergeBody(scan.body, outcome.json) } };
    } catch (err) {
      if (err instanceof MergeError) {
        return failure(path, `internal parser error: ${err.message}`, err.line, 1);
      }
      throw err;
    }
  }
}

function failure(path: string, message: string, line: number, column: number): ParseResult {
  const error: ParseErrorInfo = { path, message, line, column };
  return { ok: false, error };
}
