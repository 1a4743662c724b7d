import type { Clock } from '../../src/scheduler/clock';

/** A clock the tests move by hand (src/scheduler/clock.ts): a month of ticks, and a DST change, in milliseconds. */
export interface FakeClock extends Clock {
  /** Moves time forward to `at`, waking every sleeper due by then (in time order), and lets them run. */
  advanceTo(at: Date | string): Promise<void>;
  /** Sleepers waiting now (for tests that wait for the scheduler to be idle). */
  readonly sleepers: number;
}

export function createFakeClock(start: Date | string): FakeClock {
  let now = new Date(start).getTime();
  const waiting: Array<{ at: number; resolve: () => void }> = [];
  const settle = async () => {
    // Several macrotask turns: a woken scheduler runs database queries before it sleeps again.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    now: () => new Date(now),
    get sleepers() {
      return waiting.length;
    },
    sleepUntil(at, signal) {
      return new Promise((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        if (at.getTime() <= now) return resolve();
        const entry = { at: at.getTime(), resolve: () => resolve() };
        waiting.push(entry);
        signal.addEventListener(
          'abort',
          () => {
            const i = waiting.indexOf(entry);
            if (i >= 0) waiting.splice(i, 1);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    },
    async advanceTo(target) {
      const end = new Date(target).getTime();
      for (;;) {
        waiting.sort((a, b) => a.at - b.at);
        const next = waiting[0];
        if (!next || next.at > end) break;
        now = Math.max(now, next.at);
        waiting.shift();
        next.resolve();
        await settle();
      }
      now = Math.max(now, end);
      await settle();
    },
  };
}
