/**
 * The reusable GitHub Action (action.yml at the repository root), its steps run as the Actions
 * runner runs a composite action (test/support/github-actions.ts): bash for `run` steps, step
 * outputs, conditions, `uses` steps recorded, with the environment a runner gives (GITHUB_WORKSPACE,
 * GITHUB_EVENT_PATH holding the event, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_TOKEN,
 * GITHUB_ACTION_PATH pointing at a checkout of the action). By default the action scans in the
 * runner with the CLI of that checkout (bin/tfguard.js); with `api-url` the scan step runs
 * docs/ci/tfguard-scan.sh with the real curl against the real API handlers behind the
 * SigV4-verifying stand-in for API Gateway. Comments and review suggestions go to a stand-in for
 * GitHub's REST API on 127.0.0.1 that records every request.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { runCli } from '../../src/cli/main';
import type { Report } from '../../src/report';
import {
  checkoutSample,
  condition,
  evaluate,
  runCompositeAction,
  type ActionDefinition,
  type StepResult,
  type Value,
} from '../support/github-actions';
import { CI_AWS_ENV, startApiStandIn, type ApiStandIn } from '../support/api-stand-in';
import { type Harness, startHarness } from '../support/lambda';

const exec = promisify(execFile);

const REPO = resolve(__dirname, '..', '..');
const TOKEN = 'ghs_example_token';

let h: Harness;
let api: ApiStandIn;
let action: ActionDefinition;
let work: string;
let github: Server;
let githubUrl: string;
let actionPath: string;
interface Comment {
  id: number;
  body: string;
  user: { login: string };
}
const comments: Comment[] = [];
const reviewComments: Array<
  Comment & { path: string; line: number; start_line?: number; commit_id: string }
> = [];
const githubCalls: string[] = [];
/** Who the GITHUB_TOKEN writes as: GitHub's bot for the Actions app. */
const BOT = 'github-actions[bot]';
const HEAD_SHA = '0123456789abcdef0123456789abcdef01234567';

/** GitHub's REST API, the calls the action makes, for pull request 7 of acme/network. As GitHub
 * does for an installation token, GET /user is refused (403). */
function startGitHub(): Promise<void> {
  github = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      githubCalls.push(`${req.method} ${url.pathname}${url.search}`);
      const reply = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return reply(401, { message: 'Bad credentials' });
      if (url.pathname === '/user') {
        return reply(403, { message: 'Resource not accessible by integration' });
      }
      const page = (list: unknown[]) => {
        const per = Number(url.searchParams.get('per_page') ?? 30);
        const n = Number(url.searchParams.get('page') ?? 1);
        return list.slice((n - 1) * per, n * per);
      };
      if (url.pathname === '/repos/acme/network/issues/7/comments' && req.method === 'GET') {
        return reply(200, page(comments));
      }
      if (url.pathname === '/repos/acme/network/issues/7/comments' && req.method === 'POST') {
        const comment = {
          id: 1000 + comments.length,
          body: (JSON.parse(body) as { body: string }).body,
          user: { login: BOT },
        };
        comments.push(comment);
        return reply(201, comment);
      }
      if (url.pathname === '/repos/acme/network/pulls/7/comments' && req.method === 'GET') {
        return reply(200, page(reviewComments));
      }
      if (url.pathname === '/repos/acme/network/pulls/7/comments' && req.method === 'POST') {
        const c = JSON.parse(body) as (typeof reviewComments)[number] & { side: string };
        // GitHub's required fields for a comment on lines of the head commit.
        if (c.commit_id !== HEAD_SHA || c.side !== 'RIGHT' || !c.path || !(c.line > 0) || !c.body) {
          return reply(422, { message: 'Validation Failed' });
        }
        const comment = { ...c, id: 5000 + reviewComments.length, user: { login: BOT } };
        reviewComments.push(comment);
        return reply(201, comment);
      }
      const m = /^\/repos\/acme\/network\/issues\/comments\/(\d+)$/.exec(url.pathname);
      const existing = m ? comments.find((c) => c.id === Number(m[1])) : undefined;
      if (existing && req.method === 'PATCH') {
        existing.body = (JSON.parse(body) as { body: string }).body;
        return reply(200, existing);
      }
      return reply(404, { message: 'Not Found' });
    });
  });
  return new Promise((r) =>
    github.listen(0, '127.0.0.1', () => {
      githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
      r();
    }),
  );
}

