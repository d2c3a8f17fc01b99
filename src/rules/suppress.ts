/**
 * Inline suppressions: `# tfguard:ignore <rule-id>[,<rule-id>...] <reason>` and
 * `# tfguard:ignore-file <rule-id>[,...] <reason>` comments in the scanned files, modelled on
 * tflint's `tflint-ignore` / `tflint-ignore-file` and Checkov's `checkov:skip=ID:reason`.
 *
 * - `tfguard:ignore` in a comment that follows code on the same line covers that line. On a line
 *   of its own it covers its own line(s) and the first line after the run of comment lines it is
 *   part of, so several annotations (and ordinary comments) may be stacked above the line.
 * - `tfguard:ignore-file` covers the whole file and must come before the file's first block or
 *   attribute (like `tflint-ignore-file`).
 * - `#`, `//` and `/* *\/` comments all work (the HCL lexer finds them, so text inside strings and
 *   heredocs is never read as an annotation); `.terraform.lock.hcl` files are HCL too.
 * - JSON configuration files have no comments. Terraform ignores a `"//"` property in a body, so a
 *   top-level `"//": "tfguard:ignore-file <rule-id> <reason>"` is read; line annotations are not
 *   possible there.
 * - A reason is required. An annotation without one, with an unknown rule id or in the wrong place
 *   suppresses nothing and is reported by `suppression-invalid`.
 *
 * This module decides; reports only render what it decided (`Finding.suppressed`).
 */
import { decodeSource, DEFAULT_MAX_NESTING_DEPTH, parseJsonWithPositions, type JsonNode } from '../hcl';
import { scanHcl, type ScanComment } from '../hcl';
import type { Annotation, AnnotationScope, Finding, RuleContext } from './types';
import { compareStrings } from './helpers';

/** Rule ids whose findings are about annotations themselves: they cannot be suppressed inline. */
export const SUPPRESSION_RULE_IDS: readonly string[] = ['suppression-invalid', 'suppression-unused'];

const PREFIX = 'tfguard:';
const PREFIX_BYTES = Buffer.from(PREFIX, 'latin1');
const COLON = 0x3a;

/**
 * True when `content` holds `tfguard:`. Found from its colon: a colon is rare in HCL, and searching
 * for one byte runs at memchr speed, about three times a search for the whole prefix (every file of
 * the archive goes through this).
 */
export function mentionsTfguard(content: Buffer): boolean {
  const last = PREFIX_BYTES.length - 1;
  for (let i = content.indexOf(COLON, last); i !== -1; i = content.indexOf(COLON, i + 1)) {
    let k = 0;
    while (k < last && content[i - last + k] === PREFIX_BYTES[k]) k++;
    if (k === last) return true;
  }
  return false;
}

export type { Annotation, AnnotationScope } from './types';

/** A file whose annotations are read. */
export interface AnnotatedFile {
  path: string;
  content: Buffer;
}

function isJsonPath(path: string): boolean {
  return path.endsWith('.json');
}

/**
 * Reads the annotations of `files` (configuration files and lock files). `knownRuleIds` are the
 * registered rule ids. Files without the text `tfguard:` are skipped unread; a file that is not
 * valid UTF-8 or not valid syntax yields the annotations before the error (HCL) or none (JSON):
 * its parse error is reported by the parse rules. Sorted by file, then line.
 */
export function readAnnotations(
  files: Iterable<AnnotatedFile>,
  knownRuleIds: ReadonlySet<string>,
): Annotation[] {
  const out: Annotation[] = [];
  for (const { path, content } of files) {
    if (!mentionsTfguard(content)) continue;
    const decoded = decodeSource(path, content);
    if (!decoded.ok) continue;
    if (isJsonPath(path)) out.push(...jsonAnnotations(path, decoded.text, knownRuleIds));
    else out.push(...hclAnnotations(path, decoded.text, knownRuleIds));
  }
  return out.sort((a, b) => compareStrings(a.file, b.file) || a.line - b.line);
}

