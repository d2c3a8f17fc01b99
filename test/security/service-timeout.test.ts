/**
 * Threat model, "Faults in the service" rows "a scan that would outlive the Lambda timeout" and
 * "Lambda timeout mid-scan" (docs/security.md §8): the real upload-scan handler runs in a child
 * process, as in a Lambda runtime. Given the function's remaining time, it stops its scan a margin
 * before the timeout and fails the invocation by itself; if Lambda kills it anyway (the process is
 * killed mid-scan), nothing that looks like a result exists afterwards either. Either way Lambda's
 * retry starts clean and, once the retries are spent, the event goes to the on-failure queue.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { loadScan } from '../../src/service/scans';
import { makeTarGz } from '../support/archive';
import { slowToParse } from '../support/scan';
import {
  expectOnFailureQueue,
  layout,
  MAIN_TF,
  NOTHING,
  ROOT,
  startServiceFixture,
  UPLOADS_BUCKET,
  type ServiceFixture,
} from '../support/service-fixture';

let f: ServiceFixture;

beforeAll(async () => {
  f = await startServiceFixture();
});
afterAll(async () => {
  await f?.dispose();
});

/** 9 MB with a syntax error at the end: the parser's fast path gives up and hcl2json parses it all. */
const slowToScan = (): string => slowToParse(MAIN_TF, 9_000_000);

function startChild(event: unknown, remainingMs: number) {
  const child = spawn(
    process.execPath,
    [
      '--require',
      require.resolve('tsx/cjs'),
      path.join(__dirname, '../support/lambda-child.ts'),
      JSON.stringify(event),
      String(remainingMs),
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...f.env,
        TFGUARD_PARSER_TIMEOUT_MS: '120000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output = { stdout: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const started = new Promise<number>((r) => {
    const poll = setInterval(() => {
      if (output.stdout.includes('started')) {
        clearInterval(poll);
        r(Date.now());
      }
    }, 20);
  });
  return { child, output, exited, started };
}

test('killed mid-scan at its timeout: nothing stored for the scan, so the retry starts clean (then the DLQ)', async () => {
  const object = await f.upload(
    'uploads/faults/timeout/a.tar.gz',
    await makeTarGz({ 'main.tf': slowToScan() }),
  );
  const timeoutMs = 4000;
  // The context claims plenty of time (so no early stop): Lambda kills the process regardless,
  // as it would if synchronous work overran the margin.
  const { child, output, exited, started } = startChild(f.s3Event([object]), 120_000);
  await started;
  // The function's timeout passes while the scan is still parsing: Lambda ends the process.
  await new Promise((r) => setTimeout(r, timeoutMs));
  child.kill('SIGKILL');
  expect((await exited).signal).toBe('SIGKILL');
  expect(output.stdout).toBe('started\n'); // the invocation had not finished

  expect(await f.stored(object, 'faults/timeout')).toEqual(NOTHING);
  expect(await loadScan({ reports: f.reports, layout }, f.scanIdOf(object))).toBeNull();
  expectOnFailureQueue('scanUpload', 'ScanUploadDeadLetterQueue');
}, 60_000);

// The suite's one end-to-end deadline test on real time (everything else runs on a manual clock):
// a real process, a real clock, a loaded machine. Its margin is generous: Lambda's kill comes 5×
// the function's time after the start, and the invocation must have ended by itself within twice
// its time (the deadline is at 3 s; src/util/deadline.ts keeps it within ~10% even under load).
test('stopped a margin before its timeout: the invocation fails by itself, nothing stored (retry, then the DLQ)', async () => {
  const object = await f.upload(
    'uploads/faults/deadline/a.tar.gz',
    await makeTarGz({ 'main.tf': slowToParse(MAIN_TF) }),
  );
  // 4 s left: the margin is min(TFGUARD_DEADLINE_MARGIN_MS = 10 s, a quarter) = 1 s.
  const timeoutMs = 4000;
  const { child, output, exited, started } = startChild(f.s3Event([object]), timeoutMs);
  const startedAt = await started;
  const timer = setTimeout(() => child.kill('SIGKILL'), 5 * timeoutMs);
  const exit = await exited;
  clearTimeout(timer);
  const ranMs = Date.now() - startedAt;
  expect(exit).toEqual({ code: 1, signal: null }); // failed by itself: Lambda retries the event
  expect(ranMs).toBeLessThan(2 * timeoutMs);
  const lines = output.stdout.trim().split('\n');
  expect(lines[0]).toBe('started');
  expect(JSON.parse(lines[1]!)).toEqual({
    error: `1 upload failed and will be retried: s3://${UPLOADS_BUCKET}/${object.key}`,
  });
  expect(await f.stored(object, 'faults/deadline')).toEqual(NOTHING);
  expect(await loadScan({ reports: f.reports, layout }, f.scanIdOf(object))).toBeNull();
  expectOnFailureQueue('scanUpload', 'ScanUploadDeadLetterQueue');
}, 60_000);
