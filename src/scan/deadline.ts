/**
 * Deadlines of one scan: its own time limit (`ScanOptions.timeoutMs`) and the caller's signal
 * (`ScanOptions.signal`, e.g. a Lambda invocation's deadline), checked between stages and files
 * and, through the signal the scan hands down, inside the parser's passes over large files; and the
 * `scan-timeout` error that says where the scan was when time ran out. Time comes from
 * `ScanOptions.clock` (src/util/deadline.ts), so tests move it by hand.
 */
import { displayName } from '../archive';
import { InputError, isInputError } from '../errors';
import type { ConfigFileReader } from '../modules';
import type { Report } from '../report/types';
import {
  deriveInstant,
  duration,
  expired,
  pollable,
  remainingMs,
  systemClock,
  timeLimit,
  TimeLimitReached,
  type Clock,
} from '../util/deadline';
import type { ScanOptions } from './types';

export { duration, timeLimit, TimeLimitReached, type Clock, type TimeLimit } from '../util/deadline';

/**
 * One scan's deadline: its own `timeoutMs` and the caller's `signal`, whichever fires first, and
 * where the scan was (for the message of the `scan-timeout` error).
 */
export class ScanDeadline {
  /** Fires when either source does; undefined when the scan has no deadline. Pollable
   * (`expired`/`checkpoint` of src/util/deadline.ts poll both sources). */
  readonly signal: AbortSignal | undefined;
  private readonly clock: Clock;
  private readonly started: number;
  private readonly controller = new AbortController();
  private readonly sources: AbortSignal[] = [];
  private readonly cleanups: (() => void)[] = [];
  private readonly expired: Promise<never>;
  private stage = 'starting';
  /** Files being parsed, in the order they started. */
  private readonly parsing = new Set<string>();
  private lastParsed: string | null = null;

  constructor(options: ScanOptions) {
    this.clock = options.clock ?? systemClock;
    this.started = this.clock.now();
    if (options.timeoutMs !== undefined) {
      const ms = options.timeoutMs;
      if (typeof ms !== 'number' || !(ms > 0)) {
        throw new RangeError(`ScanOptions.timeoutMs must be a positive number, got ${String(ms)}`);
      }
      const own = timeLimit(ms, `the scan time limit is ${duration(ms)}`, this.clock);
      this.cleanups.push(() => own.dispose());
      this.sources.push(own.signal);
    }
    if (options.signal !== undefined) this.sources.push(options.signal);
    for (const source of this.sources) {
      const forward = (): void => {
        if (!this.controller.signal.aborted) this.controller.abort(source.reason);
      };
      if (source.aborted) forward();
      else {
        source.addEventListener('abort', forward, { once: true });
        this.cleanups.push(() => source.removeEventListener('abort', forward));
      }
    }
    // Polling the scan's signal polls its sources (an abort of one is forwarded synchronously).
    pollable(this.controller.signal, () => {
      for (const source of this.sources) if (expired(source)) break;
    });
    deriveInstant(this.controller.signal, this.sources);
    this.signal = this.sources.length > 0 ? this.controller.signal : undefined;
    this.expired = new Promise<never>((_, reject) => {
      const fire = (): void => reject(this.controller.signal.reason);
      if (this.controller.signal.aborted) fire();
      else this.controller.signal.addEventListener('abort', fire, { once: true });
    });
    this.expired.catch(() => undefined);
  }

  /** True once the deadline passed (also noticing a `timeLimit` whose timer could not run yet). */
  get aborted(): boolean {
    return this.signal !== undefined && expired(this.controller.signal);
  }

  /**
   * Milliseconds until the deadline, when it is known (every `timeLimit` signal and the scan's own
   * `timeoutMs` are; a plain `AbortSignal` is not); undefined when no known limit applies.
   */
  remainingMs(): number | undefined {
    return remainingMs(this.signal);
  }

  /** Throws the scan-timeout error when the deadline passed. */
  check(): void {
    if (this.aborted) throw this.timeoutError();
  }

