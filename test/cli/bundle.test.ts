/**
 * dist-cli/ (the CLI bundle bin/tfguard.js runs, committed so an install from the repository builds
 * nothing) is what the sources give: rebuilt into a temporary directory by the same script, every
 * file byte for byte. When this fails, run `npm run build:cli` and commit dist-cli/.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { asciiOnly, buildCli, CLI_DIR } from '../../scripts/build-cli';
import pkg from '../../package.json';
import type { Report } from '../../src/report/types';
import { scanV8Flags } from '../../src/util/v8-flags';
import { cloudLock, cloudTf, fakeZh, L, REGISTRY_HOST, useTestRegistry } from '../support/lock';

const reg = useTestRegistry();

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

let out: string;
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'tfguard-bundle-'));
  await buildCli(out);
}, 120_000);
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

test('the committed dist-cli/ is up to date with the sources (else: npm run build:cli)', async () => {
  const built = await listFiles(out);
  expect(await listFiles(CLI_DIR)).toEqual(built);
  expect(built).toEqual(
    expect.arrayContaining(['tfguard.cjs', 'main.cjs', 'hcl2json/lib/index.js', 'hcl2json/main.wasm.gz']),
  );
  const stale: string[] = [];
  for (const file of built) {
    const [a, b] = await Promise.all([readFile(join(out, file)), readFile(join(CLI_DIR, file))]);
    if (!a.equals(b)) stale.push(file);
  }
  expect(stale).toEqual([]);
});

test('the CLI bundle is ASCII: the launcher decodes it to a one-byte string', async () => {
  const main = await readFile(join(CLI_DIR, 'main.cjs'));
  expect(main.findIndex((b) => b >= 0x80)).toBe(-1);
});

test('asciiOnly escapes non-ASCII in comments and refuses it anywhere else', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tfguard-ascii-'));
  try {
    const comment = join(dir, 'comment.cjs');
    await writeFile(comment, '/** a \u2192 b, caf\u00e9 */\nexports.r = /\\u2014/;\n// \u201cq\u201d\n');
    await asciiOnly(comment);
    const escaped = await readFile(comment, 'utf8');
    expect(escaped).toBe('/** a \\u2192 b, caf\\u00e9 */\nexports.r = /\\u2014/;\n// \\u201cq\\u201d\n');
    for (const code of ['exports.r = /^(?:-|\u2014)/;\n', 'exports.s = String.raw`\u00e9`;\n']) {
      const file = join(dir, 'code.cjs');
      await writeFile(file, code);
      await expect(asciiOnly(file)).rejects.toThrow(/non-ASCII character outside a comment/);
      expect(await readFile(file, 'utf8')).toBe(code);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('an install runs nothing and fetches nothing: no runtime dependency, no install-time script', () => {
  expect(pkg).not.toHaveProperty('dependencies');
  // npm (pacote) runs `npm install` with the dev dependencies in a git clone that has any of these
  // scripts, which fails without them (npm/cli#8440) or needs the whole toolchain from the network.
  const scripts: Record<string, string> = pkg.scripts;
  for (const name of ['prepare', 'prepack', 'preinstall', 'install', 'postinstall', 'build'])
    expect(`${name}: ${scripts[name] ?? '(none)'}`).toBe(`${name}: (none)`);
  expect(pkg.files).toEqual(expect.arrayContaining(['bin/tfguard.js', 'dist-cli', 'LICENSE']));
});

test('the bundle loads openpgp.js from openpgp.cjs beside it, only to check signatures', async () => {
  const bundle = await readFile(join(out, 'main.cjs'), 'utf8');
  expect(bundle).toContain('require("./openpgp.cjs")');
  // openpgp's own code is not in tfguard.cjs (a scan never compiles it).
  expect(bundle).not.toContain('readSignature: must pass options object');
  expect(await readFile(join(out, 'openpgp.cjs'), 'utf8')).toContain(
    'readSignature: must pass options object',
  );

  // A SHA256SUMS signed by a key the registry does not publish: only a real signature check (in
  // openpgp.cjs, run by the built bundle in a fresh process) says "unknown issuer".
  const dir = join(out, 'signed');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'main.tf'), cloudTf);
  await writeFile(join(dir, L), cloudLock('1.2.0', [fakeZh('whatever')]));
  const ops = join(out, 'ops.hcl');
  await writeFile(ops, `registry_hosts = { "${REGISTRY_HOST}" = "${reg().url}" }\n`);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      join(out, 'tfguard.cjs'),
      'scan',
      dir,
      '--registry',
      '--config',
      ops,
      '--format',
      'json',
      '--fail-on',
      'never',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const report = JSON.parse(stdout) as Report;
  expect(report.findings.filter((f) => f.ruleId === 'lock-signature-invalid').map((f) => f.message)).toEqual([
    expect.stringContaining('unknown issuer'),
  ]);
}, 60_000);

