/**
 * The first phase of module loading: which files each directory holds, and parsing them (bounded
 * concurrency; a file that cannot be read or parsed is a result, never a thrown error).
 */
import type { LoadedArchive } from '../../archive';
import { dirname, inputKind } from '../../archive';
import type { ParseResult } from '../../hcl';
import { inToolDirectory } from '../files';
import { INSTALLED_MODULES } from './installed';

/** Reads one configuration file: the parse result projected on `LOADER_PROJECTION`. */
export type ConfigFileReader = (path: string, content: Buffer) => Promise<ParseResult>;

/** How many files are handed to the parser at once (it spreads them over its workers). */
const PARSE_CONCURRENCY = 8;

/** Regular files, and links whose target file the archive reader loaded, grouped by directory:
 * outside tool directories, or (`installed`) only those under `.terraform/modules/`. */
export function filesByDirectory(archive: LoadedArchive, installed = false): Map<string, string[]> {
  const dirs = new Map<string, string[]>();
  for (const entry of archive.entries) {
    const isFile = entry.type === 'file' || (entry.type !== 'directory' && archive.files.has(entry.path));
    if (!isFile) continue;
    if (installed ? !INSTALLED_MODULES.test(entry.path) : inToolDirectory(entry.path)) continue;
    const dir = dirname(entry.path) || '.';
    const list = dirs.get(dir) ?? [];
    list.push(entry.path);
    dirs.set(dir, list);
  }
  return dirs;
}

/** Parses `paths` with `read`, at most PARSE_CONCURRENCY at once; stops when `signal` fires. */
export async function parseAll(
  paths: string[],
  archive: LoadedArchive,
  read: ConfigFileReader,
  signal: AbortSignal | undefined,
): Promise<Map<string, ParseResult>> {
  const results = new Map<string, ParseResult>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < paths.length) {
      signal?.throwIfAborted();
      const path = paths[next++] as string;
      const content = archive.files.get(path);
      if (content === undefined) {
        results.set(path, {
          ok: false,
          error: {
            path,
            message: `the file content was not loaded from the ${inputKind(archive)}`,
            line: 1,
            column: 1,
          },
        });
        continue;
      }
      try {
        results.set(path, await read(path, content));
      } catch (err) {
        if (signal?.aborted) throw err;
        // The parser reports syntax errors as results; anything thrown is still confined to this file.
        const message = err instanceof Error ? err.message : String(err);
        results.set(path, {
          ok: false,
          error: { path, message: `could not be parsed: ${message}`, line: 1, column: 1 },
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARSE_CONCURRENCY, paths.length) }, () => worker()));
  return results;
}
