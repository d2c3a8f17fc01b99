/**
 * A file whose bytes another file of the archive already had is parsed once per scan and its result
 * moved to the copy's path (src/scan/pipeline.ts `copiesParsedOnce`, src/hcl/moved.ts). The real
 * parser and real tarballs: the report must be the one each file parsed on its own gives.
 */
import { readFile } from 'node:fs/promises';
import { readArchiveBytes } from '../../src/archive';
import { scanBytes, sharedHclParser, shouldLoad } from '../../src/scan';
import type { Report } from '../../src/report/types';
import { buildTarGz, makeTarGz } from '../support/archive';
import { corpusFile, describeWithCorpus } from '../support/external';

const CONFIG = /\.(tf|tofu)(\.json)?$/;

function essence(r: Report): unknown {
  return { findings: r.findings, modules: r.modules, roots: r.roots };
}

/** Parses counted by the shared parser during `fn`. */
async function parsesDuring(fn: () => Promise<unknown>): Promise<number> {
  const stats = sharedHclParser().stats;
  const before = stats.verified + stats.fullParses;
  await fn();
  return stats.verified + stats.fullParses - before;
}

/** A comment line that makes a file as large as the copies worth sharing (1 KiB and more). */
const PAD = `# ${'-'.repeat(1100)}\n`;

const UNPINNED = [
  PAD + 'terraform {',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws" }',
  '  }',
  '}',
  'module "m" {',
  '  source = "terraform-aws-modules/vpc/aws"',
  '}',
  '',
].join('\n');

describe('copies of a file in one archive', () => {
  it('are parsed once, and each finding names its own copy at the same line', async () => {
    const archive = await makeTarGz({
      'a/main.tf': UNPINNED,
      'b/main.tf': UNPINNED,
      'c/x/main.tf': UNPINNED,
    });
    let report: Report | undefined;
    const parses = await parsesDuring(async () => (report = await scanBytes('copies.tar.gz', archive)));
    expect(parses).toBe(1);
    const byFile = new Map<string, string[]>();
    for (const f of report?.findings ?? []) {
      if (f.file === null) continue;
      const key = `${f.ruleId}:${f.line}`;
      byFile.set(f.file, [...(byFile.get(f.file) ?? []), key].sort());
    }
    expect([...byFile.keys()].sort()).toEqual(['a/main.tf', 'b/main.tf', 'c/x/main.tf']);
    expect(byFile.get('b/main.tf')).toEqual(byFile.get('a/main.tf'));
    expect(byFile.get('c/x/main.tf')).toEqual(byFile.get('a/main.tf'));
    expect((byFile.get('a/main.tf') ?? []).length).toBeGreaterThan(0);
  });

  it('under 1 KiB are parsed each (sharing would cost what it saves)', async () => {
    const small = UNPINNED.slice(PAD.length);
    expect(Buffer.byteLength(small)).toBeLessThan(1024);
    const archive = await makeTarGz({ 'a/main.tf': small, 'b/main.tf': small, 'c/x/main.tf': small });
    let report: Report | undefined;
    const parses = await parsesDuring(async () => (report = await scanBytes('small.tar.gz', archive)));
    expect(parses).toBe(3);
    const shared = await scanBytes(
      'copies.tar.gz',
      await makeTarGz({ 'a/main.tf': UNPINNED, 'b/main.tf': UNPINNED }),
    );
    const rules = (r: Report | undefined): string[] => (r?.findings ?? []).map((f) => f.ruleId).sort();
    expect(rules(report).filter((id) => id !== 'parse-error').length).toBeGreaterThan(0);
    expect(new Set(rules(report))).toEqual(new Set(rules(shared)));
  });

  it('a broken file copied: each copy is parsed and has its own parse-error finding', async () => {
    const broken = PAD + 'resource "x" "y" {\n  a = \n';
    const archive = await makeTarGz({ 'a/main.tf': UNPINNED, 'a/bad.tf': broken, 'b/bad.tf': broken });
    const report = await scanBytes('broken.tar.gz', archive);
    const errors = report.findings.filter((f) => f.ruleId === 'parse-error');
    expect(errors.map((f) => [f.file, f.line])).toEqual([
      ['a/bad.tf', 3],
      ['b/bad.tf', 3],
    ]);
    expect(errors[1]?.message).toBe(errors[0]?.message.replace('a/bad.tf', 'b/bad.tf'));
  });

  it('the same bytes as native and as JSON syntax are parsed as each', async () => {
    const text = `{"variable": {"x": {}}}${' '.repeat(1100)}`;
    const archive = await makeTarGz({ 'a/main.tf': UNPINNED, 'a/v.tf.json': text, 'b/v.tf': text });
    const report = await scanBytes('syntax.tar.gz', archive);
    expect(report.findings.filter((f) => f.ruleId === 'parse-error').map((f) => f.file)).toEqual(['b/v.tf']);
  });
});

describeWithCorpus('copies in corpus archives', () => {
  it.each([
    'terraform-aws-modules_terraform-aws-vpc.tar.gz',
    'ministryofjustice_modernisation-platform.tar.gz',
  ])('%s: the same report as when every file differs from the others', async (name) => {
    const bytes = await readFile(corpusFile(name));
    const source = await readArchiveBytes(name, bytes, { shouldLoad });
    const contents = new Set<string>();
    let configFiles = 0;
    // Each configuration file made unique by a trailing comment: nothing is a copy any more.
    const unique = [...source.files].map(([path, data], i) => {
      if (!CONFIG.test(path) || path.endsWith('.json')) return { name: path, data };
      configFiles++;
      contents.add(data.toString('latin1'));
      return { name: path, data: Buffer.concat([data, Buffer.from(`\n# unique ${i}\n`)]) };
    });
    expect(contents.size).toBeLessThan(configFiles); // the corpus archive has copies
    const copied = await buildTarGz([...source.files].map(([path, data]) => ({ name: path, data })));
    let withCopies: Report | undefined;
    let without: Report | undefined;
    const parsesWith = await parsesDuring(async () => (withCopies = await scanBytes(name, copied)));
    const parsesWithout = await parsesDuring(
      async () => (without = await scanBytes(name, await buildTarGz(unique))),
    );
    expect(parsesWith).toBeLessThan(parsesWithout);
    expect(essence(withCopies as Report)).toEqual(essence(without as Report));
  });
});
