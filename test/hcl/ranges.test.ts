/**
 * Source ranges against Terraform's own: `terraform validate -json` reports each invalid version
 * constraint with the hcl.Range of the expression (line, column in characters, byte offset), in
 * native and JSON syntax. Generated files vary what ranges are sensitive to: a UTF-8 BOM, CRLF,
 * tabs, multi-byte characters and comments before the value, inline comments, item order and
 * separators. Both parser paths (the verifier's fast path and the hcl2json full path) must give
 * Terraform's ranges.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HclParser } from '../../src/hcl';
import type { HclBody } from '../../src/hcl';
import type { SourceRange } from '../../src/model';
import { runTerraform } from '../support/terraform';
import { describeWithTerraform } from '../support/external';
import { rng } from '../support/random';

/** Invalid for provider requirements (apparentlymart/go-versions) and for `required_version`
 * (hashicorp/go-version) alike. */
const BAD = ['~> nope', 'bad!', 'x', '>== 1'];
/** Comment texts: one character per code point (Terraform counts grapheme clusters; they agree). */
const NOTES = ['é', '中文', '😀 emoji', 'plain'];

interface Case {
  files: Record<string, Buffer>;
}

function nativeFile(r: () => number, names: string[]): Buffer {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const sp = (): string => pick([' ', '  ', '\t', ' \t ']);
  const nl = r() < 0.3 ? '\r\n' : '\n';
  const lines: string[] = [];
  lines.push(`# ${pick(NOTES)}`);
  lines.push(`terraform {`);
  if (r() < 0.6) lines.push(`  required_version${sp()}=${sp()}"${pick(BAD)}" # ${pick(NOTES)}`);
  lines.push(`  required_providers {`);
  for (const name of names) {
    const source = `${sp()}source${sp()}=${sp()}"hashicorp/${name}"`;
    const version = `${sp()}version${sp()}=${r() < 0.3 ? ' /* ' + pick(NOTES) + ' */ ' : sp()}"${pick(BAD)}"`;
    const items = r() < 0.5 ? [source, version] : [version, source];
    if (r() < 0.4) {
      lines.push(`    ${name}${sp()}=${sp()}{${items.join(',')}${r() < 0.5 ? ',' : ''}${sp()}}`);
    } else {
      lines.push(`    ${name} = {`);
      for (const it of items) lines.push(`      ${it.trim()}${r() < 0.3 ? ` // ${pick(NOTES)}` : ''}`);
      lines.push(`    }`);
    }
  }
  lines.push(`  }`, `}`, '');
  const text = lines.join(nl);
  const bom = r() < 0.3 ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0);
  return Buffer.concat([bom, Buffer.from(text, 'utf8')]);
}

function jsonFile(r: () => number, names: string[]): Buffer {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  // No tabs: HCL's JSON scanner counts a tab as two columns (tfguard counts one character).
  const ws = (): string => pick(['', ' ', '\n  ', '\r\n']);
  const providers = names
    .map((n) => {
      const props = [`"source":${ws()}"hashicorp/${n}"`, `"version":${ws()}"${pick(BAD)}"`];
      if (r() < 0.5) props.reverse();
      return `"${n}":${ws()}{${ws()}${props.join(`,${ws()}`)}${ws()}}`;
    })
    .join(`,${ws()}`);
  const comment = `"//":${ws()}"${pick(NOTES)}",${ws()}`;
  return Buffer.from(
    `{${ws()}"terraform":${ws()}{${ws()}${comment}"required_providers":${ws()}{${providers}}}}`,
    'utf8',
  );
}

function generate(seed: number): Case {
  const r = rng(seed);
  const all = ['aws', 'google', 'random', 'null', 'tls', 'local'];
  const files: Record<string, Buffer> = {};
  files['main.tf'] = nativeFile(r, all.slice(0, 1 + Math.floor(r() * 3)));
  files['more.tf'] = nativeFile(r, all.slice(3, 4 + Math.floor(r() * 2)));
  files['extra.tf.json'] = jsonFile(r, ['azurerm', 'helm'].slice(0, 1 + Math.floor(r() * 2)));
  return { files };
}

type Located = Pick<SourceRange, 'file' | 'start' | 'end'>;

function key(r: Located): string {
  return `${r.file} ${r.start.line}:${r.start.column}@${r.start.byte}-${r.end.line}:${r.end.column}@${r.end.byte}`;
}

/** The ranges tfguard gives every version constraint expression of a body. */
function constraintRanges(body: HclBody): string[] {
  const out: string[] = [];
  for (const tf of body.blocks.filter((b) => b.type === 'terraform')) {
    for (const a of tf.body.attributes) if (a.name === 'required_version') out.push(key(a.valueRange));
    for (const rp of tf.body.blocks.filter((b) => b.type === 'required_providers')) {
      for (const a of rp.body.attributes) {
        for (const it of a.items ?? []) if (it.key === 'version') out.push(key(it.valueRange));
      }
    }
  }
  return out;
}

const fast = new HclParser({ workers: 1 });
const full = new HclParser({ workers: 1, fastPath: false });

afterAll(async () => {
  await fast.close();
  await full.close();
});

