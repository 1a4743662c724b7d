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
