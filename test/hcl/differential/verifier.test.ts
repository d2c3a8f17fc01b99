/**
 * Hand-picked inputs at the edges of the verifier's subset, each checked against real hcl2json:
 * the fast path (`parse` and `extract`) must give exactly what the full hcl2json parse gives —
 * verdict, message, line, column, values. Cases marked `verified` must also be settled without
 * hcl2json (the verifier proves them); the others may take either path.
 */
import { fastParse, FULL_SPEC, HclParser, verifyHcl } from '../../../src/hcl';
import type { BlockSpec } from '../../../src/hcl';
import { LOADER_PROJECTION } from '../../../src/modules';
import { projected, referenceParser, render } from '../../support/hcl2json';

const fast = new HclParser({ workers: 1 });
const reference = referenceParser();

afterAll(async () => {
  await fast.close();
  await reference.close();
});

interface Case {
  text: string;
  /** The verifier must prove this one (it is valid and inside the subset). */
  verified?: boolean;
}

/** References the evaluator reads as their source text (`${…}`), whatever their layout. */
const REFERENCES = [
  'a = module.m["k"].b.c\n',
  'a = module.users[\n    "matt@example.com"\n  ].pagerduty_user.this\n',
  'a = module.users[\r\n    "matt@example.com"\r\n  ].pagerduty_user.this\r\n',
  'a = m.a[ "k" ].b\n',
  'a = m.a [ "k" ]\n',
  'a = aws_s3.x["a\\\\b\\"c"]\n',
  'a = m.a["k"][0]["z"]\n',
  'a = m.a[\n  0\n][""]\n',
  'a = { k = module.m["x"].y, l = [m.a[ 1 ]] }\n',
];

