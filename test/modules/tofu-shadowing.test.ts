/**
 * Issue 21, item 7: `.tofu` shadowing for override files and test files.
 *
 * OpenTofu (opentofu/opentofu internal/configs/parser_config_dir.go at f831fa1aa4, same in v1.12.6)
 * splits a directory into primary, override and test files, then drops from each list every `.tf`-
 * family path whose twin with `.tf` → `.tofu` exists (`filterTfPathsWithTofuAlternatives`, using
 * `strings.ReplaceAll(ext, ".tf", ".tofu")`): `x.tf` ↔ `x.tofu`, `x.tf.json` ↔ `x.tofu.json`,
 * `x.tftest.hcl` ↔ `x.tofutest.hcl`, `x.tftest.json` ↔ `x.tofutest.json`. An override is a file whose
 * name without extension is `override` or ends in `_override`, whatever the extension, so
 * `a_override.tofu` hides `a_override.tf` and is itself applied as an override. Nothing else shadows:
 * `x.tf` beside `x.tofu.json` keeps both. Terraform reads none of the `.tofu` / `.tofutest` files.
 * The Terraform side is checked with terraform 1.11 (`terraform providers` applies overrides).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { selectConfigFiles } from '../../src/modules';
import { describeWithTerraform } from '../support/external';
import { runTerraform, writeTree } from '../support/terraform';
import { scanFiles } from '../support/scan';
import { closeParser, load } from '../support/modules';

afterAll(closeParser);

interface Row {
  files: string[];
  opentofu: { selected: string[]; ignored: string[]; overrides: string[] };
  terraform: { selected: string[]; overrides: string[] };
}

const ROWS: [string, Row][] = [
  [
    'primary twin',
    {
      files: ['main.tf', 'main.tofu'],
      opentofu: { selected: ['main.tofu'], ignored: ['main.tf'], overrides: [] },
      terraform: { selected: ['main.tf'], overrides: [] },
    },
  ],
  [
    '*_override twin',
    {
      files: ['main.tf', 'a_override.tf', 'a_override.tofu'],
      opentofu: {
        selected: ['a_override.tofu', 'main.tf'],
        ignored: ['a_override.tf'],
        overrides: ['a_override.tofu'],
      },
      terraform: { selected: ['a_override.tf', 'main.tf'], overrides: ['a_override.tf'] },
    },
  ],
  [
    'override twin',
    {
      files: ['main.tf', 'override.tf', 'override.tofu'],
      opentofu: {
        selected: ['main.tf', 'override.tofu'],
        ignored: ['override.tf'],
        overrides: ['override.tofu'],
      },
      terraform: { selected: ['main.tf', 'override.tf'], overrides: ['override.tf'] },
    },
  ],
  [
    'JSON override twin',
    {
      files: ['main.tf', 'override.tf.json', 'override.tofu.json'],
      opentofu: {
        selected: ['main.tf', 'override.tofu.json'],
        ignored: ['override.tf.json'],
        overrides: ['override.tofu.json'],
      },
      terraform: { selected: ['main.tf', 'override.tf.json'], overrides: ['override.tf.json'] },
    },
  ],
  [
    'a .tofu override beside a .tf primary of the same stem shadows nothing',
    {
      files: ['main.tf', 'main_override.tofu'],
      opentofu: {
        selected: ['main.tf', 'main_override.tofu'],
        ignored: [],
        overrides: ['main_override.tofu'],
      },
      terraform: { selected: ['main.tf'], overrides: [] },
    },
  ],
  [
    '.tf and .tofu.json are not twins',
    {
      files: ['a_override.tf', 'a_override.tofu.json', 'main.tf'],
      opentofu: {
        selected: ['a_override.tf', 'a_override.tofu.json', 'main.tf'],
        ignored: [],
        overrides: ['a_override.tf', 'a_override.tofu.json'],
      },
      terraform: { selected: ['a_override.tf', 'main.tf'], overrides: ['a_override.tf'] },
    },
  ],
];

test.each(ROWS)('file selection: %s', (_name, row) => {
  const tofu = selectConfigFiles(row.files, 'opentofu');
  expect(tofu).toEqual(row.opentofu);
  const tf = selectConfigFiles(row.files, 'terraform');
  expect({ selected: tf.selected, overrides: tf.overrides }).toEqual(row.terraform);
});

const VERSIONS =
  'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.0" }\n  }\n}\n';
const override = (v: string): string =>
  `terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "${v}" }\n  }\n}\n`;
const OVERRIDES = {
  'main.tf': VERSIONS,
  'versions_override.tf': override('~> 4.0'),
  'versions_override.tofu': override('~> 6.0'),
};

test('the .tofu override replaces its .tf twin under OpenTofu; Terraform applies the .tf one', async () => {
  const tofu = await scanFiles(OVERRIDES);
  expect(tofu.roots.map((r) => [r.engine, r.providers])).toEqual([
    ['opentofu', [{ source: 'registry.opentofu.org/hashicorp/aws', constraints: '~> 6.0' }]],
  ]);
  const tf = await scanFiles(OVERRIDES, { config: 'engine = "terraform"\n' });
  expect(tf.roots.map((r) => [r.engine, r.providers])).toEqual([
    ['terraform', [{ source: 'registry.terraform.io/hashicorp/aws', constraints: '~> 4.0' }]],
  ]);
});

const RUN = (dir: string): string => `run "setup" {\n  module {\n    source = "./tests/${dir}"\n  }\n}\n`;
const TEST_FILES = {
  'main.tf': VERSIONS,
  'tests/a.tftest.hcl': RUN('tf'),
  'tests/a.tofutest.hcl': RUN('tofu'),
  'tests/b.tofutest.hcl': RUN('tofu-only'),
  'tests/tf/main.tf': 'resource "random_id" "x" {\n  byte_length = 4\n}\n',
  'tests/tofu/main.tf': 'resource "random_id" "x" {\n  byte_length = 4\n}\n',
  'tests/tofu-only/main.tf': 'resource "random_id" "x" {\n  byte_length = 4\n}\n',
};

test.each<['opentofu' | 'terraform', string[]]>([
  ['opentofu', ['tests/a.tofutest.hcl tests/tofu', 'tests/b.tofutest.hcl tests/tofu-only']],
  ['terraform', ['tests/a.tftest.hcl tests/tf']],
])('test files read by %s: a .tofutest twin hides its .tftest file', async (engine, runs) => {
  const loaded = await load(TEST_FILES, { engine, engineExplicit: true });
  expect(loaded.signals.testRuns.map((r) => `${r.file} ${r.target}`).sort()).toEqual(runs);
});

describeWithTerraform('terraform 1.11 ignores .tofu overrides', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tfguard-tofu-override-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  test('terraform providers shows the .tf override', async () => {
    await writeTree(dir, OVERRIDES);
    const r = await runTerraform(['providers', '-no-color'], dir);
    expect(r.code).toBe(0);
    expect(r.output).toContain('provider[registry.terraform.io/hashicorp/aws] ~> 4.0');
  });
});
