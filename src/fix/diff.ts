/**
 * Unified diffs (`diff -u` / `git diff` format, 3 lines of context) of a file before and after its
 * edits, for `tfguard fix --dry-run` and patches handed to people. Lines are compared exactly (a
 * CRLF line stays a CRLF line); a file without a final newline gets the "\ No newline at end of
 * file" marker, as diff writes it.
 *
 * File names come from the archive, where a directory may be called anything but NUL and `/`
 * (a tarball or a Linux checkout can hold a newline, a tab, a quote, ESC, ...). The `---`/`+++`
 * lines therefore carry them exactly as git writes them (`gitQuotedName`), which `git apply` and
 * GNU `patch` (2.7+) both read back, so no name can add a line or a file header of its own.
 */

const CONTEXT = 3;

/**
 * How git's `quote_c_style` (quote.c, with the default `core.quotePath=true`) writes one byte that
 * needs quoting: the C escapes git uses for BEL, BS, TAB, LF, VT, FF, CR, `"` and `\`, three octal
 * digits for every other control byte, DEL and each byte from 0x80 (so a UTF-8 name is written
 * byte by byte). Space and the other printable ASCII characters are written as they are.
 */
const C_ESCAPES: Record<number, string> = {
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x22: '"',
  0x5c: '\\',
};

function needsQuote(byte: number): boolean {
  return byte < 0x20 || byte === 0x22 || byte === 0x5c || byte >= 0x7f;
}

/**
 * `prefix` + `path` as git writes a name in a patch header (`quote_two_c_style` in git's quote.c):
 * as it is when no byte needs quoting, else in double quotes with C escapes (`"a/x\ty"`,
 * `"a/caf\303\251"`). Never contains a control character.
 */
export function gitQuotedName(prefix: string, path: string): string {
  const bytes = Buffer.from(prefix + path, 'utf8');
  if (!bytes.some(needsQuote)) return prefix + path;
  let out = '"';
  for (const byte of bytes) {
    if (!needsQuote(byte)) out += String.fromCharCode(byte);
    else out += '\\' + (C_ESCAPES[byte] ?? byte.toString(8).padStart(3, '0'));
  }
  return out + '"';
}

/** A `---`/`+++` line: git ends it with a tab when the name has a space (diff.c), so that GNU patch,
 * which otherwise takes trailing text for a timestamp, reads the whole name. */
function fileLine(marker: '---' | '+++', name: string): string {
  return `${marker} ${name}${name.includes(' ') ? '\t' : ''}`;
}

/**
 * Why `git apply` would refuse a patch touching `path` (and so the whole patch), or null. git's
 * `verify_path` (read-cache.c) refuses a `.git` component in any letter case, and with its defaults
 * `core.protectNTFS` (everywhere) and `core.protectHFS` (macOS) also the names Windows or macOS
 * would open as `.git`: `git~1`, a trailing run of dots and spaces, an NTFS stream suffix (`:...`),
 * and `.git` spelled with code points HFS+ ignores. `patch -p1` would write into such a directory:
 * a fix never goes there through a patch.
 */
export function unpatchablePath(path: string): string | null {
  for (const segment of path.split('/')) {
    const hfs = segment.replace(/[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g, '');
    if (/^(\.git|git~1)[. ]*(:.*)?$/i.test(segment) || hfs.toLowerCase() === '.git') {
      return 'git apply refuses a path with a .git component (or one that Windows or macOS open as .git)';
    }
  }
  return null;
}

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
  const out = [
    created ? '--- /dev/null' : fileLine('---', gitQuotedName('a/', path)),
    fileLine('+++', gitQuotedName('b/', path)),
  ];
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