const CASES: Case[] = [
  // Unary operators on literals: valid syntax, but hcl2json's converter fails on a type mismatch.
  { text: 'a = -true\n' },
  { text: 'a = !5\n' },
  { text: 'a = -null\n' },
  { text: 'a = -1\n', verified: true },
  { text: 'a = !true\n', verified: true },
  { text: 'a = - - 1\n', verified: true },
  { text: 'a = f(-true)\n' },
  // Template escapes: hcl2json keeps `$${` as written.
  { text: 'a = "$${x}"\n', verified: true },
  { text: 'a = "$$${ }"\n', verified: true },
  { text: 'a = "x$$${y}"\n', verified: true },
  { text: 'a = "$x${ }"\n' },
  { text: 'a = "%%{x}"\n', verified: true },
  { text: 'a = "\\\\${ }"\n' },
  // Numbers and legacy indexes.
  { text: 'a = 1.2.3\n' },
  { text: 'a = x.0.1\n' },
  { text: 'a = x.0\n', verified: true },
  // References with string keys and layout inside brackets (an `import` block's `to`): hcl2json
  // writes their source text, as written.
  ...REFERENCES.map((text) => ({ text, verified: true })),
  // Function calls: hcl2json writes their source text as `${…}`, verbatim.
  { text: 'a = f("x")\n', verified: true },
  { text: 'a = find_in_parent_folders()\n', verified: true },
  { text: 'a = f(  "x" )\n', verified: true },
  { text: 'a = f(\n  "x",\n)\n', verified: true },
  { text: 'a = f(\r\n  "x",\r\n)\r\n', verified: true },
  { text: 'a = [f(x), g()]\n', verified: true },
  { text: 'a = { k = f(x), l = [g(1)] }\n', verified: true },
  { text: 'a = f(g(x), [1, (2)], { k = h() })\n', verified: true },
  { text: 'a = f("${g(")")}", "(")\n', verified: true },
  { text: 'a = f(x) # c\n', verified: true },
  { text: 'a = f(/* c */ x)\n', verified: true },
  { text: 'a = f(x...)\n' },
  { text: 'a = f(x) + 1\n', verified: true },
  { text: 'a = f(x).y\n', verified: true },
  { text: 'a = f(x)[0]\n', verified: true },
  { text: 'a = [f(x) ? 1 : 2]\n', verified: true },
  { text: 'a = f (x)\n' },
  { text: 'a = true(1)\n' },
  { text: 'a = upper("x")\n', verified: true },
  { text: 'include "root" {\n  path = find_in_parent_folders("root.hcl")\n}\n', verified: true },
  // Templates: hcl2json writes an interpolation as its source text, except literals, nested
  // templates and conditionals.
  { text: 'a = "x${b}y"\n', verified: true },
  { text: 'a = "x${ b }y"\n', verified: true },
  { text: 'a = "x${f("a")}y"\n', verified: true },
  { text: 'a = "x${a ? 1 : 2}y"\n', verified: true },
  { text: 'a = "x\\"${b}"\n', verified: true },
  { text: 'a = "${b}${c}"\n', verified: true },
  { text: 'a = "x${b + 1}"\n', verified: true },
  { text: 'a = "x${(b)}"\n', verified: true },
  { text: 'a = "x${b /* c */}"\n', verified: true },
  { text: 'a = "x${b}\\n"\n', verified: true },
  { text: 'a = "\\u0041${b}"\n', verified: true },
  {
    text: 'a = "git::https://github.com/cds-snc/scan-files//terragrunt/aws/alarms?ref=${get_env("INFRASTRUCTURE_VERSION")}"\n',
    verified: true,
  },
  { text: 'a = "x${1}"\n', verified: true },
  { text: 'a = "x${"y"}"\n', verified: true },
  { text: 'a = "x${true}"\n', verified: true },
  { text: 'a = "x${b}%{if c}d%{endif}"\n', verified: true },
  { text: 'a = "x${b[0]}"\n', verified: true },
  { text: 'a = "x${-1}"\n', verified: true },
  { text: 'a = "x${!b}"\n', verified: true },
  { text: 'a = "x${"${b}"}"\n', verified: true },
  { text: 'a = "x${b.c}y${d}"\n', verified: true },
  { text: 'a = "x${b}y${c}z"\n', verified: true },
  { text: 'a = ["a${b}", { k = "${c}d" }]\n', verified: true },
  { text: 'a = "x${ f( "(" ) }"\n', verified: true },
  { text: 'a = "x${b}" # c\n', verified: true },
  { text: 'a = "x${[1, 2][0]}"\n', verified: true },
  { text: 'a = "x${{ k = 1 }.k}"\n', verified: true },
  { text: 'a = "x${b\n}"\n', verified: true },
  { text: 'a = "x${a ? "${b}" : c}"\n', verified: true },
  { text: 'a = "x${f(a ? 1 : 2)}"\n', verified: true },
  { text: 'a = "$${b}${c}"\n', verified: true },
  { text: 'a = "x${null}"\n', verified: true },
  { text: 'a = "x${01}"\n', verified: true },
  { text: 'a = "x${b...}"\n' },
  { text: 'a = "${b}"\n', verified: true },
  { text: 'a = "${b.c}"\n', verified: true },
  { text: 'a = "${f(x)}"\n', verified: true },
  { text: 'a = "${b + 1}"\n', verified: true },
  { text: 'a = "${[1]}"\n', verified: true },
  { text: 'a = "${(b)}"\n', verified: true },
  { text: 'a = "${-b}"\n', verified: true },
  { text: 'a = "${provider::p::f(x)}"\n', verified: true },
  { text: 'a = "x${b[*].c}"\n', verified: true },
  { text: 'a = "${b ? 1 : 2}"\n', verified: true },
  { text: 'a = "x${b}" /* c */\n', verified: true },
  { text: 'a = "${b}\\t${c}"\n', verified: true },
  { text: 'a = "\u00e9${b}\u00fc"\n', verified: true },
  // Leading zeros are decimal for hclsyntax and hcl2json (`01` is 1, `010` is 10, not octal).
  { text: 'a = 01\n', verified: true },
  { text: 'a = 010\n', verified: true },
  { text: 'a = 00\n', verified: true },
  { text: 'a = 007.50\n', verified: true },
  { text: 'a = 0001e02\n', verified: true },
  { text: 'a = -01\n', verified: true },
  { text: 'a = [01, 02]\n', verified: true },
  { text: 'a = { x = 010 }\n', verified: true },
  { text: 'a = 010 + 1\n', verified: true },
  { text: 'a = x[010]\n', verified: true },
  { text: 'a = x.01\n' },
  { text: 'a = 0000000000000000000012345678901234567890\n', verified: true },
  { text: 'a = 01.2.3\n' },
  { text: 'a = 1e400\n' },
  { text: 'a = 1e5\n', verified: true },
  { text: 'a = 0.1\n', verified: true },
  { text: 'a = 12345678901234567890\n', verified: true },
  { text: 'a = 1.\n' },
  // Characters HCL rejects, or this port does not model.
  { text: 'a = 1;\n' },
  { text: 'a = b & c\n' },
  { text: 'a = b | c\n' },
  { text: "a = 'x'\n" },
  { text: 'a = `x`\n' },
  { text: 'a = @x\n' },
  { text: 'a = b::c()\n', verified: true },
  { text: 'a = provider::aws::arn_parse(x)\n', verified: true },
  { text: 'a = [provider::aws::arn_parse(x), 1]\n', verified: true },
  { text: 'a = x :: y()\n', verified: true },
  { text: 'a = x::y\n' },
  { text: 'a = x::\n' },
  { text: 'a = x::(1)\n' },
  { text: 'a = ::x()\n' },
  { text: 'a = {x::y = 1}\n' },
  { text: 'é = 1\n' },
  { text: 'a = é\n' },
  { text: 'a = x ** 2\n' },
  // White space and line ends.
  { text: '\ta = 1\t\n', verified: true },
  { text: 'a = 1\r\nb = 2\r\n', verified: true },
  { text: 'a = 1\rb = 2\n' },
  { text: 'a = "x\ry"\n' },
  { text: 'a = 1', verified: true },
  { text: '# only a comment', verified: true },
  { text: 'a = 1 # c', verified: true },
  { text: 'a = 1 /* unterminated\n' },
  { text: 'a = /* c */ 1 // d\n', verified: true },
  // Heredocs.
  { text: 'a = <<EOT\nx\nEOT\n', verified: true },
  { text: 'a = <<EOT\nx\nEOT' },
  { text: 'a = <<-EOT\n  x\n  EOT\n', verified: true },
  { text: 'a = <<EOT\n${x}\nEOT\n', verified: true },
  { text: 'a = <<EOT\nx\n  EOT  \n', verified: true },
  { text: 'a = <<EOT\n  EOT  \nEOT\n' },
  { text: 'a = <<EOT\n\rEOT\nEOT\n' },
  { text: 'a = <<EOT\nEOT\r\n', verified: true },
  { text: 'a = <<EOT\n\u00a0EOT\n', verified: true },
  { text: 'a = <<EOT \nx\nEOT\n' },
  // Strings and escapes.
  { text: 'a = "\\u00e9\\U0001F600"\n', verified: true },
  { text: 'a = "\\uD800"\n' },
  { text: 'a = "\\q"\n' },
  { text: 'a = "\\u12"\n' },
  { text: 'a = "a\nb"\n' },
  { text: 'a = "\u0000"\n', verified: true },
  { text: 'a = "a" "b"\n' },
  // Templates.
  { text: 'a = "%{if x}y%{else}z%{endif}"\n', verified: true },
  { text: 'a = "%{if x}y"\n' },
  { text: 'a = "%{else}"\n' },
  { text: 'a = "%{if x}%{else}%{else}%{endif}"\n' },
  { text: 'a = "%{for k, v in m}${k}=${v}%{endfor}"\n', verified: true },
  { text: 'a = "%{for x in y}%{endif}"\n' },
  { text: 'a = "%{ while x }"\n' },
  { text: 'a = "${~x}"\n' },
  { text: 'a = "${x ~}"\n' },
  { text: 'a = "${x"\n' },
  { text: 'a = "${x}}"\n', verified: true },
  { text: 'a = "${ {b = 1} }"\n', verified: true },
  { text: 'a = "${"\\"}"}"\n', verified: true },
  // Expressions.
  { text: 'a = [for x in y: x if x]\n', verified: true },
  { text: 'a = {for k, v in m: k => v...}\n', verified: true },
  { text: 'a = [for k, v in m: k => v]\n' },
  { text: 'a = {for x in y: x}\n' },
  { text: 'a = [for x in y: x...]\n' },
  { text: 'a = [for]\n' },
  { text: 'a = x[*].y\n', verified: true },
  { text: 'a = x.*.y[0]\n', verified: true },
  { text: 'a = x.*.[0]\n' },
  { text: 'a = x[\n*]\n' },
  { text: 'a = f(x...)\n', verified: true },
  { text: 'a = f(x..., y)\n' },
  { text: 'a = f(x,)\n', verified: true },
  { text: 'a = f(\n  x,\n  y\n)\n', verified: true },
  { text: 'a = (1\n+2)\n', verified: true },
  { text: 'a = 1\n+2\n' },
  { text: 'a = 1 +\n2\n' },
  { text: 'a = b ? c : d\n', verified: true },
  { text: 'a = b ? c\n' },
  { text: 'a = b ? c : d ? e : f\n', verified: true },
  { text: 'a = null.x\n', verified: true },
  { text: 'a = true[0]\n', verified: true },
  { text: 'a = {null = 1, true = 2}\n', verified: true },
  { text: 'a = {"a" = 1 a = 2}\n' },
  { text: 'a = {\n  b = 1\n  c = 2 }\n', verified: true },
  { text: 'a = {\n  b = 1 +\n  2 }\n' },
  { text: 'a = [1\n,2]\n', verified: true },
  { text: 'a = {\n  aws.x = aws.y\n  "k" : v\n}\n', verified: true },
  { text: 'a = {(k) = v}\n', verified: true },
  { text: 'a = for\n', verified: true },
  // Bodies and blocks.
  { text: 'a = 1\na = 2\n' },
  { text: 'a {}\na = 1\n' },
  { text: 'b {}\nb "x" {}\n' },
  { text: 'x {\n  b {}\n  b "x" {}\n}\n' },
  { text: 'b "y" {}\nb "x" {}\nc = 1\n', verified: true },
  { text: 'x { a = 1 }\n', verified: true },
  { text: 'x { a = 1, b = 2 }\n' },
  { text: 'x { a = 1\n}\n' },
  { text: 'x { y {} }\n' },
  { text: 'x "l" l2 {\n}\n', verified: true },
  { text: 'x "l${a}" {}\n' },
  { text: '"x" {}\n' },
  { text: 'x {\n' },
  { text: 'x {}}\n' },
  { text: 'x = {}\nx {}\n' },
  { text: 'x {} y {}\n' },
  { text: 'x\n{}\n' },
  { text: 'x "a\\"b" {}\n', verified: true },
];

