/**
 * A clock the test moves by hand (src/util/deadline.ts `Clock`): deadline logic is tested without
 * waiting and without wall-clock assertions.
 */
import type { Clock } from '../../src/util/deadline';

interface Timer {
  at: number;
  seq: number;
  fire: () => void;
}

export class ManualClock implements Clock {
  private time: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  schedule(fire: () => void, ms: number): () => void {
    const timer: Timer = { at: this.time + Math.max(0, ms), seq: this.seq++, fire };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Timers not yet fired or cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time on; the timers that come due fire in order, as a free event loop would run them. */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = Math.max(this.time, due.at);
      due.fire();
    }
    this.time = until;
  }

  /** Moves time on without running any timer: synchronous work keeping the event loop busy. */
  jump(ms: number): void {
    this.time += ms;
  }
}

/** A clock that moves `step` ms each time it is read: work that reads it often "takes long". */
export class TickingClock implements Clock {
  reads = 0;
  constructor(private readonly step = 1) {}
  now(): number {
    return this.reads++ * this.step;
  }
  schedule(): () => void {
    return () => undefined; // never runs: only polling notices the time
  }
}
