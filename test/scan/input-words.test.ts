import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultShouldLoad, inputKind, readInput } from '../../src/archive';
import { HclParser } from '../../src/hcl';
import { analyzeLocks } from '../../src/lockfile';
import { isModulesManifest, loadModules, resolveRemoteModules } from '../../src/modules';
import { RULES, ruleContext, runRules } from '../../src/rules';
import { scanPath } from '../../src/scan';
import { DEFAULT_CONFIG } from '../../src/scan/config-file';

/**
 * Every message names the input as the user gave it. The same files, scanned as a
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

/**
 * The low-level messages too: Terragrunt's file(), read_terragrunt_config(), include and generate
 * reasons, a Terragrunt stack's notice, an installed remote module's missing copy, a shared
 * module's note, and (through the pipeline's parts, with a file left unloaded) the loader's and
 * the lock analysis's "not loaded" errors and the remote resolver's default offline reason.
 */
describe('low-level messages name the input: directory or archive', () => {
  let work: string;
  const write = (path: string, text: string): void => {
    mkdirSync(join(work, 'repo', path, '..'), { recursive: true });
    writeFileSync(join(work, 'repo', path), text);
  };
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'tfguard-words-'));
    write(
      'live/a/terragrunt.hcl',
      'include "common" {\n  path = "${get_repo_root()}/_envcommon/app.hcl"\n}\nterraform {\n  source = "../../modules//app"\n}\n',
    );
    write('live/b/terragrunt.hcl', 'terraform {\n  source = file("source.txt")\n}\n');
    write(
      'live/c/terragrunt.hcl',
      'locals {\n  account = read_terragrunt_config("account.hcl")\n}\nterraform {\n  source = "../../modules/${local.account.locals.name}"\n}\n',
    );
    write(
      'live/d/terragrunt.hcl',
      'terraform {\n  source = "../../modules//app"\n}\ngenerate "provider" {\n  path     = "provider.tf"\n  contents = file("provider.tf.tpl")\n}\n',
    );
    write('stacks/terragrunt.stack.hcl', 'unit "app" {\n  source = "../modules/app"\n  path   = "app"\n}\n');
    write('modules/app/main.tf', 'resource "aws_s3_bucket" "b" {}\n');
    write(
      'lib/net/versions.tf',
      'terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = "~> 5.0"\n    }\n  }\n}\n',
    );
    write('.tfguard.hcl', 'shared = ["lib/**"]\n');
    write(
      'net/main.tf',
      'module "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.8.1"\n}\n',
    );
    write(
      'net/.terraform/modules/modules.json',
      JSON.stringify({
        Modules: [
          { Key: '', Source: '', Dir: '.' },
          {
            Key: 'vpc',
            Source: 'registry.terraform.io/terraform-aws-modules/vpc/aws',
            Version: '5.8.1',
            Dir: '.terraform/modules/vpc',
          },
        ],
      }),
    );
    // Read by the pipeline test only, which leaves these two unloaded.
    write(
      'solo/main.tf',
      'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws" }\n  }\n}\nmodule "x" {\n  source = "git::https://example.com/x.git"\n}\n',
    );
    write('solo/skipped.tf', 'locals {\n  a = 1\n}\n');
    write(
      'solo/.terraform.lock.hcl',
      'provider "registry.terraform.io/hashicorp/aws" {\n  version = "5.0.0"\n}\n',
    );
    execFileSync('tar', ['-czf', join(work, 'repo.tar.gz'), '-C', join(work, 'repo'), '.']);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const inputs = [
    ['repo', 'directory', 'archive'],
    ['repo.tar.gz', 'archive', 'directory'],
  ] as const;

  test.each(inputs)('a scan of %s says "the %s", never "the %s"', async (input, noun, other) => {
    const report = await scanPath(join(work, input));
    const said = report.findings.flatMap((f) => [f.message, f.note ?? '']).filter((s) => s !== '');
    const expected = [
      `its path "_envcommon/app.hcl" is not a file of the ${noun}`,
      `file("source.txt"), which is not in the ${noun}`,
      `read_terragrunt_config("account.hcl"), which is not a readable file of the ${noun}`,
      `file("provider.tf.tpl") is not in the ${noun}`,
      `their values and their lock files are not in the ${noun} and were not checked`,
      `its installed copy (vpc) is not in the ${noun}`,
      `No root module in the ${noun} uses this module`,
    ];
    expect(said).toEqual(expect.arrayContaining(expected.map((p) => expect.stringContaining(p))));
    expect(said.filter((s) => s.includes(`the ${other}`))).toEqual([]);
  });

  test.each(inputs)(
    'the pipeline over %s with files left unloaded says "the %s"',
    async (input, noun, other) => {
      const unloaded = new Set(['solo/skipped.tf', 'solo/.terraform.lock.hcl']);
      const archive = await readInput(join(work, input), {
        shouldLoad: (p) => !unloaded.has(p) && (defaultShouldLoad(p) || isModulesManifest(p)),
      });
      expect(inputKind(archive)).toBe(noun);
      const parser = new HclParser();
      try {
        const config = { ...DEFAULT_CONFIG };
        const loaded = await resolveRemoteModules(await loadModules({ archive, config, parser }), {
          archive,
          config,
          parser,
          network: null,
        });
        const lock = await analyzeLocks({
          archive,
          modules: loaded.modules,
          roots: loaded.roots,
          config,
          parser,
        });
        const findings = runRules(
          ruleContext(loaded, config, lock, undefined, undefined, inputKind(archive)),
          RULES,
        );
        const said = findings.flatMap((f) => [f.message, f.note ?? '']).filter((s) => s !== '');
        expect(said).toEqual(
          expect.arrayContaining(
            [
              `the file content was not loaded from the ${noun}`,
              `the lock file content was not loaded from the ${noun}`,
              `remote modules are fetched only with --remote-modules, and the ${noun} has no installed copy`,
            ].map((p) => expect.stringContaining(p)),
          ),
        );
        expect(said.filter((s) => s.includes(`the ${other}`))).toEqual([]);
      } finally {
        await parser.close();
      }
    },
  );
});
