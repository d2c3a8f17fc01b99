/**
 * `--policy` and `--repository` on the command line (docs/policy.md): a real repository from the
 * corpus checked out in a git working tree whose remote names the repository, the policy read from
 * a file; a broken policy is exit 2 naming file and line, and `fix` applies the narrowing fix.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { remoteRepositoryName } from '../../src/cli/main';
import type { Report } from '../../src/report/types';
import { cli } from '../support/cli';
import { readCorpusArchive, tarGzFiles } from '../support/corpus';
import { describeWithCorpus } from '../support/external';
import { git } from '../support/git';

const EKS = 'hashicorp_learn-terraform-provision-eks-cluster.tar.gz';
const POLICY = `provider "hashicorp/aws" {
  versions = ">= 5.50, < 7.0"
}
exception {
  repository = "acme/legacy"
  rule       = "policy-provider-version"
  provider   = "hashicorp/aws"
  reason     = "migration planned for Q1"
  expires    = "2099-12-31"
}
`;

let tmp: string;
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-policy-cli-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function checkout(
  name: string,
  edit: (files: Record<string, Buffer>) => void = () => {},
): Promise<string> {
  const dir = path.join(tmp, name);
  const files = await tarGzFiles(await readCorpusArchive(EKS));
  edit(files);
  for (const [p, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await fs.writeFile(path.join(dir, p), content);
  }
  return dir;
}

async function writePolicy(name: string, text: string): Promise<string> {
  const file = path.join(tmp, name);
  await fs.writeFile(file, text);
  return file;
}

const versionFindings = (r: { stdout: string }) =>
  (JSON.parse(r.stdout) as Report).findings.filter((f) => f.ruleId === 'policy-provider-version');

test.each([
  ['git@github.com:acme/legacy.git', 'acme/legacy'],
  ['https://github.com/acme/legacy', 'acme/legacy'],
  ['https://github.com/acme/legacy.git/', 'acme/legacy'],
  ['ssh://git@gitlab.example.com:2222/group/sub/infra.git', 'sub/infra'],
  ['/srv/git/infra.git', 'git/infra'],
  ['infra', null],
])('the repository of git remote %s is %s', (url, name) => {
  expect(remoteRepositoryName(url)).toBe(name);
});

describeWithCorpus('tfguard scan --policy', () => {
  test('the git remote names the repository: its exception applies; --repository overrides it', async () => {
    const dir = await checkout('legacy');
    git(['init', '-q', '-b', 'main'], dir);
    git(['remote', 'add', 'origin', 'git@github.com:acme/legacy.git'], dir);
    const policy = await writePolicy('policy.hcl', POLICY);

    const excused = await cli([
      'scan',
      dir,
      '--policy',
      policy,
      '--format',
      'json',
      '--rule',
      'policy-provider-version',
    ]);
    expect(excused.stderr).toBe('');
    expect(excused.code).toBe(0);
    expect(versionFindings(excused).map((f) => [f.severity, f.file, f.suppressed?.reason])).toEqual([
      ['error', '.terraform.lock.hcl', 'migration planned for Q1 (policy exception until 2099-12-31)'],
      ['warning', 'terraform.tf', 'migration planned for Q1 (policy exception until 2099-12-31)'],
    ]);

    const other = await cli([
      'scan',
      dir,
      '--policy',
      policy,
      '--repository',
      'acme/eks',
      '--format',
      'json',
    ]);
    expect(other.code).toBe(1);
    expect(versionFindings(other).map((f) => [f.severity, f.suppressed ?? null])).toEqual([
      ['error', null],
      ['warning', null],
    ]);
  });

  test('without a git remote the directory name is the repository', async () => {
    const dir = await checkout('legacy-copy');
    const policy = await writePolicy('policy-dir.hcl', POLICY.replace('acme/legacy', 'legacy-*'));
    const r = await cli(['scan', dir, '--policy', policy, '--format', 'json']);
    expect(versionFindings(r).every((f) => f.suppressed !== undefined)).toBe(true);
    expect(versionFindings(r)).toHaveLength(2);
  });

  test('a broken policy is exit 2, naming the file and line, with nothing on stdout', async () => {
    const dir = await checkout('broken');
    const policy = await writePolicy('broken.hcl', POLICY.replace('"2099-12-31"', '"2099-13-01"'));
    for (const command of [
      ['scan', dir],
      ['fix', dir, '--dry-run'],
    ]) {
      const r = await cli([...command, '--policy', policy]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `tfguard: policy ${policy}:9: "expires" must be a date written YYYY-MM-DD, got "2099-13-01"\n`,
      );
    }
    const missing = await cli(['scan', dir, '--policy', path.join(tmp, 'nope.hcl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read --policy');
    const alone = await cli(['scan', dir, '--repository', 'acme/x']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--repository is used only with --policy');
  });

  test('fix --policy narrows the root constraint into the policy range', async () => {
    const dir = await checkout('fixme', (files) => {
      files['terraform.tf'] = Buffer.from(
        (files['terraform.tf'] as Buffer).toString().replace('"~> 5.47.0"', '">= 5.0"'),
      );
    });
    const policy = await writePolicy(
      'range.hcl',
      'provider "hashicorp/aws" {\n  versions = ">= 5.40, < 7.0"\n}\n',
    );
    const r = await cli(['fix', dir, '--policy', policy, '--rule', 'policy-provider-version']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('policy-provider-version');
    const tf = await fs.readFile(path.join(dir, 'terraform.tf'), 'utf8');
    expect(tf).toContain('version = ">= 5.40, < 7.0"');
    expect(r.code).toBe(0);
    const again = await cli(['scan', dir, '--policy', policy, '--format', 'json']);
    expect(versionFindings(again)).toEqual([]);
  });

  test('audit --policy judges each archive as the repository it is named after', async () => {
    const archives = path.join(tmp, 'archives');
    await fs.mkdir(archives, { recursive: true });
    await fs.writeFile(path.join(archives, 'legacy.tar.gz'), await readCorpusArchive(EKS));
    const policy = await writePolicy('audit.hcl', POLICY.replace('acme/legacy', 'legacy'));
    const store = path.join(tmp, 'store');
    const r = await cli(['audit', archives, '--store', store, '--format', 'json', '--policy', policy]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const bad = await cli([
      'audit',
      archives,
      '--store',
      store,
      '--policy',
      await writePolicy('bad.hcl', 'nope = 1\n'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.hcl:1: unknown setting "nope"');
  });
});