function expectSame(actual: unknown, expected: unknown, label: string): void {
  expect({ label, result: render(actual) }).toEqual({ label, result: render(expected) });
}

describe('edge cases against hcl2json', () => {
  it.each(CASES.map((c) => [JSON.stringify(c.text), c] as const))('%s', async (_name, c) => {
    const content = Buffer.from(c.text, 'utf8');
    const ref = await reference.parse('main.tf', content);
    const before = fast.stats.verified;
    expectSame(await fast.parse('main.tf', content), ref, 'parse');
    const specs: BlockSpec[] = [LOADER_PROJECTION, { attributes: ['a'], otherBlocks: true }];
    for (const spec of specs)
      expectSame(await fast.extract('main.tf', content, spec), projected(ref, spec), 'extract');
    if (c.verified === true) {
      expect(ref.ok || !ref.error.message.startsWith('internal')).toBe(true);
      expect(verifyHcl(c.text).ok).toBe(true);
      expect(fast.stats.verified).toBeGreaterThan(before);
    }
    // Whenever the verifier proves a file, hcl2json accepts it (soundness).
    if (verifyHcl(c.text).ok) {
      const whole = fastParse('main.tf', c.text, FULL_SPEC);
      expect(whole).not.toBeNull();
      expect(ref).toMatchObject({ ok: true });
    }
  });
});

