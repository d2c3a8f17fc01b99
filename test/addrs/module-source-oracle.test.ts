/**
 * `parseRemoteModuleSource` against terraform 1.11: `terraform init` prints the package address it
 * downloads for each remote module call ("Downloading <package> for <name>..."), after go-getter's
 * detectors and the `//subdir` split. The getter is that address's forced `X::` prefix or URL scheme
 * ("download not supported for scheme ..." when terraform has none), and the `ref` a git getter
 * checks out is its `ref` query parameter; addresses terraform rejects outright are reported as
 * invalid. Offline: git may use no transport at all (`protocol.allow=never`), hosts are `.invalid`
 * or fail before a request, and cloud credentials are removed from the environment.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModuleGetter } from '../../src/addrs';
import { parseRemoteModuleSource, splitPackageSubdir } from '../../src/addrs';
import { packageAndDir, parseRemotePackage } from '../../src/modules/remote/source';
import { gitRepo } from '../support/git';
import type { GitRepo } from '../support/git';
import { describeWithTerraform } from '../support/external';
import type { TerraformResult } from '../support/terraform';
import { runTerraform } from '../support/terraform';

const SHA = '0123456789abcdef0123456789abcdef01234567';

/** [source, getter, ref (null: none)] */
const CASES: Array<[string, ModuleGetter | null, string | null]> = [
  ['github.com/acme/mod', 'git', null],
  ['github.com/acme/mod//sub?ref=v1.2.3', 'git', 'v1.2.3'],
  ['github.com/acme/mod.git?ref=v3.0.0', 'git', 'v3.0.0'],
  ['github.com/acme', null, null],
  ['git@github.com:acme/mod.git//sub?ref=main', 'git', 'main'],
  ['git@example.invalid:acme/repo.git?ref=v4', 'git', 'v4'],
  ['user@example.invalid:acme/repo.git', null, null],
  ['bitbucket.org/acme/mod', 'git', null],
  ['git::https://example.invalid/repo.git//sub?ref=v1.0.0&depth=1', 'git', 'v1.0.0'],
  ['git::https://example.invalid/repo.git//sub/dir?depth=1&ref=refs%2Ftags%2Fv1', 'git', 'refs/tags/v1'],
  ['git::https://example.invalid/repo.git?ref=tags%2Fv1', 'git', 'tags/v1'],
  ['git::https://example.invalid/repo.git?ref=a&ref=b', 'git', 'a'],
  ['git::https://example.invalid/r.git?x=1;ref=v1&ref=v2', 'git', 'v2'],
  [`git::ssh://git@example.invalid/acme/repo.git?ref=${SHA}`, 'git', SHA],
  ['git::git@example.invalid:acme/repo.git?ref=v2.0.0', 'git', 'v2.0.0'],
  ['git://example.invalid/repo.git?ref=v1.0.0', 'git', 'v1.0.0'],
  ['GIT::https://example.invalid/repo.git', null, null],
  ['ssh://git@example.invalid/acme/repo.git', null, null],
  ['foo::https://example.invalid/x', null, null],
  ['https://example.invalid/mod.zip', 'http', null],
  ['https://example.invalid/mod.zip?ref=main', 'http', 'main'],
  ['s3::https://s3-eu-west-1.amazonaws.com/bucket/mod.zip', 's3', null],
  ['bucket.s3-eu-west-1.amazonaws.com/mod.zip?version=3', 's3', null],
  ['acme-bucket.s3.amazonaws.com/x.zip', 's3', null],
  ['a.b.c.d.e.amazonaws.com/x.zip', null, null],
  ['www.googleapis.com/storage/v1/bucket/mod.zip', 'gcs', null],
  ['hg::https://example.invalid/repo?rev=abc', 'hg', null],
  ['/abs/path/mod', 'file', null],
  // a query after the subdir belongs to the package, which is then no registry address
  ['example.invalid/acme/mod/aws//x?ref=v1', null, 'v1'],
  ['example.invalid/acme/repo.git?ref=v1', null, 'v1'],
];

