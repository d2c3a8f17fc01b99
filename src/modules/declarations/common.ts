/** Helpers shared by the declaration readers. */
import { dirname } from '../../archive';
import { cleanRelativePath, isOutsideArchive } from '../../addrs';
import type { DeclarationProblem, DeclarationTool } from './types';
import type { YamlDocument } from './yaml';
import { parseYaml } from './yaml';

/** The directory of an archive path (`"."` for the top directory). */
export function dirOf(path: string): string {
  return dirname(path) || '.';
}

/** `written` relative to `base` (a repository root), as an archive directory; null outside it. */
export function resolveDir(base: string, written: string): string | null {
  const rel = written.replace(/\\/g, '/').replace(/^\/+/, '');
  const dir = cleanRelativePath(base === '.' ? rel : `${base}/${rel}`);
  return isOutsideArchive(dir) ? null : dir;
}

/** Parses a YAML declaration file; a syntax error becomes a problem naming the file and line. */
export function readYaml(
  tool: DeclarationTool,
  path: string,
  text: string,
  problems: DeclarationProblem[],
): YamlDocument | null {
  const r = parseYaml(text);
  if (r.ok) return r.doc;
  problems.push({
    tool,
    location: { file: path, line: r.line },
    message: `${path} is not valid YAML (${r.message}), so the roots it declares were not read`,
  });
  return null;
}

/** A problem about the shape of a declaration (a key of the wrong type). */
export function shapeProblem(
  tool: DeclarationTool,
  path: string,
  line: number,
  what: string,
): DeclarationProblem {
  return {
    tool,
    location: { file: path, line },
    message: `${path}: ${what}, so the roots it declares were not read`,
  };
}
