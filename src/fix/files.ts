/**
 * Where a fix's edits land on disk, so files stay as they were:
 *
 * - **Symlinks stay symlinks.** An edit of a file read through a symlink is an edit of the file
 *   the link points to (its bytes are the link's, so the byte ranges hold); the link is never
 *   replaced by a regular file. A link whose target is not a file of the tree is left to a person.
 * - **One file, several readers.** A file read through several paths (the target and links to it,
 *   or several links) is one file: when those readers would need different edits (a link in a root
 *   and the target in a shared module), or when an earlier pass edited it through another path, no
 *   edit is placed (it would flip between what each reader needs), and a person decides.
 * - **Twins are one setting.** OpenTofu reads `x.tofu` instead of `x.tf` (and `x.tofu.json`
 *   instead of `x.tf.json`) in the same directory; Terraform reads only `x.tf` (OpenTofu docs,
 *   "Files and Directories", https://opentofu.org/docs/language/files/). Repositories that keep
 *   both (generated from one template) mean one setting, so an edit of one twin is made to the
 *   other as well: the same bytes when the twins are identical (identical copies stay identical),
 *   else at the one place where the lines around the edit read the same in both. When neither
 *   holds, the fix is not applied and a person edits both.
 * - **Copies stay copies.** A configuration file (of COPY_MIN_LINES lines or more) with at least
 *   COPY_MIN_OTHERS other files of the same name that differ from it in at most
 *   COPY_MAX_DIFFERENT_LINES lines (a template's generated
 *   copies, which differ in a path or a name: the repair study's cloud-foundation-fabric keeps 101
 *   `versions.tf` made by one script and checked against `default-versions.tf`) is edited only when
 *   every copy that reads the same around the edit gets the same edit in the same pass; otherwise
 *   a person edits them together, or their template.
 * - **Generated files are not edited.** A file that says it is generated (`DO NOT EDIT`,
 *   `automatically generated`, in its first GENERATED_MARKER_LINES lines), or whose module's other
 *   files mostly say so (terraform-google-kubernetes-engine renders whole modules from
 *   `autogen/*.tmpl`; its `versions.tf` carries no marker of its own), is left to a person: the
 *   generator would undo the edit.
 * - **Nothing under `.terraform/` or `.git/`** is edited: those are what `terraform init` installed
 *   and the repository's own metadata.
 */
import type { ArchiveEntry } from '../archive';
import type { TextEdit } from '../model';

/** The files of the tree as the fix sees them. */
export interface FileView {
  entries: readonly ArchiveEntry[];
  /** The current bytes of a file (after earlier passes' edits), undefined when not loaded. */
  read(path: string): Buffer | undefined;
}

export type Placement = { ok: true; edits: TextEdit[] } | { ok: false; reason: string };

const MAX_LINK_HOPS = 40;
/** Lines of context around an edit that must read the same in both twins (as in a unified diff). */
const TWIN_CONTEXT_LINES = 3;

/** Where a generated file says so (Terramate, go generate, templating scripts). */
const GENERATED_MARKER = /\b(do not edit|automatically generated|generated automatically|code generated)\b/i;
const GENERATED_MARKER_LINES = 30;

/** A file is one of a template's copies when at least this many other files of its name… */
const COPY_MIN_OTHERS = 2;
/** …differ from it in at most this many lines (same line count)… */
const COPY_MAX_DIFFERENT_LINES = 2;
/** …and it has at least this many lines: short files (a 9-line versions.tf) are alike by chance,
 * as a root's and the module it calls often are (the repair study, cloud-platform-infrastructure). */
const COPY_MIN_LINES = 20;

const TWIN_EXTENSIONS: readonly [string, string][] = [
  ['.tofu.json', '.tf.json'],
  ['.tf.json', '.tofu.json'],
  ['.tofu', '.tf'],
  ['.tf', '.tofu'],
];

