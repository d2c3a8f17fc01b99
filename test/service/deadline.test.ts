/**
 * The invocation deadline of the handlers (src/service/deadline.ts): the margin kept before the
 * Lambda timeout is `TFGUARD_DEADLINE_MARGIN_MS`, at most a quarter of the invocation's time.
 */
import { deadlineMargin, invocationDeadline, MAX_MARGIN_SHARE } from '../../src/service/deadline';
import { TimeLimitReached } from '../../src/scan';
import { ManualClock } from '../support/clock';

test('the margin: the setting, at most a quarter of the time left', () => {
  expect(MAX_MARGIN_SHARE).toBe(0.25);
  expect(deadlineMargin(120_000, 10_000)).toBe(10_000); // scanUpload (120 s): scans stop at 110 s
  expect(deadlineMargin(29_000, 10_000)).toBe(7_250); // createScan (29 s): at 21.75 s
  expect(deadlineMargin(180_000, 10_000)).toBe(10_000); // auditWorker (180 s)
  expect(deadlineMargin(3_000, 10_000)).toBe(750);
  expect(deadlineMargin(120_000, 0)).toBe(0); // 0: scans may run until Lambda ends the invocation
  expect(deadlineMargin(0, 10_000)).toBe(0);
});

test('no context time, no deadline', () => {
  expect(invocationDeadline(undefined, 10_000)).toBeUndefined();
  expect(invocationDeadline(Number.NaN, 10_000)).toBeUndefined();
});

test('the deadline fires the margin before the remaining time runs out, with a reason naming it', () => {
  const clock = new ManualClock(1_000);
  const deadline = invocationDeadline(400, 10_000, clock)!; // margin 100 ms
  expect(deadline.at).toBe(1_300);
  clock.advance(299);
  expect(deadline.signal.aborted).toBe(false);
  clock.advance(1);
  expect(deadline.signal.aborted).toBe(true);
  expect(deadline.signal.reason).toBeInstanceOf(TimeLimitReached);
  expect((deadline.signal.reason as Error).message).toBe(
    "the Lambda invocation's deadline was reached (100 ms before its timeout, kept for storing the outcome)",
  );
  deadline.dispose();
});

test('no time left: already fired', () => {
  const deadline = invocationDeadline(0, 10_000)!;
  expect(deadline.signal.aborted).toBe(true);
  deadline.dispose();
});
