/**
 * Table-driven tests of the `policy-*` rules over the real pipeline: each row's files (a real
 * repository from the corpus, changed where the row needs it) are packed into a tar.gz and scanned
 * with a policy read by the real HCL parser (`readPolicy`), for a repository and on a day the row
 * gives (never the wall clock). A row lists the exact findings of ONE rule, suppressed ones too.
 */
import { scanBytes, readPolicy, policyInput } from '../../src/scan';
import type { Report } from '../../src/report/types';
import type { ScanOptions } from '../../src/scan/types';
import type { Severity } from '../../src/model';
import { ruleById } from '../../src/rules';
import { makeTarGz, type FileMap } from './archive';
import { readCorpusArchive, tarGzFiles } from './corpus';
import { describeWithCorpus } from './external';

/** hashicorp/learn-terraform-provision-eks-cluster: one root, a real lock file of 5 providers
 * (aws 5.47.0, cloudinit 2.3.4, null 3.2.2, random 3.6.1, tls 4.0.5), registry modules vpc and eks. */
export const EKS = 'hashicorp_learn-terraform-provision-eks-cluster.tar.gz';
/** cds-snc/scan-files: Terragrunt units with 12 real lock files. */
export const SCAN_FILES = 'cds-snc_scan-files.tar.gz';

const cache = new Map<string, Promise<Record<string, Buffer>>>();

/** A corpus repository's files, by path. */
export function corpusRepo(name: string): Promise<Record<string, Buffer>> {
  let files = cache.get(name);
  if (files === undefined) {
    files = readCorpusArchive(name).then(tarGzFiles);
    cache.set(name, files);
  }
  return files;
}

/** A corpus repository with some files replaced (`edit` gets the current text). */
export async function editedRepo(
  name: string,
  edits: Record<string, string | ((text: string) => string)> = {},
): Promise<FileMap> {
  const files: FileMap = { ...(await corpusRepo(name)) };
  for (const [path, edit] of Object.entries(edits)) {
    const current = files[path];
    files[path] = typeof edit === 'string' ? edit : edit(current === undefined ? '' : current.toString());
  }
  return files;
}

/** The line (1-based) of the first line of `text` containing `needle`, after line `after`. */
export function lineIn(text: string | Buffer, needle: string, after = 0): number {
  const lines = text.toString().split('\n');
  const i = lines.findIndex((l, n) => n >= after && l.includes(needle));
  if (i === -1) throw new Error(`"${needle}" not found`);
  return i + 1;
}

export interface PolicyExpected {
  module: string;
  file: string | null;
  line: number | null;
  /** A substring the message must contain. */
  message: string;
  /** The fix's replacement; omitted: no fix. */
  fix?: string;
  /** Defaults to the rule's default severity. */
  severity?: Severity;
  /** A substring of the suppression's reason; omitted: not suppressed. */
  suppressed?: string;
}

export interface PolicyRow {
  name: string;
  files: () => Promise<FileMap>;
  /** The policy file's text (read as `policy.hcl`). */
  policy: string;
  /** Default `acme/eks`. */
  repository?: string | null;
  /** Today, `YYYY-MM-DD` (default 2026-06-01). */
  today?: string;
  options?: () => Omit<ScanOptions, 'policy'>;
  /** The findings, or a function of the scanned files that gives them (lines found in the files). */
  expected: PolicyExpected[] | ((files: FileMap) => PolicyExpected[]);
}

/** The text of a file of a row. */
export function text(files: FileMap, path: string): string {
  const f = files[path];
  if (f === undefined) throw new Error(`no file ${path}`);
  return f.toString();
}

/** Scans `files` with `policy` (text) as `policy.hcl`. */
export async function scanWithPolicy(
  files: FileMap,
  policy: string,
  repository: string | null = 'acme/eks',
  today = '2026-06-01',
  options: Omit<ScanOptions, 'policy'> = {},
): Promise<Report> {
  const parsed = await readPolicy('policy.hcl', Buffer.from(policy));
  return scanBytes('repo.tar.gz', await makeTarGz(files), {
    ...options,
    policy: policyInput(parsed, repository, new Date(`${today}T12:00:00Z`)),
  });
}

export function policyRuleTable(ruleId: string, rows: PolicyRow[]): void {
  const rule = ruleById(ruleId);
  if (rule === undefined) throw new Error(`no rule "${ruleId}" in RULES`);
  describeWithCorpus(`rule ${ruleId}`, () => {
    it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
      const files = await row.files();
      const expected = typeof row.expected === 'function' ? row.expected(files) : row.expected;
      const report = await scanWithPolicy(
        files,
        row.policy,
        row.repository === undefined ? 'acme/eks' : row.repository,
        row.today,
        row.options?.() ?? {},
      );
      const actual = report.findings
        .filter((f) => f.ruleId === ruleId)
        .map((f) => ({
          module: f.module,
          file: f.file,
          line: f.line,
          message: f.message,
          fix: f.fix?.replacement ?? null,
          severity: f.severity,
          suppressed: f.suppressed?.reason ?? null,
        }));
      expect(actual).toEqual(
        expected.map((e) => ({
          module: e.module,
          file: e.file,
          line: e.line,
          message: expect.stringContaining(e.message),
          fix: e.fix ?? null,
          severity: e.severity ?? rule.defaultSeverity,
          suppressed: e.suppressed === undefined ? null : expect.stringContaining(e.suppressed),
        })),
      );
    });
  });
}
