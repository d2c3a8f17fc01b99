/**
 * Deadlines as values (src/util/deadline.ts), on a clock the test moves by hand: when a time limit
 * fires, that it is noticed by polling when its timer cannot run, and that the parser's
 * synchronous passes poll it. No waiting, no wall-clock assertion.
 */
import { HclParser } from '../../src/hcl';
import { verifyHcl } from '../../src/hcl/fast/verify';
import { scanHcl } from '../../src/hcl/full/scanner';
import { lex } from '../../src/hcl/lexer';
import {
  CHECK_EVERY,
  checkpoint,
  deriveInstant,
  duration,
  expired,
  pollable,
  remainingMs,
  timeLimit,
  TimeLimitReached,
} from '../../src/util/deadline';
import { ManualClock, TickingClock } from '../support/clock';
import { slowToParse } from '../support/scan';

test('a time limit fires when its timer runs at its instant, not before, with its description', () => {
  const clock = new ManualClock(5_000);
  const limit = timeLimit(1000, 'the test limit is 1.0 s', clock);
  expect(limit.at).toBe(6_000);
  expect(limit.remainingMs()).toBe(1000);
  clock.advance(999);
  expect(limit.signal.aborted).toBe(false);
  expect(limit.remainingMs()).toBe(1);
  clock.advance(1);
  expect(limit.signal.aborted).toBe(true);
  expect(limit.signal.reason).toBeInstanceOf(TimeLimitReached);
  expect((limit.signal.reason as Error).message).toBe('the test limit is 1.0 s');
  expect(limit.remainingMs()).toBe(0);
});

test('a limit whose timer could not run (busy event loop) is noticed by polling', () => {
  const clock = new ManualClock();
  const limit = timeLimit(20, 'the test limit', clock);
  clock.jump(19);
  expect(expired(limit.signal)).toBe(false);
  expect(() => checkpoint(limit.signal)).not.toThrow();
  clock.jump(41);
  expect(limit.signal.aborted).toBe(false); // the timer has not run
  expect(expired(limit.signal)).toBe(true); // the clock was read
  expect(limit.signal.aborted).toBe(true);
  expect(() => checkpoint(limit.signal)).toThrow(TimeLimitReached);
  // The timer running later changes nothing.
  clock.advance(0);
  expect((limit.signal.reason as Error).message).toBe('the test limit');
});

test('zero or negative time has already fired; NaN is a RangeError; dispose stops the timer', () => {
  const clock = new ManualClock();
  expect(timeLimit(0, 'none left', clock).signal.aborted).toBe(true);
  expect(timeLimit(-5, 'none left', clock).signal.aborted).toBe(true);
  expect(clock.pending).toBe(0);
  expect(() => timeLimit(Number.NaN, 'x', clock)).toThrow(RangeError);
  const limit = timeLimit(100, 'disposed', clock);
  expect(clock.pending).toBe(1);
  limit.dispose();
  expect(clock.pending).toBe(0);
  clock.advance(200);
  expect(limit.signal.aborted).toBe(false); // only polling would fire it now
  expect(expired(limit.signal)).toBe(true);
});

test('plain signals: no instant, not pollable; undefined never expires', () => {
  const controller = new AbortController();
  expect(remainingMs(controller.signal)).toBeUndefined();
  expect(expired(controller.signal)).toBe(false);
  controller.abort(new Error('gone'));
  expect(expired(controller.signal)).toBe(true);
  expect(() => checkpoint(controller.signal)).toThrow('gone');
  expect(expired(undefined)).toBe(false);
  expect(() => checkpoint(undefined)).not.toThrow();
  expect(remainingMs(undefined)).toBeUndefined();
});

test('a derived signal polls its sources and knows the earliest instant among them', () => {
  const clock = new ManualClock();
  const early = timeLimit(300, 'early', clock);
  const late = timeLimit(900, 'late', clock);
  const plain = new AbortController();
  const derived = new AbortController();
  const sources = [late.signal, plain.signal, early.signal];
  for (const s of sources) s.addEventListener('abort', () => derived.abort(s.reason), { once: true });
  pollable(derived.signal, () => sources.forEach((s) => expired(s)));
  deriveInstant(derived.signal, sources);
  expect(remainingMs(derived.signal)).toBe(300);
  clock.jump(350);
  expect(remainingMs(derived.signal)).toBe(0);
  expect(expired(derived.signal)).toBe(true);
  expect((derived.signal.reason as Error).message).toBe('early');
});

test('duration: milliseconds under a second, tenths of seconds above', () => {
  expect(duration(850)).toBe('850 ms');
  expect(duration(999.6)).toBe('1000 ms');
  expect(duration(1000)).toBe('1.0 s');
  expect(duration(2_250)).toBe('2.3 s');
});

describe('the parser polls the deadline inside its synchronous passes', () => {
  const text = slowToParse('terraform {\n  required_version = ">= 1.5"\n}\n', 600_000);

  test('the lexer, the verifier and the scanner call their checkpoint every CHECK_EVERY steps', () => {
    for (const pass of [
      (c: () => void) => lex(text, { checkpoint: c }),
      (c: () => void) => verifyHcl(text, { checkpoint: c }),
      (c: () => void) => scanHcl('x.tf', text, { checkpoint: c }),
    ]) {
      let calls = 0;
      pass(() => calls++);
      // ~600 kB is well over 50,000 tokens: more than ten checkpoints.
      expect(calls).toBeGreaterThan(10);
      // What the checkpoint throws ends the pass (it is not a give-up or a lexical error).
      const stop = new Error('stop');
      let n = 0;
      expect(() =>
        pass(() => {
          if (++n === 3) throw stop;
        }),
      ).toThrow(stop);
      expect(n).toBe(3);
    }
    expect(CHECK_EVERY).toBe(4096);
  });

  test('a limit passing during the passes over a large file rejects the parse before hcl2json starts', async () => {
    const parser = new HclParser({ workers: 1 });
    try {
      // Each clock read takes 1 ms: the limit passes after a few checkpoints, in the lexer.
      const clock = new TickingClock(1);
      const limit = timeLimit(5, 'the test limit', clock);
      await expect(
        parser.parse('big.tf', Buffer.from(text), { signal: limit.signal }),
      ).rejects.toBeInstanceOf(TimeLimitReached);
      expect(clock.reads).toBeLessThan(20);
      expect(parser.wasmStarted).toBe(false); // stopped in the calling thread, before any worker
      // The parser is fine afterwards.
      expect(await parser.parse('a.tf', Buffer.from('a = 1\n'))).toMatchObject({ ok: true });
    } finally {
      await parser.close();
    }
  }, 60_000);
});
