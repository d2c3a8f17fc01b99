/**
 * `LOADER_PROJECTION` holds everything module loading reads: loading the corpus from whole parsed
 * bodies and from the projected ones gives the same modules, trees and diagnostics. (If
 * assemble.ts / collect.ts start reading something the projection drops, this fails.)
 */
import { readFile } from 'node:fs/promises';
import { readArchiveBytes } from '../../../src/archive';
import { HclParser } from '../../../src/hcl';
import { loadModules } from '../../../src/modules';
import { DEFAULT_CONFIG } from '../../../src/scan/config-file';
import { shouldLoad } from '../../../src/scan';
import { makeTarGz } from '../../support/archive';
import { robustnessArchives } from '../../support/corpus';
import { corpusFile, describeWithCorpus } from '../../support/external';
import { render } from '../../support/hcl2json';

const parser = new HclParser({ workers: 1 });

afterAll(async () => {
  await parser.close();
});

async function both(name: string, bytes: Buffer): Promise<[string, string]> {
  const archive = await readArchiveBytes(name, bytes, { shouldLoad });
  const whole = await loadModules({
    archive,
    config: DEFAULT_CONFIG,
    parser,
    readConfigFile: (p, c) => parser.parse(p, c),
  });
  const projected = await loadModules({ archive, config: DEFAULT_CONFIG, parser });
  const essence = (l: typeof whole): string =>
    render({ modules: l.modules, roots: l.roots, diagnostics: l.diagnostics, engine: l.engine });
  return [essence(projected), essence(whole)];
}

describeWithCorpus('projections on the corpus', () => {
  it.each(robustnessArchives())(
    '%s: the same modules from projected and from whole bodies',
    async (archive) => {
      const [projected, whole] = await both(archive, await readFile(corpusFile(archive)));
      expect(projected.length).toBeGreaterThan(100);
      expect(projected).toBe(whole);
    },
    120_000,
  );
});

it('overrides, checks, imports, aliases, backends and JSON files load the same from projections', async () => {
  const bytes = await makeTarGz({
    'main.tf': [
      'terraform {',
      '  required_version = ">= 1.5"',
      '  backend "s3" {}',
      '  required_providers {',
      '    aws = { source = "hashicorp/aws", version = "~> 5.0", configuration_aliases = [aws.east] }',
      '    legacy = "1.0"',
      '  }',
      '}',
      'provider "aws" {',
      '  alias   = "west"',
      '  version = ">= 4.0"',
      '}',
      'module "m" {',
      '  source    = "./m"',
      '  version   = "1.0"',
      '  providers = { aws = aws.west }',
      '  count     = 2',
      '}',
      'check "c" {',
      '  data "http" "h" {',
      '    provider = http.x',
      '    url      = "https://example.com"',
      '  }',
      '}',
      'import {',
      '  to = google_project.p',
      '  id = "p"',
      '}',
      'ephemeral "random_password" "p" {',
      '  length = 8',
      '}',
      '',
    ].join('\n'),
    'main_override.tf': [
      'terraform {',
      '  required_version = ">= 1.6"',
      '  cloud {}',
      '  required_providers {',
      '    aws = { version = ">= 5.1" }',
      '  }',
      '}',
      'module "m" {',
      '  source = "./n"',
      '}',
      'resource "aws_instance" "i" {',
      '  provider = aws.west',
      '}',
      '',
    ].join('\n'),
    'extra.tf.json': JSON.stringify({
      resource: { aws_s3_bucket: { b: { provider: 'aws.west', bucket: 'x' } } },
      module: { j: { source: './m', providers: { aws: 'aws.west' } } },
    }),
    'resources.tf':
      'resource "aws_instance" "i" {\n  ami = "x"\n  lifecycle {\n    ignore_changes = [tags]\n  }\n}\n',
    'm/main.tf': 'resource "aws_vpc" "v" {\n  provider = aws.east\n}\n',
    'n/main.tf': 'data "aws_region" "r" {}\n',
  });
  const [projected, whole] = await both('fixture.tar.gz', bytes);
  expect(projected).toBe(whole);
  expect(projected).toContain('"http"');
  expect(projected).toContain('google');
});
