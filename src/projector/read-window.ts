import { comparePositions, formatPosition, parsePosition, type EventStore, type Position } from '../store/types';
import { type Batch, type Carry, readBatch, sharedFeed } from './store-feed';

/**
 * The builds' shared read window (issue 26): one read of the store feeds every build. The store is read
 * batch after batch, in order, from the earliest checkpoint among the builds, by one read at a time; each
 * batch is kept until the slowest build has taken it. A build may run ahead of the slowest by at most the
 * window (`size` batches, the most kept in memory): at the window's end it waits until the slowest moves on.
 * A build that stops (caught up, failed, busy) leaves the window and holds no one back. A build outside the
 * window (it began further on, or another runner moved its checkpoint past the window's end) reads through
 * the per-checkpoint feed (store-feed.ts `sharedFeed`) instead, shared with whoever is at the same checkpoint.
 *
 * Before it (measured in issue 26), a build ahead of the slowest by more than the kept batches read the store
 * again on its own, so the store was read up to once per build, and the batches kept did not bound the spread.
 */

/** Batches a build may run ahead of the slowest one; each batch kept is `batchSize` events in memory. */
export const WINDOW_BATCHES = 4;

export interface ReadWindow {
  /** The batch after `reader`'s checkpoint; at the window's end, once the slowest reader leaves room. */
  batchAfter(reader: number, checkpoint: string | null): Promise<Batch>;
  /** The reader stops: it no longer holds the window back. */
  leave(reader: number): void;
}

const keyOf = (checkpoint: string | null): string => checkpoint ?? '';

/** The earliest of the checkpoints (null: before the first event). */
function earliest(checkpoints: readonly (string | null)[]): string | null {
  let first: string | null | undefined;
  let firstPos: Position | undefined;
  for (const c of checkpoints) {
    if (c === null) return null;
    const pos = parsePosition(c);
    if (firstPos === undefined || comparePositions(pos, firstPos) < 0) {
      first = c;
      firstPos = pos;
    }
  }
  return first ?? null;
}

interface WindowOptions {
  readonly store: EventStore;
  readonly batchSize: number;
  readonly until: Position | undefined;
  /** each reader's checkpoint at the start, by reader number */
  readonly checkpoints: readonly (string | null)[];
  /** batches a reader may run ahead of the slowest (default WINDOW_BATCHES) */
  readonly size?: number;
}

export function readWindow(opts: WindowOptions): ReadWindow {
  const size = Math.max(1, opts.size ?? WINDOW_BATCHES);
  const w = windowState(opts);
  const off = sharedFeed(opts.store, opts.batchSize, opts.until, opts.checkpoints.length);
  opts.checkpoints.forEach((c, reader) => {
    if (c === w.end) w.at.set(reader, 0);
  });
  return {
    async batchAfter(reader, checkpoint) {
      for (;;) {
        const i = w.indexOf.get(keyOf(checkpoint));
        if (i !== undefined) {
          moveTo(w, reader, i, size);
          return w.kept[i - w.base]!;
        }
        if (checkpoint !== w.end || w.ended) {
          // off the window: neither kept nor next (or the store's end was read: read it again)
          if (w.at.delete(reader)) changed(w, size);
          return off.batchAfter(checkpoint);
        }
        moveTo(w, reader, w.base + w.kept.length, size);
        readAhead(w, size);
        await (w.reading ?? w.room.promise);
      }
    },
    leave(reader) {
      if (w.at.delete(reader)) changed(w, size);
    },
  };
}

interface WindowState {
  readonly opts: WindowOptions;
  /** batches kept, in log order: kept[0] is batch number `base` */
  readonly kept: Batch[];
  base: number;
  /** batch number by the checkpoint it follows */
  readonly indexOf: Map<string, number>;
  /** the checkpoint the next batch follows */
  end: string | null;
  /** the last batch read reached the store's end (or `until`) */
  ended: boolean;
  carry: Carry | undefined;
  reading: Promise<void> | undefined;
  /** each reader in the window: the batch number it asked for last (it is applying it) */
  readonly at: Map<number, number>;
  /** resolved when a reader moves on or leaves (then there may be room ahead) */
  room: { promise: Promise<void>; resolve: () => void };
}

function windowState(opts: WindowOptions): WindowState {
  return {
    opts,
    kept: [],
    base: 0,
    indexOf: new Map(),
    end: earliest(opts.checkpoints),
    ended: false,
    carry: undefined,
    reading: undefined,
    at: new Map(),
    room: signal(),
  };
}

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function slowest(w: WindowState): number {
  let min = Number.POSITIVE_INFINITY;
  for (const i of w.at.values()) if (i < min) min = i;
  return min;
}

function moveTo(w: WindowState, reader: number, i: number, size: number): void {
  if (w.at.get(reader) === i) return;
  w.at.set(reader, i);
  changed(w, size);
}

/** A reader moved or left: drop what every reader has passed, wake those waiting for room, read ahead. */
function changed(w: WindowState, size: number): void {
  const low = Math.min(slowest(w), w.base + w.kept.length);
  while (w.base < low) {
    w.kept.shift();
    w.base++;
  }
  for (const [key, i] of w.indexOf) if (i < w.base) w.indexOf.delete(key);
  const room = w.room;
  w.room = signal();
  room.resolve();
  readAhead(w, size);
}

/** Reads the next batch when no read is under way and it lies within `size` batches of the slowest reader. */
function readAhead(w: WindowState, size: number): void {
  const next = w.base + w.kept.length;
  if (w.reading || w.ended || w.at.size === 0 || next - slowest(w) >= size) return;
  const after = w.end;
  const { store, batchSize, until } = w.opts;
  w.reading = readBatch(store, after, batchSize, until, w.carry).then(
    (r) => {
      w.reading = undefined;
      w.carry = r.carry;
      w.kept.push({ events: r.events, reachedEnd: r.reachedEnd });
      w.indexOf.set(keyOf(after), next);
      const last = r.events[r.events.length - 1];
      if (last) w.end = formatPosition(last.position);
      w.ended = r.reachedEnd;
      readAhead(w, size);
    },
    (e: unknown) => {
      // the readers waiting for this batch fail; the next to ask reads it again
      w.reading = undefined;
      throw e;
    },
  );
  w.reading.catch(() => {});
}
