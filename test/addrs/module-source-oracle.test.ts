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
import { parseRemoteModuleSource } from '../../src/addrs';
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
