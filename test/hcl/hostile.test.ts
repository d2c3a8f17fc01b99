import { HclParser } from '../../src/hcl';
import { Hcl2JsonPool } from '../../src/hcl/full/pool';
import type { ParseResult } from '../../src/hcl';
import { withoutRanges } from '../support/ranges';

const parser = new HclParser({ workers: 2 });
afterAll(() => parser.close());

const parse = (path: string, text: string): Promise<ParseResult> => parser.parse(path, Buffer.from(text));

async function expectWorks(): Promise<void> {
  const r = await parse('after.tf', 'after "check" {\n  ok = true\n}\n');
  expect(withoutRanges(r)).toEqual({
    ok: true,
    file: {
      path: 'after.tf',
      syntax: 'hcl',
      body: {
        attributes: [],
        blocks: [
          {
            type: 'after',
            labels: ['check'],
            line: 1,
            endLine: 3,
            body: { attributes: [{ name: 'ok', value: true, line: 2, endLine: 2 }], blocks: [] },
          },
        ],
      },
    },
  });
}

describe('deep nesting never reaches hcl2json', () => {
  const N = 5000;
  const cases: [string, string, number, number][] = [
    ['brackets', 'a = ' + '['.repeat(N) + ']'.repeat(N) + '\n', 1, 5 + 128],
    ['objects', 'a = ' + '{a = '.repeat(N) + '1' + '}'.repeat(N) + '\n', 1, 5 + 128 * 5],
    ['parentheses', 'a = ' + '('.repeat(N) + '1' + ')'.repeat(N) + '\n', 1, 5 + 128],
    ['template interpolations', 'a = ' + '"${'.repeat(N) + 'x' + '}"'.repeat(N) + '\n', 1, 6 + 128 * 3],
    ['nested blocks', 'a {\n'.repeat(N) + '}\n'.repeat(N), 129, 3],
    ['mixed, unbalanced', 'x {\n  y = [({"${' + '[('.repeat(N), 2, 0],
  ];
  it.each(cases)(
    '%s, 5000 levels: a parse error, then normal parses still work',
    async (_name, text, line, column) => {
      const r = await parse('deep.tf', text);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error.message).toMatch(/^nesting depth \d+ exceeds the limit of 128$/);
      expect(r.error.line).toBe(line);
      if (column > 0) expect(r.error.column).toBe(column);
      await expectWorks();
    },
  );

  it('reports the file depth, and honours maxNestingDepth', async () => {
    const r = await parse('deep.tf', 'a = ' + '['.repeat(N) + ']'.repeat(N) + '\n');
    expect(!r.ok && r.error.message).toBe(`nesting depth ${N} exceeds the limit of 128`);
    const strict = new HclParser({ maxNestingDepth: 2 });
    try {
      expect(await strict.parse('a.tf', Buffer.from('a = [[1]]\n'))).toMatchObject({ ok: true });
      expect(await strict.parse('a.tf', Buffer.from('x {\n  a = [[1]]\n}\n'))).toMatchObject({
        ok: false,
        error: { line: 2, column: 8, message: 'nesting depth 3 exceeds the limit of 2' },
      });
    } finally {
      await strict.close();
    }
  });

  it('100k nested brackets: an error, no stack overflow', async () => {
    const r = await parse('deep.tf', 'a = ' + '['.repeat(100_000));
    expect(!r.ok && r.error.message).toBe('nesting depth 100000 exceeds the limit of 128');
  });

  it('deep JSON is limited the same way', async () => {
    const r = await parse('deep.tf.json', '{"locals": {"a": ' + '['.repeat(N) + ']'.repeat(N) + '}}');
    expect(!r.ok && r.error.message).toBe('nesting depth 129 exceeds the limit of 128');
  });
});

describe('timeouts', () => {
  it('a parse over budget ends with a timeout error; the parser keeps working', async () => {
    // ~2 MB of valid HCL: hcl2json needs several seconds for it.
    const unit = (i: number): string =>
      `resource "aws_instance" "r${i}" {\n  ami  = "ami-${i}"\n  tags = { Name = "n${i}", Env = var.env }\n}\n`;
    const big = Array.from({ length: 25_000 }, (_, i) => unit(i)).join('');
    expect(big.length).toBeGreaterThan(2_000_000);
    // The full hcl2json path (the fast path would parse this file without a worker).
    const tight = new HclParser({ timeoutMs: 1000, workers: 1, fastPath: false });
    try {
      const started = Date.now();
      const r = await tight.parse('big.tf', Buffer.from(big));
      expect(r).toEqual({
        ok: false,
        error: { path: 'big.tf', line: 1, column: 1, message: 'parser timed out after 1000 ms' },
      });
      expect(Date.now() - started).toBeLessThan(20_000);
      const small = await tight.parse('small.tf', Buffer.from('a = 1\n'));
      expect(small).toMatchObject({ ok: true, file: { body: { attributes: [{ name: 'a', value: 1 }] } } });
    } finally {
      await tight.close();
    }
  });
});

describe('concurrency', () => {
  it('parses 50 files concurrently through a pool of 2, each to its own result', async () => {
    const files = Array.from({ length: 50 }, (_, i) => {
      if (i % 10 === 7)
        return { path: `m${i}/bad.tf`, text: `resource "x" "r${i}" {\n  v = \n}\n`, ok: false };
      if (i % 10 === 3)
        return { path: `m${i}/main.tf.json`, text: JSON.stringify({ locals: { v: i } }), ok: true };
      return { path: `m${i}/main.tf`, text: `locals {\n  v = ${i}\n}\n`, ok: true };
    });
    const results = await Promise.all(files.map((f) => parse(f.path, f.text)));
    results.forEach((r, i) => {
      const f = files[i] as (typeof files)[number];
      expect(r.ok).toBe(f.ok);
      if (r.ok) {
        expect(r.file.path).toBe(f.path);
        expect(r.file.body.blocks[0]?.body.attributes[0]?.value).toBe(i);
      } else {
        expect(r.error).toMatchObject({
          path: f.path,
          line: 2,
          message: expect.stringMatching(/^Invalid expression/),
        });
      }
    });
  });

  it('the pool never runs more workers than configured', async () => {
    const pool = new Hcl2JsonPool({ size: 2, hcl2jsonPath: require.resolve('@cdktf/hcl2json') });
    try {
      let max = 0;
      const runs = Array.from({ length: 20 }, (_, i) =>
        pool.run('input.hcl', `v = ${i}\n`, 30_000).then((o) => {
          max = Math.max(max, pool.workerCount);
          return o;
        }),
      );
      max = Math.max(max, pool.workerCount);
      const outcomes = await Promise.all(runs);
      expect(outcomes).toEqual(Array.from({ length: 20 }, (_, i) => ({ kind: 'ok', json: { v: i } })));
      expect(max).toBeLessThanOrEqual(2);
      expect(pool.workerCount).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
    expect(pool.workerCount).toBe(0);
  });
});
