/**
 * Threat model, "Faults in the service" row "a Lambda timeout near the deadline" (docs/security.md §8):
 * the real upload-scan handler runs in a child process, as in a Lambda runtime, and is killed while
 * it is still scanning, the way Lambda ends an invocation at its timeout. Nothing that looks like a
 * result may exist afterwards, so Lambda's retry starts clean and, once the retries are spent, the
 * event goes to the function's on-failure queue.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { loadScan } from '../../src/service/scans';
import { makeTarGz } from '../helpers/archive';
import {
  expectOnFailureQueue,
  layout,
  MAIN_TF,
  NOTHING,
  ROOT,
  SERVICE_ENV,
  startServiceFixture,
  type ServiceFixture,
} from './service-fixture';

let f: ServiceFixture;

beforeAll(async () => {
  f = await startServiceFixture();
});
afterAll(async () => {
  await f?.dispose();
});

/** 9 MB with a syntax error at the end: the parser's fast path gives up and hcl2json parses it all. */
function slowToScan(): string {
  const pieces: string[] = [MAIN_TF];
  for (let i = 0, size = 0; size < 9_000_000; i++) {
    const block = `resource "aws_s3_bucket" "b${i}" {\n  bucket = "bucket-${i}"\n}\n\n`;
    pieces.push(block);
    size += block.length;
  }
  pieces.push('locals {\n  x = "unterminated\n}\n');
  return pieces.join('');
}

test('killed mid-scan at its timeout: nothing stored for the scan, so the retry starts clean (then the DLQ)', async () => {
  const object = await f.upload(
    'uploads/faults/timeout/a.tar.gz',
    await makeTarGz({ 'main.tf': slowToScan() }),
  );
  const timeoutMs = 4000;
  const child = spawn(
    process.execPath,
    [
      '--require',
      require.resolve('tsx/cjs'),
      path.join(__dirname, 'lambda-child.ts'),
      JSON.stringify(f.s3Event([object])),
      String(timeoutMs),
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...SERVICE_ENV,
        TFGUARD_S3_ENDPOINT: f.s3.endpoint,
        TFGUARD_PARSER_TIMEOUT_MS: '120000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
  await new Promise<void>((r) => {
    const poll = setInterval(() => {
      if (stdout.includes('started')) {
        clearInterval(poll);
        r();
      }
    }, 50);
  });
  // The function's timeout passes while the scan is still parsing: Lambda ends the process.
  await new Promise((r) => setTimeout(r, timeoutMs));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  expect(stdout).toBe('started\n'); // the invocation had not finished

  expect(await f.stored(object, 'faults/timeout')).toEqual(NOTHING);
  expect(await loadScan({ reports: f.reports, layout }, f.scanIdOf(object))).toBeNull();
  expectOnFailureQueue('scanUpload', 'ScanUploadDeadLetterQueue');
}, 60_000);
