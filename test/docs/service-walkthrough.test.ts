/**
 * docs/service.md, "Running locally against s3rver", followed step by step: the first `sh` block of
 * that section is split into its commands, which run as written in one bash session (with the
 * port 4569 and the directory /tmp/s3rver replaced by free ones), in a copy of the files they need
 * (so `osls invoke local`'s .esbuild/ does not meet another test's `osls package`). Every command
 * must succeed and print what the walkthrough says it does; a command the test does not know fails
 * it, so the doc and the test cannot drift apart.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ScheduledEvent, SQSEvent } from 'aws-lambda';
import { auditRunId } from '../../src/service/keys';

const REPO = resolve(__dirname, '..', '..');
const DOC = join(REPO, 'docs', 'service.md');

/** The walkthrough's commands: continuation lines (`\`, a trailing `||`) joined, comments dropped. */
export function walkthroughCommands(markdown: string): string[] {
  const section = /\n## Running locally against s3rver\n([\s\S]*?)(\n## |$)/.exec(markdown)?.[1];
  if (section === undefined)
    throw new Error('docs/service.md has no "Running locally against s3rver" section');
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('the walkthrough section has no sh block');
  const commands: string[] = [];
  let current = '';
  for (const raw of block.split('\n')) {
    const line = raw.trimEnd();
    if (current === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    current += (current === '' ? '' : '\n') + line;
    if (line.endsWith('\\') || line.endsWith('||') || line.endsWith('&&') || line.endsWith('|')) continue;
    commands.push(current);
    current = '';
  }
  if (current !== '') throw new Error(`unterminated command: ${current}`);
  return commands;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

let work: string;
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test('the local walkthrough of docs/service.md works as written, step by step', async () => {
  const schedule = JSON.parse(
    await readFile(join(REPO, 'events/audit-schedule.json'), 'utf8'),
  ) as ScheduledEvent;
  const message = JSON.parse(await readFile(join(REPO, 'events/audit-message.json'), 'utf8')) as SQSEvent;
  const runId = auditRunId(new Date(schedule.time), schedule.id);
  // The sample message belongs to the run the sample schedule starts.
  expect((JSON.parse(message.Records[0]!.body) as { runId: string }).runId).toBe(runId);

  const commands = walkthroughCommands(await readFile(DOC, 'utf8'));
  const expectations: Array<[RegExp, (output: string) => void]> = [
    [/node_modules\/\.bin\/s3rver .* &$/s, () => undefined],
    [/^until curl /, () => undefined],
    [/^export TFGUARD_S3_ENDPOINT=/, () => undefined],
    [
      /^curl -sf -X PUT --data-binary @events\/archives\/acme-network\.tar\.gz/,
      (out) => expect(out).toBe(''),
    ],
    [
      /-f scanUpload -p events\/s3-upload\.json/,
      (out) => {
        expect(out).toContain('"status": "scanned"');
        expect(out).toContain('"key": "uploads/acme/network/release 42.tar.gz"');
        expect(out).not.toContain('lock-registry-unavailable');
      },
    ],
    [
      /@latest\.json$/,
      (out) => {
        const pointer = JSON.parse(out) as { repository: string; scanId: string };
        expect(pointer.repository).toBe('acme/network');
        expect(pointer.scanId).toMatch(/^[0-9a-f]{32}$/);
      },
    ],
    [
      /-f createScan -p events\/http-post-scans\.json/,
      (out) => {
        expect(out).toContain('"statusCode": 200');
        expect(out).toContain('\\"verdict\\": \\"fail\\"');
        expect(out).not.toContain('lock-registry-unavailable');
      },
    ],
    [
      /-f getScan -p events\/http-get-scan\.json/,
      (out) => {
        // The scan id of events/http-get-scan.json is the one the posted sample produces; the
        // Markdown is titled with the repository the scan was posted for.
        expect(out).toContain('"statusCode": 200');
        expect(out).toContain('"body": "## tfguard: acme/network');
      },
    ],
    [
      /-f createUpload -p events\/http-post-uploads\.json/,
      (out) => expect(out).toContain('"statusCode": 201'),
    ],
    [
      /-f auditStart -p events\/audit-schedule\.json/,
      (out) =>
        expect(out).toContain(
          'auditStart: the run is planned; there is no SQS queue to send its messages to',
        ),
    ],
    [
      /-f auditWorker -p events\/audit-message\.json/,
      (out) => expect(out).toContain('"batchItemFailures": []'),
    ],
    [
      /\/summary\.md$/,
      (out) => {
        expect(out.split('\n')[0]).toBe(`# tfguard fleet audit ${runId}`);
        expect(out).toContain('| acme/network | scanned |');
      },
    ],
    [/^kill %1$/, () => undefined],
  ];
  const checks = commands.map((command) => {
    const match = expectations.find(([re]) => re.test(command));
    if (match === undefined)
      throw new Error(`the walkthrough has a command this test does not know:\n${command}`);
    return match[1];
  });
  // Every documented step is there, in this order.
  expect(checks).toEqual(expectations.map(([, check]) => check));
  for (const command of commands.filter((c) => c.includes(`runs/`)))
    expect(command).toContain(`runs/${runId}/`);

  // The files the commands use, copied; the dependencies linked.
  work = await mkdtemp(join(tmpdir(), 'tfguard-walkthrough-'));
  const dir = join(work, 'repo');
  // scripts/osls: the local osls plugin serverless.yml loads (deployment bucket ownership).
  for (const entry of [
    'serverless.yml',
    'package.json',
    'tsconfig.json',
    'handlers',
    'src',
    'events',
    'scripts/osls',
  ]) {
    await cp(join(REPO, entry), join(dir, entry), { recursive: true });
  }
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const port = await freePort();
  const store = join(work, 's3rver');
  const local = (c: string) =>
    c
      .replace(/127\.0\.0\.1:4569/g, `127.0.0.1:${port}`)
      .replace(/\b4569\b/g, String(port))
      .replace(/\/tmp\/s3rver/g, store);
  const script = [
    'set -euo pipefail',
    // Whatever happens, the emulator does not outlive the test.
    "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
    ...commands.flatMap((c, i) => [`echo '@@step ${i}'`, local(c)]),
    `echo '@@step end'`,
  ].join('\n');
  let leaked = false;
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
    (done) => {
      const child = spawn('bash', ['-c', script], {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          SLS_TELEMETRY_DISABLED: '1',
          SLS_NOTIFICATIONS_MODE: 'off',
        },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (c) => done({ code: c ?? -1, stdout: out, stderr: err }));
      // A process left running in the background would hold the pipes open: report it, do not wait.
      child.on('exit', () => {
        setTimeout(() => {
          if (child.stdout.destroyed) return;
          leaked = true;
          child.stdout.destroy();
          child.stderr.destroy();
        }, 10_000).unref();
      });
    },
  );
  // `kill %1` stopped the emulator: nothing the walkthrough started is left running.
  expect(leaked).toBe(false);
  const outputs = stdout.split(/^@@step (?:\d+|end)\n/m).slice(1);
  if (code !== 0)
    throw new Error(
      `the walkthrough stopped (exit ${code}) after step ${outputs.length - 1}:\n${stderr.slice(-3000)}`,
    );
  expect(outputs).toHaveLength(commands.length + 1);
  commands.forEach((command, i) => {
    try {
      checks[i]!(outputs[i]!.trim());
    } catch (err) {
      throw new Error(
        `step ${i} (${command}) printed something else:\n${outputs[i]}\n${(err as Error).message}`,
      );
    }
  });
}, 400_000);
