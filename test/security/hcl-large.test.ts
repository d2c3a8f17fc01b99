/**
 * Threat model, HCL row "a 9 MB single file" (docs/security.md §6), in a file of its own because a
 * full hcl2json parse of such a file takes tens of seconds: a valid one is parsed and checked, one
 * the parser cannot finish within its budget becomes one parse-error finding that says it was not
 * checked (not a syntax error), and in both cases the rest of the archive is scanned.
 */
import type { Report } from '../../src/report/types';
import { scanBytes } from '../../src/scan';
import { makeTarGz } from '../support/archive';

const VERSIONS = 'terraform {\n  required_version = ">= 1.6"\n}\n';
const OTHER = { 'other/main.tf': 'resource "aws_s3_bucket" "b" {}\n' };

/** ~9 MB of ordinary resources (about 550,000 lines) and how many there are. */
function nineMegabytes(): { text: string; resources: number } {
  const pieces = [VERSIONS];
  let size = VERSIONS.length;
  let resources = 0;
  for (; size < 9_000_000; resources++) {
    const block = `resource "aws_s3_bucket" "b${resources}" {\n  bucket = "bucket-${resources}"\n}\n\n`;
    pieces.push(block);
    size += block.length;
  }
  return { text: pieces.join(''), resources };
}

function brief(
  report: Report,
): { ruleId: string; module: string; file: string | null; line: number | null }[] {
  return report.findings.map((f) => ({ ruleId: f.ruleId, module: f.module, file: f.file, line: f.line }));
}

const OTHER_FINDINGS = [
  { ruleId: 'lock-missing', module: 'other', file: 'other/main.tf', line: 1 },
  { ruleId: 'required-version-missing', module: 'other', file: 'other/main.tf', line: 1 },
  { ruleId: 'undeclared-provider', module: 'other', file: 'other/main.tf', line: 1 },
];

test('a valid 9 MB single file is parsed and checked with the default budget; the rest is scanned', async () => {
  const { text, resources } = nineMegabytes();
  const report = await scanBytes('large.tar.gz', await makeTarGz({ 'main.tf': text, ...OTHER }));
  expect(brief(report)).toEqual([
    { ruleId: 'lock-missing', module: '.', file: 'main.tf', line: 1 },
    { ruleId: 'undeclared-provider', module: '.', file: 'main.tf', line: 4 },
    ...OTHER_FINDINGS,
  ]);
  // Every resource was read: the whole file was checked, not a prefix of it.
  expect(report.findings[1]?.message).toContain(`(${resources} uses, first aws_s3_bucket.b0)`);
}, 60_000);

test('a 9 MB file with a syntax error deep inside, over its parse budget: "could not be parsed", the rest scanned', async () => {
  const text = `${nineMegabytes().text}locals {\n  x = "unterminated\n}\n`;
  const started = Date.now();
  const report = await scanBytes('large.tar.gz', await makeTarGz({ 'main.tf': text, ...OTHER }), {
    parser: { timeoutMs: 1500 },
  });
  expect(Date.now() - started).toBeLessThan(40_000);
  expect(brief(report)).toEqual([
    { ruleId: 'parse-error', module: '.', file: 'main.tf', line: 1 },
    ...OTHER_FINDINGS,
  ]);
  expect(report.findings[0]?.message).toBe(
    'main.tf could not be parsed, so it was not checked: parser timed out after 1500 ms',
  );
}, 60_000);
