import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanPath } from '../../src/scan';

/**
 * Issue 22: every message names the input as the user gave it. The same files, scanned as a
 * directory and as a tarball made by the real tar, must say "directory" and "archive" respectively.
 */
describe('messages name the input: directory or archive', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'tfguard-words-'));
    const repo = join(work, 'repo');
    mkdirSync(join(repo, 'live'), { recursive: true });
    mkdirSync(join(repo, 'tool'), { recursive: true });
    writeFileSync(
      join(repo, 'live', 'main.tf'),
      [
        'terraform {',
        '  required_version = ">= 1.5"',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
        '  }',
        '}',
        'module "net" {',
        '  source = "../modules/net"',
        '}',
        'module "vpc" {',
        '  source  = "terraform-aws-modules/vpc/aws"',
        '  version = "5.8.1"',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(join(repo, 'tool', 'main.tf'), 'provider "aws" {\n  region = "eu-west-1"\n}\n');
    writeFileSync(join(repo, 'main.tf'), 'locals {\n  a = 1\n}\n');
    execFileSync('tar', ['-czf', join(work, 'repo.tar.gz'), '-C', repo, '.']);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** Every sentence of the report a user reads: findings' messages and notes, modules' reasons. */
  async function words(path: string): Promise<string[]> {
    const report = await scanPath(path);
    return [
      ...report.findings.flatMap((f) => [f.message, f.note ?? '']),
      ...report.modules.map((m) => m.kindReason),
    ].filter((s) => s !== '');
  }

  test.each([
    ['repo', 'directory', 'archive'],
    ['repo.tar.gz', 'archive', 'directory'],
  ])('%s says "the %s", never "the %s"', async (input, noun, other) => {
    const said = await words(join(work, input));
    const expected = [
      `points to directory "modules/net", which is not in the ${noun}`,
      `and the ${noun} has no installed copy (.terraform/modules)`,
      noun === 'directory'
        ? 'the scanned directory itself, and nothing in it calls it'
        : "the archive's top directory, and nothing in the archive calls it",
      `configures provider "aws" and nothing in the ${noun} calls it`,
    ];
    expect(said).toEqual(expect.arrayContaining(expected.map((p) => expect.stringContaining(p))));
    expect(said.filter((s) => s.includes(`the ${other}`))).toEqual([]);
  });
});
