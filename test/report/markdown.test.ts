/**
 * The Markdown report fits where it goes: a GitHub pull-request comment (65,536 characters). A
 * large real scan (cloudposse/terraform-aws-components from the shared corpus, ~500 findings) is
 * rendered under the limit, with a per-rule roll-up and a statement of what was cut.
 */
import * as path from 'node:path';
import { readInput } from '../../src/archive';
import { applyEdits } from '../../src/fix';
import type { TextEdit } from '../../src/model';
import { GITHUB_COMMENT_LIMIT, renderReport } from '../../src/report';
import type { Report } from '../../src/report/types';
import { scanPath } from '../../src/scan';
import { corpusFile, describeWithCorpus } from '../support/external';

const DEMO = path.resolve(__dirname, '../../examples/platform-demo.tar.gz');

let large: Report;
let demo: Report;
beforeAll(async () => {
  demo = await scanPath(DEMO);
}, 120_000);

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const findingRows = (md: string) =>
  md.split('\n').filter((l) => /^\| (🔴|🟠|🔵) (error|warning|notice) \| `/.test(l));
/** The roll-up table: `rule severity` → count. */
function rollUp(md: string): Map<string, number> {
  const rows = md.split('\n').filter((l) => /^\| `[a-z-]+` \| (🔴|🟠|🔵) \w+ \| \d+ \|$/.test(l));
  const out = new Map<string, number>();
  for (const l of rows) {
    const [, id, severity, count] = /^\| `([a-z-]+)` \| \S+ (\w+) \| (\d+) \|$/.exec(l) as RegExpExecArray;
    expect(out.has(`${id} ${severity}`)).toBe(false);
    out.set(`${id} ${severity}`, Number(count));
  }
  return out;
}
/** `rule severity` → count of the findings that are not suppressed. */
function perRule(report: Report): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of report.findings) {
    if (f.suppressed !== undefined) continue;
    out.set(`${f.ruleId} ${f.severity}`, (out.get(`${f.ruleId} ${f.severity}`) ?? 0) + 1);
  }
  return out;
}

describeWithCorpus('a large real scan', () => {
  beforeAll(async () => {
    large = await scanPath(corpusFile('cloudposse_terraform-aws-components.tar.gz'));
  }, 120_000);

  it('would not fit in a comment uncut (the premise of these tests)', () => {
    const everything = renderReport(large, 'markdown', {
      markdown: { maxBytes: 100_000_000, maxFindings: Number.POSITIVE_INFINITY },
    });
    expect(findingRows(everything)).toHaveLength(large.summary.total);
    expect(everything.length).toBeGreaterThan(GITHUB_COMMENT_LIMIT);
  });

  it('by default fits a GitHub comment: roll-up of every rule, the most severe findings, what was cut', () => {
    const md = renderReport(large, 'markdown');
    expect(md.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
    expect(bytes(md)).toBeLessThan(GITHUB_COMMENT_LIMIT);
    // Every rule with its count, summing to the summary.
    expect(rollUp(md)).toEqual(perRule(large));
    expect([...rollUp(md).values()].reduce((n, c) => n + c, 0)).toBe(large.summary.total);
    // A rule with findings of two severities has two rows (the premise: lock-missing's
    // low-confidence findings are notices, the others warnings).
    const lockMissing = [...rollUp(md).keys()].filter((k) => k.startsWith('lock-missing '));
    expect(lockMissing.sort()).toEqual(['lock-missing notice', 'lock-missing warning']);

    const rows = findingRows(md);
    const total = large.summary.total;
    expect(total).toBeGreaterThan(100);
    expect(rows).toHaveLength(100);
    // The most severe first: no row is more severe than the one above it.
    const rank = { error: 0, warning: 1, notice: 2 } as Record<string, number>;
    const sev = rows.map((r) => rank[/^\| \S+ (\w+)/.exec(r)?.[1] as string] as number);
    expect(sev).toEqual([...sev].sort((a, b) => a - b));
    // The statement of the cut counts exactly what is not shown.
    const shownErrors = rows.filter((r) => r.includes(' error |')).length;
    const hidden = {
      error: large.summary.error - shownErrors,
      warning: large.summary.warning - rows.filter((r) => r.includes(' warning |')).length,
      notice: large.summary.notice - rows.filter((r) => r.includes(' notice |')).length,
    };
    const parts = (['error', 'warning', 'notice'] as const)
      .filter((s) => hidden[s] > 0)
      .map((s) => `${hidden[s]} ${s}${hidden[s] === 1 ? '' : 's'}`);
    expect(md).toContain(
      `**Showing the 100 most severe of ${total} findings**; not shown: ${parts.join(', ')} ` +
        '(all counted in the table above). The full report: `tfguard scan --format json` (or `--format text`) lists every finding.',
    );
  });

  it('without a row limit the size budget cuts, and says where the full report is', () => {
    const md = renderReport(large, 'markdown', {
      markdown: {
        maxFindings: Number.POSITIVE_INFINITY,
        fullReport: '[report.json](https://example.test/r.json)',
      },
    });
    expect(bytes(md)).toBeLessThanOrEqual(60_000);
    const shown = findingRows(md).length;
    expect(shown).toBeGreaterThan(100);
    expect(shown).toBeLessThan(large.summary.total);
    expect(md).toContain(`**Showing the ${shown} most severe of ${large.summary.total} findings**`);
    expect(md).toContain('The full report: [report.json](https://example.test/r.json).');
  });

  it('a tight budget is kept: sections that do not fit are named, not silently dropped', () => {
    const md = renderReport(large, 'markdown', { markdown: { maxBytes: 12_000 } });
    expect(bytes(md)).toBeLessThanOrEqual(12_000);
    const constraintRows = large.roots.reduce((n, r) => n + r.providers.length, 0);
    const named = md.includes(
      `Not shown for want of room: Provider constraints per root module (${constraintRows} rows)`,
    );
    const partial = /…and \d+ more rows, in the full report/.test(md);
    expect(named || partial).toBe(true);
    expect(md.trimEnd().endsWith('</sub>')).toBe(true);
  });

  it('is deterministic: the same report (also after a JSON round trip) gives the same text', () => {
    const md = renderReport(large, 'markdown');
    expect(renderReport(JSON.parse(JSON.stringify(large)) as Report, 'markdown')).toBe(md);
  });
});

describe('a small scan', () => {
  it('is not cut: every finding is a row, with the roll-up and no cut statement', () => {
    const md = renderReport(demo, 'markdown');
    expect(findingRows(md)).toHaveLength(demo.findings.length);
    expect(rollUp(md)).toEqual(perRule(demo));
    expect(md).not.toContain('Showing the');
    expect(md).not.toContain('Not shown');
    expect(md).toContain('<summary>Provider constraints per root module</summary>');
  });

  it("is titled with the repository when the caller names it, else with the input's name", () => {
    expect(renderReport(demo, 'markdown').split('\n')[0]).toBe(`## tfguard: ${demo.source.name}`);
    const titled = renderReport(demo, 'markdown', { markdown: { title: 'acme/network' } });
    expect(titled.split('\n')[0]).toBe('## tfguard: acme/network');
  });

  it('a fix is shown as code next to the message', () => {
    const md = renderReport(demo, 'markdown');
    const fixed = demo.findings.find((f) => f.fix !== undefined);
    expect(fixed).toBeDefined();
    expect(md).toContain(`Suggested: \`${fixed?.fix?.replacement}\``);
  });

  it('single-edit fixes are GitHub suggestion blocks: the lines they touch as tfguard fix writes them', async () => {
    const archive = await readInput(DEMO);
    const md = renderReport(demo, 'markdown');
    // GitHub's syntax: a fenced code block whose info string is `suggestion`; its content replaces
    // the commented lines.
    const blocks = [...md.matchAll(/^`(`{2,})suggestion\n([\s\S]*?)\n`\1$/gm)].map((m) => m[2]);
    const single = demo.findings.filter((f) => f.fix?.edits?.length === 1);
    expect(single.length).toBeGreaterThanOrEqual(2);
    expect(blocks).toHaveLength(single.length);
    for (const f of single) {
      const edit = (f.fix?.edits ?? [])[0] as TextEdit;
      const content = archive.files.get(edit.range.file) as Buffer;
      // The oracle: apply the edit to the file, then read the same lines (plus those it added).
      const after = applyEdits(content, [edit]).toString('utf8').split('\n');
      const added = edit.text.split('\n').length - 1 - (edit.range.end.line - edit.range.start.line);
      const lines = after.slice(edit.range.start.line - 1, edit.range.end.line + added).join('\n');
      expect(blocks).toContain(lines);
      expect(md).toContain(`\`${edit.range.file}:${edit.range.start.line}\` \`${f.ruleId}\``);
    }
  });
});
