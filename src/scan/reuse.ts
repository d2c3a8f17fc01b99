/**
 * What one scan of an archive hands to the next scan of the same archive with some files' bytes
 * replaced: `tfguard fix` scans again after editing files in memory (src/scan/fix.ts), and most
 * of what the first scan computed depends only on files the edits did not touch.
 *
 * Kept: every parse the scan asks for (module loading's extraction, the repository signals'
 * and declarations' projections, constants, lock files, settings), by path, projection and
 * bytes. A result is reused only for the same path, the same projection and the same bytes, and
 * parsing is a function of those three, so the second scan's report is the one a fresh scan of
 * the edited files gives.
 */
import { FULL_SPEC } from '../hcl';
import type { BlockSpec, HclParser, ParseResult } from '../hcl';
import { LOADER_PROJECTION, LoadMemo } from '../modules';
import type { ConfigFileReader } from '../modules';

/** What the scan pipeline asks of the parser. */
export type ScanParser = Pick<HclParser, 'extract' | 'parse'>;

interface Parsed {
  content: Buffer;
  result: ParseResult;
}

export class ScanReuse {
  /** Parse results by projection and path, with the bytes they were read from. */
  private readonly parsed = new Map<BlockSpec, Map<string, Parsed>>();
  /** What module loading made that the next load may take over (src/modules/load/memo.ts). */
  readonly modules = new LoadMemo();
  /** Parses answered from earlier scans, and parses run (tests, benchmarks). */
  readonly stats = { reused: 0, parsed: 0 };

  /** `parser`, answering from the earlier scans for a path whose bytes did not change. */
  parser(parser: ScanParser): ScanParser {
    return {
      extract: (path, content, spec, options) =>
        this.remembered(path, content, spec, () => parser.extract(path, content, spec, options)),
      parse: (path, content, options) =>
        this.remembered(path, content, FULL_SPEC, () => parser.parse(path, content, options)),
    };
  }

  /** The loader's `read` (`LOADER_PROJECTION`; the extraction cache may stand behind it),
   * answering from the earlier scans for a path whose bytes did not change. */
  reader(read: ConfigFileReader): ConfigFileReader {
    return (path, content) => this.remembered(path, content, LOADER_PROJECTION, () => read(path, content));
  }

  /** Projections are module constants: one that is built per call is simply never reused. */
  private remembered(
    path: string,
    content: Buffer,
    spec: BlockSpec,
    parse: () => Promise<ParseResult>,
  ): Promise<ParseResult> {
    let byPath = this.parsed.get(spec);
    if (byPath === undefined) {
      byPath = new Map();
      this.parsed.set(spec, byPath);
    }
    const known = byPath.get(path);
    if (known !== undefined && (known.content === content || known.content.equals(content))) {
      this.stats.reused++;
      return Promise.resolve(known.result);
    }
    const into = byPath;
    return parse().then((result) => {
      this.stats.parsed++;
      into.set(path, { content, result });
      return result;
    });
  }
}
