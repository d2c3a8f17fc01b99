/**
 * Reading a directory's files on a second thread while the walk goes on.
 *
 * Reading a tree costs about four system calls a file (open, fstat, read, close): on the
 * cloudposse/terraform-aws-components tree some 7,000 calls, a third of the walk's time, where a
 * tarball of it pays one gunzip. Node's thread pool cannot take them off the main thread cheaply
 * (a round trip per call: reads one by one through it made a directory twice as slow as the
 * tarball), so one worker thread reads whole batches of files with the same synchronous calls and
 * flags the walk uses, hashes them, and hands back every file's size, mode and SHA-256 and the
 * kept files' bytes, while the walk lists the tree and then records the entries in order.
 *
 * The worker is only a read-ahead. Each batch is claimed once (`Atomics.compareExchange` on a
 * shared word): by the worker, or by the walk. Where the walk would wait (a batch the worker has
 * not delivered), it first does the idle work its caller gave it (`idle`: the scan parses the
 * files recorded so far, src/scan/ahead.ts), so that a worker still starting has time to take the
 * batch; then it reads a batch the worker has not started itself, and while it waits for one the
 * worker is reading, reads the last batches nobody has started (so the two threads finish
 * together). A file read ahead (by either thread) is a regular file of at most the per-file limit
 * that read to its end as fstat sized it; anything else (a failing call, another type, a file
 * that grew, anything past the total limit) is left to the walk's own synchronous read, with its
 * exact checks and messages. Every limit is checked when the walk records the file, in path
 * order, so errors and their order are those of a walk that reads every file itself. Each thread
 * reads at most the total limit ahead of the walk.
 *
 * The worker is started for trees of at least `MIN_FILES` files and kept for the process,
 * unref'd, as the HCL parser's workers are. It is an inline CommonJS script (`eval: true`), so
 * that it runs the same under ts-jest, tsx and the bundle. Its results come through a port the
 * walk reads synchronously (`receiveMessageOnPort`): the walk stays synchronous and never waits
 * on the event loop.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';

/** Files a batch holds: enough to make a message worth its cost, few enough for the two threads
 * to share the last ones. */
const BATCH_FILES = 64;

/** At most this many batches a walk (one shared word each); the walk reads any more itself. */
const MAX_BATCHES = 4096;

/** Trees with fewer files to read are read by the walk alone unless the worker already runs
 * (started by an earlier read of the process; it is never stopped): a worker's start costs about
 * 50 ms of CPU time (on the 2-core machine of docs/performance.md), about what reading a thousand
 * files costs the walk, and a CLI run reads one tree. */
export const MIN_FILES = 1024;

/** States of a batch's shared word. */
const UNCLAIMED = 0;
const WORKER = 1;
const WALK = 2;
const DELIVERED = 3;

/** How long the walk waits for a batch the worker is reading before it reads it itself (and
 * stops asking the worker): a safety net for a worker that died or hangs, never met otherwise. */
const GIVE_UP_MS = 5000;

