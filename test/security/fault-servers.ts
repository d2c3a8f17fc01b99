/**
 * Real servers that fail on purpose, for the service-fault tests:
 *
 * - `startStoppableS3rver`: an s3rver in a child process that can be stopped and started again on
 *   the same port with the same data, and can be told to die the moment it has stored an object
 *   whose key matches a pattern (S3 failing in the middle of a sequence of writes).
 * - `startThrottlingProxy`: an HTTP proxy in front of it that answers S3's `503 SlowDown` to
 *   chosen requests and forwards the rest.
 *
 * s3rver runs with `--openssl-legacy-provider` for the reason given in test/support/s3rver.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const CHILD = `
const S3rver = require('s3rver');
const [directory, bucketsJson, port, dieOn] = process.argv.slice(1);
const die = dieOn === '' ? null : new RegExp(dieOn);
const server = new S3rver({ address: '127.0.0.1', port: Number(port), silent: true, directory,
  vhostBuckets: false, configureBuckets: JSON.parse(bucketsJson).map((name) => ({ name })) });
server.on('event', (event) => {
  const key = event && event.Records && event.Records[0] && event.Records[0].s3.object.key;
  process.stdout.write(JSON.stringify({ stored: key }) + '\\n');
  // Gone before the response to this PUT is sent: the writer sees the connection drop.
  if (die !== null && typeof key === 'string' && die.test(decodeURIComponent(key))) process.exit(0);
});
server.run().then((address) => process.stdout.write(JSON.stringify({ port: address.port }) + '\\n'),
  (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
`;

const REPO_ROOT = resolve(__dirname, '..', '..');

export interface StoppableS3rver {
  endpoint: string;
  /** Keys stored since the server was (re)started, in order. */
  stored: string[];
  running(): boolean;
  /** Starts again on the same port with the same data; `dieOn` arms the crash-after-write trap. */
  start(options?: { dieOn?: RegExp }): Promise<void>;
  /** Resolves when the child has exited (stopped, or died on its trap). */
  exited(): Promise<void>;
  stop(): Promise<void>;
  /** Stops and deletes the data. */
  dispose(): Promise<void>;
}

export async function startStoppableS3rver(
  buckets: string[],
  options: { dieOn?: RegExp } = {},
): Promise<StoppableS3rver> {
  const directory = await mkdtemp(join(tmpdir(), 'tfguard-faults-s3rver-'));
  let child: ChildProcess | null = null;
  let exit: Promise<void> = Promise.resolve();
  let port = 0;
  const stored: string[] = [];

  const launch = async (dieOn: RegExp | undefined): Promise<void> => {
    stored.length = 0;
    const proc = spawn(
      process.execPath,
      [
        '--openssl-legacy-provider',
        '-e',
        CHILD,
        directory,
        JSON.stringify(buckets),
        String(port),
        dieOn?.source ?? '',
      ],
      { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    child = proc;
    exit = new Promise((r) => proc.once('exit', () => r()));
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    port = await new Promise<number>((resolvePort, reject) => {
      const lines = createInterface({ input: proc.stdout! });
      const timer = setTimeout(
        () => reject(new Error(`s3rver did not start within 20 s: ${stderr}`)),
        20_000,
      );
      lines.on('line', (line) => {
        const message = JSON.parse(line) as { port?: number; stored?: string };
        if (message.stored !== undefined) stored.push(decodeURIComponent(message.stored));
        if (message.port !== undefined) {
          clearTimeout(timer);
          resolvePort(message.port);
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited with code ${code}: ${stderr}`));
      });
    });
  };

  await launch(options.dieOn);
  const server: StoppableS3rver = {
    endpoint: `http://127.0.0.1:${port}`,
    stored,
    running: () => child !== null && child.exitCode === null,
    start: (again = {}) => launch(again.dieOn),
    exited: () => exit,
    async stop() {
      const proc = child;
      if (proc !== null && proc.exitCode === null) {
        proc.stdin?.end();
        proc.kill('SIGTERM');
      }
      await exit;
    },
    async dispose() {
      await server.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
  return server;
}

export interface ThrottlingProxy {
  endpoint: string;
  /** Requests answered with 503 SlowDown so far. */
  throttled: number;
  /** Requests forwarded so far. */
  forwarded: number;
  /** Throttle the next `count` requests (Infinity: all of them until changed). */
  throttle(count: number): void;
  close(): Promise<void>;
}

const SLOW_DOWN =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>tfguard-test</RequestId></Error>';

/** A proxy to `target` (an http:// endpoint) that answers `503 SlowDown` while throttling. */
export async function startThrottlingProxy(target: string): Promise<ThrottlingProxy> {
  const upstream = new URL(target);
  let remaining = 0;
  const state = { throttled: 0, forwarded: 0 };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (remaining > 0) {
      remaining -= 1;
      state.throttled += 1;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml', 'x-amz-request-id': 'tfguard-test' });
      res.end(SLOW_DOWN);
      return;
    }
    state.forwarded += 1;
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => {
      res.destroy();
    });
    req.pipe(forward);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get throttled() {
      return state.throttled;
    },
    get forwarded() {
      return state.forwarded;
    },
    throttle(count: number) {
      remaining = count;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