/** The twin of a configuration file name (`x.tf` ↔ `x.tofu`, `x.tf.json` ↔ `x.tofu.json`), or null. */
export function twinPath(path: string): string | null {
  const ext = twinExtension(path);
  return ext === null ? null : path.slice(0, path.length - ext[0].length) + ext[1];
}

/** The extension of a configuration file name and its twin's (`twinPath`), or null. Asked of
 * every entry of the tree: no string is built. */
function twinExtension(path: string): readonly [string, string] | null {
  const start = path.lastIndexOf('/') + 1;
  const length = path.length - start;
  if (length === 0 || path.charCodeAt(start) === 0x2e /* . */ || path.endsWith('~')) return null;
  if (path.charCodeAt(start) === 0x23 /* # */ && path.endsWith('#')) return null;
  for (const pair of TWIN_EXTENSIONS) {
    if (path.endsWith(pair[0]) && length > pair[0].length) return pair;
  }
  return null;
}

/** Whether `path` names a configuration file (one `twinPath` answers for). */
function isConfigPath(path: string): boolean {
  return twinExtension(path) !== null;
}

/** True for a path inside `.terraform/` or `.git/` (installed copies and repository metadata). */
export function inToolState(path: string): boolean {
  if (!path.includes('.terraform') && !path.includes('.git')) return false;
  return path.split('/').some((s) => s === '.terraform' || s === '.git');
}

/** The regular file `path` is, following symlinks; a reason when it is not a file of the tree. */
export function realFile(
  byPath: ReadonlyMap<string, ArchiveEntry>,
  path: string,
): { ok: true; file: string } | { ok: false; reason: string } {
  let at = path;
  for (let hop = 0; hop <= MAX_LINK_HOPS; hop++) {
    const e = byPath.get(at);
    // A file a fix creates (a new lock file) is not among the entries yet.
    if (e === undefined) return hop === 0 ? { ok: true, file: at } : outside(path);
    if (e.type === 'file') return { ok: true, file: at };
    if ((e.type !== 'symlink' && e.type !== 'hardlink') || e.linkTarget === undefined) return outside(path);
    at = e.linkTarget;
  }
  return outside(path);
}

function outside(path: string): { ok: false; reason: string } {
  return {
    ok: false,
    reason: `${path} is a symlink to a file outside the scanned tree: edit the file it points to (tfguard never replaces a link with a copy)`,
  };
}

function lineStarts(content: Buffer): number[] {
  const starts = [0];
  for (let i = content.indexOf(0x0a); i >= 0; i = content.indexOf(0x0a, i + 1)) starts.push(i + 1);
  return starts;
}

