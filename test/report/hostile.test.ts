/**
 * One hostile archive through every output format. A real tarball whose directory names, module
 * source, provider source, version constraint, suppression reason and archive name carry HTML,
 * @mentions, Markdown links, issue references, fences, table pipes, math, CI workflow commands
 * (`::error::`, `##[add-mask]`), control characters (ESC, BEL, CR, newline, tab) and a bidi
 * override. Each destination's rules (src/report/escape.ts) are checked on the real output:
 *
 * - Markdown: rendered by cmark-gfm (GitHub's parser) with raw HTML allowed, so any HTML or link
 *   that got through would show: only the report's own tags, no link, no mention, no control
 *   character, every location and suggestion shown exactly;
 * - text: no control character but colour codes, no line a CI command;
 * - SARIF and Code Quality: no control character or embedded link in message text, URIs that
 *   resolve to exactly the archive path, no `##[` in the file;
 * - JSON: data, every string as the archive has it;
 * - the fleet audit's Markdown summary (src/service/summary.ts): as the Markdown report.
 */
import { spawnSync } from 'node:child_process';
import { renderReport } from '../../src/report';
import { visible } from '../../src/report/escape';
import type { CodeQualityIssue } from '../../src/report/codequality';
import type { Report } from '../../src/report/types';
import type { Finding } from '../../src/rules';
import { scanBytes } from '../../src/scan';
import {
  buildSummary,
  entryOf,
  renderSummaryMarkdown,
  scannedResult,
  unscannedResult,
} from '../../src/service/summary';
import { makeTarGz } from '../support/archive';
import { describeWithExternal } from '../support/external';

/** Directory names: each one a root. (`\` is a separator in archive names, so no backslash.) */
const DIRS = [
  '<img src=x onerror=alert(1)>',
  '<details open><summary>x',
  '@octocat [c](javascript:alert(1)) ![i](https:',
  '::error file=a::pwned',
  '  ::warning::indented',
  'x ##[add-mask]y ##vso[task.setvariable]z',
  'esc\u001b[2J\u001b]8;;http:\u0007bel',
  'nl\n::notice::x\rcr\ttab',
  'bidi\u202egnp.tf',
  '#1 # heading',
  'a|b `tick` ``two``',
  '```suggestion',
  '$x^2$ ~~strike~~ *em* _em_',
];
const ARCHIVE_NAME = '<b>evil</b> @octocat #1.tar.gz';
/** The same text in places other than a path. */
const EVIL = '<img src=x onerror=alert(1)> @octocat [x](javascript:y) ::error::z ##[add-mask]w';

const ROOT_TF = [
  'terraform {',
  '  backend "local" {}',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = ">= 5.1" }',
  `    bad = { source = "hashicorp/bad", version = "${EVIL}" }`,
  `    # tfguard:ignore missing-version-constraint ${EVIL} \`code\` | pipe`,
  '    nov = { source = "hashicorp/nov" }',
  '  }',
  '}',
  'module "m" {',
  '  source = "./[click](javascript:alert(1)) @octocat <b>x</b>"',
  '}',
  '',
].join('\n');

let report: Report;
beforeAll(async () => {
  const files = Object.fromEntries(DIRS.map((d) => [`${d}/main.tf`, ROOT_TF]));
  report = await scanBytes(ARCHIVE_NAME, await makeTarGz({ ...files, 'README.md': `# ${EVIL}\n` }));
}, 120_000);

const where = (f: Finding): string =>
  f.file === null ? f.module : `${f.file}${f.line === null ? '' : `:${f.line}`}`;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

it('the archive is hostile where it should be (the premise)', () => {
  const files = new Set(report.findings.map((f) => f.file));
  for (const d of DIRS) expect(files).toContain(`${d.trim() === d ? d : d}/main.tf`);
  expect(report.findings.some((f) => f.message.includes('<img src=x'))).toBe(true);
  expect(report.findings.some((f) => f.suppressed?.reason.includes('@octocat'))).toBe(true);
  expect(report.findings.some((f) => f.fix?.suggestion !== undefined)).toBe(true);
});

it('JSON keeps every string as the archive has it (data, escaped only as JSON)', () => {
  const parsed = JSON.parse(renderReport(report, 'json')) as Report;
  expect(parsed.findings.map((f) => f.file)).toEqual(report.findings.map((f) => f.file));
  expect(parsed.findings.some((f) => f.file?.includes('\u001b'))).toBe(true);
});

