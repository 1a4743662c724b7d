/**
 * Time as the scheduler sees it. The real clock sleeps with timers; tests pass a fake clock and move
 * it by hand, so that a month of ticks (and a DST change) runs in milliseconds.
 */
export interface Clock {
  now(): Date;
  /** Resolves at `at` (at once if it is past); rejects with the signal's reason when aborted. */
  sleepUntil(at: Date, signal: AbortSignal): Promise<void>;
}

// setTimeout holds at most 2^31-1 ms (~24.8 days); a monthly job sleeps in steps.
const MAX_TIMER_MS = 2_147_000_000;

export const systemClock: Clock = {
  now: () => new Date(),
  sleepUntil(at, signal) {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      let timer: NodeJS.Timeout;
      const arm = () => {
        const wait = at.getTime() - Date.now();
        if (wait <= 0) return done();
        timer = setTimeout(arm, Math.min(wait, MAX_TIMER_MS));
      };
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const done = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      arm();
    });
  },
};

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
