/**
 * A small pool of worker threads running @cdktf/hcl2json.
 *
 * hcl2json is Go compiled to WebAssembly. On hostile input its recursive descent parser can throw
 * `RangeError: Maximum call stack size exceeded` (after which the Go runtime is corrupt) or kill the
 * Go runtime outright ("exit code: 2"), after which every later call waits forever. It also takes
 * ~3 s per MB. So it never runs in the calling thread: each worker parses one file at a time under
 * a per-file deadline, and any worker that times out, crashes, or has seen a fatal error is
 * terminated and replaced lazily.
 *
 * The worker is an inline CommonJS script (`eval: true`) that `require`s hcl2json by absolute path,
 * which works the same under ts-jest, tsx, compiled JS and a bundle (as long as @cdktf/hcl2json
 * itself stays an external, unbundled package: it reads `main.wasm.gz` next to its own files).
 */
import { Worker } from 'node:worker_threads';
import { expired } from '../../util/deadline';

export type PoolOutcome =
  | { kind: 'ok'; json: unknown }
  | { kind: 'error'; message: string }
  | { kind: 'timeout' }
  | { kind: 'crash'; detail: string }
  /** The caller's signal fired: a queued parse was dropped, a running one's worker terminated. */
  | { kind: 'aborted' };

/*
 * The worker script. Before loading hcl2json it loads hcl2json's Go support file itself, so that
 * it can (1) observe the Go runtime exiting (`Go#exit`, which hcl2json leaves as a console.warn)
 * and end the worker at once instead of hanging, and (2) capture what the Go runtime writes to
 * stdout/stderr (a fatal error dumps a long goroutine trace) instead of printing it.
 */
const WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const nodePath = require('node:path');
let output = '';
function capture(bytes) {
  if (output.length < 4096) output += Buffer.from(bytes).toString('utf8');
}
function fatal(detail) {
  parentPort.postMessage({ type: 'fatal', detail: detail });
  process.exit(70);
}
try {
  require(nodePath.join(nodePath.dirname(workerData.hcl2jsonPath), '..', 'wasm', 'bridge_wasm_exec.js'));
  const realFs = globalThis.fs;
  const fsShim = Object.create(realFs);
  fsShim.writeSync = function (fd, buf, ...rest) {
    if (fd === 1 || fd === 2) { capture(buf); return buf.length; }
    return realFs.writeSync(fd, buf, ...rest);
  };
  fsShim.write = function (fd, buf, offset, length, position, callback) {
    if (fd === 1 || fd === 2) {
      capture(buf.subarray(offset, offset + length));
      process.nextTick(callback, null, length);
      return;
    }
    return realFs.write(fd, buf, offset, length, position, callback);
  };
  globalThis.fs = fsShim;
  const GoRuntime = globalThis.Go;
  if (typeof GoRuntime === 'function') {
    globalThis.Go = class extends GoRuntime {
      constructor(...args) {
        super(...args);
        this.exit = (code) => {
          const first = output.split('\n').find((l) => l.trim() !== '') || '';
          fatal('the Go runtime exited with code ' + code + (first ? ': ' + first.trim() : ''));
        };
      }
    };
  }
} catch (err) {
  // A different package layout: crashes are then caught by the parent's deadline instead.
}
const hcl2json = require(workerData.hcl2jsonPath);
process.on('unhandledRejection', (err) => fatal('unhandled rejection: ' + (err && err.message ? err.message : String(err))));
hcl2json.parse('warmup.hcl', '').then(
  () => parentPort.postMessage({ type: 'ready' }),
  (err) => fatal('hcl2json failed to start: ' + (err && err.message ? err.message : String(err))),
);
parentPort.on('message', (msg) => {
  Promise.resolve()
    .then(() => hcl2json.parse(msg.name, msg.text))
    .then(
      (json) => { parentPort.postMessage({ type: 'result', id: msg.id, ok: true, json: json }); },
      (err) => {
        const name = err && err.name ? String(err.name) : 'Error';
        const message = err && err.message !== undefined ? String(err.message) : String(err);
        // After a stack overflow or a WebAssembly trap the Go runtime state is unusable.
        const poisoned = name === 'RangeError' || name === 'RuntimeError' || name === 'InternalError';
        parentPort.postMessage({ type: 'result', id: msg.id, ok: false, name: name, message: message, poisoned: poisoned });
      },
    );
});
`;

interface Task {
  id: number;
  name: string;
  text: string;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  resolve: (outcome: PoolOutcome) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  task: Task | null;
  timer: NodeJS.Timeout | null;
  /** Set once the slot is removed from the pool; later events from its worker are ignored. */
  dead: boolean;
  /** What the worker reported before dying (a Go runtime exit). */
  fatalDetail: string | null;
}

export interface PoolOptions {
  size: number;
  hcl2jsonPath: string;
  /** How long a new worker may take to load hcl2json (the WebAssembly load takes ~300 ms). */
  startupTimeoutMs?: number;
  /**
   * Keep using a worker after hcl2json threw a RangeError or a WebAssembly trap. Only for tests
   * that need to reach the Go runtime's fatal exit (the next call on such a worker kills it).
   */
  keepPoisonedWorkers?: boolean;
}

export class Hcl2JsonPool {
  private readonly size: number;
  private readonly hcl2jsonPath: string;
  private readonly startupTimeoutMs: number;
  private readonly keepPoisonedWorkers: boolean;
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private started = false;

  constructor(options: PoolOptions) {
    this.size = Math.max(1, Math.floor(options.size));
    this.hcl2jsonPath = options.hcl2jsonPath;
    this.startupTimeoutMs = options.startupTimeoutMs ?? 60_000;
    this.keepPoisonedWorkers = options.keepPoisonedWorkers ?? false;
  }

  /**
   * Parses `text` with hcl2json in a worker. Never rejects. `signal`: see `{ kind: 'aborted' }`;
   * it is polled before the parse is queued (a time limit that passed while the caller's
   * synchronous work kept its timer from running never reaches a worker).
   */
  run(name: string, text: string, timeoutMs: number, signal?: AbortSignal): Promise<PoolOutcome> {
    if (expired(signal)) return Promise.resolve({ kind: 'aborted' });
    return new Promise<PoolOutcome>((resolve) => {
      const task: Task = { id: this.nextId++, name, text, timeoutMs, signal, resolve };
      if (signal !== undefined) {
        const onAbort = (): void => this.abort(task);
        signal.addEventListener('abort', onAbort, { once: true });
        task.resolve = (outcome) => {
          signal.removeEventListener('abort', onAbort);
          resolve(outcome);
        };
      }
      this.queue.push(task);
      this.pump();
    });
  }

  /** The task's signal fired: drop it from the queue, or end its worker (replaced lazily). */
  private abort(task: Task): void {
    const queued = this.queue.indexOf(task);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
      task.resolve({ kind: 'aborted' });
      return;
    }
    const slot = this.slots.find((s) => s.task === task);
    if (slot === undefined) return; // already settled
    this.kill(slot);
    task.resolve({ kind: 'aborted' });
    this.pump();
  }

  /** True once a worker (and so the WebAssembly module) has ever been started. */
  get everStarted(): boolean {
    return this.started;
  }

  /** Number of live workers (for tests and diagnostics). */
  get workerCount(): number {
    return this.slots.length;
  }

  /** Number of workers running a parse (for tests and diagnostics). */
  get busyCount(): number {
    return this.slots.filter((s) => s.task !== null).length;
  }

  /** Terminates every worker; queued and running parses end with a crash outcome. */
  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    const queued = this.queue.splice(0);
    for (const task of queued) task.resolve({ kind: 'crash', detail: 'the parser was closed' });
    await Promise.all(
      slots.map((slot) => {
        const task = slot.task;
        this.retire(slot);
        if (task !== null) task.resolve({ kind: 'crash', detail: 'the parser was closed' });
        return slot.worker.terminate().catch(() => undefined);
      }),
    );
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const idle = this.slots.find((s) => s.ready && s.task === null);
      if (idle !== undefined) {
        const task = this.queue.shift() as Task;
        // A deadline that passed while the task waited is noticed here even if its timer is late.
        if (expired(task.signal)) task.resolve({ kind: 'aborted' });
        else this.dispatch(idle, task);
        continue;
      }
      const starting = this.slots.filter((s) => !s.ready).length;
      if (this.slots.length < this.size && starting < this.queue.length) {
        this.spawn();
        continue;
      }
      break;
    }
  }

  private spawn(): void {
    this.started = true;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { hcl2jsonPath: this.hcl2jsonPath },
      // No `stdout: true`/`stderr: true`: captured worker stdio keeps the process alive even when
      // the worker is unref'd. What the Go runtime prints is captured inside the worker instead.
    });
    const slot: Slot = { worker, ready: false, task: null, timer: null, dead: false, fatalDetail: null };
    this.slots.push(slot);
    slot.timer = setTimeout(() => {
      this.startupFailed(slot, `the parser worker did not start within ${this.startupTimeoutMs} ms`);
    }, this.startupTimeoutMs);
    worker.on('message', (msg: WorkerMessage) => this.onMessage(slot, msg));
    worker.on('error', (err: Error) => this.onDeath(slot, `uncaught ${err.name}: ${err.message}`));
    worker.on('exit', (code: number) => this.onDeath(slot, `the parser worker exited with code ${code}`));
  }

  private onMessage(slot: Slot, msg: WorkerMessage): void {
    if (slot.dead) return;
    switch (msg.type) {
      case 'ready':
        slot.ready = true;
        this.clearTimer(slot);
        slot.worker.unref();
        this.pump();
        return;
      case 'fatal':
        slot.fatalDetail = msg.detail;
        return;
      case 'result': {
        const task = slot.task;
        if (task === null || task.id !== msg.id) return;
        this.clearTimer(slot);
        slot.task = null;
        if (msg.ok) {
          task.resolve({ kind: 'ok', json: msg.json });
        } else if (msg.poisoned && !this.keepPoisonedWorkers) {
          this.kill(slot);
          task.resolve({ kind: 'crash', detail: `${msg.name}: ${msg.message}` });
        } else {
          task.resolve({ kind: 'error', message: msg.message });
        }
        if (!slot.dead) slot.worker.unref();
        this.pump();
        return;
      }
    }
  }

  private onDeath(slot: Slot, detail: string): void {
    if (slot.dead) return;
    const why = slot.fatalDetail ?? detail;
    if (!slot.ready) {
      this.startupFailed(slot, why);
      return;
    }
    const task = slot.task;
    this.kill(slot);
    if (task !== null) task.resolve({ kind: 'crash', detail: why });
    this.pump();
  }

  /** A worker that never became ready: fail one waiting parse (so a broken installation cannot
   * make the pool respawn forever) and try again for the rest. */
  private startupFailed(slot: Slot, detail: string): void {
    if (slot.dead) return;
    this.kill(slot);
    const task = this.queue.shift();
    if (task !== undefined) task.resolve({ kind: 'crash', detail: `the parser failed to start: ${detail}` });
    this.pump();
  }

  private dispatch(slot: Slot, task: Task): void {
    slot.task = task;
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      if (slot.task !== task) return;
      this.kill(slot);
      task.resolve({ kind: 'timeout' });
      this.pump();
    }, task.timeoutMs);
    slot.worker.postMessage({ id: task.id, name: task.name, text: task.text });
  }

  private clearTimer(slot: Slot): void {
    if (slot.timer !== null) {
      clearTimeout(slot.timer);
      slot.timer = null;
    }
  }

  /** Removes the slot from the pool (its task, if any, is the caller's to settle). */
  private retire(slot: Slot): void {
    slot.dead = true;
    slot.task = null;
    this.clearTimer(slot);
    const idx = this.slots.indexOf(slot);
    if (idx !== -1) this.slots.splice(idx, 1);
  }

  private kill(slot: Slot): void {
    this.retire(slot);
    slot.worker.unref();
    slot.worker.terminate().catch(() => undefined);
  }
}

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'fatal'; detail: string }
  | { type: 'result'; id: number; ok: true; json: unknown }
  | { type: 'result'; id: number; ok: false; name: string; message: string; poisoned: boolean };