function hclAnnotations(path: string, text: string, known: ReadonlySet<string>): Annotation[] {
  const comments = scanHcl(path, text, { comments: true }).comments ?? [];
  let code: boolean[] | null = null;
  const hasCode = (line: number): boolean => {
    code ??= codeLines(text, comments);
    return code[line - 1] === true;
  };
  let commentLines: Set<number> | null = null;
  const isCommentLine = (line: number): boolean => {
    if (commentLines === null) {
      commentLines = new Set<number>();
      for (const c of comments) for (let l = c.line; l <= c.endLine; l++) commentLines.add(l);
    }
    return commentLines.has(line);
  };

  const out: Annotation[] = [];
  for (const c of comments) {
    if (!c.text.includes(PREFIX)) continue;
    const parsed = parseDirective(c.text, known);
    if (parsed === null) continue;
    const annotation: Annotation = { file: path, line: c.line, ...parsed, covers: [] };
    if (annotation.scope === 'file') {
      if (!c.beforeItems) {
        annotation.problems.push(
          `${annotation.directive} applies to the whole file, so it must come before the file's first block or attribute`,
        );
      }
    } else {
      for (let l = c.line; l <= c.endLine; l++) annotation.covers.push(l);
      // Alone on its line(s): it also covers the first line below the comment lines it stands in.
      if (!hasCode(c.line) && !hasCode(c.endLine)) {
        let target = c.endLine + 1;
        while (isCommentLine(target) && !hasCode(target)) target++;
        annotation.covers.push(target);
      }
    }
    out.push(annotation);
  }
  return out;
}

/** Per line (index line - 1): whether anything but white space and comments is on it. */
function codeLines(text: string, comments: readonly ScanComment[]): boolean[] {
  const code: boolean[] = [];
  let line = 1;
  let next = 0;
  for (let i = 0; i < text.length; i++) {
    const c = comments[next];
    if (c !== undefined && i === c.start) {
      line = c.endLine;
      i = c.end - 1;
      next++;
      continue;
    }
    const ch = text.charCodeAt(i);
    if (ch === 0x0a) line++;
    else if (ch !== 0x20 && ch !== 0x09 && ch !== 0x0d) code[line - 1] = true;
  }
  return code;
}

function jsonAnnotations(path: string, text: string, known: ReadonlySet<string>): Annotation[] {
  let root: JsonNode;
  try {
    root = parseJsonWithPositions(text, DEFAULT_MAX_NESTING_DEPTH);
  } catch {
    return [];
  }
  const out: Annotation[] = [];
  // Iterative walk: every `"//"` property with a string value that starts with `tfguard:`.
  const work: { node: JsonNode; top: boolean }[] = [{ node: root, top: true }];
  while (work.length > 0) {
    const { node, top } = work.pop() as (typeof work)[number];
    if (node.kind === 'array') for (const item of node.items) work.push({ node: item, top: false });
    if (node.kind !== 'object') continue;
    for (const prop of node.props) {
      if (prop.key === '//' && prop.value.kind === 'string') {
        const parsed = parseDirective(prop.value.value, known);
        if (parsed !== null) {
          const annotation: Annotation = { file: path, line: prop.line, ...parsed, covers: [] };
          if (annotation.scope === 'line' || !top) {
            annotation.problems.push(
              'JSON configuration files have no comments: only a top-level "//" property with ' +
                'tfguard:ignore-file <rule-id> <reason> is read (it covers the whole file)',
            );
          }
          out.push(annotation);
        }
      }
      work.push({ node: prop.value, top: false });
    }
  }
  return out;
}

type ParsedDirective = Pick<Annotation, 'scope' | 'directive' | 'ruleIds' | 'reason' | 'problems'>;