/**
 * A checkout of the action, as `uses: tfguard/tfguard@…` gives it: its action.yml, docs/ci,
 * bin/tfguard.js and the committed CLI bundle (dist-cli/, kept current by test/cli/bundle.test.ts).
 * No node_modules: the runner has none, so this proves the action runs the CLI with nothing
 * installed.
 */
async function checkoutAction(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const entry of ['action.yml', 'bin', 'dist-cli', 'docs/ci', 'package.json'])
    await cp(join(REPO, entry), join(dir, entry), { recursive: true });
  return dir;
}

beforeAll(async () => {
  action = load(await readFile(join(REPO, 'action.yml'), 'utf8')) as ActionDefinition;
  h = await startHarness();
  api = await startApiStandIn(h);
  await startGitHub();
  work = await mkdtemp(join(tmpdir(), 'tfguard-action-test-'));
  actionPath = await checkoutAction(join(work, 'action'));
});

afterAll(async () => {
  await new Promise((r) => github?.close(r));
  await api?.stop();
  await h?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A checked-out repository under the work directory: the sample configuration, committed. */
const checkout = (name: string): Promise<string> => checkoutSample(join(work, name));

interface Job {
  event: string;
  payload?: { [key: string]: Value };
  with?: Record<string, string>;
  env?: Record<string, string>;
}

async function runAction(job: Job) {
  const workspace = await checkout(`ws-${Math.random().toString(36).slice(2)}`);
  const temp = await mkdtemp(join(work, 'runner-temp-'));
  const eventPath = join(temp, 'event.json');
  await writeFile(eventPath, JSON.stringify(job.payload ?? {}));
  const before = api.gateway.records.length;
  const uploads: StepResult[] = [];
  const run = await runCompositeAction(action, {
    with: { ...job.with },
    github: {
      event_name: job.event,
      repository: 'acme/network',
      run_id: '4242',
      token: TOKEN,
      event: job.payload ?? {},
    },
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? work,
      ...CI_AWS_ENV,
      GITHUB_ACTION_PATH: actionPath,
      GITHUB_WORKSPACE: workspace,
      GITHUB_EVENT_NAME: job.event,
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_TOKEN: TOKEN,
      GITHUB_REPOSITORY: 'acme/network',
      GITHUB_API_URL: githubUrl,
      RUNNER_TEMP: temp,
      TFGUARD_POLL_SECONDS: '0.2',
      TFGUARD_RETRY_SECONDS: '0.1',
      ...job.env,
    },
    workspace,
    onUses: async (step) => {
      if (step.uses?.startsWith('github/codeql-action/upload-sarif@')) {
        const sarif = JSON.parse(await readFile(join(workspace, step.with!.sarif_file!), 'utf8'));
        expect(sarif.version).toBe('2.1.0');
        uploads.push(step);
      }
    },
  });
  return { run, workspace, uploads, calls: api.gateway.records.slice(before) };
}

const ran = (steps: StepResult[]) => steps.filter((s) => s.ran).map((s) => s.id ?? s.uses ?? s.name ?? 'run');
const SAME_REPO_PR = {
  pull_request: { number: 7, head: { sha: HEAD_SHA, repo: { full_name: 'acme/network' } } },
};
/** The API mode: the stand-in API Gateway in front of the real handlers. */
const viaApi = (): Record<string, string> => ({ 'api-url': api.gateway.url });

test("the runner's expressions follow GitHub's rules (loose equality, ||, implicit success())", () => {
  const contexts = { steps: { scan: { outputs: {} } }, inputs: { x: 'True' }, github: { event: {} } };
  const cases: Array<[string, Value]> = [
    ["'abc' == 'ABC'", true],
    ["1 == '1'", true],
    // Missing values are null, and null coerces to 0: the trap conditions must avoid.
    ["steps.scan.outputs.exit-code == '0'", true],
    ["steps.scan.outputs.verdict == 'fail'", false],
    ["steps.scan.outputs.reported == 'true'", false],
    ["inputs.x == 'true'", true],
    ['github.event.pull_request.number != null', false],
    ["inputs.missing || 'fallback'", 'fallback'],
    ["!(inputs.x == 'true') && true", false],
  ];
  for (const [expression, expected] of cases)
    expect([expression, evaluate(expression, contexts)]).toEqual([expression, expected]);
  expect(condition("inputs.x == 'true'", contexts, { failed: true })).toBe(false);
  expect(condition("always() && inputs.x == 'true'", contexts, { failed: true })).toBe(true);
  expect(() => evaluate("contains(inputs.x, 'T')", contexts)).toThrow(/unknown context contains|unsupported/);
});

test('the action is a composite action with the inputs CI users set, and no expressions inside scripts', () => {
  expect(action.runs.using).toBe('composite');
  expect(Object.keys(action.inputs)).toEqual(
    expect.arrayContaining([
      'path',
      'config',
      'policy',
      'formats',
      'min-severity',
      'fail-on',
      'sarif-severities',
      'api-url',
      'repository',
      'sarif-upload',
      'pr-comment',
      'suggestions',
    ]),
  );
  // The runner is the default: no API needed.
  expect(action.inputs['api-url']!.required).toBeFalsy();
  expect(action.inputs['api-url']!.default).toBe('');
  for (const step of action.runs.steps) {
    if (step.run === undefined) continue;
    expect(step.shell).toBe('bash');
    // Inputs and event data reach scripts only through env: no script injection from a PR title.
    expect(step.run).not.toContain('${{');
  }
});

test('api-url, push, passing gate: scans HEAD through the API, uploads SARIF, writes the job summary', async () => {
  const { run, uploads, calls, workspace } = await runAction({
    event: 'push',
    with: { ...viaApi(), 'fail-on': 'never' },
  });
  expect(run.failed).toBe(false);
  expect(ran(run.steps)).toEqual(['guard', 'scan', 'github/codeql-action/upload-sarif@v3']);
  expect(run.outputs).toEqual({
    verdict: 'pass',
    errors: '3',
    warnings: '0',
    notices: '0',
    json: join(workspace, 'tfguard.json'),
    sarif: join(workspace, 'tfguard.sarif'),
    markdown: join(workspace, 'tfguard.md'),
    text: '',
    codequality: '',
    'scan-id': expect.stringMatching(/^[0-9a-f]{32}$/),
    skipped: 'false',
  });
  expect(uploads[0]!.with).toEqual({ sarif_file: 'tfguard.sarif', category: 'tfguard' });
  expect(run.summary).toContain('## tfguard');
  expect(calls.map((c) => `${c.status} ${c.method} ${c.path}`)).toEqual([
    '200 POST /scans',
    `200 GET /scans/${run.outputs['scan-id']}`,
    `200 GET /scans/${run.outputs['scan-id']}`,
  ]);
  expect(calls.every((c) => c.verified)).toBe(true);
  expect(calls[0]!.query).toBe('failOn=never&format=json&repository=acme%2Fnetwork');
});

test('api-url, pull request, failing gate: SARIF and one PR comment (updated on the next run), then the job fails', async () => {
  const job: Job = {
    event: 'pull_request',
    payload: SAME_REPO_PR,
    with: { ...viaApi(), 'pr-comment': 'true' },
  };
  const first = await runAction(job);
  expect(first.run.failed).toBe(true);
  expect(ran(first.run.steps)).toEqual([
    'guard',
    'scan',
    'github/codeql-action/upload-sarif@v3',
    'run',
    'run',
  ]);
  const gate = first.run.steps[first.run.steps.length - 1]!;
  expect([gate.exitCode, gate.stdout]).toEqual([
    1,
    "::error title=tfguard::findings at or above 'error': see the job summary and the code scanning alerts\n",
  ]);
  expect(first.run.outputs.verdict).toBe('fail');
  const report = await readFile(join(first.workspace, 'tfguard.md'), 'utf8');
  expect(comments).toEqual([
    { id: 1000, body: `<!-- tfguard:pr-comment -->\n${report}`, user: { login: BOT } },
  ]);
  // The API titles the Markdown with the repository the scan was posted for.
  expect(report.split('\n')[0]).toBe('## tfguard: acme/network');
  expect(first.calls.every((c) => c.verified)).toBe(true);

  const second = await runAction(job);
  expect(second.run.failed).toBe(true);
  expect(comments).toHaveLength(1);
  expect(githubCalls.slice(-2)).toEqual([
    'GET /repos/acme/network/issues/7/comments?per_page=100&page=1',
    'PATCH /repos/acme/network/issues/comments/1000',
  ]);
});

test('api-url, a pull request from a fork is skipped with a notice: no API call, no upload, no comment', async () => {
  const before = { comments: comments.length, github: githubCalls.length };
  const { run, calls, uploads } = await runAction({
    event: 'pull_request',
    payload: { pull_request: { number: 7, head: { repo: { full_name: 'mallory/network' } } } },
    with: { ...viaApi(), 'pr-comment': 'true' },
    env: { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_SESSION_TOKEN: '' },
  });
  expect(run.failed).toBe(false);
  expect(ran(run.steps)).toEqual(['guard']);
  expect(run.steps[0]!.stdout).toMatch(
    /^::notice title=tfguard::pull request from the fork mallory\/network: /,
  );
  expect(run.outputs).toMatchObject({ verdict: '', errors: '', 'scan-id': '', skipped: 'true' });
  expect([calls, uploads, comments.length, githubCalls.length]).toEqual([
    [],
    [],
    before.comments,
    before.github,
  ]);
});

test('api-url, role-to-assume configures credentials first; no scan possible (exit 2) fails the scan step, nothing else runs', async () => {
  const { run } = await runAction({
    event: 'push',
    with: {
      ...viaApi(),
      'role-to-assume': 'arn:aws:iam::123456789012:role/tfguard-ci',
      'aws-region': 'eu-west-1',
      archive: '/nonexistent.tar.gz',
    },
  });
  expect(run.failed).toBe(true);
  const credentials = run.steps[1]!;
  expect([credentials.uses, credentials.with]).toEqual([
    'aws-actions/configure-aws-credentials@v4',
    {
      'role-to-assume': 'arn:aws:iam::123456789012:role/tfguard-ci',
      'aws-region': 'eu-west-1',
      'role-session-name': 'tfguard-4242',
    },
  ]);
  expect(ran(run.steps)).toEqual(['guard', 'aws-actions/configure-aws-credentials@v4', 'scan']);
  const scan = run.steps.find((s) => s.id === 'scan')!;
  expect([scan.exitCode, scan.stderr]).toEqual([2, 'tfguard: no such archive: /nonexistent.tar.gz\n']);
  expect(run.outputs.verdict).toBe('');
  expect(existsSync(join(REPO, 'tfguard.json'))).toBe(false);
});

test('api-url, fix-comment: the patch of every safe fix in a comment of its own, updated on the next run', async () => {
  const marker = '<!-- tfguard:fix-comment -->';
  const job: Job = {
    event: 'pull_request',
    payload: SAME_REPO_PR,
    with: { ...viaApi(), 'fix-comment': 'true', 'fail-on': 'never' },
  };
  const first = await runAction(job);
  expect(first.run.failed).toBe(false);
  expect(ran(first.run.steps)).toEqual(['guard', 'scan', 'github/codeql-action/upload-sarif@v3', 'run']);
  expect(first.calls[0]!.query).toBe('failOn=never&fix=true&format=json&repository=acme%2Fnetwork');
  const patch = await readFile(join(first.workspace, 'tfguard.patch'), 'utf8');
  // The oracle: the CLI's dry run on the same checkout.
  let dryRun = '';
  await runCli(['fix', first.workspace, '--dry-run'], {
    stdout: (t) => (dryRun += t),
    stderr: () => {},
    isTTY: false,
  });
  expect(patch).toMatch(/^--- a\//);
  expect(patch).toBe(dryRun);
  const mine = comments.filter((c) => c.body.startsWith(marker));
  expect(mine).toHaveLength(1);
  // The comment's diff block is the patch, and git apply accepts it in the checkout.
  const block = /^(`{3,})diff\n([\s\S]*)\1$/m.exec(mine[0]!.body);
  expect(block?.[2]).toBe(patch);
  await writeFile(join(work, 'from-comment.patch'), block![2]!);
  await exec('git', ['apply', '--check', join(work, 'from-comment.patch')], { cwd: first.workspace });

  const second = await runAction(job);
  expect(second.run.failed).toBe(false);
  expect(comments.filter((c) => c.body.startsWith(marker))).toHaveLength(1);
  expect(githubCalls.slice(-2)).toEqual([
    'GET /repos/acme/network/issues/7/comments?per_page=100&page=1',
    `PATCH /repos/acme/network/issues/comments/${mine[0]!.id}`,
  ]);
});

describe('in the runner (no api-url)', () => {
  /** The CLI's own JSON report of the workspace, the oracle for what the action reports. */
  async function cliReport(workspace: string): Promise<Report> {
    let out = '';
    await runCli(['scan', workspace, '--format', 'json'], {
      stdout: (t) => (out += t),
      stderr: () => {},
      isTTY: false,
    });
    return JSON.parse(out) as Report;
  }

  test('push: scans with the CLI of the action checkout, no AWS and no API; counts, paths and SARIF out', async () => {
    const { run, uploads, calls, workspace } = await runAction({
      event: 'push',
      with: { formats: 'sarif, text', 'fail-on': 'never' },
      // No AWS credentials at all.
      env: { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_SESSION_TOKEN: '' },
    });
    expect(run.failed).toBe(false);
    expect(calls).toEqual([]);
    expect(ran(run.steps)).toEqual(['guard', 'scan', 'github/codeql-action/upload-sarif@v3']);
    const expected = await cliReport(workspace);
    expect(run.outputs).toEqual({
      verdict: 'pass',
      errors: String(expected.summary.error),
      warnings: String(expected.summary.warning),
      notices: String(expected.summary.notice),
      json: join(workspace, 'tfguard.json'),
      sarif: join(workspace, 'tfguard.sarif'),
      markdown: join(workspace, 'tfguard.md'),
      text: join(workspace, 'tfguard.txt'),
      codequality: '',
      'scan-id': '',
      skipped: 'false',
    });
    const json = JSON.parse(await readFile(run.outputs.json!, 'utf8')) as Report;
    expect(json.findings).toEqual(expected.findings);
    expect(await readFile(run.outputs.text!, 'utf8')).toMatch(/^tfguard .*\n\d+ errors?, /);
    // The Markdown (job summary) is titled with the repository, not the checkout's directory.
    expect(run.summary.split('\n')[0]).toBe('## tfguard: acme/network');
    expect(uploads).toHaveLength(1);
    const sarif = JSON.parse(await readFile(run.outputs.sarif!, 'utf8'));
    expect(sarif.runs[0].results).toHaveLength(expected.summary.error + expected.summary.warning);
  });

  test('sarif-severities: code scanning gets only the severities asked for', async () => {
    const { run } = await runAction({
      event: 'push',
      with: { 'sarif-severities': 'warning,notice', 'fail-on': 'never' },
    });
    expect(Number(run.outputs.errors)).toBeGreaterThan(0);
    const sarif = JSON.parse(await readFile(run.outputs.sarif!, 'utf8'));
    const levels = (sarif.runs[0].results as Array<{ level: string }>).map((r) => r.level);
    expect(levels.filter((l) => l === 'error')).toEqual([]);
  });

  test('a policy file reaches the CLI as --policy, judged as the repository input', async () => {
    const policy = join(work, 'org-policy.hcl');
    const deny = 'provider "hashicorp/aws" {\n  deny   = true\n  reason = "use the acme mirror"\n}\n';
    await writeFile(
      policy,
      `${deny}exception {\n  repository = "acme/legacy"\n  rule = "policy-provider-denied"\n  reason = "moving in Q1"\n  expires = "2099-12-31"\n}\n`,
    );
    const denied = (report: Report) => report.findings.filter((f) => f.ruleId === 'policy-provider-denied');
    const { run } = await runAction({ event: 'push', with: { policy, 'fail-on': 'never' } });
    expect(run.failed).toBe(false);
    const report = JSON.parse(await readFile(run.outputs.json!, 'utf8')) as Report;
    expect(denied(report).length).toBeGreaterThan(0);
    expect(
      denied(report).every((f) => f.suppressed === undefined && f.message.includes('"use the acme mirror"')),
    ).toBe(true);
    // The repository input decides which exceptions apply.
    const legacy = await runAction({
      event: 'push',
      with: { policy, 'fail-on': 'never', repository: 'acme/legacy' },
    });
    const excused = JSON.parse(await readFile(legacy.run.outputs.json!, 'utf8')) as Report;
    expect(denied(excused).map((f) => f.suppressed?.reason)).toEqual(
      denied(report).map(() => 'moving in Q1 (policy exception until 2099-12-31)'),
    );
  });

  test('with api-url the policy input is refused: the service applies its own policy', async () => {
    const { run } = await runAction({ event: 'push', with: { ...viaApi(), policy: 'policy.hcl' } });
    expect(run.failed).toBe(true);
    const scan = run.steps.find((s) => s.id === 'scan')!;
    expect([scan.exitCode, scan.stdout]).toEqual([
      2,
      '::error title=tfguard::the policy input applies to scans in the runner; with api-url the service applies its own policy (TFGUARD_POLICY_OBJECT, docs/policy.md): remove it from the step\n',
    ]);
  });

  test("a broken policy file stops the step with the CLI's line naming it, and nothing is reported", async () => {
    const policy = join(work, 'broken-policy.hcl');
    await writeFile(policy, 'provider "hashicorp/aws" {\n  version = ">= 5.0"\n}\n');
    const { run } = await runAction({ event: 'push', with: { policy } });
    expect(run.failed).toBe(true);
    const scan = run.steps.find((s) => s.id === 'scan')!;
    expect(scan.exitCode).toBe(2);
    expect(scan.stderr).toContain(
      `policy ${policy}:2: unknown argument "version" in provider "hashicorp/aws"`,
    );
    expect(run.outputs.verdict).toBe('');
  });

  test('pull request: report comment (only its own is updated), review suggestions once, fix patch, then the gate', async () => {
    comments.length = 0;
    reviewComments.length = 0;
    // Someone else quoted the marker: the action must never edit that comment.
    comments.push({ id: 900, body: '<!-- tfguard:pr-comment -->\nfake', user: { login: 'mallory' } });
    const job: Job = {
      event: 'pull_request',
      payload: SAME_REPO_PR,
      with: { 'pr-comment': 'true', suggestions: 'true', 'fix-comment': 'true' },
    };
    const first = await runAction(job);
    expect(first.calls).toEqual([]);
    expect(first.run.failed).toBe(true);
    expect(ran(first.run.steps)).toEqual([
      'guard',
      'scan',
      'github/codeql-action/upload-sarif@v3',
      'run',
      'run',
      'run',
      'run',
    ]);
    const report = await readFile(join(first.workspace, 'tfguard.md'), 'utf8');
    expect(comments[0]).toEqual({
      id: 900,
      body: '<!-- tfguard:pr-comment -->\nfake',
      user: { login: 'mallory' },
    });
    const mine = comments.filter((c) => c.user.login === BOT);
    expect(mine.map((c) => c.body.split('\n')[0])).toEqual([
      '<!-- tfguard:pr-comment -->',
      '<!-- tfguard:fix-comment -->',
    ]);
    expect(mine[0]!.body).toBe(`<!-- tfguard:pr-comment -->\n${report}`);

    // One review comment per single-edit fix, on its lines of the head commit, as a suggestion. A
    // fix of several edits (the shared module's cap removed and the bound moved up to the root)
    // is no suggestion: it goes out in the fix patch only.
    const findings = (await cliReport(first.workspace)).findings;
    const expected = findings.filter((f) => f.fix?.suggestion);
    expect(expected.length).toBeGreaterThanOrEqual(1);
    const multi = findings.filter((f) => (f.fix?.edits?.length ?? 0) > 1);
    expect(multi.map((f) => [f.ruleId, f.fix?.suggestion])).toEqual([
      ['shared-module-upper-bound', undefined],
    ]);
    expect(
      reviewComments.map((c) => [
        c.path,
        c.line,
        c.start_line,
        c.commit_id,
        /```suggestion\n([\s\S]*)\n```$/.exec(c.body)?.[1],
      ]),
    ).toEqual(
      expected.map((f) => {
        const s = f.fix!.suggestion!;
        return [s.file, s.endLine, s.startLine < s.endLine ? s.startLine : undefined, HEAD_SHA, s.text];
      }),
    );
    // Each suggestion, applied to its lines, is what tfguard fix writes (the dry-run patch).
    const patch = await readFile(join(first.workspace, 'tfguard.patch'), 'utf8');
    for (const f of expected) expect(patch).toContain(`+${f.fix!.suggestion!.text}\n`);

    const second = await runAction(job);
    expect(second.run.failed).toBe(true);
    expect(comments).toHaveLength(3);
    expect(comments[0]!.body).toBe('<!-- tfguard:pr-comment -->\nfake');
    expect(reviewComments).toHaveLength(expected.length);
    const writes = githubCalls.filter((c) => !c.startsWith('GET '));
    expect(writes.slice(-2)).toEqual([
      `PATCH /repos/acme/network/issues/comments/${mine[0]!.id}`,
      `PATCH /repos/acme/network/issues/comments/${mine[1]!.id}`,
    ]);
    expect(githubCalls).not.toContain('PATCH /repos/acme/network/issues/comments/900');
  });

  test('a pull request from a fork is scanned in the runner; no comment is attempted', async () => {
    const before = githubCalls.length;
    const { run } = await runAction({
      event: 'pull_request',
      payload: {
        pull_request: { number: 7, head: { sha: HEAD_SHA, repo: { full_name: 'mallory/network' } } },
      },
      with: { 'pr-comment': 'true', suggestions: 'true', 'fail-on': 'never' },
    });
    expect(run.failed).toBe(false);
    expect(ran(run.steps)).toEqual(['guard', 'scan', 'github/codeql-action/upload-sarif@v3']);
    expect(run.outputs.skipped).toBe('false');
    expect(githubCalls.length).toBe(before);
  });
});