const GETTER_OF: Record<string, ModuleGetter> = {
  git: 'git',
  hg: 'hg',
  http: 'http',
  https: 'http',
  s3: 's3',
  gcs: 'gcs',
  file: 'file',
};

/** Offline: git may use no transport, no cloud credentials or metadata endpoints. */
const OFFLINE_ENV: Record<string, string | undefined> = {
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'protocol.allow',
  GIT_CONFIG_VALUE_0: 'never',
  GIT_TERMINAL_PROMPT: '0',
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_SESSION_TOKEN: undefined,
  AWS_PROFILE: undefined,
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
  AWS_CONFIG_FILE: '/nonexistent',
  GOOGLE_APPLICATION_CREDENTIALS: undefined,
  GOOGLE_CREDENTIALS: undefined,
};

describe('remote module sources (unit)', () => {
  test.each(CASES)('%s → getter %s, ref %s', (source, getter, ref) => {
    const parsed = parseRemoteModuleSource(source);
    expect(parsed).not.toBeNull();
    expect(parsed?.getter ?? null).toBe(getter);
    expect(parsed?.query.get('ref') ?? null).toBe(ref);
  });
});

describeWithTerraform('remote module sources against terraform init', () => {
  let work = '';
  let result: TerraformResult;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tfguard-sources-'));
    const tf = CASES.map(([s], i) => `module "m${i}" {\n  source = ${JSON.stringify(s)}\n}\n`).join('');
    await writeFile(join(work, 'main.tf'), tf);
    result = await runTerraform(['init', '-backend=false', '-input=false', '-no-color'], work, OFFLINE_ENV, {
      timeoutMs: 120_000,
    });
  }, 150_000);

  afterAll(async () => {
    if (work !== '') await rm(work, { recursive: true, force: true });
  });

  test.each(CASES.map((c, i) => [i, ...c] as const))('m%i %s', (i, _source, getter, ref) => {
    expect(result.timedOut).toBe(false);
    const output = result.output.replace(/\r?\n/g, ' ').replace(/\s+/g, ' ');
    const downloading = new RegExp(`Downloading (\\S+) for m${i}\\.\\.\\.`).exec(result.stdout);
    const invalid = output.includes(`in module "m${i}":`);
    if (downloading === null) {
      // terraform rejected the address before downloading anything
      expect(invalid).toBe(true);
      expect(getter).toBeNull();
      return;
    }
    const pkg = downloading[1] as string;
    const forced = /^([A-Za-z0-9]+)::/.exec(pkg);
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(pkg);
    const tfGetter =
      forced !== null
        ? (GETTER_OF[forced[1] as string] ?? null)
        : scheme !== null
          ? (GETTER_OF[(scheme[1] as string).toLowerCase()] ?? null)
          : null;
    expect(tfGetter).toBe(getter);
    if (getter === null) {
      expect(output).toContain(`"${pkg}": download not supported for scheme`);
    }
    const q = pkg.indexOf('?');
    const tfRef = q === -1 ? null : new URLSearchParams(pkg.slice(q + 1)).get('ref');
    expect(tfRef).toBe(ref);
  });
});

/**
 * The `//subdir` split, against `terraform get` on `git::file://` sources of a real repository
 * (tags v1 and v2, each with `sub/` and `a/b/`). These are the addresses on which tfguard's two
 * former readings (the pinning rule's and the remote resolver's) disagreed: a `//` in the query,
 * a `://` in the query, and subdirectories Terraform cleans. Terraform prints the package it
 * downloads ("Downloading <package> for mN...") and the directory it installs ("- mN in
 * .terraform/modules/mN/<subdir>"); a ref that is not a tag fails to download.
 */
const SPLIT_CASES: string[] = [
  'git::REPO?ref=v1//sub',
  'git::REPO//sub?ref=v1',
  'git::REPO//a//b?ref=v2',
  'git::REPO//sub/?ref=v1',
  'git::REPO//./sub?ref=v2',
  'git::REPO///sub?ref=v1',
  'git::REPO//a/../sub?ref=v1',
  'git::REPO?ref=v2&x=a://b//sub',
  'git::REPO//sub?ref=v1&x=a://b//c',
  'git::REPO?ref=v1//a//b',
];