const DIRECTIVE = /^tfguard:([A-Za-z0-9_-]*)(:?)/;
const RULE_LIST = /^[A-Za-z0-9_-]+(?:[ \t]*,[ \t]*[A-Za-z0-9_-]+)*/;
/** What may separate the rule ids from the reason besides white space (`--`, `-`, `:`, `#`, `//`). */
const REASON_LEAD = /^(?:--?|\u2014|:|#|\/\/)\s*/;

/**
 * Parses a comment's text. Null when it is not an annotation (it does not start with `tfguard:`
 * after white space; a block comment's leading `*` is ignored too).
 */
export function parseDirective(comment: string, known: ReadonlySet<string>): ParsedDirective | null {
  // A block comment's continuation lines often start with `*`.
  const text = comment
    .replace(/^[ \t]*\*+/gm, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!text.startsWith(PREFIX)) return null;
  const m = DIRECTIVE.exec(text) as RegExpExecArray;
  const name = m[1] as string;
  const directive = `${PREFIX}${name}`;
  const problems: string[] = [];
  if (name !== 'ignore' && name !== 'ignore-file') {
    return {
      scope: 'line',
      directive,
      ruleIds: [],
      reason: '',
      problems: [`unknown annotation "${directive}" (tfguard reads tfguard:ignore and tfguard:ignore-file)`],
    };
  }
  const scope: AnnotationScope = name === 'ignore' ? 'line' : 'file';
  let rest = text.slice(m[0].length);
  if (rest !== '' && !rest.startsWith(' ')) {
    problems.push(`"${directive}" must be followed by a space and the rule id(s)`);
    return { scope, directive, ruleIds: [], reason: '', problems };
  }
  rest = rest.trim();
  const list = RULE_LIST.exec(rest);
  const ruleIds: string[] = [];
  if (list === null) {
    problems.push(`names no rule id (write ${directive} <rule-id> <reason>)`);
  } else {
    for (const id of list[0].split(',').map((s) => s.trim())) if (!ruleIds.includes(id)) ruleIds.push(id);
    rest = rest.slice(list[0].length);
  }
  const reason = rest.trim().replace(REASON_LEAD, '').trim();
  for (const id of ruleIds) {
    if (SUPPRESSION_RULE_IDS.includes(id)) {
      problems.push(`"${id}" cannot be suppressed inline (set its severity or disable it in .tfguard.hcl)`);
    } else if (id.startsWith('policy-') && known.has(id)) {
      problems.push(
        `"${id}" is the organisation's policy: it cannot be suppressed inline (an exception { ... } in the policy file grants one)`,
      );
    } else if (id === 'all') {
      problems.push('"all" is not accepted: name the rule id(s) to ignore');
    } else if (!known.has(id)) {
      problems.push(`unknown rule id "${id}" (tfguard rules lists them)`);
    }
  }
  if (list !== null && !/[\p{L}\p{N}]/u.test(reason)) {
    problems.push(
      `gives no reason: write why the finding is accepted after the rule id, e.g. ${directive} ${ruleIds[0]} <reason>`,
    );
  }
  return { scope, directive, ruleIds, reason, problems };
}

/** What `applySuppressions` decided. */
export interface SuppressionOutcome {
  /** The findings, each one an annotation covers carrying `suppressed`. Same order as the input. */
  findings: Finding[];
  /** For every valid annotation that covered at least one finding: the rule ids it was used for. */
  used: Map<Annotation, Set<string>>;
}

function covers(a: Annotation, f: Finding): boolean {
  if (!a.ruleIds.includes(f.ruleId)) return false;
  if (a.scope === 'file') return true;
  return f.line !== null && a.covers.includes(f.line);
}

/**
 * Marks the findings that valid annotations cover as suppressed (they stay in the list). A line
 * annotation wins over a file annotation for the recorded location; every annotation that covers a
 * finding counts as used. Findings of the suppression rules and findings without a file are never
 * suppressed.
 */
export function applySuppressions(
  findings: Finding[],
  annotations: readonly Annotation[],
): SuppressionOutcome {
  const byFile = new Map<string, Annotation[]>();
  for (const a of annotations) {
    if (a.problems.length > 0) continue;
    const list = byFile.get(a.file) ?? [];
    list.push(a);
    byFile.set(a.file, list);
  }
  const used = new Map<Annotation, Set<string>>();
  const out = findings.map((f) => {
    // Policy findings are accepted only by the policy's own exceptions (already applied).
    if (
      f.file === null ||
      f.suppressed !== undefined ||
      SUPPRESSION_RULE_IDS.includes(f.ruleId) ||
      f.ruleId.startsWith('policy-')
    )
      return f;
    const matching = (byFile.get(f.file) ?? []).filter((a) => covers(a, f));
    if (matching.length === 0) return f;
    for (const a of matching) {
      const ids = used.get(a) ?? new Set<string>();
      ids.add(f.ruleId);
      used.set(a, ids);
    }
    const chosen = matching.find((a) => a.scope === 'line') ?? (matching[0] as Annotation);
    return { ...f, suppressed: { reason: chosen.reason, file: chosen.file, line: chosen.line } };
  });
  return { findings: out, used };
}

/** The module a finding about an annotation in `file` belongs to: the module that has the file as a
 * configuration or lock file, else the file's directory. */
export function moduleOfFile(ctx: Pick<RuleContext, 'modules' | 'lock'>, file: string): string {
  for (const m of ctx.modules) if (m.lockFile === file || m.files.includes(file)) return m.path;
  for (const r of ctx.lock?.roots ?? []) if (r.lockFile === file) return r.root;
  const slash = file.lastIndexOf('/');
  return slash === -1 ? '.' : file.slice(0, slash);
}

/** How an annotation reads in messages: `tfguard:ignore lock-missing` (without the reason). */
export function describeAnnotation(a: Annotation): string {
  return a.ruleIds.length === 0 ? a.directive : `${a.directive} ${a.ruleIds.join(',')}`;
}
