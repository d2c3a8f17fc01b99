import { scanHcl } from '../../src/hcl';
import type { ScanBody } from '../../src/hcl';

interface Shape {
  attrs: [string, number, number][];
  blocks: { type: string; labels: string[]; line: number; endLine: number; body: Shape }[];
}

/** The scanner's body without offsets: attributes as [name, line, endLine]. */
function shape(body: ScanBody): Shape {
  return {
    attrs: body.attributes.map((a) => [a.name, a.line, a.endLine]),
    blocks: body.blocks.map((b) => ({
      type: b.type,
      labels: b.labels,
      line: b.line,
      endLine: b.endLine,
      body: shape(b.body),
    })),
  };
}

const empty: Shape = { attrs: [], blocks: [] };

function scanOk(text: string): Shape {
  const r = scanHcl('t.tf', text);
  expect(r.errors).toEqual([]);
  return shape(r.body);
}

const crlf = (s: string): string => s.replace(/\n/g, '\r\n');

describe('scanHcl: structure', () => {
  it('reads attributes and blocks with their lines', () => {
    const text = [
      'terraform {', // 1
      '  required_version = ">= 1.5"', // 2
      '  required_providers {', // 3
      '    aws = {', // 4
      '      source  = "hashicorp/aws"', // 5
      '      version = ">= 5.0"', // 6
      '    }', // 7
      '  }', // 8
      '}', // 9
      '', // 10
      'resource "aws_instance" "web" {', // 11
      '  ami = "ami-1"', // 12
      '}', // 13
    ].join('\n');
    expect(scanOk(text)).toEqual({
      attrs: [],
      blocks: [
        {
          type: 'terraform',
          labels: [],
          line: 1,
          endLine: 9,
          body: {
            attrs: [['required_version', 2, 2]],
            blocks: [
              {
                type: 'required_providers',
                labels: [],
                line: 3,
                endLine: 8,
                body: { attrs: [['aws', 4, 7]], blocks: [] },
              },
            ],
          },
        },
        {
          type: 'resource',
          labels: ['aws_instance', 'web'],
          line: 11,
          endLine: 13,
          body: { attrs: [['ami', 12, 12]], blocks: [] },
        },
      ],
    });
  });

  it('ignores braces inside all three comment styles', () => {
    const text = [
      '# a { comment', // 1
      '// another } comment', // 2
      '/* block { comment', // 3
      '   } spanning */', // 4
      'a = 1 # trailing {', // 5
      'b { # {', // 6
      '  c = 2 // }', // 7
      '  d = [1, /* ] */ 2]', // 8
      '}', // 9
    ].join('\n');
    expect(scanOk(text)).toEqual({
      attrs: [['a', 5, 5]],
      blocks: [
        {
          type: 'b',
          labels: [],
          line: 6,
          endLine: 9,
          body: {
            attrs: [
              ['c', 7, 7],
              ['d', 8, 8],
            ],
            blocks: [],
          },
        },
      ],
    });
  });

  it('a /* */ comment spanning lines does not end an attribute, a line comment does', () => {
    const text = 'a = 1 /* x\n */ + 2\nb = 3 # c\nc = 4\n';
    expect(scanOk(text)).toEqual({
      attrs: [
        ['a', 1, 2],
        ['b', 3, 3],
        ['c', 4, 4],
      ],
      blocks: [],
    });
  });

  it('handles strings with braces, escapes and nested templates', () => {
    const text = [
      'a = "${"}"}"', // 1
      'b = "x\\"{y\\\\"', // 2
      'c = "${join("}", ["{", "${d}"])}"', // 3
      'e = "$${not} %%{not} {"', // 4
      'f = "%{ if true }}%{ endif }"', // 5
      'g { h = "}" }', // 6
    ].join('\n');
    expect(scanOk(text)).toEqual({
      attrs: [
        ['a', 1, 1],
        ['b', 2, 2],
        ['c', 3, 3],
        ['e', 4, 4],
        ['f', 5, 5],
      ],
      blocks: [{ type: 'g', labels: [], line: 6, endLine: 6, body: { attrs: [['h', 6, 6]], blocks: [] } }],
    });
  });

  it('handles heredocs containing braces, quotes and interpolations', () => {
    const text = [
      'x {', // 1
      '  a = <<EOT', // 2
      '{ [ ( "', // 3
      '  EOT is not the end', // 4
      '${jsonencode({ k = "}" })}', // 5
      'EOT', // 6
      '  b = <<-EOT', // 7
      '    indented }', // 8
      '    EOT', // 9
      '  c = [<<A, <<B]', // 10 (not heredocs: no newline after the marker)
      '}', // 11
      'd = <<EOT', // 12
      '%{ for v in ["}"] }${v}%{ endfor }', // 13
      'EOT', // 14
    ].join('\n');
    const r = scanHcl('t.tf', text + '\n');
    expect(r.errors).toEqual([]);
    expect(shape(r.body)).toEqual({
      attrs: [['d', 12, 14]],
      blocks: [
        {
          type: 'x',
          labels: [],
          line: 1,
          endLine: 11,
          body: {
            attrs: [
              ['a', 2, 6],
              ['b', 7, 9],
              ['c', 10, 10],
            ],
            blocks: [],
          },
        },
      ],
    });
  });

  it('the heredoc marker must be alone on its line (white space allowed) and followed by a newline', () => {
    const text = 'a = <<EOT\nEOTX\nxEOT\n${x}EOT\n \t EOT \t\nb = 1\n';
    expect(scanOk(text)).toEqual({
      attrs: [
        ['a', 1, 5],
        ['b', 6, 6],
      ],
      blocks: [],
    });
    // At the end of the file without a newline the marker does not close the heredoc (as in HCL).
    const r = scanHcl('t.tf', 'a = <<EOT\nx\nEOT');
    expect(r.errors).toEqual([
      { message: 'unterminated heredoc: no closing marker "EOT" was found', line: 1, column: 5 },
    ]);
  });

  it('accepts CRLF line endings with the same lines', () => {
    const text = [
      'a = 1', // 1
      'b "x" {', // 2
      '  c = <<-EOT', // 3
      '    z', // 4
      '    EOT', // 5
      '  d = [', // 6
      '    1,', // 7
      '  ]', // 8
      '}', // 9
      'e = "${"\\r"}"', // 10
    ].join('\n');
    const lf = scanOk(text + '\n');
    expect(scanOk(crlf(text + '\n'))).toEqual(lf);
    expect(lf).toEqual({
      attrs: [
        ['a', 1, 1],
        ['e', 10, 10],
      ],
      blocks: [
        {
          type: 'b',
          labels: ['x'],
          line: 2,
          endLine: 9,
          body: {
            attrs: [
              ['c', 3, 5],
              ['d', 6, 8],
            ],
            blocks: [],
          },
        },
      ],
    });
  });

  it('reads quoted and bare labels, unescaping quoted ones', () => {
    const text = [
      'resource "aws_instance" "web" {}',
      'resource aws_instance bare {}',
      'x "a\\"b" "\\u00e9\\t" {}',
      'y "$${lit}" mixed-dash_1 {}',
      'z "" {}',
    ].join('\n');
    const blocks = scanOk(text).blocks.map((b) => [b.type, b.labels]);
    expect(blocks).toEqual([
      ['resource', ['aws_instance', 'web']],
      ['resource', ['aws_instance', 'bare']],
      ['x', ['a"b', 'é\t']],
      ['y', ['${lit}', 'mixed-dash_1']],
      ['z', ['']],
    ]);
  });

  it('reads one-line blocks', () => {
    expect(scanOk('a {}\nb { c = 1 }\nd "l" { e = { f = 1 } }\ng{}\n')).toEqual({
      attrs: [],
      blocks: [
        { type: 'a', labels: [], line: 1, endLine: 1, body: empty },
        { type: 'b', labels: [], line: 2, endLine: 2, body: { attrs: [['c', 2, 2]], blocks: [] } },
        { type: 'd', labels: ['l'], line: 3, endLine: 3, body: { attrs: [['e', 3, 3]], blocks: [] } },
        { type: 'g', labels: [], line: 4, endLine: 4, body: empty },
      ],
    });
  });

  it('reads nested blocks (dynamic, content, lifecycle) with lines and endLines', () => {
    const text = [
      'resource "aws_security_group" "sg" {', // 1
      '  dynamic "ingress" {', // 2
      '    for_each = var.rules', // 3
      '    content {', // 4
      '      from_port = ingress.value', // 5
      '      dynamic "nested" {', // 6
      '        for_each = []', // 7
      '        content {}', // 8
      '      }', // 9
      '    }', // 10
      '  }', // 11
      '  lifecycle {', // 12
      '    ignore_changes = [', // 13
      '      tags,', // 14
      '    ]', // 15
      '  }', // 16
      '}', // 17
    ].join('\n');
    expect(scanOk(text)).toEqual({
      attrs: [],
      blocks: [
        {
          type: 'resource',
          labels: ['aws_security_group', 'sg'],
          line: 1,
          endLine: 17,
          body: {
            attrs: [],
            blocks: [
              {
                type: 'dynamic',
                labels: ['ingress'],
                line: 2,
                endLine: 11,
                body: {
                  attrs: [['for_each', 3, 3]],
                  blocks: [
                    {
                      type: 'content',
                      labels: [],
                      line: 4,
                      endLine: 10,
                      body: {
                        attrs: [['from_port', 5, 5]],
                        blocks: [
                          {
                            type: 'dynamic',
                            labels: ['nested'],
                            line: 6,
                            endLine: 9,
                            body: {
                              attrs: [['for_each', 7, 7]],
                              blocks: [{ type: 'content', labels: [], line: 8, endLine: 8, body: empty }],
                            },
                          },
                        ],
                      },
                    },
                  ],
                },
              },
              {
                type: 'lifecycle',
                labels: [],
                line: 12,
                endLine: 16,
                body: { attrs: [['ignore_changes', 13, 15]], blocks: [] },
              },
            ],
          },
        },
      ],
    });
  });

  it('multi-line expressions end at the last token, not at trailing comments or blank lines', () => {
    const text = [
      'a = merge(', // 1
      '  {x = 1},', // 2
      '  {y = 2}', // 3
      ') # done', // 4
      '', // 5
      'b = x ? {', // 6
      '} : null', // 7
      'c = [for k, v in var.m : k => v if v != null]', // 8
      'd = "x" == "y"', // 9
      'e = 1 /* multi', // 10
      'line */', // 11
    ].join('\n');
    expect(scanOk(text).attrs).toEqual([
      ['a', 1, 4],
      ['b', 6, 7],
      ['c', 8, 8],
      ['d', 9, 9],
      ['e', 10, 10],
    ]);
  });

  it('gives offsets that cover the item source', () => {
    const text = 'a = [1,\n  2]\nblk "x" {\n  y = 1\n}\n';
    const r = scanHcl('t.tf', text);
    const a = r.body.attributes[0];
    const b = r.body.blocks[0];
    expect(a && text.slice(a.start, a.end)).toBe('a = [1,\n  2]');
    expect(b && text.slice(b.start, b.end)).toBe('blk "x" {\n  y = 1\n}');
  });

  it('accepts Unicode identifiers and a file without a final newline', () => {
    expect(scanOk('név = 1\nblöck "ü" { ß = 2 }')).toEqual({
      attrs: [['név', 1, 1]],
      blocks: [
        { type: 'blöck', labels: ['ü'], line: 2, endLine: 2, body: { attrs: [['ß', 2, 2]], blocks: [] } },
      ],
    });
  });

  it('measures the nesting depth of every kind of bracket', () => {
    expect(scanHcl('t.tf', 'a = 1\n').maxDepth).toBe(0);
    expect(scanHcl('t.tf', 'a = [[{b = (1)}]]\n').maxDepth).toBe(4);
    expect(scanHcl('t.tf', 'x { y { a = "${f("${g}")}" } }\n').maxDepth).toBe(5);
    expect(scanHcl('t.tf', 'a = "%{ if [1] }x%{ endif }"\n').maxDepth).toBe(2);
    expect(scanHcl('t.tf', 'a = <<EOT\n${[1]}\nEOT\n').maxDepth).toBe(2);
  });

  it('reports where the depth limit is first crossed', () => {
    const text = 'a = [\n  [\n    [1]]]\n';
    expect(scanHcl('t.tf', text, { depthLimit: 2 }).depthLimitExceeded).toEqual({ line: 3, column: 5 });
    expect(scanHcl('t.tf', text, { depthLimit: 3 }).depthLimitExceeded).toBeNull();
  });
});

