/**
 * An HTTP pass-through on 127.0.0.1 in front of s3rver for the soak's fault round, so that killing
 * s3rver looks to the service the way an S3 outage does and not like something S3 never does.
 *
 * s3rver writes an object in place (the content, then its `.md5`, then `metadata.json`, each file
 * truncated first): a SIGKILL in the middle of a write leaves a torn object that s3rver answers with
 * `500 InternalError` forever after (seen in this soak's first version). S3's writes are atomic: a
 * PUT happened or it did not. So `outage()` first makes the endpoint unreachable (every new
 * request's connection is reset before anything reaches s3rver), lets the requests already at
 * s3rver finish there but drops their answers (the client sees a reset: the write may or may not
 * have happened, as after a real timeout), and resolves once nothing is in flight, when s3rver can
 * be killed without tearing anything. `restore()` lets requests through again.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FaultGate {
  endpoint: string;
  counts: { forwarded: number; refused: number; answersLost: number };
  /** Refuses new requests, waits until none is in flight upstream. */
  outage(): Promise<void>;
  restore(): void;
  close(): Promise<void>;
}

export async function startFaultGate(upstream: string): Promise<FaultGate> {
  const target = new URL(upstream);
  const sockets = new Set<Socket>();
  const counts = { forwarded: 0, refused: 0, answersLost: 0 };
  let down = false;
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const finished = (): void => {
    inFlight--;
    if (inFlight === 0 && drained !== null) {
      drained();
      drained = null;
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (down) {
      counts.refused++;
      req.socket.destroy();
      return;
    }
    counts.forwarded++;
    inFlight++;
    let done = false;
    const finish = (): void => {
      if (!done) {
        done = true;
        finished();
      }
    };
    const headers = { ...req.headers, host: target.host };
    const up = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (upRes) => {
        if (down) {
          // s3rver did the work; the answer is lost on the way.
          counts.answersLost++;
          upRes.resume();
          upRes.on('end', () => {
            req.socket.destroy();
            finish();
          });
        } else {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
          upRes.on('end', finish);
        }
        upRes.on('error', () => {
          req.socket.destroy();
          finish();
        });
        upRes.on('close', finish);
      },
    );
    up.on('error', () => {
      req.socket.destroy();
      finish();
    });
    req.pipe(up);
    // A client that goes away before its answer: stop the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished && !down) up.destroy();
    });
  };

  const server = createServer(handle);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts,
    async outage() {
      down = true;
      if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
