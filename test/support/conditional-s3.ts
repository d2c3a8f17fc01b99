/**
 * S3 conditional writes in front of s3rver. S3 honours `If-Match: "<etag>"` and `If-None-Match: *`
 * on `PutObject` (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html);
 * s3rver 3.7 ignores both and writes anyway (test/storage/s3.test.ts checks that it still does).
 * This proxy on 127.0.0.1 adds exactly that part and forwards everything else to s3rver untouched,
 * so the SDK, its request serialization and its error parsing, and s3rver's storage stay real:
 *
 * - a conditional PUT of a key while another conditional PUT of the same key is in progress:
 *   `409 ConditionalRequestConflict` (S3: "a conflicting operation occurred ... retry");
 * - `If-None-Match: *` when the object exists, `If-Match` with another ETag: `412
 *   PreconditionFailed`; `If-Match` when the object does not exist: `404 NoSuchKey`;
 * - otherwise the PUT is forwarded, and the key stays locked until s3rver has answered it;
 * - a GET or HEAD of a key waits for the PUTs of it in progress, and a PUT of a key for the GETs
 *   of it in progress: S3 never shows a partly written object, while s3rver writes in place
 *   (truncating the file first) and a read that overlaps a write can see a truncated one (the
 *   service soak, scripts/soak.ts, saw a pointer read cut off at byte 812 without the second half).
 *
 * Path-style requests only (`/bucket/key`), as the service's S3 client makes them for s3rver.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';

export interface ConditionalS3 {
  endpoint: string;
  /** Conditional PUTs answered, by outcome. */
  counts: {
    written: number;
    preconditionFailed: number;
    noSuchKey: number;
    conflict: number;
    /** PUTs that waited for reads of their key to finish. */
    waitedForReads: number;
  };
  close(): Promise<void>;
}

function xmlError(res: ServerResponse, status: number, code: string, message: string, extra = ''): void {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${message}</Message>${extra}<RequestId>conditional-proxy</RequestId></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const unquote = (etag: string): string =>
  etag
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');

/** `client` reads current ETags from s3rver directly (HeadObject). */
export async function startConditionalS3(upstream: string, client: S3Client): Promise<ConditionalS3> {
  const target = new URL(upstream);
  const busy = new Set<string>();
  const counts = { written: 0, preconditionFailed: 0, noSuchKey: 0, conflict: 0, waitedForReads: 0 };
  const writes = new Map<string, Set<Promise<void>>>();
  const reads = new Map<string, Set<Promise<void>>>();
  const track = (map: Map<string, Set<Promise<void>>>, lock: string, work: Promise<void>): Promise<void> => {
    const set = map.get(lock) ?? new Set<Promise<void>>();
    map.set(lock, set);
    set.add(work);
    const forget = (): void => {
      set.delete(work);
      if (set.size === 0) map.delete(lock);
    };
    work.then(forget, forget);
    return work;
  };
  /** Reads of a key share it; a write has it alone (it waits for the reads and the writes in
   * progress, and the reads after it wait for it). No await between the last check and the
   * tracking, so nothing slips in between. */
  const read = async (lock: string, start: () => Promise<void>): Promise<void> => {
    while (writes.has(lock)) await Promise.allSettled([...writes.get(lock)!]);
    return track(reads, lock, start());
  };
  const write = async (lock: string, start: () => Promise<void>): Promise<void> => {
    if (reads.has(lock)) counts.waitedForReads++;
    for (;;) {
      const pending = [...(reads.get(lock) ?? []), ...(writes.get(lock) ?? [])];
      if (pending.length === 0) break;
      await Promise.allSettled(pending);
    }
    return track(writes, lock, start());
  };
  const sockets = new Set<Socket>();

  const forward = (req: IncomingMessage, res: ServerResponse): Promise<void> =>
    new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: target.host };
      delete headers.expect;
      delete headers['if-match'];
      delete headers['if-none-match'];
      if (req.method !== 'PUT') {
        // Reads keep their own conditions (s3rver handles GET ones as it does).
        if (req.headers['if-match'] !== undefined) headers['if-match'] = req.headers['if-match'];
        if (req.headers['if-none-match'] !== undefined)
          headers['if-none-match'] = req.headers['if-none-match'];
      }
      const up = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
          upRes.on('end', resolve);
          upRes.on('error', reject);
        },
      );
      up.on('error', reject);
      req.pipe(up);
    });

  const current = async (bucket: string, key: string): Promise<string | null> => {
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return unquote(head.ETag ?? '');
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
      throw err;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const ifMatch = req.headers['if-match'];
    const ifNoneMatch = req.headers['if-none-match'];
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const key = rest.map((segment) => decodeURIComponent(segment)).join('/');
    const lock = `${bucket}/${key}`;
    if (key !== '' && (req.method === 'GET' || req.method === 'HEAD')) {
      return read(lock, () => forward(req, res));
    }
    const conditional =
      req.method === 'PUT' &&
      (ifMatch !== undefined || ifNoneMatch !== undefined) &&
      !url.searchParams.has('uploadId') &&
      req.headers['x-amz-copy-source'] === undefined;
    if (!conditional) {
      if (key === '' || req.method !== 'PUT') return forward(req, res);
      return write(lock, () => forward(req, res));
    }
    if (busy.has(lock)) {
      counts.conflict++;
      req.resume();
      return xmlError(
        res,
        409,
        'ConditionalRequestConflict',
        'A conflicting operation occurred. If using PutObject you can retry the request.',
      );
    }
    busy.add(lock);
    try {
      const etag = await current(bucket, key);
      if (ifNoneMatch !== undefined && etag !== null) {
        counts.preconditionFailed++;
        req.resume();
        return xmlError(
          res,
          412,
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
          '<Condition>If-None-Match</Condition>',
        );
      }
      if (ifMatch !== undefined && etag === null) {
        counts.noSuchKey++;
        req.resume();
        return xmlError(res, 404, 'NoSuchKey', 'The specified key does not exist.', `<Key>${key}</Key>`);
      }
      if (ifMatch !== undefined && unquote(ifMatch) !== etag) {
        counts.preconditionFailed++;
        req.resume();
        return xmlError(
          res,
          412,
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
          '<Condition>If-Match</Condition>',
        );
      }
      await write(lock, () => forward(req, res));
      counts.written++;
    } finally {
      busy.delete(lock);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) xmlError(res, 500, 'InternalError', String(err));
      else res.destroy();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