/** Index of the line holding byte `at` (0-based). */
function lineOf(starts: readonly number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function posAt(content: Buffer, starts: readonly number[], byte: number): TextEdit['range']['start'] {
  const line = lineOf(starts, byte);
  const lineStart = starts[line] as number;
  return { line: line + 1, column: [...content.subarray(lineStart, byte).toString('utf8')].length + 1, byte };
}

/** `edit` (of `from`) placed in the twin `to`: the same bytes when the files are identical, else
 * where the edited lines and TWIN_CONTEXT_LINES around them occur exactly once in `to`. */
function transfer(edit: TextEdit, from: Buffer, to: Buffer, twin: string): TextEdit | null {
  const { start, end } = edit.range;
  const toStarts = lineStarts(to);
  if (from.equals(to)) {
    return { ...edit, range: { file: twin, start: { ...start }, end: { ...end } } };
  }
  const starts = lineStarts(from);
  const first = Math.max(0, lineOf(starts, start.byte) - TWIN_CONTEXT_LINES);
  const lastLine = lineOf(starts, end.byte) + TWIN_CONTEXT_LINES + 1;
  const from0 = starts[first] as number;
  const to0 = lastLine < starts.length ? (starts[lastLine] as number) : from.length;
  const context = from.subarray(from0, to0);
  // The context must be unambiguous in both files, and reach the file's start/end alike.
  if (from.indexOf(context) !== from0 || from.indexOf(context, from0 + 1) >= 0) return null;
  const at = to.indexOf(context);
  if (at < 0 || to.indexOf(context, at + 1) >= 0) return null;
  // Context cut short by an end of `from` must meet the same end of `to`.
  const shortBefore = lineOf(starts, start.byte) < TWIN_CONTEXT_LINES;
  const shortAfter = lastLine >= starts.length;
  if ((shortBefore && at !== 0) || (shortAfter && at + context.length !== to.length)) return null;
  const shift = at - from0;
  return {
    ...edit,
    range: {
      file: twin,
      start: posAt(to, toStarts, start.byte + shift),
      end: posAt(to, toStarts, end.byte + shift),
    },
  };
}

function key(e: TextEdit): string {
  return `${e.range.file}\0${e.range.start.byte}\0${e.range.end.byte}\0${e.text}`;
}

/**
 * Places findings' edits on the files they must change. `earlier`: for each file, the paths it was
 * edited through in earlier passes (updated by `place`).
 */
/** What the placer looks up in the tree's entries: built once per entry list (every pass of one
 * fix run places edits on the same entries). */
interface TreeIndex {
  byPath: Map<string, ArchiveEntry>;
  /** Regular configuration files by file name (candidates for a template's copies). */
  byName: Map<string, string[]>;
  /** Regular configuration files by directory. */
  byDir: Map<string, string[]>;
}

const treeIndexes = new WeakMap<readonly ArchiveEntry[], TreeIndex>();

function treeIndex(entries: readonly ArchiveEntry[]): TreeIndex {
  let index = treeIndexes.get(entries);
  if (index !== undefined) return index;
  index = { byPath: new Map(entries.map((e) => [e.path, e])), byName: new Map(), byDir: new Map() };
  for (const e of entries) {
    if (e.type !== 'file' || !isConfigPath(e.path) || inToolState(e.path)) continue;
    const name = e.path.slice(e.path.lastIndexOf('/') + 1);
    const list = index.byName.get(name);
    if (list === undefined) index.byName.set(name, [e.path]);
    else list.push(e.path);
    const dir = e.path.slice(0, Math.max(0, e.path.lastIndexOf('/')));
    const files = index.byDir.get(dir);
    if (files === undefined) index.byDir.set(dir, [e.path]);
    else files.push(e.path);
  }
  treeIndexes.set(entries, index);
  return index;
}

/** The first `count` lines of `bytes` (up to the `count`-th `\n`, or all of it), as text. */
function headText(bytes: Buffer, count: number): string {
  let end = -1;
  for (let n = 0; n < count; n++) {
    end = bytes.indexOf(0x0a, end + 1);
    if (end < 0) return bytes.toString('utf8');
  }
  return bytes.subarray(0, end).toString('utf8');
}

/** Whether a file's first GENERATED_MARKER_LINES lines say it is generated, by its bytes: a pure
 * function of them, so kept for every placer of the process (each pass of a fix run asks again
 * for the files around the edited ones, whose bytes are the same objects). No part of the marker
 * matches a line break, so one search of the head finds what a search of each line finds. */
const markedBytes = new WeakMap<Buffer, boolean>();

function saysGenerated(bytes: Buffer): boolean {
  let marked = markedBytes.get(bytes);
  if (marked === undefined) {
    marked = GENERATED_MARKER.test(headText(bytes, GENERATED_MARKER_LINES));
    markedBytes.set(bytes, marked);
  }
  return marked;
}

export class EditPlacer {
  private readonly byPath: Map<string, ArchiveEntry>;
  private readonly conflicts = new Map<string, string>();
  /** Regular configuration files by file name (candidates for a template's copies). */
  private readonly byName: Map<string, string[]>;
  /** This pass's edits by the file they reach (keys of `key`). */
  private readonly planned = new Map<string, Set<string>>();
  private readonly linesOf = new Map<string, string[]>();
  /** Whether a file's first GENERATED_MARKER_LINES lines say it is generated. */
  private readonly markedOf = new Map<string, boolean>();
  /** Regular configuration files by directory. */
  private readonly byDir: Map<string, string[]>;

  constructor(
    private readonly view: FileView,
    private readonly earlier: Map<string, Set<string>>,
  ) {
    ({ byPath: this.byPath, byName: this.byName, byDir: this.byDir } = treeIndex(view.entries));
  }

  private marked(path: string): boolean {
    let marked = this.markedOf.get(path);
    if (marked === undefined) {
      const bytes = this.view.read(path);
      marked = bytes !== undefined && saysGenerated(bytes);
      this.markedOf.set(path, marked);
    }
    return marked;
  }

  /** Why `file` must not be edited by hand because it is generated, or null. */
  private generated(file: string): string | null {
    if (this.view.read(file) === undefined) return null;
    if (this.marked(file)) return `${file} says it is generated: change what generates it`;
    const dir = file.slice(0, Math.max(0, file.lastIndexOf('/')));
    const others = (this.byDir.get(dir) ?? []).filter((p) => p !== file);
    const marked = others.filter((p) => this.marked(p));
    if (others.length >= 2 && marked.length * 2 > others.length)
      return (
        `${file} is in a module whose files say they are generated (${marked.length} of ${others.length}, e.g. ` +
        `${marked[0] as string}): change what generates it`
      );
    return null;
  }

  private lines(path: string): string[] | undefined {
    let l = this.linesOf.get(path);
    if (l === undefined) {
      const bytes = this.view.read(path);
      if (bytes === undefined) return undefined;
      l = bytes.toString('utf8').split('\n');
      this.linesOf.set(path, l);
    }
    return l;
  }

  /** Why `edit` of `file` would make a template's copies differ, or null. */
  private copiesLeftBehind(edit: TextEdit, file: string): string | null {
    const name = file.slice(file.lastIndexOf('/') + 1);
    const others = (this.byName.get(name) ?? []).filter((p) => p !== file);
    if (others.length < COPY_MIN_OTHERS) return null;
    const mine = this.lines(file);
    const from = this.view.read(file);
    if (mine === undefined || from === undefined || mine.length < COPY_MIN_LINES) return null;
    const copies = others.filter((p) => {
      const theirs = this.lines(p);
      if (theirs === undefined || theirs.length !== mine.length) return false;
      let different = 0;
      for (let i = 0; i < mine.length && different <= COPY_MAX_DIFFERENT_LINES; i++)
        if (mine[i] !== theirs[i]) different++;
      return different <= COPY_MAX_DIFFERENT_LINES;
    });
    if (copies.length < COPY_MIN_OTHERS) return null;
    const left = copies.filter((p) => {
      const to = this.view.read(p);
      const moved = to === undefined ? null : transfer(edit, from, to, p);
      return moved !== null && this.planned.get(p)?.has(key(moved)) !== true;
    });
    if (left.length === 0) return null;
    const named = left.slice(0, 3).join(', ') + (left.length > 3 ? ` and ${left.length - 3} more` : '');
    return (
      `${file} is one of ${copies.length + 1} copies of one file (generated from one template?), and ` +
      `${left.length} of them would not get this edit (${named}): edit the copies together, or their template`
    );
  }

  /** Notes which files this pass's edits (per finding) reach through several paths with different
   * edits, or through a path other than an earlier pass's: those get no edit. */
  prepare(editLists: readonly (readonly TextEdit[])[]): void {
    const via = new Map<string, Map<string, Set<string>>>();
    for (const edits of editLists) {
      for (const e of edits) {
        const real = realFile(this.byPath, e.range.file);
        if (!real.ok) continue;
        const planned = this.planned.get(real.file) ?? new Set<string>();
        planned.add(key({ ...e, range: { ...e.range, file: real.file } }));
        this.planned.set(real.file, planned);
        const paths = via.get(real.file) ?? new Map<string, Set<string>>();
        const set = paths.get(e.range.file) ?? new Set<string>();
        // Same bytes through any path: compare the edits by their place in the file.
        set.add(key({ ...e, range: { ...e.range, file: real.file } }));
        paths.set(e.range.file, set);
        via.set(real.file, paths);
      }
    }
    // Every configuration file read through the same bytes is a reader: one that asks for nothing
    // (a shared module content with a minimum) would be changed by an edit another reader asks for.
    const readers = new Map<string, string[]>();
    if (via.size > 0) {
      for (const e of this.view.entries) {
        // A regular file is its own reader; only links need following.
        const own = e.type === 'file' && this.byPath.get(e.path) === e;
        if (own && !via.has(e.path)) continue;
        if (!isConfigPath(e.path) || inToolState(e.path)) continue;
        const real = own ? { ok: true as const, file: e.path } : realFile(this.byPath, e.path);
        if (!real.ok || !via.has(real.file)) continue;
        const list = readers.get(real.file);
        if (list === undefined) readers.set(real.file, [e.path]);
        else list.push(e.path);
      }
    }
    for (const [file, paths] of via) {
      for (const reader of readers.get(file) ?? []) {
        // `x.tf` linked to `x.tofu`: twins that are one file are one reader.
        const twin = twinPath(reader);
        if (!paths.has(reader) && (twin === null || !paths.has(twin))) paths.set(reader, new Set());
      }
      const names = [...paths.keys()].sort();
      const sets = [...paths.values()].map((s) => [...s].sort().join('\n'));
      const before = this.earlier.get(file);
      const newPath = before !== undefined && names.some((p) => !before.has(p));
      if (new Set(sets).size > 1 || newPath) {
        const all = [...new Set([...(before ?? []), ...names])].sort();
        this.conflicts.set(
          file,
          `${file} is read as ${all.join(' and ')} (symlinks), by modules that need different fixes: a person decides what the one file says`,
        );
      }
    }
  }

  /** The edits `edits` stand for on disk, or why none can be made. */
  place(edits: readonly TextEdit[]): Placement {
    const out = new Map<string, TextEdit>();
    const reached: [string, string][] = [];
    for (const e of edits) {
      const real = realFile(this.byPath, e.range.file);
      if (!real.ok) return real;
      const file = real.file;
      if (inToolState(file)) {
        return {
          ok: false,
          reason: `${file} is under .terraform/ (what terraform init installed) or .git/, which a fix never edits: change the module's source or version instead`,
        };
      }
      const conflict = this.conflicts.get(file);
      if (conflict !== undefined) return { ok: false, reason: conflict };
      const placed: TextEdit = { ...e, range: { ...e.range, file } };
      const generated = this.generated(file);
      if (generated !== null) return { ok: false, reason: generated };
      const copies = this.copiesLeftBehind(placed, file);
      if (copies !== null) return { ok: false, reason: copies };
      out.set(key(placed), placed);
      reached.push([file, e.range.file]);
      const twin = twinPath(file);
      if (twin === null || !this.byPath.has(twin)) continue;
      const twinReal = realFile(this.byPath, twin);
      if (!twinReal.ok) return { ok: false, reason: `its twin ${twinReal.reason}` };
      if (twinReal.file === file) continue;
      if (inToolState(twinReal.file)) continue;
      const from = this.view.read(file);
      const to = this.view.read(twinReal.file);
      const moved = from === undefined || to === undefined ? null : transfer(placed, from, to, twinReal.file);
      if (moved === null) {
        return {
          ok: false,
          reason:
            `${twin} is the twin of ${file} (Terraform reads ${file.endsWith('.tofu') || file.endsWith('.tofu.json') ? twin : file}, ` +
            `OpenTofu ${file.endsWith('.tofu') || file.endsWith('.tofu.json') ? file : twin}) and reads differently around the edit: ` +
            'edit both alike so Terraform and OpenTofu read one setting',
        };
      }
      out.set(key(moved), moved);
    }
    for (const [file, path] of reached) {
      const set = this.earlier.get(file) ?? new Set<string>();
      set.add(path);
      this.earlier.set(file, set);
    }
    return { ok: true, edits: [...out.values()] };
  }
}
