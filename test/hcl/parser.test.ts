import fc from 'fast-check';
import { HclParser } from '../../src/hcl';
import type { HclBlock, HclBody, ParseResult } from '../../src/hcl';
import { closeReference, hcl2jsonShape, referenceParse } from '../support/hcl2json';
import { withoutRanges } from '../support/ranges';

const parser = new HclParser();
afterAll(async () => {
  await parser.close();
  await closeReference();
});

async function parseOk(text: string, path = 'main.tf'): Promise<HclBody> {
  const r = await parser.parse(path, Buffer.from(text));
  if (!r.ok) throw new Error(`expected a successful parse, got ${JSON.stringify(r.error)}`);
  expect(r.file.path).toBe(path);
  expect(r.file.syntax).toBe('hcl');
  return r.file.body;
}

async function parseErr(
  text: string | Buffer,
  path = 'main.tf',
): Promise<Extract<ParseResult, { ok: false }>['error']> {
  const r = await parser.parse(path, Buffer.isBuffer(text) ? text : Buffer.from(text));
  if (r.ok) throw new Error(`expected a parse error, got ${JSON.stringify(r.file.body)}`);
  expect(r.error.path).toBe(path);
  return r.error;
}

const headers = (blocks: HclBlock[]): string[] => blocks.map((b) => [b.type, ...b.labels].join(' '));

