import fc from 'fast-check';
import { HclParser, parseJsonConfig, stripTemplate } from '../../src/hcl';
import type { HclBlock, HclBody, ParseResult } from '../../src/hcl';
import { withoutRanges } from '../support/ranges';

function ok(text: string, path = 'main.tf.json'): HclBody {
  const r = parseJsonConfig(path, text);
  if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.error)}`);
  expect(r.file).toMatchObject({ path, syntax: 'json' });
  return r.file.body;
}

function err(text: string, path = 'main.tf.json'): Extract<ParseResult, { ok: false }>['error'] {
  const r = parseJsonConfig(path, text);
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.file.body)}`);
  return r.error;
}

const header = (b: HclBlock): string => [b.type, ...b.labels].join(' ');

/** Pretty-printed JSON, so every property starts on its own line. */
const pretty = (v: unknown): string => JSON.stringify(v, null, 2);

describe('parseJsonConfig: Terraform JSON syntax', () => {
  it('reads every top-level block type with the right labels', () => {
    const body = ok(
      pretty({
        resource: { aws_instance: { web: { ami: 'a' } } },
        data: { aws_ami: { ubuntu: { most_recent: true } } },
        ephemeral: { random_password: { db: { length: 16 } } },
        provider: { aws: { region: 'us-east-1' } },
        module: { vpc: { source: './vpc' } },
        variable: { region: { type: 'string' } },
        output: { id: { value: '${aws_instance.web.id}' } },
        check: { health: { assert: { condition: true, error_message: 'x' } } },
        import: { to: 'aws_instance.web', id: 'i-1' },
        moved: { from: 'a.b', to: 'a.c' },
        removed: { from: 'aws_instance.old', lifecycle: { destroy: false } },
        locals: { a: 1, b: { nested: true } },
        terraform: { required_version: '>= 1.5' },
      }),
    );
    expect(body.blocks.map(header)).toEqual([
      'resource aws_instance web',
      'data aws_ami ubuntu',
      'ephemeral random_password db',
      'provider aws',
      'module vpc',
      'variable region',
      'output id',
      'check health',
      'import',
      'moved',
      'removed',
      'locals',
      'terraform',
    ]);
    expect(body.attributes).toEqual([]);
    const locals = body.blocks.find((b) => b.type === 'locals') as HclBlock;
    expect(locals.body.attributes.map((a) => [a.name, a.value])).toEqual([
      ['a', 1],
      ['b', { nested: true }],
    ]);
    const removed = body.blocks.find((b) => b.type === 'removed') as HclBlock;
    expect(removed.body.blocks.map(header)).toEqual(['lifecycle']);
    const check = body.blocks.find((b) => b.type === 'check') as HclBlock;
    expect(check.body.blocks.map(header)).toEqual(['assert']);
  });

  it('reads terraform { required_providers, backend, cloud, provider_meta } and attribute lines', () => {
    const text = [
      '{', // 1
      '  "terraform": {', // 2
      '    "required_version": ">= 1.5",', // 3
      '    "required_providers": {', // 4
      '      "aws": {', // 5
      '        "source": "hashicorp/aws",', // 6
      '        "version": ">= 5.0"', // 7
      '      },', // 8
      '      "random": ">= 3.0"', // 9
      '    },', // 10
      '    "backend": {', // 11
      '      "s3": {', // 12
      '        "bucket": "state"', // 13
      '      }', // 14
      '    },', // 15
      '    "cloud": { "organization": "o", "workspaces": { "name": "w" } },', // 16
      '    "provider_meta": { "my-provider": { "hello": "world" } }', // 17
      '  }', // 18
      '}', // 19
    ].join('\n');
    const tf = ok(text).blocks[0] as HclBlock;
    expect(tf).toMatchObject({ type: 'terraform', labels: [], line: 2, endLine: 18 });
    expect(withoutRanges(tf.body.attributes)).toEqual([
      { name: 'required_version', value: '>= 1.5', line: 3, endLine: 3 },
    ]);
    expect(tf.body.blocks.map((b) => [header(b), b.line, b.endLine])).toEqual([
      ['required_providers', 4, 10],
      ['backend s3', 12, 14],
      ['cloud', 16, 16],
      ['provider_meta my-provider', 17, 17],
    ]);
    const [rp, , cloud] = tf.body.blocks as [HclBlock, HclBlock, HclBlock];
    expect(withoutRanges(rp.body)).toEqual({
      attributes: [
        { name: 'aws', value: { source: 'hashicorp/aws', version: '>= 5.0' }, line: 5, endLine: 8 },
        { name: 'random', value: '>= 3.0', line: 9, endLine: 9 },
      ],
      blocks: [],
    });
    expect(cloud.body.attributes.map((a) => a.name)).toEqual(['organization']);
    expect(cloud.body.blocks.map(header)).toEqual(['workspaces']);
  });

  it('reads lifecycle, provisioner, connection and nested dynamic blocks in resources', () => {
    const body = ok(
      pretty({
        resource: {
          aws_security_group: {
            sg: {
              provider: 'aws.east',
              ingress: [{ from_port: 1 }],
              lifecycle: { ignore_changes: ['tags'], precondition: { condition: true, error_message: 'x' } },
              provisioner: [
                { 'local-exec': { command: 'echo', connection: { host: 'h' } } },
                { file: { source: 's' } },
              ],
              connection: { type: 'ssh' },
              dynamic: {
                egress: {
                  for_each: '${var.rules}',
                  content: { to_port: '${egress.value}', dynamic: { inner: { for_each: [], content: {} } } },
                },
              },
            },
          },
        },
      }),
    );
    const sg = body.blocks[0] as HclBlock;
    // Provider-defined nested blocks (ingress) are not known: they stay attributes with JSON values.
    expect(sg.body.attributes.map((a) => [a.name, a.value])).toEqual([
      ['provider', 'aws.east'],
      ['ingress', [{ from_port: 1 }]],
    ]);
    expect(sg.body.blocks.map(header)).toEqual([
      'lifecycle',
      'provisioner local-exec',
      'provisioner file',
      'connection',
      'dynamic egress',
    ]);
    const [lifecycle, localExec, , , dyn] = sg.body.blocks as HclBlock[] as [
      HclBlock,
      HclBlock,
      HclBlock,
      HclBlock,
      HclBlock,
    ];
    expect(lifecycle.body.blocks.map(header)).toEqual(['precondition']);
    expect(localExec.body.blocks.map(header)).toEqual(['connection']);
    const content = dyn.body.blocks[0] as HclBlock;
    expect(header(content)).toBe('content');
    expect(content.body.blocks.map(header)).toEqual(['dynamic inner']);
    expect((content.body.blocks[0] as HclBlock).body.blocks.map(header)).toEqual(['content']);
  });

  it('reads arrays of bodies as several blocks, each at its own opening brace', () => {
    const text = [
      '{', // 1
      '  "provider": {', // 2
      '    "aws": [', // 3
      '      { "region": "us-east-1" },', // 4
      '      {', // 5
      '        "alias": "west",', // 6
      '        "region": "us-west-2"', // 7
      '      }', // 8
      '    ]', // 9
      '  },', // 10
      '  "terraform": [', // 11
      '    { "required_version": ">= 1.0" },', // 12
      '    { "required_providers": [{ "aws": { "source": "hashicorp/aws" } }, { "null": {} }] }', // 13
      '  ],', // 14
      '  "resource": [', // 15
      '    { "aws_instance": { "a": {} } },', // 16
      '    { "aws_instance": [{ "b": {} }, { "c": null }] }', // 17
      '  ],', // 18
      '  "locals": [{ "x": 1 }, { "y": 2 }]', // 19
      '}', // 20
    ].join('\n');
    const body = ok(text);
    expect(body.blocks.map((b) => [header(b), b.line, b.endLine])).toEqual([
      ['provider aws', 4, 4],
      ['provider aws', 5, 8],
      ['terraform', 12, 12],
      ['terraform', 13, 13],
      ['resource aws_instance a', 16, 16],
      ['resource aws_instance b', 17, 17],
      ['locals', 19, 19],
      ['locals', 19, 19],
    ]);
    const tf2 = body.blocks[3] as HclBlock;
    expect(tf2.body.blocks.map(header)).toEqual(['required_providers', 'required_providers']);
  });

  it('ignores "//" comment properties in bodies, but not in values', () => {
    const body = ok(
      pretty({
        '//': 'generated, do not edit',
        resource: { aws_instance: { web: { '//': 'a comment', ami: 'x', tags: { '//': 'kept' } } } },
      }),
    );
    expect(body.attributes).toEqual([]);
    const web = body.blocks[0] as HclBlock;
    expect(web.body.attributes.map((a) => [a.name, a.value])).toEqual([
      ['ami', 'x'],
      ['tags', { '//': 'kept' }],
    ]);
  });

  it('keeps reference strings as plain strings; stripTemplate reads both forms', () => {
    const body = ok(
      pretty({
        resource: {
          aws_instance: { a: { provider: 'aws.east' } },
          aws_s3_bucket: { b: { provider: '${aws.west}' } },
        },
      }),
    );
    const values = body.blocks.map((b) => b.body.attributes[0]?.value);
    expect(values).toEqual(['aws.east', '${aws.west}']);
    expect(values.map(stripTemplate)).toEqual(['aws.east', 'aws.west']);
  });

  it('keeps unknown top-level properties as attributes', () => {
    expect(withoutRanges(ok('{"x": [1, 2], "y": null}').attributes)).toEqual([
      { name: 'x', value: [1, 2], line: 1, endLine: 1 },
      { name: 'y', value: null, line: 1, endLine: 1 },
    ]);
  });

  it('an empty object is an empty body', () => {
    expect(ok('{}')).toEqual({ attributes: [], blocks: [] });
    expect(ok(' \n{ }\n')).toEqual({ attributes: [], blocks: [] });
  });

  it('gives `__proto__` keys as own properties of values', () => {
    const body = ok('{"locals": {"m": {"__proto__": {"polluted": true}}}}');
    const m = body.blocks[0]?.body.attributes[0]?.value as Record<string, unknown>;
    expect(Object.keys(m)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('parseJsonConfig: errors', () => {
  it('rejects a root that is not an object', () => {
    for (const text of ['[]', '"x"', '1', 'null', ' true ']) {
      expect(err(text)).toMatchObject({ message: 'the root of a .tf.json file must be an object', line: 1 });
    }
  });

  it('rejects duplicate keys in one object, also inside values', () => {
    expect(err('{\n  "locals": {"a": 1},\n  "locals": {"b": 2}\n}')).toEqual({
      path: 'main.tf.json',
      line: 3,
      column: 3,
      message: 'duplicate key "locals" in a JSON object (first defined at line 2)',
    });
    expect(err('{"locals": {"a": {"k": 1, "k": 2}}}')).toMatchObject({ line: 1, column: 27 });
  });

  it('rejects the same argument in two objects of one body', () => {
    // A body may itself be an array of objects (HCL flattens it); the names must stay unique.
    const text = '{"terraform": [[\n{"required_version": "1"},\n{"required_version": "2"}\n]]}';
    expect(err(text)).toMatchObject({
      line: 3,
      column: 2,
      message: 'Duplicate argument; the argument "required_version" was already set at line 2',
    });
    const body = ok('{"terraform": [[{"required_version": "1"}, {"experiments": []}]]}');
    expect(body.blocks).toHaveLength(1);
    expect(body.blocks[0]?.body.attributes.map((a) => a.name)).toEqual(['required_version', 'experiments']);
  });

  it('rejects syntax errors with positions', () => {
    const cases: [string, number, number, RegExp][] = [
      ['{"a": 1,}', 1, 9, /expected a property name/],
      ['{\n  "a": 1\n  "b": 2\n}', 3, 3, /expected "," or "}"/],
      ['{"a": [1, 2}', 1, 12, /expected "," or "]"/],
      ['{"a": tru}', 1, 7, /unexpected "t"/],
      ['{"a": 01}', 1, 8, /expected "," or "}"/],
      ['{"a": "x\ny"}', 1, 9, /control character U\+000A/],
      ['{"a": "\\q"}', 1, 8, /invalid escape/],
      ['{"a": "unterminated', 1, 7, /unterminated string/],
      ['{"a": 1} x', 1, 10, /after the end of the document/],
      ['', 1, 1, /unexpected end of file/],
      ['// comment\n{}', 1, 1, /unexpected "\/"/],
    ];
    for (const [text, line, column, message] of cases) {
      const e = err(text);
      expect({ text, line: e.line, column: e.column }).toEqual({ text, line, column });
      expect(e.message).toMatch(message);
    }
  });

  it('rejects values of the wrong JSON type where Terraform needs blocks', () => {
    expect(err('{"resource": {"aws_instance": {"a": 5}}}').message).toMatch(
      /contents of one or more "resource" blocks/,
    );
    expect(err('{"resource": {"aws_instance": []}}').message).toMatch(/^Missing block label/);
    expect(err('{"variable": {"//": "c"}}').message).toMatch(/"variable" blocks/);
    expect(err('{"locals": [1]}').message).toMatch(/^Incorrect JSON value type; .* to define arguments/);
    expect(err('{"resource": {"x": ["y"]}}').message).toMatch(
      /^Incorrect JSON value type; a JSON object is required here/,
    );
    expect(err('{"terraform": "x"}').message).toMatch(/"terraform" blocks/);
  });

  it('limits the nesting depth', () => {
    const deep = '{"locals": {"a": ' + '['.repeat(5000) + ']'.repeat(5000) + '}}';
    expect(err(deep).message).toBe('nesting depth 129 exceeds the limit of 128');
    expect(parseJsonConfig('a.tf.json', '{"a": [[[1]]]}', { maxNestingDepth: 3 }).ok).toBe(false);
    expect(parseJsonConfig('a.tf.json', '{"a": [[1]]}', { maxNestingDepth: 3 }).ok).toBe(true);
  });
});

describe('parseJsonConfig: agrees with JSON.parse', () => {
  it('on arbitrary JSON values under locals', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.boolean(), (value, indent) => {
        const doc = { locals: { v: value } };
        const text = indent ? JSON.stringify(doc, null, 2) : JSON.stringify(doc);
        const r = parseJsonConfig('a.tf.json', text);
        if (!r.ok) throw new Error(JSON.stringify(r.error));
        expect(r.file.body.blocks[0]?.body.attributes[0]?.value).toEqual(JSON.parse(text).locals.v);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects what JSON.parse rejects (no duplicate keys involved)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (junk) => {
        const text = `{"locals": {"v": ${junk}}}`;
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        if (!valid) expect(parseJsonConfig('a.tf.json', text).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('HclParser: .tf.json and .tofu.json go through the JSON syntax', () => {
  const parser = new HclParser();
  afterAll(() => parser.close());

  it('dispatches on the .json suffix, with decoding first', async () => {
    const text = '\uFEFF{"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws"}}}}';
    for (const path of ['main.tf.json', 'x/override.tofu.json']) {
      const r = await parser.parse(path, Buffer.from(text));
      expect(r.ok && r.file.syntax).toBe('json');
      expect(r.ok && r.file.body.blocks[0]?.body.blocks[0]?.type).toBe('required_providers');
    }
    const bad = await parser.parse('main.tf.json', Buffer.from([0x7b, 0xff, 0x7d]));
    expect(bad).toMatchObject({ ok: false, error: { path: 'main.tf.json', line: 1, column: 2 } });
  });
});

describe('stripTemplate', () => {
  it.each([
    ['${aws.east}', 'aws.east'],
    ['${ aws.east }', 'aws.east'],
    ['${~ aws.east ~}', 'aws.east'],
    ['${lookup(var.m, "}")}', 'lookup(var.m, "}")'],
    ['${{ a = "${x}" }}', '{ a = "${x}" }'],
    ['${"a\\"}"}', '"a\\"}"'],
  ])('%s → %s', (input, output) => {
    expect(stripTemplate(input)).toBe(output);
  });

  it.each([
    ['aws.east'],
    ['${a}${b}'],
    ['x-${a}'],
    ['${a}-x'],
    ['$${a}'],
    ['${}'],
    ['${a'],
    ['%{ if x }y%{ endif }'],
    [''],
  ])('leaves %s unchanged', (input) => {
    expect(stripTemplate(input)).toBe(input);
  });

  it('leaves non-strings unchanged', () => {
    const obj = { a: '${b}' };
    for (const v of [1, null, true, obj, ['${x}'], undefined]) expect(stripTemplate(v)).toBe(v);
  });
});
