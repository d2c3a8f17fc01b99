/**
 * The pre-commit hook with the real client: a sample repository's configuration names a clone of
 * this repository (`repo:` a path, `rev:` its commit, hook `tfguard`), and `pre-commit run` installs
 * and runs it, as it does for a user who added the hook. pre-commit installs a `language: node`
 * hook itself (`npm install` in its clone, `npm pack`, `npm install -g` of the tarball into the
 * hook's environment), so this is the install users get. It installs once: the later runs find the
 * environment in PRE_COMMIT_HOME (`pre-commit try-repo` would install again for each run, in a store
 * of its own, at about a minute each).
 *
 * Needs `pre-commit` on the PATH (Debian's package; .ci/run installs it): without it the block is
 * skipped with one line, and with TFGUARD_REQUIRE_EXTERNAL=1 it fails. npm runs offline (its cache
 * holds what `npm ci` of this repository fetched); pre-commit keeps its environments in a
 * temporary PRE_COMMIT_HOME.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describeWithExternal } from '../support/external';
import { git, repositorySnapshot } from '../support/git';

const exec = promisify(execFile);
const REPO = resolve(__dirname, '..', '..');
const DEMO = join(REPO, 'examples', 'platform-demo.tar.gz');

describeWithExternal(['pre-commit'], 'pre-commit run with the hook in its configuration', () => {
  let work: string;
  let hookRepo: string;
  let sample: string;
  let config: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tfguard-pre-commit-'));
    hookRepo = repositorySnapshot(REPO, await mkdtemp(join(work, 'hook-repo-')));
    sample = join(work, 'sample');
    await mkdir(sample);
    await exec('tar', ['-xzf', DEMO, '-C', sample]);
    git(['init', '-q', '-b', 'main'], sample);
    git(['add', '-A'], sample);
    // Outside the sample, so that the sample holds only what a scan reads (`--config`).
    config = join(work, 'pre-commit-config.yaml');
    const rev = git(['rev-parse', 'HEAD'], hookRepo).toString('utf8').trim();
    await writeFile(
      config,
      `repos:\n  - repo: ${JSON.stringify(hookRepo)}\n    rev: ${rev}\n    hooks:\n      - id: tfguard\n`,
    );
    env = {
      ...process.env,
      PRE_COMMIT_HOME: join(work, 'pre-commit-home'),
      npm_config_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      NO_COLOR: '1',
    };
  });
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function run(args: string[]): Promise<{ code: number; out: string }> {
    try {
      const { stdout, stderr } = await exec('pre-commit', ['run', '--config', config, 'tfguard', ...args], {
        cwd: sample,
        env,
        timeout: 900_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      return { code: 0, out: stdout + stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, out: (e.stdout ?? '') + (e.stderr ?? '') };
    }
  }

  test('installs the hook and runs it: the findings fail the commit', async () => {
    const r = await run(['--all-files']);
    expect(r.out).not.toMatch(/An unexpected error has occurred|tsc: not found|npm error/);
    expect(r.out).toContain('[INFO] Installing environment for');
    expect(r.out).toMatch(/tfguard\.+Failed/);
    expect(r.out).toContain('[shared-module-upper-bound]');
    expect(r.out).toContain('6 errors, 4 warnings, 2 notices');
    expect(r.code).toBe(1);
  }, 900_000);

  test('runs for the files tfguard reads, skips the others and anything under .terraform/', async () => {
    await mkdir(join(sample, 'live', 'prod', '.terraform', 'modules'), { recursive: true });
    await writeFile(join(sample, 'notes.txt'), 'not configuration\n');
    await writeFile(
      join(sample, 'live', 'prod', '.terraform', 'modules', 'modules.json'),
      '{"Modules":[]}\n',
    );
    await writeFile(join(sample, 'live', 'prod', 'terragrunt.hcl'), 'terraform {\n  source = "."\n}\n');
    git(['add', '-A', '-f'], sample);
    const skipped = await run(['--files', 'notes.txt', 'live/prod/.terraform/modules/modules.json']);
    expect(skipped.out).toMatch(/tfguard\.+\(no files to check\)Skipped/);
    expect(skipped.code).toBe(0);
    const ran = await run(['--files', 'live/prod/terragrunt.hcl']);
    expect(ran.out).toMatch(/tfguard\.+Failed/);
    expect(ran.code).toBe(1);
    // The environment the first run installed.
    expect(skipped.out + ran.out).not.toContain('Installing environment');
  }, 900_000);
});
