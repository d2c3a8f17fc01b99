/**
 * Real servers that fail on purpose, for the service-fault tests:
 *
 * - `startStoppableS3rver`: an s3rver in a child process that can be stopped and started again on
 *   the same port with the same data, and can be told to die the moment it has stored an object
 *   whose key matches a pattern (S3 failing in the middle of a sequence of writes).
 * - `startThrottlingProxy`: an HTTP proxy in front of it that answers S3's `503 SlowDown` to
 *   chosen requests and forwards the rest.
 *
 * The s3rver is the one test/support/s3rver.ts starts; its `dieOn` option arms the trap.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3rver, type RunningS3rver } from './s3rver';

export interface StoppableS3rver {
  endpoint: string;
  /** Keys stored since the server was (re)started, in order. */
  readonly stored: string[];
  running(): boolean;
  /** Starts again on the same port with the same data; `dieOn` arms the crash-after-write trap. */
  start(options?: { dieOn?: RegExp }): Promise<void>;
  /** Resolves when the child has exited (stopped, or died on its trap). */
  exited(): Promise<void>;
  stop(): Promise<void>;
  /** Stops and deletes the data. */
  dispose(): Promise<void>;
}

/** The object key of an s3rver notification event, decoded. */
function eventKey(event: { Records: unknown[] }): string[] {
  const key = (event.Records[0] as { s3?: { object?: { key?: unknown } } } | undefined)?.s3?.object?.key;
  return typeof key === 'string' ? [decodeURIComponent(key)] : [];
}

export async function startStoppableS3rver(
  buckets: string[],
  options: { dieOn?: RegExp } = {},
): Promise<StoppableS3rver> {
  const directory = await mkdtemp(join(tmpdir(), 'tfguard-faults-s3rver-'));
  let current: RunningS3rver = await startS3rver(buckets, { directory, dieOn: options.dieOn });
  const port = current.port;
  const server: StoppableS3rver = {
    endpoint: current.endpoint,
    get stored() {
      return current.events.flatMap(eventKey);
    },
    running: () => current.running(),
    async start(again = {}) {
      current = await startS3rver(buckets, { directory, port, dieOn: again.dieOn });
    },
    exited: () => current.exited(),
    stop: () => current.stop(),
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
