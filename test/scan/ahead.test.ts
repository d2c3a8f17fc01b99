/**
 * A directory's configuration files parsed while the rest of it is read (src/scan/ahead.ts): the
 * reader thread reads ahead of the walk and the walk parses what it has recorded while it waits.
 * The real parser and real trees on disk: a directory scan that parsed ahead reports exactly what
 * one that did not reports; `HclParser.extractNow` gives `extract`'s result or nothing (checked on
 * every configuration file of two corpus archives).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { setReadAheadMode, type ReadAheadMode } from '../../src/archive/directory-reads';
import { FULL_SPEC, HclParser } from '../../src/hcl';
import { LOADER_PROJECTION } from '../../src/modules';
import type { Report } from '../../src/report/types';
import { ParseAhead } from '../../src/scan/ahead';
import { scanPath } from '../../src/scan';
import { corpusFiles } from '../support/corpus';
import { MemoryStore } from '../support/memory-store';
import { corpusFile, describeWithCorpus } from '../support/external';

let scratch: string;
const parser = new HclParser();
beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'tfguard-ahead-'));
});
afterAll(async () => {
  setReadAheadMode('shared');
  rmSync(scratch, { recursive: true, force: true });
  await parser.close();
});

/** A comment that makes a file as large as the copies the scan shares (1 KiB and more). */
const PAD = `# ${'-'.repeat(1100)}\n`;

/**
 * 24 modules of 9 files (several read-ahead batches of 64): plain files the fast path settles, a
 * value only hcl2json reads (a conditional), a syntax error, JSON syntax, bytes that are not UTF-8,
 * an OpenTofu file, copies of one file in every module, and a root calling them all.
 */