const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
// Linux keeps a nice value per thread: this one's reads yield to the main thread and V8's compiler
// threads, which a cold process keeps busy (measured: a cold CLI scan of a 1,800-file tree 10 ms
// slower without it). Elsewhere the call renices the whole process, so it is not made.
if (process.platform === 'linux') {
  try { require('node:os').setPriority(10); } catch {}
}
const { closeSync, constants, fstatSync, openSync, readSync } = require('node:fs');
const { hash } = require('node:crypto');
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const ARENA = 32 * 1024;
const results = workerData.port;
let scan = -1;
let claims = null;
let total = 0;
let scratch = Buffer.allocUnsafeSlow(64 * 1024);
parentPort.on('message', (m) => {
  if (m.claims !== undefined) { scan = m.scan; claims = new Int32Array(m.claims); total = 0; }
  if (m.scan !== scan) return;
  // Claimed by the walk already: it reads these files itself.
  if (Atomics.compareExchange(claims, m.index, ${UNCLAIMED}, ${WORKER}) !== ${UNCLAIMED}) return;
  const files = m.files.split('\0');
  const n = files.length;
  const sizes = new Float64Array(n);
  const lengths = new Float64Array(n).fill(-1);
  const modes = new Int32Array(n);
  const arena = new Int32Array(n).fill(-1);
  const offsets = new Int32Array(n);
  const hashes = [];
  const arenas = [];
  let room = null;
  let roomIndex = -1;
  let used = 0;
  for (let i = 0; i < n; i++) {
    hashes.push('');
    if (total > m.maxTotalBytes) continue;
    let fd = -1;
    try {
      fd = openSync(files[i], FLAGS);
      const stats = fstatSync(fd);
      const size = stats.size;
      if (!stats.isFile() || size > m.maxFileBytes || size >= m.firstReadMax) continue;
      const want = size + 1;
      const keeps = m.keeps[i] === 1;
      let buffer;
      let at = 0;
      let index = -1;
      if (!keeps) {
        if (scratch.length < want) scratch = Buffer.allocUnsafeSlow(want);
        buffer = scratch;
      } else if (want > ARENA / 4) {
        buffer = Buffer.allocUnsafeSlow(want);
        index = arenas.push(buffer.buffer) - 1;
      } else {
        if (room === null || room.length - used < want) {
          room = Buffer.allocUnsafeSlow(ARENA);
          roomIndex = arenas.push(room.buffer) - 1;
          used = 0;
        }
        buffer = room;
        at = used;
        index = roomIndex;
      }
      const got = readSync(fd, buffer, at, want, null);
      const opened = fd;
      fd = -1;
      closeSync(opened);
      // It grew since the fstat: the walk reads it in chunks itself.
      if (got === want) continue;
      total += got;
      hashes[i] = hash('sha256', buffer.subarray(at, at + got), 'hex');
      if (keeps) {
        arena[i] = index;
        offsets[i] = at;
        if (buffer === room) used = (used + got + 7) & ~7;
      }
      sizes[i] = size;
      lengths[i] = got;
      modes[i] = stats.mode;
    } catch {
      // The walk reads this file itself and reports what fails.
      lengths[i] = -1;
    } finally {
      if (fd !== -1) {
        try { closeSync(fd); } catch {}
      }
    }
  }
  results.postMessage({ id: m.id, sizes, lengths, modes, arena, offsets, hashes, arenas }, [
    sizes.buffer, lengths.buffer, modes.buffer, arena.buffer, offsets.buffer, ...arenas,
  ]);
  Atomics.store(claims, m.index, ${DELIVERED});
  Atomics.notify(claims, m.index);
});
`;

/** A file read ahead: its size as fstat gave it before the read (declared to the builder), the
 * bytes read (`length`), mode, SHA-256, and its bytes when it is kept. */
export interface ReadResult {
  size: number;
  length: number;
  mode: number;
  sha256: string;
  content: Buffer | undefined;
}

/** What the worker made of one batch: per file its size, the bytes read (`lengths`, -1 for a
 * file the walk must read itself), mode, SHA-256, and for a kept file where its bytes are
 * (`arenas[arena[i]]` from `offsets[i]`). */
interface BatchMessage {
  id: number;
  sizes: Float64Array;
  lengths: Float64Array;
  modes: Int32Array;
  arena: Int32Array;
  offsets: Int32Array;
  hashes: string[];
  arenas: ArrayBuffer[];
}

/** The worker, shared by every walk of the process. */
class ReaderThread {
  readonly worker: Worker;
  /** Where the worker's results arrive; read synchronously, never listened to. */
  readonly results: MessagePort;
  live = true;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.results = port1;
    this.results.unref();
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { port: port2 },
      transferList: [port2],
    });
    this.worker.unref();
    const die = (): void => this.retire();
    this.worker.on('error', die);
    this.worker.on('exit', die);
  }

  retire(): void {
    this.live = false;
    if (shared === this) shared = null;
    void this.worker.terminate().catch(() => undefined);
  }
}

let shared: ReaderThread | null = null;
let nextId = 1;
let nextScan = 1;

/**
 * Who reads ahead: 'shared' (the worker, and the walk while it waits: what runs), or for tests,
 * which need each path taken for certain whatever the timing: 'worker' (the walk waits for every
 * batch the worker was given, from the first file on, and does all the idle work it has before it
 * takes each batch) or 'walk' (no worker; the walk reads each batch ahead itself and never waits,
 * so it does no idle work).
 */
export type ReadAheadMode = 'shared' | 'worker' | 'walk';
let readAheadMode: ReadAheadMode = 'shared';

/** Sets who reads ahead (tests); returns the previous setting. */
export function setReadAheadMode(next: ReadAheadMode): ReadAheadMode {
  const previous = readAheadMode;
  readAheadMode = next;
  return previous;
}

/** The process's reader thread, started on first use; null when it cannot start. */
function readerThread(): ReaderThread | null {
  if (shared === null) {
    try {
      shared = new ReaderThread();
    } catch {
      return null;
    }
  }
  return shared;
}

interface Batch {
  id: number;
  index: number;
  files: string[];
  keeps: Uint8Array;
  posted: boolean;
  /** What the walk read ahead of this batch itself (claimed while waiting for the worker). */
  own: (ReadResult | null)[] | null;
}

/** One walk's files, in walk order, in batches for the reader thread. */
export class DirectoryReads {
  private readonly batches: Batch[] = [];
  private readonly scan = nextScan++;
  /** Per batch: UNCLAIMED, WORKER (reading), WALK (the walk reads it), DELIVERED (by the worker). */
  private readonly claims = new Int32Array(new SharedArrayBuffer(4 * MAX_BATCHES));
  private claimsSent = false;
  private thread: ReaderThread | null = null;
  private files = 0;
  private taken = -1;
  private current: ((n: number) => ReadResult | null) | null = null;
  /** Messages received for batches not yet taken. */
  private readonly received = new Map<number, BatchMessage>();
  /** The highest batch the walk may still read ahead while it waits. */
  private stealFrom = -1;
  private ownBytes = 0;
  private readonly mode = readAheadMode;

  /**
   * `readAhead` reads one file on the walk's thread as the worker would (null where the walk must
   * read it with its full checks).
   */
  constructor(
    private readonly maxFileBytes: number,
    private readonly maxTotalBytes: number,
    private readonly firstReadMax: number,
    private readonly readAhead: (absolute: string, keeps: boolean) => ReadResult | null,
    /** Other work for the walk while it waits for the worker (one small piece per call; false
     * when there is none): the scan parses the files recorded so far (src/scan/ahead.ts). */
    private readonly idle: (() => boolean) | undefined = undefined,
  ) {}

  /** Queues one file (its absolute path; `keeps`: its bytes are wanted); returns its number. */
  add(absolute: string, keeps: boolean): number {
    let batch = this.batches[this.batches.length - 1];
    if (batch === undefined || batch.files.length === BATCH_FILES) {
      if (batch !== undefined) this.send(batch);
      batch = {
        id: nextId++,
        index: this.batches.length,
        files: [],
        keeps: new Uint8Array(BATCH_FILES),
        posted: false,
        own: null,
      };
      this.batches.push(batch);
    }
    if (keeps) batch.keeps[batch.files.length] = 1;
    batch.files.push(absolute);
    return this.files++;
  }

  /** The walk has queued every file: the last batch goes out too. */
  flush(): void {
    const last = this.batches[this.batches.length - 1];
    if (last !== undefined) this.send(last);
    this.stealFrom = Math.min(this.batches.length, MAX_BATCHES) - 1;
  }

  private send(batch: Batch): void {
    if (this.thread === null) {
      if (this.mode === 'walk') return;
      // A worker already running (an earlier read of this process started it) reads any tree.
      if (this.mode === 'shared' && this.files < MIN_FILES && shared?.live !== true) return;
      this.thread = readerThread();
      if (this.thread === null) return;
      // The batches filled before the tree was known to be large enough.
      for (const earlier of this.batches) if (earlier !== batch) this.post(earlier);
    }
    this.post(batch);
  }

  private post(batch: Batch): void {
    const thread = this.thread;
    if (batch.posted || thread === null || !thread.live || batch.index >= MAX_BATCHES) return;
    const first = !this.claimsSent;
    this.claimsSent = true;
    batch.posted = true;
    thread.worker.postMessage({
      id: batch.id,
      scan: this.scan,
      index: batch.index,
      ...(first ? { claims: this.claims.buffer } : {}),
      // One string: a message of one string costs a third of one of 64 (names never hold NUL).
      files: batch.files.join('\0'),
      keeps: batch.keeps,
      maxFileBytes: this.maxFileBytes,
      maxTotalBytes: this.maxTotalBytes,
      firstReadMax: this.firstReadMax,
    });
  }

  /**
   * File `n` (in the order of `add`) read ahead, or null for the walk to read it itself. Files are
   * asked for in order.
   */
  take(n: number): ReadResult | null {
    const index = Math.floor(n / BATCH_FILES);
    if (index !== this.taken) {
      this.taken = index;
      this.current = this.obtain(index);
    }
    return this.current === null ? null : this.current(n % BATCH_FILES);
  }

  /** Batch `index` as read ahead (by the worker or by the walk), or null. */
  private obtain(index: number): ((i: number) => ReadResult | null) | null {
    const batch = this.batches[index];
    if (batch === undefined) return null;
    if (batch.own !== null) return (i) => batch.own?.[i] ?? null;
    if (this.mode === 'walk' && index < MAX_BATCHES) {
      this.readBatch(batch);
      return (i) => batch.own?.[i] ?? null;
    }
    if (!batch.posted) return null;
    const thread = this.thread;
    if (thread === null) return null;
    const shared = this.mode === 'shared';
    // Tests of the idle work need it done for certain, whatever the timing: all of it, first.
    if (this.mode === 'worker' && this.idle !== undefined) while (this.idle()) continue;
    if (shared) {
      // Work that waits anyway first (the worker may start on this batch meanwhile: a worker still
      // starting takes tens of milliseconds); then the walk reads it, unless the worker has.
      const idle = this.idle;
      while (idle !== undefined && Atomics.load(this.claims, index) === UNCLAIMED && idle()) {
        // one piece of idle work per turn
      }
      if (Atomics.compareExchange(this.claims, index, UNCLAIMED, WALK) === UNCLAIMED) return null;
    }
    // The worker is reading it: read the last batches nobody has started meanwhile.
    let start = performance.now();
    for (;;) {
      const state = Atomics.load(this.claims, index);
      if (state === DELIVERED) break;
      if (state === WALK) return null;
      // Work that waits anyway first; then reading what nobody has started. The time to give up
      // counts from the last idle work: parsing a large tree ahead says nothing of the worker.
      if (this.idle !== undefined && this.idle()) {
        start = performance.now();
        continue;
      }
      if (shared && this.readLastBatch(index)) continue;
      Atomics.wait(this.claims, index, state, 20);
      if (performance.now() - start > GIVE_UP_MS || !thread.live) {
        // Never met but by a worker that died or hangs: the walk reads the rest itself.
        this.abandon(thread);
        return null;
      }
    }
    const message = this.receive(thread, batch.id);
    if (message === null) return null;
    return (i) => {
      const length = message.lengths[i] as number;
      if (length < 0) return null;
      const arena = message.arena[i] as number;
      const buffer = arena < 0 ? undefined : message.arenas[arena];
      return {
        size: message.sizes[i] as number,
        length,
        mode: message.modes[i] as number,
        sha256: message.hashes[i] as string,
        content: buffer === undefined ? undefined : Buffer.from(buffer, message.offsets[i] as number, length),
      };
    };
  }

  /** The worker's message for batch `id` (posted before its word said DELIVERED). */
  private receive(thread: ReaderThread, id: number): BatchMessage | null {
    for (;;) {
      const held = this.received.get(id);
      if (held !== undefined) {
        this.received.delete(id);
        return held;
      }
      const got = receiveMessageOnPort(thread.results) as { message: BatchMessage } | undefined;
      if (got === undefined) return null;
      // Results of an earlier walk that ended before taking them are dropped here.
      if (got.message.id >= (this.batches[0]?.id ?? 0)) this.received.set(got.message.id, got.message);
    }
  }

  /** Reads the last unstarted batch after `index` on the walk's thread; false when none is left. */
  private readLastBatch(index: number): boolean {
    while (this.stealFrom > index) {
      const batch = this.batches[this.stealFrom--] as Batch;
      if (this.ownBytes > this.maxTotalBytes) return false;
      if (Atomics.compareExchange(this.claims, batch.index, UNCLAIMED, WALK) !== UNCLAIMED) continue;
      this.readBatch(batch);
      return true;
    }
    return false;
  }

  /** Reads a batch the walk claimed ahead, on the walk's thread. */
  private readBatch(batch: Batch): void {
    batch.own = batch.files.map((file, i) => {
      if (this.ownBytes > this.maxTotalBytes) return null;
      const read = this.readAhead(file, batch.keeps[i] === 1);
      if (read !== null) this.ownBytes += read.length;
      return read;
    });
  }

  private abandon(thread: ReaderThread): void {
    thread.retire();
    this.thread = null;
    for (const batch of this.batches) {
      if (batch.index < MAX_BATCHES) Atomics.store(this.claims, batch.index, WALK);
      batch.posted = false;
    }
  }

  /** The walk is over (read or rejected): the worker skips what it has not started. */
  close(): void {
    for (const batch of this.batches) {
      if (batch.index < MAX_BATCHES) Atomics.compareExchange(this.claims, batch.index, UNCLAIMED, WALK);
    }
    this.thread = null;
  }
}
