/**
 * The CI examples of docs/ci/ as a user copies them into another repository: nothing in them may
 * need a file of this repository (they use the action, the npm package or the package's script),
 * their fork guards are evaluated for every kind of event (GitHub's expression rules for the
 * workflow, GitLab's `rules:` for the pipeline), their pinned versions are this version, and their
 * shell commands are run: the GitLab API job's script fetches the scan script from a package
 * tarball laid out as npm lays it out and scans through the SigV4-verifying stand-in to the real
 * handlers; the CLI commands run the CLI of this checkout in place of
 * `npx github:tfguard/tfguard#v<version>`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { checkoutSample, condition, type ActionDefinition, type Contexts } from '../support/github-actions';
import { REPOSITORY_URL } from '../../src/version';
import pkg from '../../package.json';
import { CI_AWS_ENV, startApiStandIn, type ApiStandIn } from '../support/api-stand-in';
import { type Harness, startHarness } from '../support/lambda';

const exec = promisify(execFile);
const REPO = resolve(__dirname, '..', '..');
const CLI = join(REPO, 'bin', 'tfguard.js');

interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  jobs: Record<
    string,
    {
      if?: string;
      permissions?: Record<string, string>;
      steps: Array<{ uses?: string; with?: Record<string, unknown>; run?: string }>;
    }
  >;
}
interface GitLabJob {
  image: unknown;
  variables?: Record<string, string>;
  before_script?: string[];
  script: string[];
  artifacts: { paths?: string[]; reports?: Record<string, string>; when?: string };
  rules: Array<{ if: string }>;
}

let workflow: Workflow;
let gitlab: Record<string, GitLabJob> & { variables: Record<string, string> };
let action: ActionDefinition;
let work: string;

beforeAll(async () => {
  workflow = load(await readFile(join(REPO, 'docs/ci/github-actions.yml'), 'utf8')) as Workflow;
  gitlab = load(await readFile(join(REPO, 'docs/ci/gitlab-ci.yml'), 'utf8')) as typeof gitlab;
  action = load(await readFile(join(REPO, 'action.yml'), 'utf8')) as ActionDefinition;
  work = await mkdtemp(join(tmpdir(), 'tfguard-ci-examples-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** A checked-out repository under the work directory: the sample configuration, committed. */
const checkout = (name: string): Promise<string> => checkoutSample(join(work, name));

