/**
 * Applying findings' fixes: the edits of every finding that offers a safe one (`fix.edits`, computed
 * by the rule from the parser's source ranges), grouped per file, checked for overlaps, applied to
 * the original bytes. Pure: the caller reads and writes the files.
 *
 * Edits replace byte ranges of the file as uploaded (`SourcePos.byte`), so nothing outside them
 * changes: comments, formatting and line endings stay as they were.
 */
import { sameEdit, type Finding } from '../rules';
import type { TextEdit } from '../model';
import type { Placement } from './files';

/** A finding whose fix was not planned, and why (for the "still needs a person" list). */
export interface SkippedFix {
  finding: Finding;
  reason: string;
  /** True when the fix is sound but waits for another one it overlaps (a next pass applies it). */
  deferred?: boolean;
}

/** Fixes planned beside the findings' own edits: lock-file rewrites (src/fix/lock.ts). */
export interface PlannedRewrites {
  /** One edit per file, replacing all of it. */
  edits: ReadonlyMap<string, TextEdit>;
  /** Files the edits create. */
  created: ReadonlySet<string>;
  /** Findings the rewrites fix, with what the fix does. */
  fixed: ReadonlyMap<Finding, string>;
  /** Findings the rewrites would fix but cannot here, and why. */
  skipped: readonly SkippedFix[];
}

export interface FixPlan {
  /** Edits per archive-relative file, sorted by start byte, never overlapping. */
  files: Map<string, TextEdit[]>;
  /** Files that do not exist yet (a lock file written for a root that has none). */
  created: Set<string>;
  /** Findings whose fix is planned. */
  fixed: Finding[];
  /** Findings with no mechanical fix, or whose fix could not be planned. */
  remaining: SkippedFix[];
}

function overlaps(a: TextEdit, b: TextEdit): boolean {
  if (a.range.file !== b.range.file) return false;
  const [as, ae, bs, be] = [a.range.start.byte, a.range.end.byte, b.range.start.byte, b.range.end.byte];
  // Two insertions at the same point conflict too: their order would be a guess.
  return as < be && bs < ae ? true : as === bs && (as === ae || bs === be);
}

/**
 * Plans the fixes of `findings` (in report order: on a conflict, the first finding's fix wins and
 * the other waits for the next run). `rules`: only these rule ids (all when absent). Suppressed
 * findings are left alone. `rewrites`: whole-file rewrites planned for some findings (lock files);
 * those findings count as fixed (or skipped, with the rewrite's reason). `place`: where edits land
 * on disk (symlink targets, twins; src/fix/files.ts), or why they cannot; as given when absent.
 */
export function planFixes(
  findings: readonly Finding[],
  rules?: ReadonlySet<string>,
  rewrites?: PlannedRewrites,
  place?: (edits: readonly TextEdit[]) => Placement,
): FixPlan {
  const files = new Map<string, TextEdit[]>();
  const created = new Set<string>();
  const fixed: Finding[] = [];
  const remaining: SkippedFix[] = [];
  const skippedRewrite = new Map((rewrites?.skipped ?? []).map((s) => [s.finding, s.reason]));
  for (const [file, edit] of rewrites?.edits ?? []) {
    const placed =
      rewrites?.created.has(file) || place === undefined
        ? { ok: true as const, edits: [edit] }
        : place([edit]);
    if (!placed.ok) {
      for (const f of rewrites?.fixed.keys() ?? []) if (f.file === file) skippedRewrite.set(f, placed.reason);
      continue;
    }
    for (const e of placed.edits) files.set(e.range.file, [e]);
    if (rewrites?.created.has(file)) created.add(file);
  }
  for (const f of findings) {
    if (f.suppressed !== undefined) continue;
    if (rules !== undefined && !rules.has(f.ruleId)) continue;
    if (rewrites?.fixed.has(f) && !skippedRewrite.has(f)) {
      fixed.push(f);
      continue;
    }
    const reason = skippedRewrite.get(f);
    if (reason !== undefined) {
      remaining.push({ finding: f, reason });
      continue;
    }
    const given = f.fix?.edits;
    if (given === undefined || given.length === 0) {
      const reason =
        f.confidence === 'low'
          ? f.message.includes("tfguard's guess")
            ? 'the module kind is a guess, so no fix is applied'
            : 'the finding rests on what tfguard could not read, so no fix is applied'
          : f.fix !== undefined
            ? 'the fix cannot be applied mechanically here'
            : 'no mechanical fix';
      remaining.push({ finding: f, reason });
      continue;
    }
    const placed = place === undefined ? { ok: true as const, edits: given } : place(given);
    if (!placed.ok) {
      remaining.push({ finding: f, reason: placed.reason });
      continue;
    }
    const edits = placed.edits;
    const planned = [...files.values()].flat();
    // An edit another finding already planned (findings that share one fix, such as every missing
    // alias of one provider) is that fix: nothing more to apply.
    const fresh = edits.filter((e) => !planned.some((p) => sameEdit(e, p)));
    const clash = fresh.some((e) => planned.some((p) => overlaps(e, p)));
    if (clash) {
      remaining.push({ finding: f, reason: 'its edit overlaps another fix; run fix again', deferred: true });
      continue;
    }
    for (const e of fresh) {
      const list = files.get(e.range.file) ?? [];
      list.push(e);
      files.set(e.range.file, list);
    }
    fixed.push(f);
  }
  for (const list of files.values()) list.sort((a, b) => a.range.start.byte - b.range.start.byte);
  return { files, created, fixed, remaining };
}

/** `content` with `edits` (one file's, sorted, non-overlapping) applied. */
export function applyEdits(content: Buffer, edits: readonly TextEdit[]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const e of edits) {
    const { start, end } = e.range;
    if (start.byte < at || end.byte < start.byte || end.byte > content.length) {
      throw new Error(`edit ${start.byte}-${end.byte} of ${e.range.file} is out of order or out of bounds`);
    }
    parts.push(content.subarray(at, start.byte), Buffer.from(e.text, 'utf8'));
    at = end.byte;
  }
  parts.push(content.subarray(at));
  return Buffer.concat(parts);
}

/**
 * The whole lines `edit` touches in `content`, as they read after it (without the final line
 * ending; `\r\n` read as `\n`): the text of a line-based review suggestion. Null when the edit's
 * range is out of bounds.
 */
export function suggestionFor(
  content: Buffer,
  edit: TextEdit,
): { file: string; startLine: number; endLine: number; text: string } | null {
  const { start, end } = edit.range;
  if (start.byte > end.byte || end.byte > content.length) return null;
  const lineStart = content.lastIndexOf(0x0a, start.byte - 1) + 1;
  let lineEnd = content.indexOf(0x0a, end.byte);
  if (lineEnd < 0) lineEnd = content.length;
  const text =
    content.subarray(lineStart, start.byte).toString('utf8') +
    edit.text +
    content.subarray(end.byte, lineEnd).toString('utf8');
  return {
    file: edit.range.file,
    startLine: start.line,
    endLine: end.line,
    text: text.replace(/\r\n/g, '\n').replace(/\r$/, ''),
  };
}
