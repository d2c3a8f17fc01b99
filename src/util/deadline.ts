/**
 * Deadlines as values with an injectable clock. A leaf: imports nothing.
 *
 * A `TimeLimit` is an `AbortSignal` that fires at a known instant of a `Clock`. Its timer alone is
 * not enough: a timer runs only when the event loop is free, and a long synchronous loop (lexing a
 * 4 MB file, the rules over 2,000 stacks) keeps it from running — on a loaded 2-core machine a
 * `--timeout 1` scan then ended after 3 s. So a time limit can also be *polled*: `expired(signal)`
 * compares the clock with the instant and fires the signal on the spot. Code that loops
 * synchronously calls `checkpoint(signal)` every `CHECK_EVERY` steps; code between awaits calls it
 * between stages.
 *
 * Signals derived from time limits (e.g. a scan's "whichever fires first" of its own limit and the
 * caller's signal) register a poll of their own with `pollable`, so that polling the derived signal
 * polls its sources.
 *
 * Tests inject a `ManualClock`-like `Clock` (test/support/clock.ts) and move time by hand: the
 * deadline logic is then tested without waiting and without wall-clock assertions.
 */

/** Where time comes from: `now()` in milliseconds (any origin, never going backwards) and timers. */
export interface Clock {
  now(): number;
  /** Calls `fire` once, `ms` from now; returns a function that cancels it. Must not keep a process alive. */
  schedule(fire: () => void, ms: number): () => void;
}

/** The process's monotonic clock (`performance.now()`: unaffected by changes of the system time). */
export const systemClock: Clock = {
  now: () => performance.now(),
  schedule(fire, ms) {
    const timer = setTimeout(fire, Math.min(Math.max(0, ms), 2 ** 31 - 1));
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** The reason a `timeLimit` signal fires with; its message ends the scan-timeout message. */
export class TimeLimitReached extends Error {
  override readonly name = 'TimeLimitReached';
}

/** Polls of signals whose state depends on a clock (see `pollable`). */
const polls = new WeakMap<AbortSignal, () => void>();
/** The instant (and clock) of each `timeLimit` signal. */
const instants = new WeakMap<AbortSignal, { at: number; clock: Clock }>();

/** Registers how to bring `signal` up to date with its clock(s); `expired(signal)` calls it. */
export function pollable(signal: AbortSignal, poll: () => void): void {
  polls.set(signal, poll);
}

/**
 * True once `signal` fired, polling its clock first: a time limit whose instant passed while its
 * timer could not run fires now. Undefined: never.
 */
export function expired(signal: AbortSignal | undefined): boolean {
  if (signal === undefined) return false;
  if (!signal.aborted) polls.get(signal)?.();
  return signal.aborted;
}

/** Throws the signal's reason once it fired (polling its clock first, see `expired`). */
export function checkpoint(signal: AbortSignal | undefined): void {
  if (expired(signal)) throw (signal as AbortSignal).reason;
}

/**
 * Milliseconds until the earliest known instant of `signal` (a `timeLimit`, or a derived signal
 * that declared its sources with `deriveInstant`); undefined when it has none (a plain signal).
 */
export function remainingMs(signal: AbortSignal | undefined): number | undefined {
  if (signal === undefined) return undefined;
  const instant = instants.get(signal);
  return instant === undefined ? undefined : Math.max(0, instant.at - instant.clock.now());
}

/** Gives `derived` the earliest instant among `sources` (so `remainingMs(derived)` is known). */
export function deriveInstant(derived: AbortSignal, sources: readonly AbortSignal[]): void {
  let earliest: { at: number; clock: Clock } | undefined;
  for (const source of sources) {
    const instant = instants.get(source);
    if (instant === undefined) continue;
    // Compare in one time base: what is left on each source's own clock.
    if (earliest === undefined || instant.at - instant.clock.now() < earliest.at - earliest.clock.now()) {
      earliest = instant;
    }
  }
  if (earliest !== undefined) instants.set(derived, earliest);
}

export interface TimeLimit {
  signal: AbortSignal;
  /** When it fires, on its clock. */
  at: number;
  clock: Clock;
  /** Milliseconds left (0 once passed). */
  remainingMs(): number;
  /** Stops its timer (the signal keeps its state). */
  dispose(): void;
}

/**
 * A signal that fires `ms` from now (on `clock`) with a `TimeLimitReached(description)` reason,
 * e.g. "the scan time limit is 30 s". Unlike `AbortSignal.timeout` it is pollable (`expired`,
 * `checkpoint`), so the limit holds even while synchronous work keeps its timer from running.
 */
export function timeLimit(ms: number, description: string, clock: Clock = systemClock): TimeLimit {
  if (typeof ms !== 'number' || Number.isNaN(ms))
    throw new RangeError(`time limit must be a number, got ${ms}`);
  const controller = new AbortController();
  const signal = controller.signal;
  const wait = Math.max(0, ms);
  const at = clock.now() + wait;
  const abort = (): void => {
    if (!signal.aborted) controller.abort(new TimeLimitReached(description));
  };
  instants.set(signal, { at, clock });
  pollable(signal, () => {
    if (clock.now() >= at) abort();
  });
  const limit = (dispose: () => void): TimeLimit => ({
    signal,
    at,
    clock,
    remainingMs: () => Math.max(0, at - clock.now()),
    dispose,
  });
  if (wait === 0) {
    abort();
    return limit(() => undefined);
  }
  return limit(clock.schedule(abort, wait));
}

/**
 * How many steps of a synchronous loop may pass between two checkpoints: polling costs one clock
 * read, and 4,096 tokens take well under a millisecond even on a loaded machine.
 */
export const CHECK_EVERY = 4096;

/** `850 ms`, `1.5 s`: for messages. */
export function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