describe('references with string keys and layout inside brackets', () => {
  it.each(REFERENCES.map((t) => [JSON.stringify(t), t] as const))(
    '%s is read without hcl2json, as hcl2json reads it',
    async (_name, text) => {
      const ref = await reference.parse('main.tf', Buffer.from(text, 'utf8'));
      expect(ref.ok).toBe(true);
      const whole = fastParse('main.tf', text, FULL_SPEC);
      expect(whole).not.toBeNull();
      expect(whole !== null && 'result' in whole).toBe(true);
      if (whole !== null && 'result' in whole) expectSame(whole.result, ref, 'value');
    },
  );

  it.each([
    'a = m.a[ # c\n "k"]\n',
    'a = m.a["${x}"]\n',
    'a = m.a[x]\n',
    'a = m.a[-1]\n',
    'a = m.a["k"].*.b\n',
    'a = m.a["k"](1)\n',
  ])('%p is left to hcl2json, which settles it the same', async (text) => {
    const whole = fastParse('main.tf', text, FULL_SPEC);
    expect(whole === null || 'pending' in whole).toBe(true);
    const ref = await reference.parse('main.tf', Buffer.from(text, 'utf8'));
    expectSame(await fast.parse('main.tf', Buffer.from(text, 'utf8')), ref, 'parse');
  });
});