/** Git may use the file transport only. */
const FILE_ONLY_ENV: Record<string, string | undefined> = {
  ...OFFLINE_ENV,
  GIT_CONFIG_COUNT: '2',
  GIT_CONFIG_KEY_1: 'protocol.file.allow',
  GIT_CONFIG_VALUE_1: 'always',
};

describe('one //subdir reading for the rules and the resolver (unit)', () => {
  test.each(SPLIT_CASES)('%s', (template) => {
    const source = template.replace('REPO', 'file:///srv/repo');
    const shared = splitPackageSubdir(source);
    // The resolver reads it through the same function (`'.'` for the package root).
    expect(packageAndDir(source)).toEqual({
      pkg: shared.pkg,
      subdir: shared.subdir === '' ? '.' : shared.subdir,
    });
    expect(parseRemoteModuleSource(source)).toMatchObject({ pkg: shared.pkg, subdir: shared.subdir });
  });

  test('a git ref with a // (a subdirectory written after the query) is not downloaded', () => {
    const p = parseRemotePackage('git::https://github.com/acme/mod.git?ref=v1//sub');
    expect(p).toEqual({
      kind: 'unsupported',
      reason: expect.stringContaining('"v1//sub" is not a valid git ref name'),
    });
    const q = parseRemotePackage('git::https://github.com/acme/mod.git//sub?ref=v1');
    expect(q).toMatchObject({ kind: 'archive', ref: 'v1', subdir: 'sub' });
  });
});

describeWithTerraform('the //subdir split against terraform get (git::file://)', () => {
  let repo: GitRepo | null = null;
  let work = '';
  let result: TerraformResult;
  const sources: string[] = [];

  beforeAll(async () => {
    const files = (tag: string): Record<string, string> => ({
      'main.tf': `output "v" { value = "${tag}-root" }\n`,
      'sub/main.tf': `output "v" { value = "${tag}-sub" }\n`,
      'a/b/main.tf': `output "v" { value = "${tag}-ab" }\n`,
    });
    repo = await gitRepo({ v1: files('v1'), v2: files('v2') });
    work = await mkdtemp(join(tmpdir(), 'tfguard-subdir-'));
    for (const c of SPLIT_CASES) sources.push(c.replace('REPO', `file://${repo.dir}`));
    const tf = sources.map((s, i) => `module "m${i}" {\n  source = ${JSON.stringify(s)}\n}\n`).join('');
    await writeFile(join(work, 'main.tf'), tf);
    result = await runTerraform(['get', '-no-color'], work, FILE_ONLY_ENV, { timeoutMs: 120_000 });
  }, 150_000);

  afterAll(async () => {
    if (work !== '') await rm(work, { recursive: true, force: true });
    if (repo !== null) await rm(repo.dir, { recursive: true, force: true });
  });

  test.each(SPLIT_CASES.map((c, i) => [i, c] as const))('m%i %s', (i) => {
    expect(result.timedOut).toBe(false);
    const source = sources[i] as string;
    const { pkg, subdir } = splitPackageSubdir(source);
    const downloading = new RegExp(`Downloading (\\S+) for m${i}\\.\\.\\.`).exec(result.stdout);
    expect(downloading?.[1]).toBe(pkg);
    const query = parseRemoteModuleSource(source)?.query ?? new Map<string, string>();
    const ref = query.get('ref') ?? null;
    // git's getter passes query parameters other than ref/depth/sshkey on to the clone URL, where
    // the file transport fails on them: those cases check the package terraform reads, no more.
    const cloneable = [...query.keys()].every((k) => k === 'ref');
    const installed = new RegExp(`- m${i} in (\\S+)`).exec(result.stdout);
    if (cloneable && (ref === 'v1' || ref === 'v2')) {
      expect(installed?.[1]).toBe(
        subdir === '' ? `.terraform/modules/m${i}` : `.terraform/modules/m${i}/${subdir}`,
      );
    } else {
      // the ref tfguard reads is no tag of the repository (or the clone URL keeps a parameter):
      // terraform cannot check it out either
      expect(installed).toBeNull();
      expect(result.output).toContain(`Could not download module "m${i}"`);
    }
  });
});
