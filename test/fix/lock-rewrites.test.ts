/**
 * Lock rewrites of `tfguard fix` write only what Terraform would write, checked
 * byte for byte against `terraform providers lock -fs-mirror=DIR -platform=...` (terraform 1.11,
 * offline, fake provider packages) for every lock scenario the fix produces without a registry:
 * a stale entry, drifted constraints, both, the constraints a constraint fix changes (with
 * `versions.tf` / `versions.tofu` twins), and a Terragrunt unit (assembled as Terragrunt runs it:
 * the module package copied, `versions.tf` generated from the unit's `generate` block, the lock
 * kept in the unit's directory). Where Terraform would not write the line (a locked version the
 * new constraints exclude, `lock-version-mismatch`) or the tree is partial (a `run_cmd` in a
 * `generate` block may require providers tfguard cannot see), the lock file is left as it is and
 * the reason is listed for a person.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { cli } from '../support/cli';
import { describeWithTerraform } from '../support/external';
import { runTerraform, withMirror, writeTree } from '../support/terraform';
import type { Mirror } from '../support/terraform';

const L = '.terraform.lock.hcl';
const PLATFORMS = ['linux_amd64', 'darwin_arm64'];
const PROVIDERS: [string, string][] = [
  ['hashicorp/aws', '5.94.0'],
  ['hashicorp/aws', '6.8.0'],
  ['hashicorp/null', '3.2.2'],
  ['hashicorp/random', '3.6.0'],
  ['hashicorp/time', '0.9.1'],
];

const versionsTf = (aws: string, extra = ''): string =>
  'terraform {\n  required_providers {\n' +
  `    aws  = { source = "hashicorp/aws", version = "${aws}" }\n` +
  '    null = { source = "hashicorp/null", version = "~> 3.2" }\n' +
  `${extra}  }\n}\n`;
const RANDOM = '    random = { source = "hashicorp/random", version = "~> 3.6" }\n';

let mirror: Mirror;
let n = 0;

/** What `terraform providers lock -fs-mirror` writes for `files` (a configuration without a lock). */
async function terraformLock(files: Record<string, string>, sub = '.'): Promise<string> {
  const dir = path.join(mirror.dir, `tf-${n++}`);
  await writeTree(dir, files);
  const cwd = path.join(dir, sub);
  const r = await runTerraform(
    [
      'providers',
      'lock',
      `-fs-mirror=${mirror.mirrorDir}`,
      ...PLATFORMS.map((p) => `-platform=${p}`),
      '-no-color',
    ],
    cwd,
    mirror.env,
  );
  if (r.code !== 0) throw new Error(`terraform providers lock failed:\n${r.output}`);
  return fs.readFile(path.join(cwd, L), 'utf8');
}

/** A fresh checkout with `files`. */
async function checkout(files: Record<string, string>): Promise<string> {
  const dir = path.join(mirror.dir, `co-${n++}`);
  await writeTree(dir, files);
  return dir;
}

/** The entry block of `source` in a lock file. */
function block(lock: string, source: string): string {
  const m = new RegExp(`\\nprovider "registry\\.terraform\\.io/${source}" \\{\\n[\\s\\S]*?\\n\\}\\n`).exec(
    lock,
  );
  if (m === null) throw new Error(`no ${source} entry`);
  return m[0];
}

