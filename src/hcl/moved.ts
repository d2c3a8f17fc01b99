/**
 * The parse of one file's content under another path: repositories copy files verbatim between
 * directories (cloudposse/terraform-aws-components has the same `context.tf` in every component:
 * half of its configuration bytes are copies of another file), and a scan need not lex and verify
 * each copy again. What a file's result depends on besides its bytes and the projection is only its
 * name's variant (`.json` syntax or native, and whether it is a lock file, whose `hashes` elements
 * are located); the path itself appears only in `ParsedFile.path` and in every range's `file`.
 */
import type { SourceRange } from '../model';
import { locatesElements, syntaxOfPath } from './syntax';
import type { HclAttribute, HclBlock, HclBody, ParseResult } from './types';

/** What a parse of `path` depends on besides the content and the projection: two paths of the same
 * variant give the same result for the same bytes, up to the path in it (`movedResult`). */
export function pathVariant(path: string): string {
  return syntaxOfPath(path) + (locatesElements(path) ? '+elements' : '');
}

/**
 * `result`, a successful parse of the same bytes under a path of the same `pathVariant` and with
 * the same projection, as the parse of `path` gives it: the same tree with `path` in `file.path`
 * and in every range. Bodies are read-only once parsed (src/hcl/types.ts), so positions, labels and
 * values are shared with `result`; nodes and ranges are new. Null for a parse error: its message may
 * name the file, so the file is parsed (errors are rare).
 */
export function movedResult(result: ParseResult, path: string): ParseResult | null {
  if (!result.ok) return null;
  const file = result.file;
  return { ok: true, file: { ...file, path, body: movedBody(file.body, path) } };
}

function movedRange(r: SourceRange, file: string): SourceRange {
  return { file, start: r.start, end: r.end };
}

/** Iterative: bodies nest as deep as the nesting limit allows. */
function movedBody(body: HclBody, file: string): HclBody {
  if (body.attributes.length === 0 && body.blocks.length === 0) return body; // EMPTY_BODY or alike
  const root: HclBody = { attributes: [], blocks: [] };
  const work: { from: HclBody; to: HclBody }[] = [{ from: body, to: root }];
  while (work.length > 0) {
    const { from, to } = work.pop() as (typeof work)[number];
    for (const a of from.attributes) {
      const moved: HclAttribute = {
        ...a,
        range: movedRange(a.range, file),
        valueRange: movedRange(a.valueRange, file),
      };
      if (a.items !== undefined) {
        moved.items = a.items.map((it) => ({
          ...it,
          keyRange: movedRange(it.keyRange, file),
          valueRange: movedRange(it.valueRange, file),
        }));
      }
      if (a.elements !== undefined) moved.elements = a.elements.map((r) => movedRange(r, file));
      to.attributes.push(moved);
    }
    for (const b of from.blocks) {
      const inner = b.body;
      const empty = inner.attributes.length === 0 && inner.blocks.length === 0;
      const moved: HclBlock = {
        ...b,
        range: movedRange(b.range, file),
        body: empty ? inner : { attributes: [], blocks: [] },
      };
      if (!empty) work.push({ from: inner, to: moved.body });
      to.blocks.push(moved);
    }
  }
  return root;
}
