/**
 * The CLI as users get it from npm: `npm pack` of a clean copy of the package (no build: the CLI is
 * committed ready to run in dist-cli/), the tarball installed into an empty project and run with
 * `npx tfguard`; `npm install -g` from a `git+file://` URL of a clone of the repository into a
 * temporary prefix (what `npm install -g git+https://…` and `npx github:…` do); and the pre-commit
 * hook (.pre-commit-hooks.yaml) run the way pre-commit runs a `language: node` hook: the package
 * installed into the hook's own environment, whose bin directory comes first on the PATH, then
 * `entry` + `args` (+ file names when `pass_filenames`) run in the repository being committed
 * (test/cli/pre-commit.test.ts runs the real pre-commit).
 *
 * No network: the package has no runtime dependency, so every install is run with npm offline.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { defaultShouldLoad } from '../../src/archive';
import { RULES } from '../../src/rules';
import pkg from '../../package.json';
import { repositorySnapshot } from '../support/git';

const exec = promisify(execFile);
const REPO = resolve(__dirname, '..', '..');
const DEMO = join(REPO, 'examples', 'platform-demo.tar.gz');

let work: string;
let tarball: string;
let packed: string[];

/** npm without the network: everything comes from the local cache that `npm ci` filled. */
const NPM_ENV = {
  ...process.env,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(command, args, {
      cwd: options.cwd,
      env: options.env ?? NPM_ENV,
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** An empty project that depends on the packed tarball, installed offline (see the file comment); the
 * lock file also pins whatever production dependencies this repository's lock resolves (none). */
async function installTarball(dir: string): Promise<{ code: number; stderr: string }> {
  await mkdir(dir, { recursive: true });
  const lock = JSON.parse(await readFile(join(REPO, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  const integrity = `sha512-${createHash('sha512')
    .update(await readFile(tarball))
    .digest('base64')}`;
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { tfguard: `file:${tarball}` } },
    'node_modules/tfguard': {
      version: pkg.version,
      resolved: `file:${tarball}`,
      integrity,
      license: pkg.license,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path !== '' && entry.dev !== true) packages[path] = entry;
  }
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, dependencies: { tfguard: `file:${tarball}` } }),
  );
  await writeFile(
    join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }, null, 2),
  );
  return run('npm', ['ci'], { cwd: dir });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'tfguard-npm-'));
  // A clean copy of the repository's files (no node_modules: packing builds nothing).
  const source = join(work, 'source');
  await mkdir(source);
  for (const entry of [
    'package.json',
    'README.md',
    'LICENSE',
    'bin',
    'dist-cli',
    'src',
    'handlers',
    'docs',
  ]) {
    await cp(join(REPO, entry), join(source, entry), { recursive: true });
  }
  const pack = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: source });
  if (pack.code !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarball = join(work, info!.filename);
  packed = info!.files.map((f) => f.path).sort();
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test('the package is publishable and holds the CLI, its licence, its docs and the CI script, nothing else', () => {
  expect(pkg).not.toHaveProperty('private');
  expect(tarball).toBe(join(work, `tfguard-${pkg.version}.tgz`));
  expect(pkg.bin).toEqual({ tfguard: 'bin/tfguard.js' });
  expect(packed).toEqual(
    expect.arrayContaining([
      'package.json',
      'README.md',
      'LICENSE',
      'bin/tfguard.js',
      'dist-cli/tfguard.cjs',
      'dist-cli/main.cjs',
      'dist-cli/openpgp.cjs',
      'dist-cli/hcl2json/lib/index.js',
      'dist-cli/hcl2json/main.wasm.gz',
      'docs/ci/tfguard-scan.sh',
      'docs/report.schema.json',
      ...RULES.map((r) => `docs/rules/${r.id}.md`),
    ]),
  );
  const unexpected = packed.filter(
    (p) =>
      !/^(package\.json|README\.md|LICENSE|bin\/tfguard\.js|dist-cli\/.+|docs\/.+)$/.test(p) ||
      p.endsWith('.ts') ||
      p.endsWith('.map'),
  );
  expect(unexpected).toEqual([]);
  // Nothing is installed with the CLI: the Lambda libraries are bundled into the functions, the
  // CLI's own libraries into dist-cli/.
  expect(pkg).not.toHaveProperty('dependencies');
});

test('installed from the tarball (offline), `npx tfguard scan` scans the example as the README shows', async () => {
  const project = join(work, 'project');
  const install = await installTarball(project);
  expect(install.stderr.split('\n').filter((l) => /npm error/.test(l))).toEqual([]);
  expect(install.code).toBe(0);
  // The CLI runs without the AWS SDK and the Lambda libraries: they are not installed with it.
  expect(existsSync(join(project, 'node_modules', '@aws-sdk'))).toBe(false);
  expect(existsSync(join(project, 'node_modules', '@aws-lambda-powertools'))).toBe(false);

  const version = await run('npx', ['--offline', 'tfguard', '--version'], { cwd: project });
  expect([version.code, version.stdout]).toEqual([0, `${pkg.version}\n`]);

  const scan = await run('npx', ['--offline', 'tfguard', 'scan', DEMO, '--no-color'], { cwd: project });
  expect(scan.code).toBe(1);
  const readme = await readFile(join(REPO, 'README.md'), 'utf8');
  const demo = /<!-- BEGIN demo-output -->\n```text\n([\s\S]*?)```\n<!-- END demo-output -->/.exec(
    readme,
  )?.[1];
  expect(scan.stdout).toBe(demo);

  const gitlab = await run('npx', ['--offline', 'tfguard', 'scan', DEMO, '--format', 'codequality'], {
    cwd: project,
  });
  expect(gitlab.code).toBe(1);
  expect(JSON.parse(gitlab.stdout).length).toBeGreaterThan(0);
}, 300_000);

interface HookDefinition {
  id: string;
  name: string;
  entry: string;
  language: string;
  pass_filenames?: boolean;
  files?: string;
  exclude?: string;
  args?: string[];
  require_serial?: boolean;
  minimum_pre_commit_version?: string;
  description?: string;
}

test('the pre-commit hook is a valid definition and runs the installed CLI on the repository', async () => {
  const hooks = load(await readFile(join(REPO, '.pre-commit-hooks.yaml'), 'utf8')) as HookDefinition[];
  expect(Array.isArray(hooks)).toBe(true);
  expect(hooks.map((h) => h.id)).toEqual(['tfguard']);
  const hook = hooks[0]!;
  // pre-commit's manifest schema: required keys and their types.
  for (const key of ['id', 'name', 'entry', 'language'] as const) expect(typeof hook[key]).toBe('string');
  expect(hook.language).toBe('node');
  expect(hook.pass_filenames).toBe(false);
  // pre-commit runs the hook when `files` matches (re.search) and `exclude` does not. Every file the
  // scan reads (defaultShouldLoad: configuration, .hcl, READMEs) triggers it; tool state does not.
  const files = new RegExp(hook.files!);
  const exclude = new RegExp(hook.exclude!);
  const triggers = (name: string): boolean => files.test(name) && !exclude.test(name);
  const read = [
    'main.tf',
    'x/variables.tf.json',
    'a.tofu',
    'b.tofu.json',
    'live/.terraform.lock.hcl',
    '.tfguard.hcl',
    'live/prod/terragrunt.hcl',
    'tests/defaults.tftest.hcl',
    'tests/plan.tftest.json',
    'tests/plan.tofutest.hcl',
    'tests/plan.tofutest.json',
    'stacks/app.tfcomponent.hcl',
    'stacks/prod.tfdeploy.hcl',
    'modules/vpc/README.md',
    'terraform.d/plugins/registry.terraform.io/hashicorp/aws/5.0.0/linux_amd64/terraform-provider-aws_5.0.0_linux_amd64.zip',
  ];
  for (const name of read) {
    expect(`${name} read ${defaultShouldLoad(name) || name.includes('terraform.d/plugins/')}`).toBe(
      `${name} read true`,
    );
    expect(`${name} ${triggers(name)}`).toBe(`${name} true`);
  }
  for (const name of [
    'docs/guide.md',
    'main.tfvars',
    'tf',
    'live/.terraform/modules/vpc/main.tf',
    '.terraform/x.hcl',
  ])
    expect(`${name} ${triggers(name)}`).toBe(`${name} false`);

  // What pre-commit does for a node hook: the package installed into the hook's environment (with
  // `npm install -g` and npm_config_prefix there; here offline, see the file comment), whose bin
  // directory is put first on the PATH.
  const env = join(work, 'hook-env');
  const install = await installTarball(env);
  expect(install.code).toBe(0);
  const repository = join(work, 'committed-repo');
  await mkdir(repository);
  await exec('tar', ['-xzf', DEMO, '-C', repository]);
  const hookEnv = {
    ...process.env,
    PATH: `${join(env, 'node_modules', '.bin')}:${process.env.PATH}`,
    NO_COLOR: '1',
  };
  const [command, ...entryArgs] = hook.entry.split(' ');
  const failing = await run(command!, [...entryArgs, ...(hook.args ?? [])], {
    cwd: repository,
    env: hookEnv,
  });
  expect(failing.code).toBe(1);
  expect(failing.stdout).toContain('[shared-module-upper-bound]');
  // Arguments from .pre-commit-config.yaml are appended to the entry.
  const lenient = await run(command!, [...entryArgs, '--fail-on', 'never'], {
    cwd: repository,
    env: hookEnv,
  });
  expect(lenient.code).toBe(0);
}, 300_000);

test('`npm install -g git+file://<clone>` and `npx` of it (offline) run the CLI: nothing built, nothing fetched', async () => {
  const repository = repositorySnapshot(REPO, await mkdtemp(join(work, 'clone-')));
  const prefix = join(work, 'global-prefix');
  const install = await run('npm', ['install', '-g', '--prefix', prefix, `git+file://${repository}`], {
    cwd: work,
  });
  expect(install.stderr.split('\n').filter((l) => /npm (error|warn)/.test(l))).toEqual([]);
  expect(install.code).toBe(0);
  // `npx github:…` fetches the repository the same way: npx of the git URL runs the CLI.
  const npx = await run('npx', ['--yes', '--package', `git+file://${repository}`, 'tfguard', '--version'], {
    cwd: work,
  });
  expect([npx.code, npx.stdout]).toEqual([0, `${pkg.version}\n`]);
  const tfguard = join(prefix, 'bin', 'tfguard');
  const version = await run(tfguard, ['--version'], { cwd: work });
  expect([version.code, version.stdout]).toEqual([0, `${pkg.version}\n`]);
  const scan = await run(tfguard, ['scan', DEMO, '--no-color'], { cwd: work });
  expect(scan.code).toBe(1);
  const readme = await readFile(join(REPO, 'README.md'), 'utf8');
  expect(readme).toContain(scan.stdout);
  // Its own copy of hcl2json (dist-cli/hcl2json) parses what the fast path hands it: a syntax error.
  const broken = join(work, 'broken');
  await mkdir(broken);
  await writeFile(join(broken, 'main.tf'), 'resource "a" "b" {\n  x = \n}\n');
  const parsed = await run(tfguard, ['scan', broken, '--format', 'json'], { cwd: work });
  const findings = (JSON.parse(parsed.stdout) as { findings: Array<{ ruleId: string; message: string }> })
    .findings;
  expect(findings.map((f) => [f.ruleId, f.message])).toEqual([
    ['parse-error', expect.stringContaining('main.tf at line 2, column 7: Invalid expression')],
  ]);
}, 300_000);