describe('HclParser: native syntax merge', () => {
  it('keeps multiple blocks with the same labels apart, in source order', async () => {
    const body = await parseOk(
      [
        'resource "aws_instance" "a" {', // 1
        '  ami = "one"', // 2
        '}', // 3
        'resource "aws_instance" "b" { ami = "two" }', // 4
        'resource "aws_instance" "a" {', // 5
        '  ami = "three"', // 6
        '}', // 7
        'locals { x = 1 }', // 8
        'locals {', // 9
        '  y = 2', // 10
        '}', // 11
      ].join('\n'),
    );
    expect(headers(body.blocks)).toEqual([
      'resource aws_instance a',
      'resource aws_instance b',
      'resource aws_instance a',
      'locals',
      'locals',
    ]);
    expect(body.blocks.map((b) => [b.line, b.endLine, b.body.attributes.map((a) => a.value)])).toEqual([
      [1, 3, ['one']],
      [4, 4, ['two']],
      [5, 7, ['three']],
      [8, 8, [1]],
      [9, 11, [2]],
    ]);
  });

  it('reads terraform { required_providers, backend "s3" } with attribute lines', async () => {
    const body = await parseOk(
      [
        'terraform {', // 1
        '  required_version = ">= 1.5"', // 2
        '  required_providers {', // 3
        '    aws = {', // 4
        '      source  = "hashicorp/aws"', // 5
        '      version = "~> 5.0"', // 6
        '      configuration_aliases = [aws.east]', // 7
        '    }', // 8
        '    random = ">= 3.0"', // 9
        '  }', // 10
        '  backend "s3" {', // 11
        '    bucket = "state"', // 12
        '  }', // 13
        '}', // 14
      ].join('\n'),
    );
    const tf = body.blocks[0] as HclBlock;
    expect(tf).toMatchObject({ type: 'terraform', labels: [], line: 1, endLine: 14 });
    expect(withoutRanges(tf.body.attributes)).toEqual([
      { name: 'required_version', value: '>= 1.5', line: 2, endLine: 2 },
    ]);
    const [rp, backend] = tf.body.blocks as [HclBlock, HclBlock];
    expect(rp).toMatchObject({ type: 'required_providers', labels: [], line: 3, endLine: 10 });
    expect(withoutRanges(rp.body.attributes)).toEqual([
      {
        name: 'aws',
        value: { source: 'hashicorp/aws', version: '~> 5.0', configuration_aliases: ['${aws.east}'] },
        line: 4,
        endLine: 8,
      },
      { name: 'random', value: '>= 3.0', line: 9, endLine: 9 },
    ]);
    expect(withoutRanges(backend)).toEqual({
      type: 'backend',
      labels: ['s3'],
      line: 11,
      endLine: 13,
      body: { attributes: [{ name: 'bucket', value: 'state', line: 12, endLine: 12 }], blocks: [] },
    });
  });

  it('reads nested dynamic blocks and meta-arguments', async () => {
    const body = await parseOk(
      [
        'resource "aws_security_group" "sg" {', // 1
        '  provider = aws.east', // 2
        '  dynamic "ingress" {', // 3
        '    for_each = var.rules', // 4
        '    content {', // 5
        '      from_port = ingress.value.port', // 6
        '      dynamic "cidr" {', // 7
        '        for_each = ingress.value.cidrs', // 8
        '        content { block = cidr.value }', // 9
        '      }', // 10
        '    }', // 11
        '  }', // 12
        '  dynamic "ingress" {', // 13
        '    for_each = []', // 14
        '    content {}', // 15
        '  }', // 16
        '  lifecycle { ignore_changes = [tags] }', // 17
        '}', // 18
      ].join('\n'),
    );
    const sg = body.blocks[0] as HclBlock;
    expect(withoutRanges(sg.body.attributes)).toEqual([
      { name: 'provider', value: '${aws.east}', line: 2, endLine: 2 },
    ]);
    expect(headers(sg.body.blocks)).toEqual(['dynamic ingress', 'dynamic ingress', 'lifecycle']);
    const [d1, d2, lc] = sg.body.blocks as [HclBlock, HclBlock, HclBlock];
    expect([d1.line, d1.endLine, d2.line, d2.endLine, lc.line, lc.endLine]).toEqual([3, 12, 13, 16, 17, 17]);
    expect(withoutRanges(d1.body.attributes)).toEqual([
      { name: 'for_each', value: '${var.rules}', line: 4, endLine: 4 },
    ]);
    const content = d1.body.blocks[0] as HclBlock;
    expect(content).toMatchObject({ type: 'content', line: 5, endLine: 11 });
    const inner = content.body.blocks[0] as HclBlock;
    expect(inner).toMatchObject({ type: 'dynamic', labels: ['cidr'], line: 7, endLine: 10 });
    expect(withoutRanges((inner.body.blocks[0] as HclBlock).body.attributes)).toEqual([
      { name: 'block', value: '${cidr.value}', line: 9, endLine: 9 },
    ]);
    expect(d2.body.attributes[0]?.value).toEqual([]);
    expect(withoutRanges(lc.body.attributes)).toEqual([
      { name: 'ignore_changes', value: ['${tags}'], line: 17, endLine: 17 },
    ]);
  });

  it('reads heredocs, templates and literals as hcl2json renders them', async () => {
    const body = await parseOk(
      [
        'a = <<-EOT',
        '    x {',
        '    EOT',
        'b = "${var.x}-${"}"}"',
        'c = 1.5',
        'd = null',
        'e = true',
        '',
      ].join('\n'),
    );
    expect(body.attributes.map((a) => [a.name, a.value, a.line, a.endLine])).toEqual([
      ['a', 'x {\n', 1, 3],
      ['b', '${var.x}-}', 4, 4],
      ['c', 1.5, 5, 5],
      ['d', null, 6, 6],
      ['e', true, 7, 7],
    ]);
  });

  it('accepts CRLF files and gives the same tree as LF', async () => {
    const text = 'a = 1\nb "x" {\n  c = <<EOT\nz\nEOT\n}\n';
    const lf = await parseOk(text);
    const crlf = await parseOk(text.replace(/\n/g, '\r\n'));
    expect(crlf.blocks[0]?.line).toBe(2);
    expect(crlf.blocks[0]?.endLine).toBe(6);
    expect(crlf.blocks[0]?.body.attributes[0]).toMatchObject({ name: 'c', line: 3, endLine: 5 });
    // hcl2json keeps the CR of a heredoc line, as Terraform does.
    expect(crlf.blocks[0]?.body.attributes[0]?.value).toBe('z\r\n');
    expect(withoutRanges({ ...lf, blocks: [] })).toEqual(withoutRanges({ ...crlf, blocks: [] }));
  });

  it('parses lock files and .tfguard.hcl as plain HCL', async () => {
    const lock = [
      '# This file is maintained automatically by "terraform init".',
      'provider "registry.terraform.io/hashicorp/aws" {',
      '  version     = "5.9.0"',
      '  constraints = "~> 5.2, >= 5.8.0"',
      '  hashes = [',
      '    "h1:abc=",',
      '    "zh:0123",',
      '  ]',
      '}',
      '',
    ].join('\n');
    const body = await parseOk(lock, 'envs/prod/.terraform.lock.hcl');
    expect(withoutRanges(body.blocks)).toEqual([
      {
        type: 'provider',
        labels: ['registry.terraform.io/hashicorp/aws'],
        line: 2,
        endLine: 9,
        body: {
          attributes: [
            { name: 'version', value: '5.9.0', line: 3, endLine: 3 },
            { name: 'constraints', value: '~> 5.2, >= 5.8.0', line: 4, endLine: 4 },
            { name: 'hashes', value: ['h1:abc=', 'zh:0123'], line: 5, endLine: 8 },
          ],
          blocks: [],
        },
      },
    ]);
    const cfg = await parseOk(
      'engine = "opentofu"\nrule "root-module-unbounded" {\n  severity = "warning"\n}\n',
      '.tfguard.hcl',
    );
    expect(withoutRanges(cfg.attributes)).toEqual([
      { name: 'engine', value: 'opentofu', line: 1, endLine: 1 },
    ]);
    expect(headers(cfg.blocks)).toEqual(['rule root-module-unbounded']);
  });

  it('parses an empty file and a comment-only file', async () => {
    expect(await parseOk('')).toEqual({ attributes: [], blocks: [] });
    expect(await parseOk('# nothing\n/* here */\n')).toEqual({ attributes: [], blocks: [] });
  });
});

