/**
 * Parsing a directory's configuration files while the rest of it is still being read.
 *
 * The directory reader's thread (src/archive/directory-reads.ts) reads a large tree's files ahead
 * of the walk; where the walk waits for it, the main thread would sit idle. `ParseAhead` gives it
 * the parse that module loading asks for next: each configuration file recorded so far (in path
 * order, each content once) is extracted on `LOADER_PROJECTION` with `HclParser.extractNow`, the
 * synchronous part of `extract`, and the scan's parser answers module loading's request for that
 * path and those bytes with the result kept (`parser`).
 *
 * The result is the one `extract` gives for the same path, bytes and projection, so the report is
 * the same; a file the synchronous path cannot settle (a value only hcl2json reads, a file the
 * verifier gives up on) is left to `extract`. Only time the walk would spend waiting is used: a
 * tree read without waiting (small trees, no reader thread) parses nothing ahead. With the
 * extraction cache, only the files it lacks are parsed ahead: the scan reads the lineage's
 * manifest before the directory (`ExtractionCache.preload`; without a lineage nothing is parsed
 * ahead, as nothing says what the cache holds). Parsing what the cache answers made a rescan of
 * the cloudposse tree a third slower.
 */
import { basename } from '../archive';
import type { ReadAhead } from '../archive';
import type { HclParser, ParseResult } from '../hcl';
import { configExtension, isIgnoredName, LOADER_PROJECTION } from '../modules';
import type { ScanParser } from './reuse';
import { checkpoint, expired } from '../util/deadline';

export class ParseAhead implements ReadAhead {
  /** Every kept file as it was recorded (path, bytes, SHA-256), looked at only by `idle`: files
   * recorded after the walk's last wait cost nothing but a place here. */
  private readonly paths: string[] = [];
  private readonly contents: Buffer[] = [];
  private readonly hashes: string[] = [];
  private next = 0;
  /** Contents parsed already (a copy's parse is moved to it by `copiesParsedOnce`). */
  private readonly seen = new Set<string>();
  /** Results by path, with the bytes they were parsed from; each is handed out once. */
  private readonly results = new Map<string, { content: Buffer; result: ParseResult }>();
  /** Files parsed ahead and results taken (tests, the benchmark). */
  readonly stats = { parsed: 0, taken: 0 };

  /** `signal`: the scan's deadline; once it fires, nothing more is parsed ahead (the scan then
   * ends with its timeout where it checks it next). `cached`: whether the extraction cache holds a
   * content's result (such a file is never parsed ahead: the scan takes the cache's). */
  constructor(
    private readonly hcl: Pick<HclParser, 'extractNow'>,
    private readonly signal?: AbortSignal,
    private readonly cached: (sha256: string) => boolean = () => false,
  ) {}

  loaded(path: string, content: Buffer, sha256: string): void {
    this.paths.push(path);
    this.contents.push(content);
    this.hashes.push(sha256);
  }

  idle(): boolean {
    if (expired(this.signal)) return false;
    while (this.next < this.paths.length) {
      const i = this.next++;
      const path = this.paths[i] as string;
      const name = basename(path);
      const sha256 = this.hashes[i] as string;
      // Configuration files only, each content once, and none the cache answers.
      if (
        configExtension(name, 'opentofu') === null ||
        isIgnoredName(name) ||
        this.seen.has(sha256) ||
        this.cached(sha256)
      )
        continue;
      this.seen.add(sha256);
      const content = this.contents[i] as Buffer;
      const signal = this.signal;
      const check = signal === undefined ? undefined : (): void => checkpoint(signal);
      // A parse the deadline cuts short gives null: `extract` answers for that file.
      const result = this.hcl.extractNow(path, content, LOADER_PROJECTION, check);
      this.stats.parsed++;
      if (result !== null) this.results.set(path, { content, result });
      return true;
    }
    return false;
  }

  /** `parser`, answering module loading's extraction of a file parsed ahead (same path, same
   * bytes) with the result kept. */
  parser(parser: ScanParser): ScanParser {
    return {
      extract: (path, content, spec, options) => {
        // An aborted scan gets `extract`'s answer (the abort).
        if (spec === LOADER_PROJECTION && options?.signal?.aborted !== true) {
          const kept = this.results.get(path);
          if (kept !== undefined && kept.content === content) {
            this.results.delete(path);
            this.stats.taken++;
            return Promise.resolve(kept.result);
          }
        }
        return parser.extract(path, content, spec, options);
      },
      parse: (path, content, options) => parser.parse(path, content, options),
    };
  }
}