describeWithTerraform('source ranges: terraform validate as the oracle', () => {
  it.each(Array.from({ length: 12 }, (_, i) => i + 1))(
    "generated configuration %i: every constraint range equals terraform's, on both paths",
    async (seed) => {
      const c = generate(seed);
      const dir = mkdtempSync(path.join(tmpdir(), 'tfguard-ranges-'));
      try {
        for (const [name, content] of Object.entries(c.files)) writeFileSync(path.join(dir, name), content);
        const res = await runTerraform(['validate', '-json', '-no-color'], dir);
        const report = JSON.parse(res.stdout) as {
          diagnostics: { summary: string; range?: { filename: string } & Omit<Located, 'file'> }[];
        };
        const expected = report.diagnostics
          .filter((d) => d.summary === 'Invalid version constraint' && d.range !== undefined)
          .map((d) => {
            const rg = d.range as { filename: string } & Omit<Located, 'file'>;
            return key({ file: rg.filename, start: rg.start, end: rg.end });
          })
          .sort();
        // Every generated constraint is invalid, so terraform reports every one of them.
        expect(expected.length).toBeGreaterThanOrEqual(3);
        for (const parser of [fast, full]) {
          const got: string[] = [];
          for (const [name, content] of Object.entries(c.files)) {
            const parsed = await parser.parse(name, content);
            if (!parsed.ok) throw new Error(`${name}: ${parsed.error.message}`);
            got.push(...constraintRanges(parsed.file.body));
          }
          expect(got.sort()).toEqual(expected);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('source ranges: the bytes they cover', () => {
  it('attribute, value, item and brace ranges cover exactly their source text, on both paths', async () => {
    const text = [
      '\uFEFF# ünïcode 😀',
      'terraform {\r',
      '  required_providers {',
      '    aws = { source = "hashicorp/aws", version = ">= 5.0" } # trailing',
      '    hello = {',
      '      version = <<EOT',
      '~> 1.0',
      '  EOT',
      '    }',
      '  }',
      '}',
      '',
    ].join('\n');
    const content = Buffer.from(text, 'utf8');
    for (const parser of [fast, full]) {
      const parsed = await parser.parse('x/main.tf', content);
      if (!parsed.ok) throw new Error(parsed.error.message);
      const tf = parsed.file.body.blocks[0];
      const rp = tf?.body.blocks[0];
      const [aws, hello] = rp?.body.attributes ?? [];
      const at = (r: SourceRange | undefined): string =>
        r === undefined ? '?' : content.subarray(r.start.byte, r.end.byte).toString('utf8');
      expect(aws?.range.file).toBe('x/main.tf');
      expect(at(aws?.range)).toBe('aws = { source = "hashicorp/aws", version = ">= 5.0" }');
      expect(at(aws?.valueRange)).toBe('{ source = "hashicorp/aws", version = ">= 5.0" }');
      expect(aws?.items?.map((it) => [it.key, at(it.keyRange), at(it.valueRange)])).toEqual([
        ['source', 'source', '"hashicorp/aws"'],
        ['version', 'version', '">= 5.0"'],
      ]);
      expect(aws?.range.start).toEqual({ line: 4, column: 5, byte: content.indexOf('aws =') });
      expect(hello?.items?.map((it) => [it.key, at(it.valueRange)])).toEqual([
        ['version', '<<EOT\n~> 1.0\n  EOT'],
      ]);
      expect(at(hello?.range).startsWith('hello = {')).toBe(true);
      expect(at(tf?.range).startsWith('terraform {')).toBe(true);
      expect(at(tf?.range).endsWith('}')).toBe(true);
      expect(tf?.range.end.line).toBe(11);
      expect(at(rp?.range).startsWith('required_providers {')).toBe(true);
      // Columns count characters, bytes count UTF-8 bytes and the BOM.
      expect(tf?.range.start).toEqual({
        line: 2,
        column: 1,
        byte: Buffer.byteLength('\uFEFF# ünïcode 😀\n'),
      });
    }
  });

  it('JSON syntax: properties, values and object items', async () => {
    const text =
      '{"terraform": {"required_providers": {\n  "aws": {"source": "hashicorp/aws", "version": "é 1"}}}}';
    const content = Buffer.from(text, 'utf8');
    const parsed = await fast.parse('m.tf.json', content);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const rp = parsed.file.body.blocks[0]?.body.blocks[0];
    const aws = rp?.body.attributes[0];
    const at = (r: SourceRange | undefined): string =>
      r === undefined ? '?' : content.subarray(r.start.byte, r.end.byte).toString('utf8');
    expect(at(aws?.range)).toBe('"aws": {"source": "hashicorp/aws", "version": "é 1"}');
    expect(at(aws?.valueRange)).toBe('{"source": "hashicorp/aws", "version": "é 1"}');
    expect(aws?.items?.map((it) => [it.key, at(it.keyRange), at(it.valueRange)])).toEqual([
      ['source', '"source"', '"hashicorp/aws"'],
      ['version', '"version"', '"é 1"'],
    ]);
    expect(at(rp?.range)).toBe(
      '"required_providers": {\n  "aws": {"source": "hashicorp/aws", "version": "é 1"}}',
    );
    // Column 55: 54 characters precede the end on line 2 (é is one character, two bytes).
    expect(aws?.valueRange.end).toEqual({ line: 2, column: 55, byte: content.length - 3 });
  });
});