describe('scanHcl: comments', () => {
  const text = [
    '# header', // 1
    '/* block', // 2
    '   comment */', // 3
    'terraform { # trailing', // 4
    '  // own line', // 5
    '  x = "# not a comment" // after a string', // 6
    '  y = <<EOT', // 7
    '# inside a heredoc', // 8
    'EOT', // 9
    '}', // 10
    '  /* b */ # two on one line', // 11
  ].join('\r\n');

  it('are collected only when asked, with lines, offsets, placement and text without markers', () => {
    expect(scanHcl('t.tf', text).comments).toBeUndefined();
    const r = scanHcl('t.tf', text, { comments: true });
    expect(r.errors).toEqual([]);
    const comments = r.comments ?? [];
    expect(comments.map(({ start: _s, end: _e, ...c }) => c)).toEqual([
      { text: ' header', line: 1, endLine: 1, beforeItems: true },
      { text: ' block\r\n   comment ', line: 2, endLine: 3, beforeItems: true },
      { text: ' trailing', line: 4, endLine: 4, beforeItems: false },
      { text: ' own line', line: 5, endLine: 5, beforeItems: false },
      { text: ' after a string', line: 6, endLine: 6, beforeItems: false },
      { text: ' b ', line: 11, endLine: 11, beforeItems: false },
      { text: ' two on one line', line: 11, endLine: 11, beforeItems: false },
    ]);
    // The offsets span the comment with its markers (a line comment up to its line break).
    expect(comments.map((c) => text.slice(c.start, c.end))).toEqual([
      '# header\r',
      '/* block\r\n   comment */',
      '# trailing\r',
      '// own line\r',
      '// after a string\r',
      '/* b */',
      '# two on one line',
    ]);
  });

  it('the structure is the same with and without collecting them', () => {
    const a = scanHcl('t.tf', text);
    const { comments: _c, ...b } = scanHcl('t.tf', text, { comments: true });
    expect(b).toEqual(a);
  });
});

