/**
 * Starts a real s3rver (an S3-compatible server) on 127.0.0.1 with a random port and a private temp
 * directory, with the given buckets created.
 *
 * s3rver runs in a child Node process started with `--openssl-legacy-provider`: it encrypts
 * ListObjectsV2 continuation tokens with DES, which OpenSSL 3 only offers through the legacy
 * provider, so in-process every truncated listing would fail with a 500. The child exits when its
 * stdin closes, so a crashed test run cannot leak it. s3rver accepts SigV4 requests without
 * verifying the signature; the access key must be its built-in `S3RVER` pair.
 *
 * `options.directory` and `options.port` start it on a given directory and port, so a server
 * stopped with `crash()` (SIGKILL, a real crash) can be started again on the same data and
 * address (scripts/soak.ts); a directory given by the caller is the caller's to remove.
 * `options.dieOn` makes it exit the moment it has stored an object whose key matches, before it
 * answers that write (S3 failing in the middle of a sequence of writes; test/support/fault-servers.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { S3Client } from '@aws-sdk/client-s3';

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
export const S3RVER_REGION = 'us-east-1';

export interface RunningS3rver {
  endpoint: string;
  port: number;
  directory: string;
  /** A client configured for this server (path-style, fixed credentials). */
  client(): S3Client;
  /** The notification events s3rver emitted for writes so far (s3rver's own record shape). */
  events: Array<{ Records: unknown[] }>;
  /** The server's process id. */
  pid: number;
  /** Whether the server process is still running. */
  running(): boolean;
  /** Resolves when the server process has exited (stopped, crashed, or died on `dieOn`). */
  exited(): Promise<void>;
  /** Kills the server process with SIGKILL (no clean shutdown), keeping its directory. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

export interface S3rverOptions {
  /** Store the data here (kept on stop) instead of a new temporary directory (removed on stop). */
  directory?: string;
  /** Listen on this port instead of a random one. */
  port?: number;
  /** Exit as soon as an object whose (decoded) key matches is stored, before answering the write. */
  dieOn?: RegExp;
}

const CHILD = `
const S3rver = require('s3rver');
const [directory, bucketsJson, port, dieOn] = process.argv.slice(1);
const die = dieOn === '' ? null : new RegExp(dieOn);
const server = new S3rver({ address: '127.0.0.1', port: Number(port), silent: true, directory,
  vhostBuckets: false, configureBuckets: JSON.parse(bucketsJson).map((name) => ({ name })) });
server.on('event', (event) => {
  process.stdout.write(JSON.stringify({ event }) + '\\n');
  const key = event && event.Records && event.Records[0] && event.Records[0].s3.object.key;
  // Gone before the response to this write is sent: the writer sees the connection drop.
  if (die !== null && typeof key === 'string' && die.test(decodeURIComponent(key))) process.exit(0);
});
server.run().then((address) => process.stdout.write(JSON.stringify({ port: address.port }) + '\\n'),
  (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
`;

const REPO_ROOT = resolve(__dirname, '..', '..');

/** A client for an s3rver (or a proxy in front of one) at `endpoint`: path-style, fixed credentials.
 * The caller destroys it. */
export function s3rverClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: S3RVER_REGION,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export async function startS3rver(buckets: string[], options: S3rverOptions = {}): Promise<RunningS3rver> {
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), 'tfguard-s3rver-')));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--openssl-legacy-provider',
      '-e',
      CHILD,
      directory,
      JSON.stringify(buckets),
      String(options.port ?? 0),
      options.dieOn?.source ?? '',
    ],
    { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const events: Array<{ Records: unknown[] }> = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolvePort, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`s3rver did not start within 20 s: ${stderr}`)), 20_000);
    lines.on('line', (line) => {
      const message = JSON.parse(line) as { port?: number; event?: { Records: unknown[] } };
      if (message.event) events.push(message.event);
      if (message.port !== undefined) {
        clearTimeout(timer);
        resolvePort(message.port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited with code ${code}: ${stderr}`));
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const clients: S3Client[] = [];
  return {
    endpoint,
    port,
    directory,
    events,
    pid: child.pid!,
    running,
    exited: () => exited,
    client() {
      const client = s3rverClient(endpoint);
      clients.push(client);
      return client;
    },
    async crash() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      for (const client of clients) client.destroy();
      if (running()) {
        child.stdin?.end();
        child.kill('SIGTERM');
      }
      await exited;
      if (options.directory === undefined) await rm(directory, { recursive: true, force: true });
    },
  };
}
