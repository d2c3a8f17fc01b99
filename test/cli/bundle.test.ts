/**
 * dist-cli/ (the CLI bundle bin/tfguard.js runs, committed so an install from the repository builds
 * nothing) is what the sources give: rebuilt into a temporary directory by the same script, every
 * file byte for byte. When this fails, run `npm run build:cli` and commit dist-cli/.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { buildCli, CLI_DIR } from '../../scripts/build-cli';
import pkg from '../../package.json';

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
    expect.arrayContaining(['tfguard.cjs', 'hcl2json/lib/index.js', 'hcl2json/main.wasm.gz']),
  );
  const stale: string[] = [];
  for (const file of built) {
    const [a, b] = await Promise.all([readFile(join(out, file)), readFile(join(CLI_DIR, file))]);
    if (!a.equals(b)) stale.push(file);
  }
  expect(stale).toEqual([]);
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
