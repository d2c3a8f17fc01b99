/**
 * A parse moved to another path (src/hcl/moved.ts) is exactly the parse of the same bytes under that
 * path: checked against the real parser on every configuration and lock file of corpus archives
 * (both projections), and on hand-written files for what the corpus may lack (JSON syntax, object
 * items, a lock file's `hashes` elements, nested and empty blocks).
 */
import { readFile } from 'node:fs/promises';
import { readArchiveBytes } from '../../src/archive';
import { FULL_SPEC, HclParser, movedResult, pathVariant } from '../../src/hcl';
import type { BlockSpec, ParseResult } from '../../src/hcl';
import { LOADER_PROJECTION } from '../../src/modules';
import { shouldLoad } from '../../src/scan';
import { corpusFile, describeWithCorpus } from '../support/external';

const parser = new HclParser({ workers: 1 });

afterAll(async () => {
  await parser.close();
});

/** Parses `content` under `from`, moves the result to `to`, and expects the parse under `to`. */
async function expectMovedAsParsed(
  from: string,
  to: string,
  content: Buffer,
  spec: BlockSpec,
): Promise<ParseResult> {
  const original = await parser.extract(from, content, spec);
  const direct = await parser.extract(to, content, spec);
  const moved = movedResult(original, to);
  if (!original.ok) {
    expect(moved).toBeNull();
    return original;
  }
  expect(moved).toEqual(direct);
  // Not a single range left naming the first path.
  expect(JSON.stringify(moved)).not.toContain(JSON.stringify(from));
  return original;
}

const LOCK = [
  'provider "registry.terraform.io/hashicorp/aws" {',
  '  version     = "5.31.0"',
  '  constraints = "~> 5.0"',
  '  hashes = [',
  '    "h1:aaaa=",',
  '    "zh:bbbb",',
  '  ]',
  '}',
  '',
].join('\n');

const NATIVE = [
  'terraform {',
  '  required_version = ">= 1.5"',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
  '  }',
  '  backend "s3" {}',
  '}',
  'module "a" {',
  '  source = "./a"',
  '  providers = { aws = aws.east }',
  '}',
  'resource "x" "y" {',
  '  dynamic "z" {',
  '    for_each = var.list',
  '    content { name = z.value }',
  '  }',
  '}',
  '',
].join('\n');

const JSON_SYNTAX = JSON.stringify({
  terraform: {
    required_version: '>= 1.5',
    required_providers: { aws: { source: 'hashicorp/aws', version: '~> 5.0' } },
  },
  module: { a: { source: './a', version: '1.0.0' } },
});

describe('movedResult', () => {
  it.each([
    ['native syntax', 'a/main.tf', 'b/c/main.tf', NATIVE],
    ['JSON syntax', 'a/main.tf.json', 'b/main.tf.json', JSON_SYNTAX],
    ['a lock file (hashes elements located)', 'a/.terraform.lock.hcl', 'b/.terraform.lock.hcl', LOCK],
    ['an empty file', 'a/empty.tf', 'b/empty.tf', ''],
  ])('%s: the parse under the other path, in both projections', async (_what, from, to, text) => {
    for (const spec of [FULL_SPEC, LOADER_PROJECTION]) {
      const original = await expectMovedAsParsed(from, to, Buffer.from(text), spec);
      expect(original.ok).toBe(true);
    }
  });

  it('gives null for a parse error (its message may name the file)', async () => {
    const broken = Buffer.from('resource "x" {\n  a = \n');
    const result = await parser.extract('a/broken.tf', broken, LOADER_PROJECTION);
    expect(result.ok).toBe(false);
    expect(movedResult(result, 'b/broken.tf')).toBeNull();
  });

  it('builds new nodes and ranges: the original is left as it was', async () => {
    const original = await parser.extract('a/main.tf', Buffer.from(NATIVE), FULL_SPEC);
    const before = JSON.stringify(original);
    const moved = movedResult(original, 'b/main.tf');
    if (!original.ok || moved === null || !moved.ok) throw new Error('expected parses');
    expect(JSON.stringify(original)).toBe(before);
    const [a0] = original.file.body.blocks;
    const [m0] = moved.file.body.blocks;
    expect(m0).not.toBe(a0);
    expect(m0?.range).not.toBe(a0?.range);
    expect(m0?.range.file).toBe('b/main.tf');
    expect(a0?.range.file).toBe('a/main.tf');
  });
});

describe('pathVariant', () => {
  it.each([
    ['a/main.tf', 'b/other.tf', true],
    ['main.tofu', 'x/y.tf', true],
    ['main.tf', 'main.tf.json', false],
    ['a/main.tf.json', 'b/main.tofu.json', true],
    ['.terraform.lock.hcl', 'a/lock.hcl', false],
    ['a/.terraform.lock.hcl', 'b/.terraform.lock.hcl', true],
  ])('%s and %s: same variant %s', (a, b, same) => {
    expect(pathVariant(a) === pathVariant(b)).toBe(same);
  });
});

describeWithCorpus('movedResult on corpus files', () => {
  it.each(['terraform-aws-modules_terraform-aws-vpc.tar.gz', 'cds-snc_terraform-modules.tar.gz'])(
    '%s: every configuration and lock file, moved, equals its parse under the new path',
    async (name) => {
      const archive = await readArchiveBytes(name, await readFile(corpusFile(name)), { shouldLoad });
      let checked = 0;
      for (const [path, content] of archive.files) {
        if (!/\.(tf|tofu)(\.json)?$|\.terraform\.lock\.hcl$/.test(path)) continue;
        const to = path.endsWith('.terraform.lock.hcl') ? `moved/${path}` : `moved/sub/${path}`;
        await expectMovedAsParsed(path, to, content, LOADER_PROJECTION);
        await expectMovedAsParsed(path, to, content, FULL_SPEC);
        checked++;
      }
      expect(checked).toBeGreaterThan(50);
    },
  );
});