describe('scanHcl: lexical errors', () => {
  const cases: [string, string, { message: RegExp; line: number; column: number }][] = [
    [
      'unterminated string',
      'a = 1\nb = "abc\nc = 2\n',
      { message: /^unterminated string/, line: 2, column: 5 },
    ],
    ['unterminated string at EOF', 'a = "abc', { message: /^unterminated string/, line: 1, column: 5 }],
    [
      'unterminated heredoc',
      'a = <<EOT\nabc\n',
      { message: /^unterminated heredoc.*"EOT"/, line: 1, column: 5 },
    ],
    ['unterminated comment', 'a = 1\n  /* abc\n', { message: /^unterminated comment/, line: 2, column: 3 }],
    [
      'unterminated interpolation',
      'a = "${x',
      { message: /^unterminated template interpolation/, line: 1, column: 6 },
    ],
    [
      'unterminated directive',
      'a = "%{ if x',
      { message: /^unterminated template directive/, line: 1, column: 6 },
    ],
    [
      'unclosed bracket',
      'a = [1,\n2\n',
      { message: /^unbalanced brackets: "\[" is never closed/, line: 1, column: 5 },
    ],
    [
      'unclosed block',
      'x {\n  y {\n}\n',
      { message: /^unbalanced brackets: the block "x"/, line: 1, column: 3 },
    ],
    [
      'mismatched close',
      'a = [1}\n',
      { message: /^unbalanced brackets: "}" does not match "\[" at line 1, column 5/, line: 1, column: 7 },
    ],
    ['stray close', 'a = 1\n}\n', { message: /^unbalanced brackets: unexpected "}"/, line: 2, column: 1 }],
    ['stray paren', 'a = (1))\n', { message: /^unbalanced brackets: unexpected "\)"/, line: 1, column: 8 }],
    [
      'column in code points',
      'a = "é😀${x',
      { message: /^unterminated template interpolation/, line: 1, column: 8 },
    ],
  ];
  it.each(cases)('%s', (_name, text, expected) => {
    const r = scanHcl('t.tf', text);
    expect(r.errors).toHaveLength(1);
    const [err] = r.errors;
    expect(err?.message).toMatch(expected.message);
    expect({ line: err?.line, column: err?.column }).toEqual({
      line: expected.line,
      column: expected.column,
    });
  });

  it('the same errors are found in CRLF files', () => {
    const r = scanHcl('t.tf', 'a = 1\r\nb = "abc\r\n');
    expect(r.errors).toEqual([expect.objectContaining({ line: 2, column: 5 })]);
  });
});

