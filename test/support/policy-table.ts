/**
 * Table-driven tests of the `policy-*` rules over the real pipeline (rows of the one rule harness,
 * `rule-table.ts`): each row's files (a real
 * repository from the corpus, changed where the row needs it) are packed into a tar.gz and scanned
 * with a policy read by the real HCL parser (`readPolicy`), for a repository and on a day the row
 * gives (never the wall clock). A row lists the exact findings of ONE rule, suppressed ones too.
 */
import { scanBytes, readPolicy, policyInput } from '../../src/scan';
import type { Report } from '../../src/report/types';
import type { ScanOptions } from '../../src/scan/types';
import { makeTarGz, type FileMap } from './archive';
import { readCorpusArchive, tarGzFiles } from './corpus';
import { ruleTable, type ExpectedFinding, type LazyRow } from './rule-table';

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

export type PolicyExpected = Omit<ExpectedFinding, 'rule' | 'message'> & {
  module: string;
  /** A substring the message must contain. */
  message: string;
};

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

/** The scan options of a policy (text, read as `policy.hcl` by the real parser) for `repository` on `today`. */
async function policyOptions(
  policy: string,
  repository: string | null,
  today: string,
): Promise<Pick<ScanOptions, 'policy'>> {
  const parsed = await readPolicy('policy.hcl', Buffer.from(policy));
  return { policy: policyInput(parsed, repository, new Date(`${today}T12:00:00Z`)) };
}

/** Scans `files` with `policy` (text) as `policy.hcl`. */
export async function scanWithPolicy(
  files: FileMap,
  policy: string,
  repository: string | null = 'acme/eks',
  today = '2026-06-01',
  options: Omit<ScanOptions, 'policy'> = {},
): Promise<Report> {
  return scanBytes('repo.tar.gz', await makeTarGz(files), {
    ...options,
    ...(await policyOptions(policy, repository, today)),
  });
}

/** The table of one `policy-*` rule: rows of the one rule harness (`rule-table.ts`) on the scan
 * pipeline, each scanning a corpus repository with its policy. */
export function policyRuleTable(ruleId: string, rows: PolicyRow[]): void {
  ruleTable(
    ruleId,
    rows.map((row): LazyRow => ({
      name: row.name,
      build: async () => {
        const files = await row.files();
        return {
          files,
          scan: {
            ...row.options?.(),
            ...(await policyOptions(
              row.policy,
              row.repository === undefined ? 'acme/eks' : row.repository,
              row.today ?? '2026-06-01',
            )),
          },
          expected: typeof row.expected === 'function' ? row.expected(files) : row.expected,
        };
      },
    })),
    { corpus: true },
  );
}
