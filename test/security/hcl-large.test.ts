/**
 * Threat model, HCL row "a 9 MB single file" (docs/security.md §5), in a file of its own because
 * hcl2json needs several seconds per MB: a file over its parse budget becomes one parse-error
 * finding that says it was not checked (not a syntax error), and the rest of the archive is scanned.
 */
import { closeSharedParser, scanBytes } from '../../src/scan';
import { makeTarGz } from '../helpers/archive';

afterAll(closeSharedParser);

const VERSIONS =
  'terraform {\n  required_version = ">= 1.6"\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = ">= 5.0, < 6.0"\n    }\n  }\n}\n';

function nineMegabytes(): string {
  const pieces = [VERSIONS];
  let size = VERSIONS.length;
  for (let i = 0; size < 9_000_000; i++) {
    const block = `resource "aws_s3_bucket" "b${i}" {\n  bucket = "bucket-${i}"\n  tags = {\n    Name = "b${i}"\n  }\n}\n\n`;
    pieces.push(block);
    size += block.length;
  }
  return pieces.join('');
}

test('a 9 MB single file over its parse budget: "could not be parsed", the rest still scanned', async () => {
  const bytes = await makeTarGz({
    'main.tf': nineMegabytes(),
    'other/main.tf': 'resource "aws_s3_bucket" "b" {}\n',
  });
  const started = Date.now();
  const report = await scanBytes('large.tar.gz', bytes, { parser: { timeoutMs: 1500 } });
  expect(Date.now() - started).toBeLessThan(40_000);
  expect(
    report.findings.map((f) => ({
      ruleId: f.ruleId,
      module: f.module,
      file: f.file,
      line: f.line,
      message: f.message,
    })),
  ).toEqual([
    {
      ruleId: 'parse-error',
      module: '.',
      file: 'main.tf',
      line: 1,
      message: 'main.tf could not be parsed, so it was not checked: parser timed out after 1500 ms',
    },
    { ruleId: 'lock-missing', module: 'other', file: 'other/main.tf', line: 1, message: expect.any(String) },
    {
      ruleId: 'required-version-missing',
      module: 'other',
      file: 'other/main.tf',
      line: 1,
      message: expect.any(String),
    },
    {
      ruleId: 'undeclared-provider',
      module: 'other',
      file: 'other/main.tf',
      line: 1,
      message: expect.any(String),
    },
  ]);
  // The unparsed module is still listed; rules that need its content are skipped, not guessed.
  expect(report.modules.map((m) => [m.path, m.files])).toEqual([
    ['.', ['main.tf']],
    ['other', ['other/main.tf']],
  ]);
});
