import type { EventStore } from '../store/types';
import { toAppendRequests, type Keyed } from './observations';

/**
 * Group commit for the webhook receiver: appends that arrive while a transaction is in flight are
 * gathered and written together in one `appendMany`, and each caller's promise settles only once
 * that transaction has committed (so a 200 still means durable). One failing event must not fail its
 * neighbours: a failed batch is retried event by event, so each caller gets its own outcome.
 */
export interface AppendBatcher {
  append(item: Keyed): Promise<void>;
  /** Waits until everything queued so far has been written or has failed. */
  drain(): Promise<void>;
}

interface Pending {
  readonly item: Keyed;
  resolve(): void;
  reject(e: unknown): void;
}

export function createAppendBatcher(
  store: EventStore,
  opts: { maxBatch?: number; maxInFlight?: number } = {},
): AppendBatcher {
  const maxBatch = opts.maxBatch ?? 256;
  const maxInFlight = opts.maxInFlight ?? 3;
  let queue: Pending[] = [];
  let inFlight = 0;
  let scheduled = false;
  const idle: Array<() => void> = [];

  function settleIdle() {
    if (inFlight === 0 && queue.length === 0 && !scheduled) for (const f of idle.splice(0)) f();
  }

  async function write(batch: Pending[]) {
    try {
      await store.appendMany(toAppendRequests(batch.map((p) => p.item)));
      for (const p of batch) p.resolve();
    } catch (e) {
      if (batch.length === 1) batch[0]!.reject(e);
      else {
        // Find who failed: each event alone (idempotent, so the ones already written are duplicates).
        for (const p of batch) {
          try {
            await store.appendMany(toAppendRequests([p.item]));
            p.resolve();
          } catch (err) {
            p.reject(err);
          }
        }
      }
    }
  }

  function pump() {
    scheduled = false;
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      inFlight++;
      void write(batch).finally(() => {
        inFlight--;
        if (queue.length > 0) schedule();
        settleIdle();
      });
    }
    settleIdle();
  }

  function schedule() {
    if (scheduled) return;
    scheduled = true;
    // Let the requests already parsed in this turn of the event loop join the batch.
    setImmediate(pump);
  }

  return {
    append(item) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (inFlight < maxInFlight) schedule();
      });
    },
    drain() {
      return new Promise<void>((resolve) => {
        idle.push(resolve);
        settleIdle();
      });
    },
  };
}
