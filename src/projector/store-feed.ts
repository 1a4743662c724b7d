import type { Logger } from '../log';
import { memoize } from '../memoize';
import {
  comparePositions,
  formatPosition,
  parsePosition,
  type EventStore,
  type Position,
  type RecordedEvent,
} from '../store/types';

/**
 * Everything the runner asks of the event store: pages of the log in batches, the head, the event at a
 * checkpoint, and a wake-up when events are appended. A backend that pushes events (a subscription) changes
 * this file alone.
 */

/** Events read past a batch's last complete transaction: the head of the next batch read after `after`. */
export interface Carry {
  readonly after: string | null;
  readonly events: RecordedEvent[];
  /** where the store's next page starts (the last event read) */
  readonly readFrom: Position;
}

/**
 * Reads the batch after a checkpoint (cut at `until`); `reachedEnd`: nothing more to read for now.
 * A batch never splits an append (consecutive events sharing `appendId`): a projection may act once per
 * append (the reconciliation judges a payment once per append), and that must not depend on where
 * batches end. The events of a trailing append that may continue in the next page are carried into the
 * next batch; an append longer than the batch size makes a longer batch. A page shorter than the batch
 * size ends with a complete append on PostgreSQL (readAll shows committed transactions only); on
 * EventStoreDB the parts of an append become visible one by one (docs/store.md).
 */
export async function readBatch(
  store: EventStore,
  checkpoint: string | null,
  batchSize: number,
  until: Position | undefined,
  carry: Carry | undefined,
): Promise<{ events: RecordedEvent[]; reachedEnd: boolean; carry: Carry | undefined }> {
  let events: RecordedEvent[] = [];
  let from = checkpoint ? parsePosition(checkpoint) : undefined;
  if (carry && carry.after === checkpoint) {
    events = carry.events;
    from = carry.readFrom;
  }
  for (;;) {
    const page = await store.readAll(from, { maxCount: batchSize });
    events = events.length ? events.concat(page) : page;
    let reachedEnd = page.length < batchSize;
    if (until) {
      const kept = events.filter((e) => comparePositions(e.position, until) <= 0);
      if (
        kept.length < events.length ||
        (kept.length > 0 && comparePositions(kept[kept.length - 1]!.position, until) === 0)
      )
        reachedEnd = true;
      if (reachedEnd) return { events: kept, reachedEnd, carry: undefined };
    }
    if (reachedEnd || events.length === 0) return { events, reachedEnd, carry: undefined };
    const last = events[events.length - 1]!.position;
    let cut = events.length;
    const lastAppend = events[events.length - 1]!.appendId;
    while (cut > 0 && events[cut - 1]!.appendId === lastAppend) cut--;
    if (cut > 0) {
      const head = events.slice(0, cut);
      return {
        events: head,
        reachedEnd: false,
        carry: { after: formatPosition(head[head.length - 1]!.position), events: events.slice(cut), readFrom: last },
      };
    }
    from = last; // one transaction fills the whole page: read on
  }
}

/** The position of the store's last event, undefined for an empty store. */
export function storeHead(store: EventStore): Promise<Position | undefined> {
  return store.headPosition();
}

/** The store's head as text ("commit/prepare"), null for an empty store. */
export async function headText(store: EventStore): Promise<string | null> {
  const h = await storeHead(store);
  return h ? formatPosition(h) : null;
}

export type EventAt = (at: string) => Promise<RecordedEvent | undefined>;

/** readAt, once per checkpoint (builds often share one). */
export const eventAtOnce = (store: EventStore): EventAt => memoize((at: string) => store.readAt(parsePosition(at)));

/**
 * Calls `notify` whenever events may have been appended (the store's watch: PostgreSQL's notification, an
 * EventStoreDB live subscription); returns how to stop, or undefined when the follower can only poll.
 */
export async function onAppends(
  deps: { readonly store: EventStore; readonly log: Logger },
  notify: () => void,
): Promise<(() => Promise<void>) | undefined> {
  try {
    return await deps.store.watch(notify);
  } catch (e) {
    deps.log.warn('projection follower cannot watch the event store; polling only', { error: e });
    return undefined;
  }
}

export interface Batch {
  readonly events: RecordedEvent[];
  readonly reachedEnd: boolean;
}

/** The batch after a checkpoint, for whichever build reaches it first. */
export interface SharedFeed {
  batchAfter(checkpoint: string | null): Promise<Batch>;
}

/** Batches kept for builds that reach the same checkpoint later (a bound, so memory never follows the spread). */
const KEPT_BATCHES = 6;
/** Reads ahead at once: each holds a connection (of a pool the builds' transactions also draw from). */
const READS_AHEAD = 2;

/**
 * For builds off the shared read window (read-window.ts: they began further on than the slowest, or another
 * runner moved their checkpoint past it): one read of the store per batch for those that pass the same
 * checkpoint, without tying their pace:
 * each build asks for the batch after its own checkpoint when it is ready for it. The first to ask reads it
 * (and the batch after it, meanwhile, so that the read overlaps the apply); the others find it kept, as long
 * as they are at most KEPT_BATCHES behind; a build further behind reads the store itself. At most READS_AHEAD
 * reads ahead are under way at once, so the builds' transactions keep their connections. A batch every
 * reader has taken is dropped at once. Batches are cut the same way whoever reads them (readBatch: whole
 * appends), so builds that start at one checkpoint keep meeting at the same ones.
 */
export function sharedFeed(
  store: EventStore,
  batchSize: number,
  until: Position | undefined,
  readers: number,
): SharedFeed {
  const kept = new Map<string, { batch: Promise<Batch>; taken: number }>();
  let ahead = 0;
  const carries = new Map<string, Carry>();
  const read = (checkpoint: string | null): Promise<Batch> => {
    const key = checkpoint ?? '';
    const batch = readBatch(store, checkpoint, batchSize, until, carries.get(key)).then((r) => {
      carries.delete(key);
      if (r.carry) carries.set(r.carry.after ?? '', r.carry);
      while (carries.size > KEPT_BATCHES) carries.delete(carries.keys().next().value!);
      return { events: r.events, reachedEnd: r.reachedEnd };
    });
    kept.set(key, { batch, taken: 0 });
    while (kept.size > KEPT_BATCHES) kept.delete(kept.keys().next().value!);
    // a failed read is not kept: the next reader tries again
    batch.catch(() => kept.get(key)?.batch === batch && kept.delete(key));
    return batch;
  };
  return {
    async batchAfter(checkpoint) {
      const key = checkpoint ?? '';
      const entry = kept.get(key);
      const batch = entry ? entry.batch : read(checkpoint);
      const e = kept.get(key);
      if (e && ++e.taken >= readers) kept.delete(key);
      const b = await batch;
      const last = b.events[b.events.length - 1];
      if (!b.reachedEnd && last) {
        const next = formatPosition(last.position);
        if (!kept.has(next) && ahead < READS_AHEAD) {
          ahead++;
          read(next)
            .catch(() => {})
            .finally(() => ahead--);
        }
      }
      return b;
    },
  };
}
