/**
 * `tfguard init`: the classification a scan found, written as `.tfguard.hcl` globs grouped by
 * kind (`roots`, `shared`, `examples`, `tests`, `fragments`), each entry under a comment with the
 * evidence, every guess (weak evidence) marked `GUESS` for the user to confirm. With the file, the
 * settings signal decides every directory: no kind is a guess and no finding is low-confidence.
 *
 * Run again, it keeps the file as the user left it: the existing file is parsed with the real HCL
 * parser (an invalid file is an error, never overwritten), only directories that no glob of it
 * matches are added, inserted at the end of their list (or as a new list at the end of the file);
 * everything else, comments and formatting included, stays byte for byte.
 */
import type { KindEvidence, ModuleKind } from '../modules';
import type { HclParser } from '../hcl';
import { scanHcl } from '../hcl';
import { hclQuoted } from '../lockfile';
import { matchGlob } from '../modules/glob';
import { RULES } from '../rules';
import { CONFIG_FILE_NAME, parseConfigFile } from './config-file';

export interface InitModule {
  path: string;
  kind: ModuleKind;
  kindReason: string;
  kindEvidence: KindEvidence;
}

export interface InitResult {
  /** The settings file to write (the existing text when nothing is added). */
  text: string;
  /** The directories added, in file order. */
  added: InitModule[];
}

/** Settings keys by kind, in the order the settings signal reads them. */
export const KIND_KEYS: ReadonlyArray<
  readonly [ModuleKind, 'roots' | 'shared' | 'examples' | 'tests' | 'fragments']
> = [
  ['root', 'roots'],
  ['shared', 'shared'],
  ['example', 'examples'],
  ['test', 'tests'],
  ['fragment', 'fragments'],
];

const KIND_HEADERS: Record<ModuleKind, string> = {
  root: '# Root modules: deployed on their own (plan/apply run there); bounded versions and a lock file.',
  shared: '# Reusable modules, called through module blocks: minimum versions only, no provider blocks.',
  example: '# Examples: checked for consistency only.',
  test: '# Test configurations: checked for consistency only.',
  fragment: '# Not modules on their own (generated copies, templates, linked files).',
};

const FILE_HEADER = `# tfguard settings: what each directory is (docs/classification.md), written by \`tfguard init\`.
# Each list holds globs of module directories. Entries marked GUESS are tfguard's guesses:
# check them and move any wrong one to the right list. Run \`tfguard init\` again after adding
# directories: it keeps your edits and adds only directories that no glob here matches.
`;

const KNOWN_RULES: ReadonlySet<string> = new Set(RULES.map((r) => r.id));

/** The comment above an entry: the evidence, and for a guess, the request to confirm it. */
function evidenceComment(m: InitModule): string {
  const reason = m.kindReason.replace(/\s+/g, ' ');
  return m.kindEvidence === 'weak' ? `# GUESS, confirm or move: ${reason}` : `# ${reason}`;
}

function entryLines(list: readonly InitModule[], indent: string): string {
  let out = '';
  let last: string | null = null;
  for (const m of list) {
    const comment = evidenceComment(m);
    if (comment !== last) out += `${indent}${comment}\n`;
    last = comment;
    out += `${indent}${hclQuoted(m.path)},\n`;
  }
  return out;
}

/** True for directories a settings glob should not name: installed copies of remote modules. */
function installed(path: string): boolean {
  return path.split('/').includes('.terraform');
}

/**
 * The settings text with every module that no glob of `existing` matches added to the list of its
 * kind. Throws `InputError('invalid-config')` when `existing` is not a valid settings file.
 */