/** Runs CI shell lines as one bash session (as both GitLab and a `run:` step do). */
async function shell(
  lines: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec('bash', ['-e', '-o', 'pipefail', '-c', lines.join('\n')], {
      cwd,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? work, ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** `npx github:tfguard/tfguard#v<version>` as the examples write it → this checkout's CLI. */
function localCli(line: string): string {
  const npx = /npx --yes "?github:tfguard\/tfguard#v(\$TFGUARD_VERSION|[0-9.]+)"?/;
  expect(line).toMatch(npx);
  return line.replace(npx, `node ${JSON.stringify(CLI)}`);
}

test('no example needs a file of this repository, and every pinned version is this version', async () => {
  const files = [
    'docs/ci/github-actions.yml',
    'docs/ci/gitlab-ci.yml',
    'action.yml',
    '.pre-commit-hooks.yaml',
    'README.md',
    'docs/ci/README.md',
  ];
  const owner = new URL(REPOSITORY_URL).pathname.slice(1);
  let pins = 0;
  for (const file of files) {
    const text = await readFile(join(REPO, file), 'utf8');
    for (const m of text.matchAll(/uses: ([\w-]+\/[\w-]+)@v([0-9.]+)/g)) {
      if (m[1] !== owner) continue;
      expect(`${file}: ${m[2]}`).toBe(`${file}: ${pkg.version}`);
      pins++;
    }
    for (const m of text.matchAll(
      /tfguard@([0-9][0-9.]*)|rev: v([0-9.]+)|TFGUARD_VERSION: '([0-9.]+)'|tfguard#v([0-9][0-9.]*)/g,
    )) {
      expect(`${file}: ${m[1] ?? m[2] ?? m[3] ?? m[4]}`).toBe(`${file}: ${pkg.version}`);
      pins++;
    }
  }
  // The action in the example workflow (both jobs) and in action.yml's comment, the GitLab
  // variable, the pre-commit rev in the hook file and the README.
  expect(pins).toBeGreaterThanOrEqual(6);
  for (const file of ['docs/ci/github-actions.yml', 'docs/ci/gitlab-ci.yml']) {
    const text = await readFile(join(REPO, file), 'utf8');
    const commands = text.split('\n').filter((l) => /^\s*(- |run: )/.test(l) && !/^\s*- uses:/.test(l));
    expect(
      commands.filter(
        (l) => /docs\/ci\/|\.\/tfguard-scan\.sh|bin\/tfguard/.test(l) && !/"\$tfguard\/docs\/ci\//.test(l),
      ),
    ).toEqual([]);
  }
});

describe('GitHub Actions example', () => {
  const event = (name: string, headRepository?: string): Contexts => ({
    github: {
      event_name: name,
      repository: 'acme/network',
      event: headRepository
        ? { pull_request: { number: 3, head: { repo: { full_name: headRepository } } } }
        : {},
    },
    vars: {},
    secrets: {},
    env: {},
    inputs: {},
  });
  const jobsFor = (contexts: Contexts) =>
    Object.entries(workflow.jobs)
      .filter(([, job]) => condition(job.if, contexts, { failed: false }))
      .map(([name]) => name);

  test('a push or a pull request from the repository uses the API; a fork pull request the CLI', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    expect(jobsFor(event('push'))).toEqual(['tfguard']);
    expect(jobsFor(event('pull_request', 'acme/network'))).toEqual(['tfguard']);
    expect(jobsFor(event('pull_request', 'mallory/network'))).toEqual(['tfguard-fork']);
    // The fork job holds no credentials and may not ask for any.
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(workflow.jobs['tfguard-fork']!.permissions).toBeUndefined();
  });

  test("the API job calls this repository's action with inputs it has and the permissions it needs", () => {
    const job = workflow.jobs.tfguard!;
    expect(job.permissions).toEqual({
      contents: 'read',
      'id-token': 'write',
      'security-events': 'write',
      'pull-requests': 'write',
    });
    expect(job.steps[0]!.uses).toBe('actions/checkout@v4');
    const step = job.steps.find((s) => s.uses?.startsWith(`${new URL(REPOSITORY_URL).pathname.slice(1)}@`));
    expect(step?.uses).toBe(`${new URL(REPOSITORY_URL).pathname.slice(1)}@v${pkg.version}`);
    const given = Object.keys(step!.with ?? {});
    expect(given.filter((k) => !(k in action.inputs))).toEqual([]);
    const required = Object.entries(action.inputs)
      .filter(([, i]) => i.required)
      .map(([k]) => k);
    expect(required.filter((k) => !given.includes(k))).toEqual([]);
  });

  test('the fork job runs the action in the runner: no api-url, no credentials, no SARIF upload', () => {
    // test/handlers/action.test.ts runs the action this way on a fork pull request.
    const steps = workflow.jobs['tfguard-fork']!.steps;
    expect(steps.filter((s) => s.run !== undefined)).toEqual([]);
    const step = steps.find((s) => s.uses?.startsWith(`${new URL(REPOSITORY_URL).pathname.slice(1)}@`));
    expect(step?.uses).toBe(`${new URL(REPOSITORY_URL).pathname.slice(1)}@v${pkg.version}`);
    expect(Object.keys(step!.with ?? {}).filter((k) => !(k in action.inputs))).toEqual([]);
    expect(step!.with).not.toHaveProperty('api-url');
    expect(step!.with).not.toHaveProperty('role-to-assume');
    expect(step!.with!['sarif-upload']).toBe(false);
  });
});

/** GitLab's `rules: if:` expressions: `$VAR`, string literals, `==`, `!=`, `&&`, `||`, parentheses. */
function gitlabIf(expression: string, variables: Record<string, string>): boolean {
  const tokens = expression.match(/\$\w+|"[^"]*"|'[^']*'|==|!=|&&|\|\||\(|\)|\S+/g) ?? [];
  let pos = 0;
  const value = (): string | null => {
    const t = tokens[pos++]!;
    if (t.startsWith('$')) return variables[t.slice(1)] ?? null;
    if (/^["']/.test(t)) return t.slice(1, -1);
    if (t === 'null') return null;
    throw new Error(`unsupported token ${t} in ${expression}`);
  };
  const comparison = (): boolean => {
    if (tokens[pos] === '(') {
      pos++;
      const v = or();
      pos++;
      return v;
    }
    const left = value();
    if (tokens[pos] === '==' || tokens[pos] === '!=') {
      const op = tokens[pos++];
      const right = value();
      return op === '==' ? left === right : left !== right;
    }
    return left !== null && left !== '';
  };
  const and = (): boolean => {
    let v = comparison();
    while (tokens[pos] === '&&') {
      pos++;
      v = comparison() && v;
    }
    return v;
  };
  const or = (): boolean => {
    let v = and();
    while (tokens[pos] === '||') {
      pos++;
      v = and() || v;
    }
    return v;
  };
  const result = or();
  if (pos !== tokens.length) throw new Error(`unexpected ${tokens[pos]} in ${expression}`);
  return result;
}

describe('GitLab CI example', () => {
  const jobsFor = (variables: Record<string, string>) =>
    Object.entries(gitlab)
      .filter(([name]) => name !== 'variables')
      .filter(([, job]) => (job as GitLabJob).rules.some((r) => gitlabIf(r.if, variables)))
      .map(([name]) => name);

  test('the default branch and merge requests within the project use the API; fork merge requests only the CLI', () => {
    const base = { CI_DEFAULT_BRANCH: 'main', CI_PROJECT_ID: '10' };
    expect(jobsFor({ ...base, CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BRANCH: 'main' })).toEqual(['tfguard']);
    expect(jobsFor({ ...base, CI_PIPELINE_SOURCE: 'push', CI_COMMIT_BRANCH: 'feature' })).toEqual([]);
    const mr = { ...base, CI_PIPELINE_SOURCE: 'merge_request_event', CI_MERGE_REQUEST_PROJECT_ID: '10' };
    expect(jobsFor({ ...mr, CI_MERGE_REQUEST_SOURCE_PROJECT_ID: '10' })).toEqual([
      'tfguard',
      'tfguard-code-quality',
    ]);
    // From a fork, whether the pipeline runs in the fork or in this project.
    expect(jobsFor({ ...mr, CI_MERGE_REQUEST_SOURCE_PROJECT_ID: '20' })).toEqual(['tfguard-code-quality']);
    expect(jobsFor({ ...mr, CI_PROJECT_ID: '20', CI_MERGE_REQUEST_SOURCE_PROJECT_ID: '20' })).toEqual([
      'tfguard-code-quality',
    ]);
  });

  test('the API job fetches the scan script from the package and scans HEAD: every request verifies', async () => {
    const h: Harness = await startHarness();
    const api: ApiStandIn = await startApiStandIn(h);
    try {
      // The repository's tarball at the tag as GitHub serves it (archive/refs/tags/v….tar.gz:
      // one top directory, tfguard-<version>/).
      const pack = join(work, 'pack');
      const top = `tfguard-${pkg.version}`;
      await mkdir(join(pack, top, 'docs', 'ci'), { recursive: true });
      await copyFile(join(REPO, 'docs/ci/tfguard-scan.sh'), join(pack, top, 'docs/ci/tfguard-scan.sh'));
      await writeFile(
        join(pack, top, 'package.json'),
        JSON.stringify({ name: 'tfguard', version: pkg.version }),
      );
      const tgz = join(work, `v${pkg.version}.tar.gz`);
      await exec('tar', ['-czf', tgz, '-C', pack, top]);

      const job = gitlab.tfguard!;
      const dir = await checkout('gl-api');
      const before = api.gateway.records.length;
      const r = await shell(job.script, dir, {
        ...gitlab.variables,
        ...job.variables,
        ...CI_AWS_ENV, // what before_script exports from sts assume-role-with-web-identity
        CI_PROJECT_PATH: 'acme/network',
        TFGUARD_API: api.gateway.url,
        TFGUARD_SOURCE_URL: `file://${tgz}`,
        TFGUARD_POLL_SECONDS: '0.2',
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(
        /^tfguard: (1 error|\d+ errors), (1 warning|\d+ warnings), (1 notice|\d+ notices); verdict fail \(fail on error\), scan [0-9a-f]{32}\n$/,
      );
      for (const artifact of job.artifacts.paths!)
        expect((await readFile(join(dir, artifact))).length).toBeGreaterThan(0);
      const calls = api.gateway.records.slice(before);
      expect(calls.map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{32}$/, '{id}')}`)).toEqual([
        'POST /scans',
        'GET /scans/{id}',
        'GET /scans/{id}',
      ]);
      expect(calls.every((c) => c.verified)).toBe(true);
    } finally {
      await api.stop();
      await h.stop();
    }
  });

  test('the Code Quality job writes the report GitLab reads, then gates with the CLI', async () => {
    const job = gitlab['tfguard-code-quality']!;
    expect(job.artifacts.reports).toEqual({ codequality: 'gl-code-quality-report.json' });
    const dir = await checkout('gl-cq');
    const r = await shell(job.script.map(localCli), dir, { ...gitlab.variables, NO_COLOR: '1' });
    expect(r.code).toBe(1);
    const issues = JSON.parse(await readFile(join(dir, 'gl-code-quality-report.json'), 'utf8'));
    expect(issues.length).toBeGreaterThan(0);
    for (const issue of issues) {
      expect(Object.keys(issue).sort()).toEqual([
        'check_name',
        'description',
        'fingerprint',
        'location',
        'severity',
      ]);
    }
  });
});
