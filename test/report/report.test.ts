import * as path from 'node:path';
import Ajv from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { readInput } from '../../src/archive';
import { applyEdits } from '../../src/fix';
import type { Finding } from '../../src/rules';
import { renderReport, verdict } from '../../src/report';
import type { Report } from '../../src/report/types';
import { RULES } from '../../src/rules';
import { scanPath } from '../../src/scan';
import { existsSync } from 'node:fs';
import { DOCS_URL, REPOSITORY_URL, TOOL_VERSION } from '../../src/version';
import reportSchema from '../../docs/report.schema.json';
import pkg from '../../package.json';

const DEMO = path.resolve(__dirname, '../../examples/platform-demo.tar.gz');
const sarifSchemaPath = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');

let report: Report;

beforeAll(async () => {
  report = await scanPath(DEMO);
});

describe('JSON report', () => {
  it('validates against docs/report.schema.json', () => {
    const ajv = new Ajv({ allErrors: true, strict: true });
    const validate = ajv.compile(reportSchema);
    const ok = validate(JSON.parse(renderReport(report, 'json')));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('rejects a report that breaks the contract (the schema is not vacuous)', () => {
    const ajv = new Ajv({ allErrors: true, strict: true });
    const validate = ajv.compile(reportSchema);
    const broken = JSON.parse(renderReport(report, 'json'));
    delete broken.findings[0].line;
    expect(validate(broken)).toBe(false);
  });

  it('carries the source identity, summary counts and the tool version', () => {
    expect(report.schemaVersion).toBe(1);
    expect(report.tool).toEqual({ name: 'tfguard', version: TOOL_VERSION });
    expect(TOOL_VERSION).toBe(pkg.version);
    expect(report.source.name).toBe('platform-demo.tar.gz');
    expect(report.source.sha256).toMatch(/^[0-9a-f]{64}$/);
    const count = (s: string) => report.findings.filter((f) => f.severity === s).length;
    expect(report.summary.error).toBe(count('error'));
    expect(report.summary.warning).toBe(count('warning'));
    expect(report.summary.notice).toBe(count('notice'));
    expect(report.summary.total).toBe(report.findings.length);
    expect(report.summary.modules).toBe(report.modules.length);
  });

  it('is byte-identical across runs', async () => {
    const again = await scanPath(DEMO);
    expect(renderReport(again, 'json')).toBe(renderReport(report, 'json'));
  });
});

describe('SARIF', () => {
  it('validates against the official SARIF 2.1.0 schema', () => {
    // The official schema has a pattern that is only valid without the u flag.
    const ajv = new AjvDraft04({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats(ajv);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const validate = ajv.compile(require(sarifSchemaPath));
    const log = JSON.parse(renderReport(report, 'sarif'));
    const ok = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('maps every finding to a result with rule, level and location', () => {
    const log = JSON.parse(renderReport(report, 'sarif'));
    const run = log.runs[0];
    expect(run.results).toHaveLength(report.findings.length);
    const ruleIds = run.tool.driver.rules.map((r: { id: string }) => r.id);
    for (const rule of RULES) expect(ruleIds).toContain(rule.id);
    report.findings.forEach((f, i) => {
      const r = run.results[i];
      expect(r.ruleId).toBe(f.ruleId);
      expect(run.tool.driver.rules[r.ruleIndex].id).toBe(f.ruleId);
      expect(r.level).toBe({ error: 'error', warning: 'warning', notice: 'note' }[f.severity]);
      if (f.file !== null) {
        expect(r.locations[0].physicalLocation.artifactLocation.uri).toBe(encodeURI(f.file));
        if (f.line !== null) expect(r.locations[0].physicalLocation.region.startLine).toBe(f.line);
      }
    });
  });
});

describe('source ranges in reports', () => {
  it('locate the exact text of each finding, and become SARIF regions with columns', async () => {
    const archive = await readInput(DEMO);
    const log = JSON.parse(renderReport(report, 'sarif'));
    expect(log.runs[0].columnKind).toBe('unicodeCodePoints');
    const located = report.findings.filter((f) => f.range !== undefined);
    // Constraint, block and lock-file findings are located.
    expect(located.map((f) => f.ruleId)).toEqual(
      expect.arrayContaining([
        'root-module-unbounded',
        'shared-module-upper-bound',
        'module-version-missing',
        'lock-constraints-drift',
      ]),
    );
    for (const f of located) {
      const range = f.range as NonNullable<Finding['range']>;
      expect(range.file).toBe(f.file);
      expect(range.start.line).toBe(f.line);
      const content = archive.files.get(range.file) as Buffer;
      const text = content.subarray(range.start.byte, range.end.byte).toString('utf8');
      // Line and column agree with the byte offset.
      const before = content.subarray(0, range.start.byte).toString('utf8').split('\n');
      expect([before.length, [...(before.at(-1) as string)].length + 1]).toEqual([
        range.start.line,
        range.start.column,
      ]);
      if (/unbounded|upper-bound|incompatible/.test(f.ruleId)) expect(text).toMatch(/^"[^"]*"$/);
      if (f.ruleId === 'module-version-missing') expect(text).toMatch(/^module "[^"]+" \{[\s\S]*\}$/);
      if (f.ruleId === 'lock-constraints-drift') expect(text).toMatch(/^constraints\s*=\s*"[^"]*"$/);
      const region = log.runs[0].results[report.findings.indexOf(f)].locations[0].physicalLocation.region;
      expect(region).toEqual({
        startLine: range.start.line,
        startColumn: range.start.column,
        endLine: range.end.line,
        endColumn: range.end.column,
        byteOffset: range.start.byte,
        byteLength: range.end.byte - range.start.byte,
      });
    }
  });
});

describe('SARIF fixes', () => {
  it('carry each edit as a replacement whose region, applied to the file, gives the fixed text', async () => {
    const archive = await readInput(DEMO);
    const log = JSON.parse(renderReport(report, 'sarif'));
    const withEdits = report.findings.filter((f) => (f.fix?.edits?.length ?? 0) > 0);
    expect(withEdits.map((f) => f.ruleId).sort()).toEqual([
      'missing-configuration-alias',
      'root-module-unbounded',
      'shared-module-upper-bound',
    ]);
    for (const f of report.findings) {
      const result = log.runs[0].results[report.findings.indexOf(f)];
      if (!withEdits.includes(f)) {
        expect(result.fixes).toBeUndefined();
        continue;
      }
      const [fix] = result.fixes;
      const edits = f.fix?.edits ?? [];
      expect(
        fix.artifactChanges.map((c: { artifactLocation: { uri: string } }) => c.artifactLocation.uri),
      ).toEqual([...new Set(edits.map((e) => encodeURI(e.range.file)))]);
      for (const change of fix.artifactChanges) {
        const file = decodeURI(change.artifactLocation.uri);
        const content = archive.files.get(file) as Buffer;
        // Applying the SARIF replacements by their byte regions (last first) gives what tfguard fix
        // writes for that file.
        let fixed = content;
        const byOffset = [...change.replacements].sort(
          (a: { deletedRegion: { byteOffset: number } }, b: { deletedRegion: { byteOffset: number } }) =>
            b.deletedRegion.byteOffset - a.deletedRegion.byteOffset,
        );
        for (const r of byOffset) {
          const { byteOffset, byteLength } = r.deletedRegion;
          fixed = Buffer.concat([
            fixed.subarray(0, byteOffset),
            Buffer.from(r.insertedContent.text),
            fixed.subarray(byteOffset + byteLength),
          ]);
        }
        const own = edits.filter((e) => e.range.file === file);
        expect(fixed.toString('utf8')).toBe(applyEdits(content, own).toString('utf8'));
        if (/unbounded|upper-bound/.test(f.ruleId)) {
          // The constraint literal is replaced by the suggested one; nothing else changes.
          const [replacement] = change.replacements;
          const { byteOffset, byteLength } = replacement.deletedRegion;
          expect(content.subarray(byteOffset, byteOffset + byteLength).toString()).toMatch(/^"[^"]+"$/);
          expect(replacement.insertedContent.text).toBe(`"${f.fix?.replacement}"`);
        }
      }
    }
  });
});

describe('SARIF rule help links', () => {
  it('are absolute, versioned, and name a rule page that exists in this version of the repository', () => {
    const log = JSON.parse(renderReport(report, 'sarif'));
    const driver = log.runs[0].tool.driver;
    expect(driver.informationUri).toBe(REPOSITORY_URL);
    expect(driver.rules.length).toBe(RULES.length);
    const prefix = `${REPOSITORY_URL}/blob/v${TOOL_VERSION}/`;
    for (const rule of driver.rules as Array<{ id: string; helpUri: string; help: Record<string, string> }>) {
      expect(rule.helpUri).toBe(`${prefix}docs/rules/${rule.id}.md`);
      expect(existsSync(path.resolve(__dirname, '../..', rule.helpUri.slice(prefix.length)))).toBe(true);
      expect(rule.help.text).toContain(rule.helpUri);
      expect(rule.help.markdown).toContain(`](${rule.helpUri})`);
      // No relative link is left anywhere in the rule's help.
      expect(JSON.stringify(rule)).not.toMatch(/\]\((?!https:\/\/)|See docs\//);
    }
  });

  it('follow the repository named in package.json', () => {
    expect(pkg.homepage).toBe(`${REPOSITORY_URL}#readme`);
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${REPOSITORY_URL}.git` });
    expect(DOCS_URL).toBe(`${REPOSITORY_URL}/blob/v${pkg.version}/docs`);
  });

  it('point under another base URL when one is given, with or without a trailing slash', () => {
    for (const docsUrl of ['https://docs.example.com/tfguard', 'https://docs.example.com/tfguard/']) {
      const log = JSON.parse(renderReport(report, 'sarif', { docsUrl }));
      const uris = log.runs[0].tool.driver.rules.map((r: { helpUri: string }) => r.helpUri);
      expect(uris).toEqual(RULES.map((r) => `https://docs.example.com/tfguard/rules/${r.id}.md`));
    }
  });
});

/** GitLab's Code Quality report format (https://docs.gitlab.com/ci/testing/code_quality/): the fields
 * GitLab requires, their types and the five severities. */
const CODE_QUALITY_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    required: ['description', 'check_name', 'fingerprint', 'severity', 'location'],
    properties: {
      description: { type: 'string', minLength: 1 },
      check_name: { type: 'string', minLength: 1 },
      fingerprint: { type: 'string', minLength: 1 },
      severity: { enum: ['info', 'minor', 'major', 'critical', 'blocker'] },
      location: {
        type: 'object',
        required: ['path', 'lines'],
        properties: {
          path: { type: 'string', minLength: 1, not: { pattern: '^(/|\\./)' } },
          lines: {
            type: 'object',
            required: ['begin'],
            properties: { begin: { type: 'integer', minimum: 1 } },
          },
        },
      },
    },
  },
};

describe('GitLab Code Quality', () => {
  const validate = new Ajv({ allErrors: true, strict: true }).compile(CODE_QUALITY_SCHEMA);

  it("has GitLab's shape: one issue per finding, with check, severity, path and line", () => {
    const issues = JSON.parse(renderReport(report, 'codequality'));
    expect(validate(issues)).toBe(true);
    expect(validate.errors ?? []).toEqual([]);
    expect(issues).toHaveLength(report.findings.length);
    report.findings.forEach((f, i) => {
      expect(issues[i]).toEqual({
        description: f.fix ? `${f.message} Suggested: ${f.fix.replacement}` : f.message,
        check_name: f.ruleId,
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        severity: { error: 'major', warning: 'minor', notice: 'info' }[f.severity],
        location: { path: f.file, lines: { begin: f.line } },
      });
    });
    expect(new Set(issues.map((x: { fingerprint: string }) => x.fingerprint)).size).toBe(issues.length);
  });

  it('the schema is not vacuous', () => {
    type Issue = {
      fingerprint?: string;
      severity: string;
      location: { path?: string; lines: { begin: number } };
    };
    const issues = JSON.parse(renderReport(report, 'codequality')) as Issue[];
    for (const breakIt of [
      (x: Issue) => delete x.fingerprint,
      (x: Issue) => (x.severity = 'error'),
      (x: Issue) => (x.location.lines.begin = 0),
      (x: Issue) => delete x.location.path,
    ]) {
      const broken = structuredClone(issues);
      breakIt(broken[0]!);
      expect(validate(broken)).toBe(false);
    }
  });

  it('is deterministic, and fingerprints survive moved lines but not changed findings', async () => {
    const again = await scanPath(DEMO);
    expect(renderReport(again, 'codequality')).toBe(renderReport(report, 'codequality'));
    const fingerprints = (r: Report) =>
      JSON.parse(renderReport(r, 'codequality')).map((x: { fingerprint: string }) => x.fingerprint);
    const moved: Report = {
      ...report,
      findings: report.findings.map((f) => ({ ...f, line: (f.line ?? 0) + 7 })),
    };
    expect(fingerprints(moved)).toEqual(fingerprints(report));
    const reworded: Report = {
      ...report,
      findings: report.findings.map((f, i) => (i === 0 ? { ...f, message: `${f.message}!` } : f)),
    };
    expect(fingerprints(reworded)[0]).not.toBe(fingerprints(report)[0]);
    expect(fingerprints(reworded).slice(1)).toEqual(fingerprints(report).slice(1));
  });

  it('keeps findings that differ only in their line apart, and places file-less findings at their module', () => {
    const f = report.findings[0]!;
    const twins: Report = {
      ...report,
      findings: [f, { ...f, line: 99 }, { ...f, file: null, line: null }],
    };
    const issues = JSON.parse(renderReport(twins, 'codequality'));
    expect(validate(issues)).toBe(true);
    expect(new Set(issues.map((x: { fingerprint: string }) => x.fingerprint)).size).toBe(3);
    expect(issues[2].location).toEqual({ path: f.module, lines: { begin: 1 } });
  });
});

describe('Markdown and text', () => {
  it('Markdown has one table row per finding and the summary line', () => {
    const md = renderReport(report, 'markdown');
    const rows = md.split('\n').filter((l) => /^\| (🔴|🟠|🔵) /.test(l));
    expect(rows).toHaveLength(report.findings.length);
    expect(md).toContain(`${report.summary.error} error`);
    for (const f of report.findings) expect(md).toContain(`\`${f.ruleId}\``);
  });

  it('text output lists every finding with file:line and has no colour unless asked', () => {
    const text = renderReport(report, 'text');
    expect(text).not.toContain('\u001b[');
    for (const f of report.findings) {
      if (f.file !== null && f.line !== null) expect(text).toContain(`${f.file}:${f.line}`);
    }
    expect(renderReport(report, 'text', { color: true })).toContain('\u001b[31m');
  });
});

describe('verdict', () => {
  it('gates on the fail-on severity', () => {
    expect(report.summary.error).toBeGreaterThan(0);
    expect(verdict(report, 'error')).toBe('fail');
    expect(verdict(report, 'never')).toBe('pass');
    const clean: Report = { ...report, findings: report.findings.filter((f) => f.severity === 'notice') };
    expect(verdict(clean, 'error')).toBe('pass');
    expect(verdict(clean, 'warning')).toBe('pass');
    expect(verdict(clean, 'notice')).toBe(clean.findings.length > 0 ? 'fail' : 'pass');
  });
});