describeWithTerraform('lock rewrites against terraform providers lock -fs-mirror', () => {
  beforeAll(async () => {
    mirror = await withMirror(
      PROVIDERS.flatMap(([source, version]) => PLATFORMS.map((platform) => ({ source, version, platform }))),
    );
  }, 60_000);
  afterAll(async () => {
    await mirror?.cleanup();
  });

  /** Runs fix, expects the lock file to be `expected`, a second run to change nothing. */
  async function fixedTo(dir: string, lockPath: string, expected: string): Promise<string> {
    const dry = await cli(['fix', dir, '--dry-run']);
    const real = await cli(['fix', dir]);
    expect(await fs.readFile(path.join(dir, lockPath), 'utf8')).toBe(expected);
    expect((await cli(['fix', dir, '--dry-run'])).stdout).toBe('');
    return `${dry.stderr}\n${real.stdout}`;
  }

  it('a stale entry, drifted constraints, and both: the bytes terraform writes', async () => {
    const config = { 'versions.tf': versionsTf('~> 5.94') };
    const expected = await terraformLock(config);
    const withRandom = await terraformLock({ 'versions.tf': versionsTf('~> 5.94', RANDOM) });
    const stale = expected + block(withRandom, 'hashicorp/random');
    const drift = expected.replace('constraints = "~> 5.94"', 'constraints = ">= 5.0.0"');
    expect(drift).not.toBe(expected);
    for (const spoilt of [stale, drift, drift + block(withRandom, 'hashicorp/random')]) {
      const dir = await checkout({ ...config, [L]: spoilt });
      await fixedTo(dir, L, expected);
    }
  }, 120_000);

  it('constraints a constraint fix changes, with versions.tf / versions.tofu twins', async () => {
    const before = { 'versions.tf': versionsTf('>= 5.1'), 'versions.tofu': versionsTf('>= 5.1') };
    const lock = await terraformLock({ 'versions.tf': versionsTf('>= 5.1') });
    expect(lock).toContain('version     = "6.8.0"');
    const dir = await checkout({ ...before, [L]: lock });
    // The root's unbounded aws becomes ~> of its locked version, in both twins; the lock records it.
    const expected = await terraformLock({ 'versions.tf': versionsTf('~> 6.8') });
    await fixedTo(dir, L, expected);
    expect(await fs.readFile(path.join(dir, 'versions.tf'), 'utf8')).toBe(versionsTf('~> 6.8'));
    expect(await fs.readFile(path.join(dir, 'versions.tofu'), 'utf8')).toBe(versionsTf('~> 6.8'));
  }, 120_000);

  it('through symlinks: the targets are rewritten, the links stay links', async () => {
    const lock = await terraformLock({ 'versions.tf': versionsTf('>= 5.1') });
    const withRandom = await terraformLock({ 'versions.tf': versionsTf('>= 5.1', RANDOM) });
    const dir = await checkout({
      'common/versions.tf.shared': versionsTf('>= 5.1'),
      'common/prod.lock.hcl': lock + block(withRandom, 'hashicorp/random'),
      'envs/prod/main.tf': 'resource "aws_vpc" "x" {}\n',
    });
    await fs.symlink('../../common/versions.tf.shared', path.join(dir, 'envs/prod/versions.tf'));
    await fs.symlink('../../common/prod.lock.hcl', path.join(dir, `envs/prod/${L}`));
    const expected = await terraformLock({ 'versions.tf': versionsTf('~> 6.8') });
    await fixedTo(dir, `envs/prod/${L}`, expected);
    expect(await fs.readlink(path.join(dir, `envs/prod/${L}`))).toBe('../../common/prod.lock.hcl');
    expect(await fs.readlink(path.join(dir, 'envs/prod/versions.tf'))).toBe(
      '../../common/versions.tf.shared',
    );
    expect(await fs.readFile(path.join(dir, 'common/versions.tf.shared'), 'utf8')).toBe(versionsTf('~> 6.8'));
  }, 120_000);

  it('never writes constraints the locked version does not satisfy: it advises init -upgrade', async () => {
    const lock = await terraformLock({ 'versions.tf': versionsTf('~> 5.94') });
    const dir = await checkout({ 'versions.tf': versionsTf('6.8.0'), [L]: lock });
    const out = await fixedTo(dir, L, lock);
    expect(out).toMatch(
      /lock-constraints-drift.*locked version 5\.94\.0 does not satisfy "6\.8\.0".*init -upgrade/,
    );
    // What Terraform does instead: select a new version (6.8.0), which needs its checksums.
    const upgraded = await terraformLock({ 'versions.tf': versionsTf('6.8.0') });
    expect(block(upgraded, 'hashicorp/aws')).toContain('version     = "6.8.0"');
  }, 120_000);

  /** A Terragrunt repository: one unit whose root.hcl generates versions.tf for modules/app. */
  const unit = (contents: string): Record<string, string> => ({
    'root.hcl': [
      'generate "versions" {',
      '  path      = "versions.tf"',
      '  if_exists = "overwrite_terragrunt"',
      '  contents  = <<EOF',
      contents.trimEnd(),
      'EOF',
      '}',
      '',
    ].join('\n'),
    'live/app/terragrunt.hcl': [
      'include "root" {',
      '  path = find_in_parent_folders("root.hcl")',
      '}',
      'terraform {',
      '  source = "../../modules//app"',
      '}',
      '',
    ].join('\n'),
    'modules/app/main.tf': 'resource "aws_s3_bucket" "b" {}\nresource "null_resource" "n" {}\n',
  });

  it('a Terragrunt unit: the lock of the unit as Terragrunt runs it', async () => {
    const generated = versionsTf('~> 5.94');
    // Terragrunt's working copy: the package, with the generated file beside the module.
    const expected = await terraformLock(
      { 'app/main.tf': unit(generated)['modules/app/main.tf'] as string, 'app/versions.tf': generated },
      'app',
    );
    const withRandom = await terraformLock({ 'versions.tf': versionsTf('~> 5.94', RANDOM) });
    const spoilt =
      expected.replace('constraints = "~> 5.94"', 'constraints = ">= 5.0.0"') +
      block(withRandom, 'hashicorp/random');
    const dir = await checkout({ ...unit(generated), [`live/app/${L}`]: spoilt });
    await fixedTo(dir, `live/app/${L}`, expected);
  }, 120_000);

  it('a Terragrunt unit whose generate runs a command: no entry is removed', async () => {
    const generated = `${versionsTf('~> 5.94')}\${run_cmd("./extra.sh")}\n`;
    // What the command adds when Terragrunt runs: a time resource, so terraform locks time too.
    const ran = `${versionsTf('~> 5.94')}resource "time_static" "t" {}\n`;
    const lock = await terraformLock(
      { 'app/main.tf': unit('')['modules/app/main.tf'] as string, 'app/versions.tf': ran },
      'app',
    );
    expect(lock).toContain('registry.terraform.io/hashicorp/time');
    const dir = await checkout({ ...unit(generated), [`live/app/${L}`]: lock });
    await fixedTo(dir, `live/app/${L}`, lock);
  }, 120_000);
});
