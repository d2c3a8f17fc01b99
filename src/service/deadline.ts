/**
 * The deadline of one Lambda invocation. Lambda ends an invocation at its timeout without warning;
 * a scan that is still running then leaves nothing behind, but burns the whole timeout on each of
 * its attempts. So the handlers stop their scans a margin before the timeout: the margin is kept
 * for storing the outcome and for failing the invocation cleanly (logged, counted, retried).
 *
 * margin = min(TFGUARD_DEADLINE_MARGIN_MS (default 10 s), a quarter of the time left when the
 * invocation starts): the 120 s upload scan stops scanning after 110 s, the 29 s API after ~21.75 s.
 */
import { InputError } from '../errors';
import { duration, systemClock, timeLimit, type Clock, type TimeLimit } from '../util/deadline';

/** At most this share of the invocation's time is kept back as the margin. */
export const MAX_MARGIN_SHARE = 0.25;

/** The margin kept before the Lambda timeout, given the time left and the configured margin. */
export function deadlineMargin(remainingMs: number, marginMs: number): number {
  return Math.max(0, Math.min(marginMs, Math.floor(remainingMs * MAX_MARGIN_SHARE)));
}

/**
 * A time limit that fires a margin before Lambda ends the invocation. `remainingMs` is
 * `context.getRemainingTimeInMillis()` at the start of the invocation; undefined (no Lambda
 * context, e.g. a direct call) gives no deadline. `clock`: see src/util/deadline.ts (tests).
 */
export function invocationDeadline(
  remainingMs: number | undefined,
  marginMs: number,
  clock: Clock = systemClock,
): TimeLimit | undefined {
  if (remainingMs === undefined || !Number.isFinite(remainingMs)) return undefined;
  const margin = deadlineMargin(remainingMs, marginMs);
  return timeLimit(
    remainingMs - margin,
    `the Lambda invocation's deadline was reached (${duration(margin)} before its timeout, kept for storing the outcome)`,
    clock,
  );
}

/** The error for work that was not even started because the invocation's deadline had passed. */
export function deadlinePassed(what: string): InputError {
  return new InputError(
    'scan-timeout',
    `${what} was not started: the Lambda invocation's deadline had already passed (an earlier record used its time)`,
  );
}

/** True when `err` says a scan ran out of time (or was not started for lack of it). */
export function isScanTimeout(err: unknown): err is InputError {
  return err instanceof InputError && err.code === 'scan-timeout';
}
