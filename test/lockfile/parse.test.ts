/**
 * The lock-file decoder over the real HCL parser, with `terraform init` as the oracle: every lock
 * text below is also given to terraform (offline, fake provider mirror) and `parseLockFile` must
 * report errors exactly when terraform rejects the file. Lines of blocks, arguments and each hash are
 * checked too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { HclParser } from '../../src/hcl';
import { hashPackage, parseLockFile } from '../../src/lockfile';
import type { LockFile, LockProviderEntry } from '../../src/lockfile';
import { mapLimit, requiredProvidersTf, runTerraform, withMirror, writeTree } from '../support/terraform';
import type { Mirror } from '../support/terraform';
import { describeWithTerraform } from '../support/external';

let parser: HclParser;
let mirror: Mirror;
let H1: string;

beforeAll(async () => {
  parser = new HclParser();
  mirror = await withMirror([{ source: 'hashicorp/aws', version: '5.9.0' }]);
  H1 = (await hashPackage(mirror.packagePath({ source: 'hashicorp/aws', version: '5.9.0' }))).h1;
});

afterAll(async () => {
  await parser.close();
  await mirror.cleanup();
});

async function parse(text: string): Promise<LockFile> {
  const content = Buffer.from(text, 'utf8');
  return parseLockFile('.terraform.lock.hcl', await parser.parse('.terraform.lock.hcl', content));
}

const ZH = `zh:${'0123456789abcdef'.repeat(4)}`;
const block = (body: string, label = 'registry.terraform.io/hashicorp/aws'): string =>
  `provider "${label}" {\n${body}\n}\n`;
const good = (extra = ''): string =>
  block(`  version     = "5.9.0"\n  constraints = "~> 5.0"\n  hashes = [\n    "${H1}",\n  ]${extra}`);

interface Case {
  name: string;
  text: () => string;
  /** Substrings of the expected error messages with their lines; [] = valid. */
  errors: Array<[string, number]>;
}

const CASES: Case[] = [
  { name: 'what terraform writes', text: () => `# comment\n\n${good()}`, errors: [] },
  {
    name: 'no constraints, several hashes',
    text: () => block(`  version = "5.9.0"\n  hashes = ["${H1}", "${ZH}"]`),
    errors: [],
  },
  { name: 'a module block is ignored', text: () => `${good()}module "x" {\n}\n`, errors: [] },
  {
    name: 'duplicate provider blocks',
    text: () => `${good()}\n${good()}`,
    errors: [
      [
        'duplicate lock entry for provider registry.terraform.io/hashicorp/aws: the file already has one at line 1',
        9,
      ],
    ],
  },
  {
    name: 'version not normalized',
    text: () => block(`  version = "5.9"\n  hashes = ["${H1}"]`),
    errors: [['must be written in normalized form: "5.9.0"', 2]],
  },
  {
    name: 'version with an operator',
    text: () => block(`  version = "~> 5.9.0"\n  hashes = ["${H1}"]`),
    errors: [['invalid version "~> 5.9.0"', 2]],
  },
  {
    name: 'two versions',
    text: () => block(`  version = "5.9.0, 5.9.1"\n  hashes = ["${H1}"]`),
    errors: [['invalid version', 2]],
  },
  {
    name: 'version missing',
    text: () => block(`  hashes = ["${H1}"]`),
    errors: [['has no "version" argument', 1]],
  },
  {
    name: 'version is a number',
    text: () => block(`  version = 5\n  hashes = ["${H1}"]`),
    errors: [['must be a literal string', 2]],
  },
  {
    name: 'constraints not normalized',
    text: () => block(`  version = "5.9.0"\n  constraints = ">= 5.0"\n  hashes = ["${H1}"]`),
    errors: [["not in Terraform's normalized form", 3]],
  },
  {
    name: 'constraints invalid',
    text: () => block(`  version = "5.9.0"\n  constraints = "=> 5.0.0"\n  hashes = ["${H1}"]`),
    errors: [['invalid recorded constraints', 3]],
  },
  {
    name: 'short address',
    text: () => block(`  version = "5.9.0"\n  hashes = ["${H1}"]`, 'hashicorp/aws'),
    errors: [['fully-qualified', 1]],
  },
  {
    name: 'address not lower case',
    text: () => block(`  version = "5.9.0"\n  hashes = ["${H1}"]`, 'registry.terraform.io/HashiCorp/aws'),
    errors: [['must be written as "registry.terraform.io/hashicorp/aws"', 1]],
  },
  {
    name: 'built-in provider',
    text: () => `${good()}${block('  version = "1.0.0"', 'terraform.io/builtin/terraform')}`,
    errors: [['built-in provider', 8]],
  },
  {
    name: 'empty hashes',
    text: () => block('  version = "5.9.0"\n  hashes = []'),
    errors: [['at least one hash', 3]],
  },
  {
    name: 'hashes is a string',
    text: () => block(`  version = "5.9.0"\n  hashes = "${H1}"`),
    errors: [['must be a list of strings', 3]],
  },
  {
    name: 'hash without a scheme',
    text: () => block(`  version = "5.9.0"\n  hashes = [\n    "${H1}",\n    "deadbeef",\n  ]`),
    errors: [['must start with a scheme keyword', 5]],
  },
  {
    name: 'unknown argument',
    text: () => good('\n  platform = "linux_amd64"'),
    errors: [['unsupported argument "platform"', 7]],
  },
  { name: 'nested block', text: () => good('\n  extra {\n  }'), errors: [['unsupported block "extra"', 7]] },
  {
    name: 'top-level argument',
    text: () => `version = 1\n${good()}`,
    errors: [['unsupported argument "version"', 1]],
  },
  {
    name: 'unknown top-level block',
    text: () => `${good()}locals {\n}\n`,
    errors: [['unsupported block type "locals"', 8]],
  },
  {
    name: 'syntax error',
    text: () => `${good()}provider "x" {\n  version = \n}\n`,
    errors: [['cannot be parsed', 9]],
  },
];