describe('values the evaluator does not read go to hcl2json in batches', () => {
  it('module calls with heredoc versions, templates and commented maps match hcl2json, in one batch', async () => {
    const files = Array.from({ length: 6 }, (_, i) =>
      Buffer.from(
        [
          `module "m${i}" {`,
          `  source  = "\${var.here ? path.module : "."}/m${i}"`,
          `  version = <<EOT`,
          `>= ${i}.0`,
          `EOT`,
          `  providers = { aws = aws.east /* c */, google = google }`,
          `}`,
          `resource "aws_s3_bucket" "b${i}" {`,
          `  provider = aws . east`,
          `  bucket   = "b${i}"`,
          `}`,
          '',
        ].join('\n'),
      ),
    );
    const parser = new HclParser({ workers: 1 });
    try {
      const results = await Promise.all(
        files.map((c, i) => parser.extract(`m${i}.tf`, c, LOADER_PROJECTION)),
      );
      for (let i = 0; i < files.length; i++) {
        const ref = await reference.parse(`m${i}.tf`, files[i] as Buffer);
        expectSame(results[i], projected(ref, LOADER_PROJECTION), `m${i}.tf`);
      }
      expect(parser.stats.fullParses).toBe(0);
      expect(parser.stats.snippets).toBe(6 * 4);
      expect(parser.stats.snippetBatches).toBe(1);
    } finally {
      await parser.close();
    }
  });

  it('a file every loader value of which is a literal never starts the WebAssembly parser', async () => {
    const parser = new HclParser({ workers: 1 });
    try {
      const r = await parser.extract(
        'versions.tf',
        Buffer.from(
          'terraform {\n  required_version = ">= 1.5"\n  required_providers {\n    aws = { source = "hashicorp/aws", version = "~> 5.0" }\n  }\n}\nresource "aws_instance" "x" {\n  provider = aws.east\n  ami = data.x.y\n}\n',
        ),
        LOADER_PROJECTION,
      );
      expect(r.ok).toBe(true);
      expect(parser.wasmStarted).toBe(false);
    } finally {
      await parser.close();
    }
  });
});
