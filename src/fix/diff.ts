/**
 * Unified diffs (`diff -u` / `git diff` format, 3 lines of context) of a file before and after its
 * edits, for `tfguard fix --dry-run` and patches handed to people. Lines are compared exactly (a
 * CRLF line stays a CRLF line); a file without a final newline gets the "\ No newline at end of
 * file" marker, as diff writes it.
 */

const CONTEXT = 3;

/** NUL never occurs in a configuration file: it marks a last line that has no newline, so that
 * `k` at the end of one file and `k\n` in the other are different lines, as diff treats them. */
const NO_EOL = '\u0000';

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += NO_EOL;
  return lines;
}

type Op = { kind: ' ' | '-' | '+'; line: string };

/** The edit script between `a` and `b` (longest common subsequence over the changed middle). */
function editScript(a: string[], b: string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf])
    suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const ops: Op[] = a.slice(0, pre).map((line) => ({ kind: ' ', line }));
  if (am.length * bm.length > 4_000_000) {
    // Too large to align line by line: one replaced block (still a correct patch).
    ops.push(...am.map((line): Op => ({ kind: '-', line })), ...bm.map((line): Op => ({ kind: '+', line })));
  } else {
    const n = am.length;
    const m = bm.length;
    const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        (lcs[i] as Uint32Array)[j] =
          am[i] === bm[j]
            ? ((lcs[i + 1] as Uint32Array)[j + 1] as number) + 1
            : Math.max((lcs[i + 1] as Uint32Array)[j] as number, (lcs[i] as Uint32Array)[j + 1] as number);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        ops.push({ kind: ' ', line: am[i] as string });
        i++;
        j++;
      } else if (
        i < n &&
        (j >= m || ((lcs[i + 1] as Uint32Array)[j] as number) >= ((lcs[i] as Uint32Array)[j + 1] as number))
      ) {
        ops.push({ kind: '-', line: am[i] as string });
        i++;
      } else {
        ops.push({ kind: '+', line: bm[j] as string });
        j++;
      }
    }
  }
  ops.push(...a.slice(a.length - suf).map((line): Op => ({ kind: ' ', line })));
  return ops;
}

/** A unified diff of `path` from `before` to `after`; '' when they are equal. `created`: the file
 * does not exist yet (`before` is empty), so the patch creates it (`--- /dev/null`). */
export function unifiedDiff(path: string, before: string, after: string, created = false): string {
  if (before === after && !created) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = editScript(a, b);
  const out = [created ? '--- /dev/null' : `--- a/${path}`, `+++ b/${path}`];
  let k = 0;
  while (k < ops.length) {
    // The next change, with its context.
    while (k < ops.length && (ops[k] as Op).kind === ' ') k++;
    if (k >= ops.length) break;
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    for (;;) {
      while (end < ops.length && (ops[end] as Op).kind !== ' ') end++;
      let run = end;
      while (run < ops.length && (ops[run] as Op).kind === ' ') run++;
      if (run < ops.length && run - end <= 2 * CONTEXT) end = run;
      else {
        end = Math.min(ops.length, end + CONTEXT);
        break;
      }
    }
    let aLine = 1;
    let bLine = 1;
    for (let x = 0; x < start; x++) {
      if ((ops[x] as Op).kind !== '+') aLine++;
      if ((ops[x] as Op).kind !== '-') bLine++;
    }
    const hunk = ops.slice(start, end);
    const aCount = hunk.filter((o) => o.kind !== '+').length;
    const bCount = hunk.filter((o) => o.kind !== '-').length;
    out.push(
      `@@ -${aCount === 0 ? aLine - 1 : aLine},${aCount} +${bCount === 0 ? bLine - 1 : bLine},${bCount} @@`,
    );
    for (const o of hunk) {
      if (o.line.endsWith(NO_EOL))
        out.push(`${o.kind}${o.line.slice(0, -1)}`, '\\ No newline at end of file');
      else out.push(`${o.kind}${o.line}`);
    }
    k = end;
  }
  return out.join('\n') + '\n';
}
