import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { HclParser } from '../../src/hcl';
import { Hcl2JsonPool } from '../../src/hcl/full/pool';
import { withoutRanges } from '../support/ranges';

const run = promisify(execFile);
const hcl2jsonPath = require.resolve('@cdktf/hcl2json');
const repo = path.resolve(__dirname, '../..');

jest.setTimeout(120_000);

describe('hcl2json failures are contained in the worker', () => {
  it('a RangeError inside hcl2json becomes "parser crashed", and the next parse works', async () => {
    // No depth limit, so the hostile file really reaches hcl2json.
    const parser = new HclParser({ maxNestingDepth: Infinity, workers: 1 });
    try {
      const n = 20_000;
      const r = await parser.parse('deep.tf', Buffer.from('a = ' + '['.repeat(n) + ']'.repeat(n) + '\n'));
      expect(r).toEqual({
        ok: false,
        error: {
          path: 'deep.tf',
          line: 1,
          column: 1,
          message: 'parser crashed (RangeError: Maximum call stack size exceeded)',
        },
      });
      const next = await parser.parse('ok.tf', Buffer.from('a = 1\n'));
      expect(next).toMatchObject({ ok: true, file: { body: { attributes: [{ name: 'a', value: 1 }] } } });
    } finally {
      await parser.close();
    }
  });

  it('the Go runtime dying ("exit code: 2") ends the worker at once; the pool replaces it', async () => {
    // After a stack overflow the Go runtime is corrupt: its next allocation usually dies with
    // "fatal error: malloc deadlock". The pool normally retires such a worker; here it keeps it to
    // reach the real runtime exit.
    const pool = new Hcl2JsonPool({ size: 1, hcl2jsonPath, keepPoisonedWorkers: true });
    const n = 20_000;
    const hostile = 'a {\n'.repeat(n) + '}\n'.repeat(n);
    try {
      let crash: string | null = null;
      for (let round = 0; round < 4 && crash === null; round++) {
        const first = await pool.run('input.hcl', hostile, 60_000);
        expect(first).toEqual({ kind: 'error', message: 'Maximum call stack size exceeded' });
        const started = Date.now();
        const second = await pool.run('input.hcl', 'b = 1\n', 60_000);
        if (second.kind === 'crash') {
          crash = second.detail;
          // Detected through the runtime's exit, not through the 60 s deadline.
          expect(Date.now() - started).toBeLessThan(30_000);
        } else {
          expect(second).toEqual({ kind: 'ok', json: { b: 1 } });
        }
      }
      expect(crash).toMatch(/^the Go runtime exited with code 2: fatal error: /);
      expect(await pool.run('input.hcl', 'c = 3\n', 60_000)).toEqual({ kind: 'ok', json: { c: 3 } });
    } finally {
      await pool.close();
    }
  });

  it('close() ends running parses with an error, is safe twice, and the parser can be used again', async () => {
    // The full hcl2json path (the fast path would parse this file without a worker).
    const parser = new HclParser({ workers: 1, fastPath: false });
    const big =
      'locals {\n' + Array.from({ length: 30_000 }, (_, i) => `  v${i} = "${i}"\n`).join('') + '}\n';
    const pending = parser.parse('big.tf', Buffer.from(big));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await parser.close();
    await parser.close();
    expect(await pending).toMatchObject({
      ok: false,
      error: { message: 'parser crashed (the parser was closed)' },
    });
    expect(await parser.parse('a.tf', Buffer.from('a = 1\n'))).toMatchObject({ ok: true });
    await parser.close();
  });
});

describe('the workers do not keep a process alive', () => {
  const script = (load: string): string => `
    const { HclParser } = ${load};
    const parser = new HclParser();
    parser.parse('main.tf', Buffer.from('terraform {\\n  required_version = ">= 1.5"\\n}\\n')).then((r) => {
      process.stdout.write(JSON.stringify(r));
      // No close(): idle workers are unref'd, so the process must end on its own.
    });
  `;

  async function runNode(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
    const { stdout } = await run(process.execPath, args, {
      cwd: repo,
      timeout: 60_000,
      env: { ...process.env, ...env },
    });
    return stdout;
  }

  const expected = {
    ok: true,
    file: {
      path: 'main.tf',
      syntax: 'hcl',
      body: {
        attributes: [],
        blocks: [
          {
            type: 'terraform',
            labels: [],
            line: 1,
            endLine: 3,
            body: {
              attributes: [{ name: 'required_version', value: '>= 1.5', line: 2, endLine: 2 }],
              blocks: [],
            },
          },
        ],
      },
    },
  };

  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tfguard-hcl-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('from TypeScript sources run by tsx', async () => {
    const file = path.join(dir, 'tsx-run.js');
    writeFileSync(file, script(`require(${JSON.stringify(path.join(repo, 'src/hcl/index.ts'))})`));
    const stdout = await runNode(['--require', require.resolve('tsx/cjs'), file]);
    expect(withoutRanges(JSON.parse(stdout))).toEqual(expected);
  });

  it('from an esbuild bundle (hcl2json kept external)', async () => {
    const bundle = path.join(dir, 'hcl-bundle.js');
    await build({
      entryPoints: [path.join(repo, 'src/hcl/index.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: bundle,
      external: ['@cdktf/hcl2json'],
      logLevel: 'silent',
    });
    const file = path.join(dir, 'bundle-run.js');
    writeFileSync(file, script(`require(${JSON.stringify(bundle)})`));
    // The bundle lives outside the repository: let it resolve hcl2json from the repository's modules.
    const stdout = await runNode([file], { NODE_PATH: path.join(repo, 'node_modules') });
    expect(withoutRanges(JSON.parse(stdout))).toEqual(expected);
  });
});