describe('HclParser: errors', () => {
  it('takes the first hcl2json diagnostic apart: line, column, "Summary; detail"', async () => {
    const err = await parseErr('a = 1\nb = \nc = {\n');
    expect(err).toEqual({
      path: 'main.tf',
      line: 2,
      column: 5,
      message:
        'Invalid expression; Expected the start of an expression, but found an invalid expression token.',
    });
  });

  it('reports duplicate attributes, naming the file', async () => {
    const err = await parseErr('x {\n  a = 1\n  a = 2\n}\n', 'mod/main.tf');
    expect(err.line).toBe(3);
    expect(err.column).toBe(3);
    expect(err.message).toBe(
      'Attribute redefined; The argument "a" was already set at mod/main.tf:2,3-4. Each argument may be set only once.',
    );
  });

  it('reports grammar errors the scanner tolerates', async () => {
    expect(await parseErr('a {} b {}\n')).toMatchObject({
      line: 1,
      message: expect.stringMatching(/^Missing newline/),
    });
    expect(await parseErr('a "${x}" {}\n')).toMatchObject({
      line: 1,
      message: expect.stringMatching(/^Invalid string/),
    });
    expect(await parseErr('x = "a\nb"\n')).toMatchObject({
      line: 1,
      message: expect.stringMatching(/multi-line string/),
    });
  });

  it('reports lexical errors with positions (hcl2json has the first word)', async () => {
    expect(await parseErr('a = 1\nb = <<EOT\nnever closed\n')).toMatchObject({
      line: 4,
      message: expect.stringMatching(/^Unterminated template string/),
    });
    expect(await parseErr('a = [1}\n')).toMatchObject({ line: 1, column: 7 });
    expect(await parseErr('a = 1\n/* open\n')).toMatchObject({ line: 2, column: 1 });
  });

  it('rejects a name used both as an argument and as a block (hcl2json would drop the block)', async () => {
    const err = await parseErr('resource "x" "y" {\n  tags = {}\n  tags {\n  }\n}\n');
    expect(err).toMatchObject({
      line: 3,
      message: expect.stringMatching(/"tags" is defined both as an argument/),
    });
  });

  it('rejects blocks of one type with different label counts before hcl2json sees them', async () => {
    for (const text of ['foo "a" "b" {}\nfoo "a" {}\n', 'foo {}\nfoo "a" {}\n', 'foo "a" {}\nfoo {}\n']) {
      const err = await parseErr(text);
      expect(err).toMatchObject({
        line: 2,
        message: expect.stringMatching(/^blocks of type "foo" have different numbers/),
      });
    }
  });

  it('reports invalid UTF-8 and a mid-file BOM through parse', async () => {
    const bad = Buffer.concat([Buffer.from('a = "x'), Buffer.from([0xff]), Buffer.from('"\n')]);
    expect(await parseErr(bad)).toMatchObject({
      line: 1,
      column: 7,
      message: expect.stringMatching(/invalid UTF-8/),
    });
    expect(await parseErr('a = 1\nb = "\uFEFF"\n')).toMatchObject({ line: 2, column: 6 });
    const withBom = await parseOk('\uFEFFa = 1\n');
    expect(withoutRanges(withBom)).toEqual({
      attributes: [{ name: 'a', value: 1, line: 1, endLine: 1 }],
      blocks: [],
    });
    // Bytes count the BOM; columns do not (as hcl.Pos).
    expect(withBom.attributes[0]?.range).toEqual({
      file: 'main.tf',
      start: { line: 1, column: 1, byte: 3 },
      end: { line: 1, column: 6, byte: 8 },
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Generated configurations: the tree must match both the generator and hcl2json's own output.
// ---------------------------------------------------------------------------------------------

interface GenAttr {
  kind: 'attr';
  value: string; // source of the expression, possibly multi-line
}
interface GenBlock {
  kind: 'block';
  labels: string[];
  items: GenItem[];
}
type GenItem = [string, GenAttr | GenBlock];

const exprSources = fc.constantFrom(
  '1',
  '"plain"',
  '"${var.x}"',
  '"${"}"}{"',
  '"a\\"b\\\\ $${lit} %%{lit}"',
  '"%{ if true }{%{ else }}%{ endif }"',
  '[1, 2, # ] comment\n  3]',
  '{\n  a = "}" // }\n  b = [\n    "{",\n  ]\n}',
  '<<EOT\n{ "${jsonencode({ a = "}" })}\n  EOT not yet\nEOT',
  '<<-EOT\n    indented }\n    EOT',
  'merge(\n  { a = 1 },\n  /* ) */ { b = 2 },\n)',
  'x ? { a = 1 } : null',
  '[for k, v in { a = "}" } : "${k}=${v}"]',
);

const labelSources = fc.constantFrom('"l"', '"with space"', '"q\\"uote"', 'bare', '"{"', '"}"');

function genBody(depth: number): fc.Arbitrary<GenItem[]> {
  const attr = fc.tuple(
    fc.constant(''),
    exprSources.map((value): GenAttr => ({ kind: 'attr', value })),
  );
  const block = (labelCount: number): fc.Arbitrary<GenItem> =>
    fc
      .tuple(
        fc.array(labelSources, { minLength: labelCount, maxLength: labelCount }),
        depth > 0 ? genBody(depth - 1) : fc.constant([] as GenItem[]),
      )
      .map(([labels, items]): GenItem => [`b${labelCount}`, { kind: 'block', labels, items }]);
  return fc
    .array(fc.oneof(attr, block(0), block(1), block(2)), { maxLength: 5 })
    .map((items) => items.map(([name, item], i): GenItem => [item.kind === 'attr' ? `a${i}` : name, item]));
}

interface Expected {
  attrs: [string, number, number][];
  blocks: [string, string[], number, number, Expected][];
}

/** Renders items (with comments and blank lines between them) and records the expected lines. */
function render(items: GenItem[], indent: string, out: string[], decorate: boolean[]): Expected {
  const expected: Expected = { attrs: [], blocks: [] };
  items.forEach(([name, item], i) => {
    if (decorate[i % decorate.length]) out.push(`${indent}# { comment`, '');
    const line = out.length + 1;
    if (item.kind === 'attr') {
      const lines = `${indent}${name} = ${item.value}`.split('\n');
      out.push(...lines);
      expected.attrs.push([name, line, line + lines.length - 1]);
    } else {
      out.push(`${indent}${[name, ...item.labels].join(' ')} {`);
      const body = render(item.items, indent + '  ', out, decorate);
      out.push(`${indent}}`);
      const unquote = (l: string): string => (l.startsWith('"') ? l.slice(1, -1).replace(/\\"/g, '"') : l);
      expected.blocks.push([name, item.labels.map(unquote), line, out.length, body]);
    }
  });
  return expected;
}

function actualShape(body: HclBody): Expected {
  return {
    attrs: body.attributes.map((a) => [a.name, a.line, a.endLine]),
    blocks: body.blocks.map((b) => [b.type, b.labels, b.line, b.endLine, actualShape(b.body)]),
  };
}

describe('HclParser: generated configurations', () => {
  it('matches the generator (names, labels, lines) and hcl2json (values)', async () => {
    await fc.assert(
      fc.asyncProperty(
        genBody(2),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (items, decorate, useCrlf) => {
          const lines: string[] = [];
          const expected = render(items, '', lines, decorate);
          const lf = lines.join('\n') + '\n';
          const text = useCrlf ? lf.replace(/\n/g, '\r\n') : lf;
          const r = await parser.parse('gen.tf', Buffer.from(text));
          if (!r.ok) throw new Error(`${JSON.stringify(r.error)}\n${text}`);
          expect(actualShape(r.file.body)).toEqual(expected);
          expect(hcl2jsonShape(r.file.body)).toEqual(await referenceParse(text));
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('projection by argument names', () => {
  test('attributeNames keeps the other arguments by name, value null, without evaluating them', async () => {
    const p = new HclParser();
    try {
      const text =
        'provider "aws" {\n  alias  = "east"\n  region = lookup(var.regions, "east", try(local.x, "y"))\n  assume_role {\n    role_arn = var.arn\n  }\n}\n';
      const spec = {
        blocks: { provider: { attributes: ['alias'], attributeNames: true, otherBlocks: true } },
      };
      const result = await p.extract('x.tf', Buffer.from(text), spec);
      expect(result).toMatchObject({ ok: true });
      const block = (result as Extract<ParseResult, { ok: true }>).file.body.blocks[0] as HclBlock;
      expect(block.body.attributes.map((a) => [a.name, a.value])).toEqual([
        ['alias', 'east'],
        ['region', null],
      ]);
      expect(block.body.blocks.map((b) => b.type)).toEqual(['assume_role']);
      // The function call was never sent to hcl2json to be rendered.
      expect(p.stats.snippets).toBe(0);
      expect(p.stats.fullParses).toBe(0);
    } finally {
      await p.close();
    }
  });
});