  /** Checks the deadline, then records that the scan moved on to `stage`. */
  enter(stage: string): void {
    this.check();
    this.stage = stage;
  }

  /** `work`, or the scan-timeout error as soon as the deadline passes (work in flight is abandoned). */
  async race<T>(work: Promise<T>): Promise<T> {
    if (this.signal === undefined) return work;
    try {
      return await Promise.race([work, this.expired]);
    } catch (err) {
      // A rejection of the input (e.g. by the archive reader) that came first stays what it is.
      if (!isInputError(err) && this.aborted) throw this.timeoutError();
      throw err;
    }
  }

  /** Wraps the loader's file reader: a checkpoint before each file, and which files are in flight. */
  reader(read: ConfigFileReader): ConfigFileReader {
    if (this.signal === undefined) return read;
    return async (path, content) => {
      this.check();
      this.parsing.add(path);
      try {
        return await read(path, content);
      } catch (err) {
        if (this.aborted) throw this.timeoutError(path);
        throw err;
      } finally {
        this.parsing.delete(path);
        this.lastParsed = path;
      }
    };
  }

  timeoutError(file?: string): InputError {
    const reason: unknown = this.controller.signal.reason;
    let why = 'the scan was cancelled';
    if (reason instanceof TimeLimitReached) why = reason.message;
    else if (reason instanceof Error && reason.name === 'TimeoutError') why = 'its deadline passed';
    else if (reason instanceof Error && reason.name !== 'AbortError' && reason.message !== '')
      why = reason.message;
    const entry = file ?? this.parsing.values().next().value;
    let where = this.stage;
    if (entry !== undefined) where = `parsing "${displayName(entry)}"`;
    else if (this.stage === PARSING && this.lastParsed !== null)
      where = `${PARSING} (after "${displayName(this.lastParsed)}")`;
    return new InputError(
      'scan-timeout',
      `scan timed out after ${duration(this.clock.now() - this.started)} while ${where}: ${why}`,
      { ...(entry !== undefined ? { entry: displayName(entry) } : {}), cause: reason },
    );
  }

  dispose(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}

export const PARSING = 'parsing the configuration files';

/**
 * Time kept back from the registry check for what follows it (the rules and the report): this
 * share of the time left when the check starts, at least `REGISTRY_RESERVE_MIN_MS`. Measured on the
 * cloudposse corpus archive five times over (2,540 findings), the rules and the report take 0.17 s;
 * on 2,000 stacks with 12,000 findings 0.85 s. With the API's 21.75 s the reserve is about 2 s.
 */
export const REGISTRY_RESERVE_SHARE = 0.1;
export const REGISTRY_RESERVE_MIN_MS = 1000;

/**
 * The registry check's budget, given the time left before the scan's deadline: what is left after
 * the reserve (never negative). The registry client stops when it runs out, and every provider
 * version not answered by then is "unavailable" (the `lock-registry-unavailable` notice), so a slow
 * registry ends in a complete report with that notice instead of a timed-out scan.
 */
export function registryBudgetMs(remainingMs: number): number {
  const reserve = Math.max(REGISTRY_RESERVE_MIN_MS, remainingMs * REGISTRY_RESERVE_SHARE);
  return Math.max(0, Math.floor(remainingMs - reserve));
}

/**
 * Runs one scan under its deadline. A scan returns a report only when it finished before the
 * deadline; otherwise it throws `InputError('scan-timeout')`, whatever was in flight.
 */
export async function withDeadline(
  options: ScanOptions,
  work: (deadline: ScanDeadline) => Promise<Report>,
): Promise<Report> {
  const deadline = new ScanDeadline(options);
  try {
    deadline.check();
    const report = await work(deadline);
    deadline.check();
    return report;
  } catch (err) {
    if (isInputError(err)) throw err;
    if (deadline.aborted) throw deadline.timeoutError();
    throw err;
  } finally {
    deadline.dispose();
  }
}