describe('text', () => {
  for (const color of [false, true]) {
    it(`escapes control characters and writes no CI command (color: ${color})`, () => {
      const text = renderReport(report, 'text', { color });
      // eslint-disable-next-line no-control-regex
      const bare = text.replace(/\u001b\[[0-9;]*m/g, '');
      expect(bare).not.toMatch(CONTROL);
      expect(bare).not.toMatch(/\t/);
      for (const line of bare.split('\n')) {
        expect(line).not.toMatch(/^\s*::/);
        expect(line).not.toMatch(/##(\[|vso\[|teamcity\[)/i);
      }
      // Every finding is there, its place shown escaped.
      const shown = (t: string): string => visible(t).replace(/##(?=\[|vso\[)/g, '#\\x23');
      for (const f of report.findings) expect(bare).toContain(shown(where(f)));
      expect(bare).toContain('esc\\x1b[2J\\x1b]8;;http:\\x07bel/main.tf');
      expect(bare).toContain('nl\\x0a::notice::x\\x0dcr\\x09tab/main.tf');
      expect(bare).toContain('bidi\\u202egnp.tf/main.tf');
      expect(bare).toMatch(/^\\x3a:error file=a::pwned/m);
      expect(bare).toMatch(/^ {2}\\x3a:warning::indented/m);
      expect(bare).toContain('x #\\x23[add-mask]y #\\x23vso[task.setvariable]z');
    });
  }
});

describe('SARIF and Code Quality', () => {
  it('SARIF: message texts without control characters or embedded links; exact URIs', () => {
    const raw = renderReport(report, 'sarif');
    expect(raw).not.toMatch(/##(\[|vso\[|teamcity\[)/i);
    const sarif = JSON.parse(raw) as {
      runs: {
        results: {
          message: { text: string };
          locations?: { physicalLocation: { artifactLocation: { uri: string } } }[];
          suppressions?: { justification: string }[];
          fixes?: { description: { text: string } }[];
        }[];
      }[];
    };
    const results = sarif.runs[0]?.results ?? [];
    expect(results).toHaveLength(report.findings.length);
    results.forEach((r, i) => {
      const f = report.findings[i] as Finding;
      for (const text of [
        r.message.text,
        ...(r.suppressions ?? []).map((s) => s.justification),
        ...(r.fixes ?? []).map((x) => x.description.text),
      ]) {
        expect(text).not.toMatch(CONTROL);
        expect(text).not.toMatch(/\[[^\]]*\]\(/);
      }
      expect(r.message.text).toContain(visible(f.message).replace(/\]\(/g, ']\\('));
      if (f.file !== null) {
        const uri = r.locations?.[0]?.physicalLocation.artifactLocation.uri as string;
        // A relative reference that resolves under the base, to exactly the archive path.
        const base = 'file:///src/';
        const resolved = new URL(uri, base).href;
        expect(resolved.startsWith(base)).toBe(true);
        expect(decodeURIComponent(resolved.slice(base.length))).toBe(f.file);
      }
    });
  });

  it('Code Quality: descriptions without control characters; paths as the archive has them', () => {
    const raw = renderReport(report, 'codequality');
    expect(raw).not.toMatch(/##(\[|vso\[|teamcity\[)/i);
    const issues = JSON.parse(raw) as CodeQualityIssue[];
    const active = report.findings.filter((f) => f.suppressed === undefined);
    expect(issues.map((i) => i.location.path)).toEqual(active.map((f) => f.file ?? f.module));
    for (const i of issues) expect(i.description).not.toMatch(CONTROL);
  });
});

/** HTML entities cmark-gfm writes in text. */
function decode(html: string): string {
  return html
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');
}

describeWithExternal(['cmark-gfm'], 'Markdown as GitHub parses it (cmark-gfm)', () => {
  let md: string;
  let html: string;
  beforeAll(() => {
    md = renderReport(report, 'markdown');
    // --unsafe: raw HTML is passed through, so any that the report let in would show here.
    const r = spawnSync(
      'cmark-gfm',
      ['--unsafe', '-e', 'table', '-e', 'autolink', '-e', 'strikethrough', '-e', 'tasklist'],
      { input: md, encoding: 'utf8' },
    );
    expect(r.status).toBe(0);
    html = r.stdout;
  });

  it('only the report own tags, no link, no control character', () => {
    const tags = new Set(
      [...html.matchAll(/<\/?([a-zA-Z0-9]+)/g)].map((m) => (m[1] as string).toLowerCase()),
    );
    const allowed = [
      'h2',
      'p',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
      'code',
      'pre',
      'details',
      'summary',
      'sub',
      'strong',
    ];
    expect([...tags].filter((t) => !allowed.includes(t))).toEqual([]);
    expect(html).not.toMatch(/href=/i);
    expect(md).not.toMatch(CONTROL);
    expect(html).not.toMatch(CONTROL);
    // One heading (ours), whatever the names hold.
    expect(html.match(/<h2>/g)).toHaveLength(1);
    expect(html).toContain('<h2>tfguard: &lt;b&gt;evil&lt;/b&gt; @\u200boctocat #\u200b1.tar.gz</h2>');
  });

  it('no @mention or issue reference outside code', () => {
    const text = decode(html.replace(/<code[^>]*>[\s\S]*?<\/code>/g, ''));
    expect(text).toContain('@\u200boctocat');
    expect(text).not.toMatch(/@octocat/);
    expect(text).not.toMatch(/#\d/);
  });

  it('every location in its own cell, shown exactly; every suggestion exactly', () => {
    const rows = [...html.matchAll(/<tr>\n([\s\S]*?)<\/tr>/g)].map((m) =>
      [...(m[1] as string).matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1] as string),
    );
    const cells = rows.flat().map((c) => decode(c.replace(/^<code>|<\/code>$/g, '')));
    const active = report.findings.filter((f) => f.suppressed === undefined);
    for (const f of report.findings) expect(cells).toContain(visible(where(f)));
    // Message cells read as the message (escaped, with a zero-width space after each @ and before
    // a digit after #): nothing was cut out or turned into markup.
    // (tags stripped before entities are decoded: the archive text `<img ...>` is text here)
    const texts = rows.flat().map((c) => decode(c.replace(/<[^>]*>/g, '')).replace(/\u200b/g, ''));
    for (const f of active) expect(texts.some((t) => t.startsWith(visible(f.message)))).toBe(true);
    const suggestions = [
      ...html.matchAll(/<pre><code class="language-suggestion">([\s\S]*?)<\/code><\/pre>/g),
    ].map((m) => decode(m[1] as string));
    const expected = active
      .filter((f) => f.fix?.suggestion !== undefined)
      .map((f) => `${f.fix?.suggestion?.text}\n`);
    expect(suggestions.sort()).toEqual(expected.sort());
  });

  it('the fleet audit summary: the same rules for repository names, reasons and findings', () => {
    const run = { runId: 'run-2', startedAt: '2026-01-01T00:00:00Z', previousRunId: 'run-1' };
    const before = scannedResult('run-1', `acme/${DIRS[0]}`, 's1', { ...report, findings: [] }, null);
    const entries = [
      entryOf(scannedResult('run-2', `acme/${DIRS[0]}`, 's2', report, before)),
      entryOf(unscannedResult('run-2', 'acme/@octocat', 'rejected', `${EVIL} ${DIRS[7]}`)),
    ];
    const summaryMd = renderSummaryMarkdown(buildSummary(run, entries));
    expect(summaryMd).toContain('## Changes since the previous audit');
    const r = spawnSync('cmark-gfm', ['--unsafe', '-e', 'table', '-e', 'autolink', '-e', 'strikethrough'], {
      input: summaryMd,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    const out = r.stdout;
    const tags = new Set([...out.matchAll(/<\/?([a-zA-Z0-9]+)/g)].map((m) => (m[1] as string).toLowerCase()));
    const allowed = ['h1', 'h2', 'h3', 'p', 'ul', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'code'];
    expect([...tags].filter((t) => !allowed.includes(t))).toEqual([]);
    expect(out).not.toMatch(/href=/i);
    expect(summaryMd).not.toMatch(CONTROL);
    expect(decode(out.replace(/<code[^>]*>[\s\S]*?<\/code>/g, ''))).not.toMatch(/@octocat|#\d/);
  });
});
