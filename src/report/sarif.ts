import type { Fix as SarifFix, Location, Log, Region, ReportingDescriptor, Result } from 'sarif';
import type { Finding } from '../rules';
import type { Severity, SourceRange } from '../model';
import type { Report } from './types';
import { DOCS_URL, REPOSITORY_URL } from '../version';
import { jsonForLogs, plainText, sarifUri } from './escape';

export interface RuleDescriptor {
  id: string;
  summary: string;
  defaultSeverity: Severity;
}

const LEVEL: Record<Severity, Result.level> = { error: 'error', warning: 'warning', notice: 'note' };

/** A stable fingerprint so code scanning can track a finding across commits even when lines move. */
function fingerprint(f: Finding): string {
  return [f.ruleId, f.module, f.file ?? '', f.message].join('|');
}

/** The absolute URL of a rule's documentation page under `docsUrl` (see `DOCS_URL`). */
export function ruleHelpUri(ruleId: string, docsUrl: string = DOCS_URL): string {
  return `${docsUrl.replace(/\/+$/, '')}/rules/${encodeURIComponent(ruleId)}.md`;
}

function ruleDescriptor(rule: RuleDescriptor, docsUrl: string): ReportingDescriptor {
  const uri = ruleHelpUri(rule.id, docsUrl);
  return {
    id: rule.id,
    name: rule.id
      .split('-')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join(''),
    shortDescription: { text: rule.summary },
    fullDescription: { text: rule.summary },
    helpUri: uri,
    help: {
      text: `${rule.summary} See ${uri}`,
      markdown: `${rule.summary} See [${rule.id}](${uri}).`,
    },
    defaultConfiguration: { level: LEVEL[rule.defaultSeverity] },
    properties: { tags: ['terraform', 'opentofu', 'providers'] },
  };
}

/** The region of a finding: its full range when the parser located it (columns in code points,
 * as the run's `columnKind` says, and the byte span), else its line. */
function region(line: number | null, range: SourceRange | undefined): Region | undefined {
  if (range !== undefined) {
    return {
      startLine: range.start.line,
      startColumn: range.start.column,
      endLine: range.end.line,
      endColumn: range.end.column,
      byteOffset: range.start.byte,
      byteLength: range.end.byte - range.start.byte,
    };
  }
  return line !== null ? { startLine: line } : undefined;
}

/**
 * A finding's mechanical fix as a SARIF `fix`: one `artifactChange` per edited file, each edit a
 * `replacement` of its region (lines, columns and bytes) by the new text. Only for fixes that carry
 * edits (`tfguard fix` applies exactly these).
 */
function sarifFix(f: Finding): SarifFix | undefined {
  const edits = f.fix?.edits;
  if (f.fix === undefined || edits === undefined || edits.length === 0) return undefined;
  const files = [...new Set(edits.map((e) => e.range.file))];
  return {
    description: { text: plainText(f.fix.description) },
    artifactChanges: files.map((file) => ({
      artifactLocation: { uri: sarifUri(file), uriBaseId: '%SRCROOT%' },
      replacements: edits
        .filter((e) => e.range.file === file)
        .map((e) => ({
          deletedRegion: region(e.range.start.line, e.range) as Region,
          insertedContent: { text: e.text },
        })),
    })),
  };
}

function physicalLocation(file: string, line: number | null, range?: SourceRange): Location {
  const r = region(line, range?.file === file ? range : undefined);
  return {
    physicalLocation: {
      artifactLocation: { uri: sarifUri(file), uriBaseId: '%SRCROOT%' },
      ...(r !== undefined ? { region: r } : {}),
    },
  };
}

/** SARIF 2.1.0 for code-scanning uploads. Paths are relative to the archive root (the repository
 * root when the archive is a repository snapshot), which is what code scanning expects. Rule help
 * links are absolute (`docsUrl`, default `DOCS_URL`), so they work outside this repository. A finding
 * an inline annotation suppressed is a result with `suppressions: [{ kind: 'inSource', ... }]`. */
export function renderSarif(
  report: Report,
  rules: readonly RuleDescriptor[],
  options: { docsUrl?: string } = {},
): string {
  const docsUrl = options.docsUrl ?? DOCS_URL;
  const known = new Map(rules.map((r) => [r.id, r]));
  const used = [...new Set(report.findings.map((f) => f.ruleId))].filter((id) => !known.has(id));
  const descriptors = [
    ...rules.map((r) => ruleDescriptor(r, docsUrl)),
    ...used.map((id) => ruleDescriptor({ id, summary: id, defaultSeverity: 'error' }, docsUrl)),
  ];
  const index = new Map(descriptors.map((d, i) => [d.id, i]));
  const results: Result[] = report.findings.map((f) => {
    const result: Result = {
      ruleId: f.ruleId,
      ruleIndex: index.get(f.ruleId) ?? 0,
      level: LEVEL[f.severity],
      message: { text: plainText(f.fix ? `${f.message} Suggested: ${f.fix.replacement}` : f.message) },
      partialFingerprints: { tfguardFinding: fingerprint(f) },
      properties: { module: f.module, ...(f.fix ? { fix: f.fix } : {}), ...(f.note ? { note: f.note } : {}) },
    };
    if (f.file !== null) result.locations = [physicalLocation(f.file, f.line, f.range)];
    const fix = sarifFix(f);
    if (fix !== undefined) result.fixes = [fix];
    // Only suppressed results carry `suppressions`: some consumers treat the mere presence of the
    // property (even an empty array) as "suppressed".
    if (f.suppressed !== undefined) {
      result.suppressions = [
        {
          kind: 'inSource',
          justification: plainText(f.suppressed.reason),
          location: physicalLocation(f.suppressed.file, f.suppressed.line),
        },
      ];
    }
    return result;
  });
  const log: Log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'tfguard',
            version: report.tool.version,
            semanticVersion: report.tool.version,
            informationUri: REPOSITORY_URL,
            rules: descriptors,
          },
        },
        originalUriBaseIds: {
          '%SRCROOT%': { description: { text: `Root of ${plainText(report.source.name)}` } },
        },
        columnKind: 'unicodeCodePoints',
        results,
        properties: { source: report.source, summary: report.summary },
      },
    ],
  };
  return jsonForLogs(JSON.stringify(log, null, 2)) + '\n';
}