export async function initConfigText(
  existing: string | null,
  modules: readonly InitModule[],
  parser: Pick<HclParser, 'parse'>,
): Promise<InitResult> {
  const globs: string[] = [];
  if (existing !== null) {
    const layer = parseConfigFile(
      CONFIG_FILE_NAME,
      await parser.parse(CONFIG_FILE_NAME, Buffer.from(existing, 'utf8')),
      KNOWN_RULES,
    );
    for (const [, key] of KIND_KEYS) globs.push(...(layer[key] ?? []));
  }
  const fresh = modules
    .filter((m) => !installed(m.path) && !globs.some((g) => matchGlob(g, m.path)))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const byKind = new Map<ModuleKind, InitModule[]>();
  for (const m of fresh) byKind.set(m.kind, [...(byKind.get(m.kind) ?? []), m]);

  let text: string;
  if (existing === null) {
    text = FILE_HEADER;
    for (const [kind, key] of KIND_KEYS) {
      const list = byKind.get(kind);
      if (list === undefined) continue;
      text += `\n${KIND_HEADERS[kind]}\n${key} = [\n${entryLines(list, '  ')}]\n`;
    }
  } else {
    text = addToExisting(existing, byKind);
  }
  const added = KIND_KEYS.flatMap(([kind]) => byKind.get(kind) ?? []);

  // The result must be a valid settings file whose globs name every module: checked with the
  // same parser and reader as a scan, so a file tfguard writes never fails the next scan.
  const check = parseConfigFile(
    CONFIG_FILE_NAME,
    await parser.parse(CONFIG_FILE_NAME, Buffer.from(text)),
    KNOWN_RULES,
  );
  const all = KIND_KEYS.flatMap(([, key]) => check[key] ?? []);
  const missed = modules.filter((m) => !installed(m.path) && !all.some((g) => matchGlob(g, m.path)));
  if (missed.length > 0) throw new Error(`tfguard init: the settings written miss ${missed[0]?.path ?? ''}`);
  return { text, added };
}

/** Inserts the new entries before the closing bracket of each list (or appends new lists). */
function addToExisting(existing: string, byKind: ReadonlyMap<ModuleKind, InitModule[]>): string {
  const scanned = scanHcl(CONFIG_FILE_NAME, existing, { comments: true });
  const comments = scanned.comments ?? [];
  /** Offset → true when inside a comment. */
  const commentAt = (i: number): { start: number } | undefined =>
    comments.find((c) => c.start <= i && i < c.end);
  const edits: { at: number; text: string }[] = [];
  /** Applied from the end; at one offset, the later edit first, so the earlier one stays before it. */
  const order = (a: { at: number }, b: { at: number }, ia: number, ib: number): number =>
    b.at - a.at || ib - ia;
  let appended = '';
  for (const [kind, key] of KIND_KEYS) {
    const list = byKind.get(kind);
    if (list === undefined) continue;
    const attr = scanned.body.attributes.find((a) => a.name === key);
    if (attr === undefined) {
      appended += `\n${KIND_HEADERS[kind]}\n${key} = [\n${entryLines(list, '  ')}]\n`;
      continue;
    }
    const close = attr.end - 1;
    if (existing[close] !== ']') {
      throw new Error(`tfguard init: "${key}" in ${CONFIG_FILE_NAME} does not end with "]"`);
    }
    // The last significant character before "]": a separator is needed unless it is "[" or ",".
    let i = close - 1;
    for (;;) {
      const c = commentAt(i);
      if (c !== undefined) i = c.start - 1;
      else if (/\s/.test(existing[i] ?? '')) i--;
      else break;
    }
    const last = existing[i];
    if (last !== '[' && last !== ',') edits.push({ at: i + 1, text: ',' });
    // Entries go on their own lines before "]": above it when it has a line of its own (indented
    // one level more), else on new lines before it.
    const lineStart = existing.lastIndexOf('\n', close - 1) + 1;
    const before = existing.slice(lineStart, close);
    if (/^[ \t]*$/.test(before)) {
      edits.push({ at: lineStart, text: entryLines(list, `${before}  `) });
    } else {
      edits.push({ at: close, text: `\n${entryLines(list, '  ')}` });
    }
  }
  let text = existing;
  const sorted = edits.map((e, i) => ({ e, i })).sort((a, b) => order(a.e, b.e, a.i, b.i));
  for (const { e } of sorted) text = text.slice(0, e.at) + e.text + text.slice(e.at);
  if (appended !== '') text = `${text}${text.endsWith('\n') || text === '' ? '' : '\n'}${appended}`;
  return text;
}