describeWithTerraform('parseLockFile vs terraform init', () => {
  let results: Array<{ lock: LockFile; tfOk: boolean; output: string }>;

  beforeAll(async () => {
    const base = await mkdtemp(join(mirror.dir, 'cases-'));
    results = await mapLimit(CASES, 6, async (c, i) => {
      const dir = join(base, String(i));
      await writeTree(dir, {
        'main.tf': requiredProvidersTf({ aws: { source: 'hashicorp/aws', version: '~> 5.0' } }),
        '.terraform.lock.hcl': c.text(),
      });
      const r = await runTerraform(['init', '-backend=false', '-input=false', '-no-color'], dir, mirror.env);
      return { lock: await parse(c.text()), tfOk: r.code === 0, output: r.output };
    });
    await rm(base, { recursive: true, force: true });
  }, 120_000);

  it.each(CASES.map((c, i) => [c.name, i] as const))('%s', (_name, i) => {
    const c = CASES[i] as Case;
    const { lock, tfOk, output } = results[i] as { lock: LockFile; tfOk: boolean; output: string };
    const got = lock.errors.map((e) => [e.message, e.line] as [string, number]);
    expect(got).toHaveLength(c.errors.length);
    c.errors.forEach(([msg, line], k) => {
      expect(got[k]?.[0]).toContain(msg);
      expect(got[k]?.[1]).toBe(line);
    });
    // the oracle: terraform rejects the file exactly when tfguard reports a lock-parse-error
    if (tfOk !== (c.errors.length === 0))
      throw new Error(`terraform ${tfOk ? 'accepted' : 'rejected'} it:\n${output}`);
  });
});

/** An entry without its source ranges (checked on their own above). */
function withoutEntryRanges(e: LockProviderEntry): Record<string, unknown> {
  const { range: _r, versionRange: _v, constraintsRange: _c, hashesRange: _h, ...rest } = e;
  return { ...rest, hashes: e.hashes.map(({ value, line }) => ({ value, line })) };
}

describe('lines and values', () => {
  it('records the line of every block, argument and hash (CRLF, BOM, comments inside the list)', async () => {
    const text =
      '\ufeff# header\r\n' +
      'provider "registry.terraform.io/hashicorp/aws" {\r\n' +
      '  version     = "5.9.0"\r\n' +
      '  constraints = ">= 4.0.0, ~> 5.0"\r\n' +
      '  hashes = [\r\n' +
      `    "${H1}", # "h1:not-this-one"\r\n` +
      '    // "zh:nor-this"\r\n' +
      `    /* "zh:x" */ "${ZH}",\r\n` +
      '  ]\r\n' +
      '}\r\n' +
      '\r\n' +
      'provider "registry.opentofu.org/acme/thing" {\r\n' +
      '  version = "1.0.0-beta.1"\r\n' +
      '}\r\n';
    const lock = await parse(text);
    expect(lock.errors).toEqual([]);
    // Each hash's range covers exactly its string literal in the uploaded bytes (BOM and CRLF
    // included), whatever comments surround it.
    const bytes = Buffer.from(text);
    const hashes = lock.providers[0]?.hashes ?? [];
    expect(hashes.map((h) => bytes.subarray(h.range.start.byte, h.range.end.byte).toString())).toEqual([
      JSON.stringify(H1),
      JSON.stringify(ZH),
    ]);
    expect(hashes.map((h) => [h.range.start.line, h.range.start.column])).toEqual([
      [6, 5],
      [8, 18],
    ]);
    const entry = lock.providers[0];
    expect(bytes.subarray(entry?.versionRange?.start.byte, entry?.versionRange?.end.byte).toString()).toBe(
      'version     = "5.9.0"',
    );
    expect(lock.providers.map(withoutEntryRanges)).toEqual([
      {
        address: 'registry.terraform.io/hashicorp/aws',
        source: 'registry.terraform.io/hashicorp/aws',
        line: 2,
        endLine: 10,
        version: '5.9.0',
        versionLine: 3,
        constraints: '>= 4.0.0, ~> 5.0',
        constraintsLine: 4,
        constraintsInvalid: false,
        hashes: [
          { value: H1, line: 6 },
          { value: ZH, line: 8 },
        ],
        hashesLine: 5,
        duplicate: false,
      },
      {
        address: 'registry.opentofu.org/acme/thing',
        source: 'registry.opentofu.org/acme/thing',
        line: 12,
        endLine: 14,
        version: '1.0.0-beta.1',
        versionLine: 13,
        constraints: null,
        constraintsLine: null,
        constraintsInvalid: false,
        hashes: [],
        hashesLine: null,
        duplicate: false,
      },
    ]);
  });

  it('hashes the parser did not locate one by one carry the range of the hashes argument', async () => {
    // Element ranges are only computed for files named .terraform.lock.hcl.
    const text = good();
    const result = await parser.parse('lock-copy.hcl', Buffer.from(text));
    const lock = parseLockFile('.terraform.lock.hcl', result);
    const hash = lock.providers[0]?.hashes[0];
    expect(hash?.line).toBe(4);
    expect(hash?.range).toEqual(lock.providers[0]?.hashesRange);
  });

  it('an unreadable file is one error and no entries', async () => {
    const lock = await parse('provider "registry.terraform.io/hashicorp/aws" {\n  version = "5.9.0"\n');
    expect(lock.readable).toBe(false);
    expect(lock.providers).toEqual([]);
    expect(lock.errors).toHaveLength(1);
  });
});