test('tfguard.cjs runs main.cjs with a V8 code cache in the cache directory, written by a scan', async () => {
  const cache = join(out, 'xdg');
  const v8 = join(cache, 'tfguard', 'v8');
  const dir = join(out, 'cached');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'main.tf'), cloudTf);
  const env = { ...process.env, TFGUARD_CACHE_DIR: '', XDG_CACHE_HOME: cache };
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    promisify(execFile)(process.execPath, [join(out, 'tfguard.cjs'), ...args], {
      env: { ...env, ...extra },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({
        code: e.code,
        stdout: e.stdout,
        stderr: e.stderr,
      }),
    );
  const files = async () => (await readdir(v8).catch(() => [] as string[])).sort();
  const scan = ['scan', dir, '--format', 'json', '--fail-on', 'never'];

  // Off: nothing written; the reference output.
  const plain = await cli(scan, { TFGUARD_CODE_CACHE: 'off' });
  expect(plain.code).toBe(0);
  expect(await files()).toEqual([]);

  // `--version` writes a cache (the byte after the format line: 0, not written by a scan) ...
  expect((await cli(['--version'])).stdout).toBe(`${pkg.version}\n`);
  const [name] = await files();
  expect(name).toMatch(/^[0-9a-f]{40}\.v8cache$/);
  const header = (b: Buffer) => b[b.indexOf(10) + 1];
  expect(header(await readFile(join(v8, name!)))).toBe(0);
  // ... which the first scan replaces (1: written by a scan), and later runs only read.
  const first = await cli(scan);
  expect(first.stdout).toBe(plain.stdout);
  const written = await readFile(join(v8, name!));
  expect(header(written)).toBe(1);
  expect(written.length).toBeGreaterThan(100_000);
  const again = await cli(scan);
  expect(again.stdout).toBe(plain.stdout);
  expect((await readFile(join(v8, name!))).equals(written)).toBe(true);
  expect(await files()).toEqual([name]);

  // A damaged cache: the same report, and a good cache again.
  await writeFile(join(v8, name!), written.subarray(0, written.length - 7));
  expect((await cli(scan)).stdout).toBe(plain.stdout);
  expect(header(await readFile(join(v8, name!)))).toBe(1);

  // An unusable setting is a usage error naming it (the launcher ran the CLI, which checked it).
  const bad = await cli(scan, { TFGUARD_CODE_CACHE: 'sometimes' });
  expect([bad.code, bad.stderr]).toEqual([
    2,
    expect.stringContaining('TFGUARD_CODE_CACHE must be "on" or "off"'),
  ]);
}, 60_000);

/** What V8 printed for `--trace-wasm-compilation-times`: how many WebAssembly functions it compiled
 * with each compiler. */
function wasmCompilations(trace: string): { liftoff: number; turbofan: number } {
  const lines = trace.split('\n');
  return {
    liftoff: lines.filter((l) => / using Liftoff,/.test(l)).length,
    turbofan: lines.filter((l) => / using TurboFan,/.test(l)).length,
  };
}

test('the launcher caps hcl2json tier-up before the code cache: few TurboFan compiles, one cache', async () => {
  if (scanV8Flags(process.versions.v8).length === 0) return; // a V8 that src/util/v8-flags.ts leaves alone
  // A Jinja template named .tf (as uktrade/platform-tools has): only hcl2json settles it.
  const dir = join(out, 'template');
  await mkdir(dir, { recursive: true });
  const template = 'locals {\n  pipelines = {{ pipelines }}\n}\n';
  await writeFile(join(dir, 'main.tf'), template);
  const cache = join(out, 'xdg-tier');
  const v8 = join(cache, 'tfguard', 'v8');
  const env = { ...process.env, TFGUARD_CACHE_DIR: '', XDG_CACHE_HOME: cache };
  const report = join(out, 'template.json');
  const scan = () =>
    promisify(execFile)(
      process.execPath,
      [
        '--trace-wasm-compilation-times',
        join(out, 'tfguard.cjs'),
        'scan',
        dir,
        '--format',
        'json',
        '--output',
        report,
        '--fail-on',
        'never',
        '--no-cache',
      ],
      { env, maxBuffer: 64 * 1024 * 1024 },
    );

  const first = await scan();
  const findings = (JSON.parse(await readFile(report, 'utf8')) as Report).findings;
  expect(findings.map((f) => [f.ruleId, f.file, f.line])).toContainEqual(['parse-error', 'main.tf', 2]);
  const capped = wasmCompilations(first.stdout);
  expect(capped.liftoff).toBeGreaterThan(100); // hcl2json ran
  expect(capped.turbofan).toBeLessThanOrEqual(3);
  const [name] = await readdir(v8);
  const written = await readFile(join(v8, name!));

  // Set in the middle of a run (when hcl2json starts), the flag would make V8 reject the cache the
  // run wrote at the next run, which would write it again: it stays as it is.
  const second = await scan();
  expect(wasmCompilations(second.stdout).turbofan).toBeLessThanOrEqual(3);
  expect(await readdir(v8)).toEqual([name]);
  expect((await readFile(join(v8, name!))).equals(written)).toBe(true);

  // The same parse with V8's default budget: the start-up functions are recompiled by TurboFan.
  const control = await promisify(execFile)(
    process.execPath,
    [
      '--trace-wasm-compilation-times',
      '-e',
      'require(process.argv[1]).parse("main.tf", process.argv[2]).then(() => process.exit(0), () => process.exit(0));',
      join(out, 'hcl2json', 'lib', 'index.js'),
      template,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  expect(wasmCompilations(control.stdout).turbofan).toBeGreaterThanOrEqual(10);
}, 60_000);