function writeTree(root: string): void {
  const files: Record<string, string | Buffer> = {};
  const calls: string[] = [];
  for (let i = 0; i < 24; i++) {
    const dir = `modules/m${String(i).padStart(2, '0')}`;
    calls.push(`module "m${i}" {\n  source = "./${dir}"\n}\n`);
    files[`${dir}/versions.tf`] =
      `terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n` +
      `      version = "${i % 3 === 0 ? '~> 5.0' : '>= 5.' + String(i)}"\n    }\n  }\n}\n`;
    files[`${dir}/main.tf`] = `resource "aws_s3_bucket" "b${i}" {\n  bucket = "b-${i}"\n}\n`;
    files[`${dir}/context.tf`] = `${PAD}variable "context" {\n  type = any\n  default = {}\n}\n`;
    files[`${dir}/extra.tf.json`] = JSON.stringify({ variable: { [`v${i}`]: { default: i } } });
    files[`${dir}/outputs.tf`] = `output "id" {\n  value = aws_s3_bucket.b${i}.id\n}\n`;
    files[`${dir}/README.md`] = `# module ${i}\n`;
    files[`${dir}/providers.tf`] =
      i % 4 === 0 ? `provider "aws" {\n  region = "eu-west-${i % 3}"\n}\n` : '\n';
    if (i === 5) files[`${dir}/broken.tf`] = 'resource "x" "y" {\n  a = \n';
    else if (i === 6) files[`${dir}/latin1.tf`] = Buffer.from('# caf\xe9\nlocals {}\n', 'latin1');
    else if (i === 7)
      files[`${dir}/conditional.tf`] =
        'module "c" {\n  source  = "hashicorp/x/aws"\n  version = var.pin ? "1.0.0" : "2.0.0"\n}\nvariable "pin" {\n  default = true\n}\n';
    else if (i === 8)
      files[`${dir}/main.tofu`] = `resource "aws_s3_bucket" "b${i}" {\n  bucket = "tofu-${i}"\n}\n`;
    else files[`${dir}/locals.tf`] = `locals {\n  n = ${i}\n}\n`;
  }
  files['main.tf'] =
    `terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = "~> 5.40"\n    }\n  }\n}\n` +
    calls.join('');
  for (const [rel, content] of Object.entries(files)) {
    const full = path.join(root, rel);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

async function scanIn(
  mode: ReadAheadMode,
  dir: string,
): Promise<{ report: Report; stats: { parsed: number; taken: number } | undefined }> {
  setReadAheadMode(mode);
  try {
    let stats: { parsed: number; taken: number } | undefined;
    const report = await scanPath(dir, { onParseAheadStats: (s) => (stats = s) });
    return { report, stats };
  } finally {
    setReadAheadMode('shared');
  }
}

describe('parsing ahead while a directory is read', () => {
  let root: string;
  beforeAll(() => {
    root = path.join(scratch, 'tree');
    writeTree(root);
  });

  it('parses what the walk recorded while it waited, and the report is the same', async () => {
    const ahead = await scanIn('worker', root);
    const walk = await scanIn('walk', root);
    const shared = await scanIn('shared', root);
    // The walk that reads every batch itself never waits: nothing is parsed ahead.
    expect(walk.stats).toEqual({ parsed: 0, taken: 0 });
    // The walk that waits for the worker parses every batch's files before it takes the next one:
    // 24 × 7 configuration files and the root, each content once (23 of the 24 padded copies are
    // left out), all but the last batch's.
    const parsed = ahead.stats?.parsed ?? 0;
    expect(parsed).toBeGreaterThan(64);
    expect(parsed).toBeLessThan(24 * 7 + 1 - 23);
    // Taken by module loading: every file parsed ahead but the two only `extract` can answer (the
    // syntax error, the conditional) and m08's main.tf, which its main.tofu shadows (not loaded).
    expect(ahead.stats?.taken).toBeGreaterThanOrEqual(parsed - 3);
    expect(ahead.report).toEqual(walk.report);
    expect(shared.report).toEqual(walk.report);
    // The findings these files must give are there (the broken file, the non-UTF-8 one).
    const rules = new Set(ahead.report.findings.map((f) => f.ruleId));
    expect(rules.has('parse-error')).toBe(true);
  });

  it('with the extraction cache, parses ahead only what the cache lacks', async () => {
    const store = new MemoryStore();
    const cached = async (): Promise<{
      report: Report;
      stats: { parsed: number; taken: number } | undefined;
    }> => {
      setReadAheadMode('worker');
      try {
        let stats: { parsed: number; taken: number } | undefined;
        const report = await scanPath(root, {
          cache: store,
          cacheLineage: `directory:${root}`,
          onParseAheadStats: (s) => (stats = s),
        });
        return { report, stats };
      } finally {
        setReadAheadMode('shared');
      }
    };
    const reference = await scanIn('walk', root);
    const first = await cached();
    expect(first.stats?.parsed).toBeGreaterThan(64); // an empty cache: as without one
    const rescan = await cached();
    // Everything module loading read is in the cache; only m08's main.tf, which its main.tofu
    // shadows, is never loaded, so never cached, and still parsed ahead.
    expect(rescan.stats).toEqual({ parsed: 1, taken: 0 });
    expect(first.report).toEqual(reference.report);
    expect(rescan.report).toEqual(reference.report);
    // Without a lineage nothing says what the cache holds: nothing is parsed ahead (no stats).
    setReadAheadMode('worker');
    try {
      let stats: { parsed: number; taken: number } | undefined;
      await scanPath(root, { cache: new MemoryStore(), onParseAheadStats: (s) => (stats = s) });
      expect(stats).toBeUndefined();
    } finally {
      setReadAheadMode('shared');
    }
  });

  it('parses nothing more once the deadline has passed, and the scan answers for the rest', async () => {
    const hcl = new HclParser();
    try {
      const controller = new AbortController();
      const ahead = new ParseAhead(hcl, controller.signal);
      const a = Buffer.from('locals {\n  a = 1\n}\n');
      const b = Buffer.from('locals {\n  b = 2\n}\n');
      ahead.loaded('a.tf', a, 'sha-a');
      ahead.loaded('b.tf', b, 'sha-b');
      ahead.loaded('copy.tf', Buffer.from(a), 'sha-a'); // a copy: parsed once, by its first path
      ahead.loaded('README.md', Buffer.from('# x\n'), 'sha-r'); // not configuration
      expect(ahead.idle()).toBe(true);
      controller.abort(new Error('time is up'));
      expect(ahead.idle()).toBe(false);
      expect(ahead.stats).toEqual({ parsed: 1, taken: 0 });
      // The scan's parser: the kept result for the same path and bytes, `extract` for anything
      // else (other bytes, another projection, a file not parsed ahead).
      const calls: string[] = [];
      const wrapped = ahead.parser({
        extract: (p, c, spec, o) => {
          calls.push(`${p}:${spec === LOADER_PROJECTION ? 'loader' : 'other'}`);
          return hcl.extract(p, c, spec, o);
        },
        parse: (p, c, o) => hcl.parse(p, c, o),
      });
      const kept = await wrapped.extract('a.tf', a, LOADER_PROJECTION);
      expect(kept).toEqual(await hcl.extract('a.tf', a, LOADER_PROJECTION));
      expect(ahead.stats.taken).toBe(1);
      await wrapped.extract('a.tf', a, LOADER_PROJECTION); // handed out once
      await wrapped.extract('b.tf', b, LOADER_PROJECTION);
      await wrapped.extract('a.tf', a, FULL_SPEC);
      expect(calls).toEqual(['a.tf:loader', 'b.tf:loader', 'a.tf:other']);
    } finally {
      await hcl.close();
    }
  });
});

describeWithCorpus('parsing ahead a real tree', () => {
  it('cloudposse/terraform-aws-components unpacked: the same report, most files parsed while reading', async () => {
    const root = path.join(scratch, 'cloudposse');
    mkdirSync(root);
    execFileSync('tar', ['-xzf', corpusFile('cloudposse_terraform-aws-components.tar.gz'), '-C', root]);
    const walk = await scanIn('walk', root);
    const ahead = await scanIn('worker', root);
    // As the CLI runs it: the worker and the walk share the reading, timing decides.
    const shared = await scanIn('shared', root);
    expect(walk.stats?.parsed).toBe(0);
    // 1,237 distinct configuration contents in 1,801 files; all but the last batch's parsed ahead.
    expect(ahead.stats?.parsed).toBeGreaterThan(1000);
    // Module loading takes what was parsed ahead (a copy it asks for first under another path
    // would leave one result unused: none do here, a few would be no error).
    expect(ahead.stats?.taken).toBeGreaterThanOrEqual(Math.floor((ahead.stats?.parsed ?? 0) * 0.98));
    expect(ahead.report).toEqual(walk.report);
    expect(shared.report).toEqual(walk.report);
  }, 120_000);
});

describe('HclParser.extractNow', () => {
  const cases: [string, string | Buffer, 'result' | 'null'][] = [
    ['plain.tf', 'terraform {\n  required_version = ">= 1.5"\n}\n', 'result'],
    ['call.tf', 'module "m" {\n  source = "./m"\n  count  = length(var.x)\n}\n', 'result'],
    ['vars.tf.json', '{"variable": {"a": {"default": 1}}}', 'result'],
    ['broken.tf.json', '{"variable": ', 'result'],
    ['latin1.tf', Buffer.from('# caf\xe9\n', 'latin1'), 'result'],
    ['syntax.tf', 'resource "x" "y" {\n  a = \n', 'null'],
    ['conditional.tf', 'module "m" {\n  source  = "x/y/aws"\n  version = var.a ? "1" : "2"\n}\n', 'null'],
  ];
  it.each(cases)('%s: %s', async (name, text, expected) => {
    const content = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
    const now = parser.extractNow(name, content, LOADER_PROJECTION);
    const later = await parser.extract(name, content, LOADER_PROJECTION);
    if (expected === 'null') expect(now).toBeNull();
    else expect(now).toEqual(later);
  });
});

describeWithCorpus('HclParser.extractNow on corpus files', () => {
  it.each(['cloudposse_terraform-aws-components.tar.gz', 'terraform-aws-modules_terraform-aws-eks.tar.gz'])(
    '%s: every configuration file gets extract’s result or null, and null only where extract needs hcl2json',
    async (archive) => {
      const files = await corpusFiles(archive);
      const hcl = new HclParser();
      try {
        let settled = 0;
        for (const [name, content] of files) {
          if (!/\.(tf|tofu)(\.json)?$/.test(name)) continue;
          const now = hcl.extractNow(name, content, LOADER_PROJECTION);
          const before = hcl.stats.fullParses + hcl.stats.snippets;
          const later = await hcl.extract(name, content, LOADER_PROJECTION);
          const neededHcl2json = hcl.stats.fullParses + hcl.stats.snippets > before;
          if (now === null) expect({ name, neededHcl2json }).toEqual({ name, neededHcl2json: true });
          else {
            expect(now).toEqual(later);
            settled++;
          }
        }
        // Most files: the rest need hcl2json.
        expect(settled).toBeGreaterThan(files.size / 2);
      } finally {
        await hcl.close();
      }
    },
  );
});