describe('scanHcl: hostile input', () => {
  const N = 100_000;
  const inputs: [string, string][] = [
    ['brackets', 'a = ' + '['.repeat(N) + ']'.repeat(N) + '\n'],
    ['objects', 'a = ' + '{a = '.repeat(N) + '1' + '}'.repeat(N) + '\n'],
    ['parens', 'a = ' + '('.repeat(N) + '1' + ')'.repeat(N) + '\n'],
    ['templates', 'a = ' + '"${'.repeat(N) + 'x' + '}"'.repeat(N) + '\n'],
    ['blocks', 'a {\n'.repeat(N) + '}\n'.repeat(N)],
  ];
  it.each(inputs)('%s nested 100k deep: no stack overflow, depth measured', (_name, text) => {
    const r = scanHcl('t.tf', text, { depthLimit: 128 });
    expect(r.errors).toEqual([]);
    expect(r.maxDepth).toBe(N);
    expect(r.depthLimitExceeded).not.toBeNull();
  });

  it('unclosed 100k-deep nesting is an error, not a crash', () => {
    const r = scanHcl('t.tf', 'a = ' + '[{('.repeat(N));
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]?.message).toMatch(/^unbalanced brackets/);
  });

  it('scans a large file in linear time', () => {
    const unit = 'resource "x" "y" {\n  a = "${b}" # {\n  c = <<EOT\n{\nEOT\n}\n';
    const small = unit.repeat(2_000);
    const big = unit.repeat(40_000); // ~2 MB
    const time = (text: string): number => {
      const t = process.hrtime.bigint();
      scanHcl('t.tf', text);
      return Number(process.hrtime.bigint() - t) / 1e6;
    };
    time(small);
    const tSmall = Math.max(time(small), 1);
    const tBig = time(big);
    expect(scanHcl('t.tf', big).body.blocks).toHaveLength(40_000);
    // 20x the input must not cost anywhere near 400x the time (generous for a busy machine).
    expect(tBig / tSmall).toBeLessThan(120);
  });
});
