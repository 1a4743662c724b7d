import { FORWARDS, START, StreamNotFoundError, type EventStoreDBClient } from '@eventstore/db-client';
import { consume, reconMetaOf } from './eventstoredb-read';
import type { Position } from './types';

/** What an append needs to know of a stream: its revision and the events it holds. */
export interface StreamState {
  revision: number;
  readonly byId: Map<string, { readonly hash: string; readonly appendId: string; readonly position: Position }>;
}

/** Streams kept in memory; the least recently used beyond it are read again when next appended to. */
const MAX_STREAMS = 5000;

/**
 * What this store knows of the streams it appends to, brought up to date by reading only what a stream
 * gained since (reading every stream whole before each append made an append's cost grow with its stream).
 */
export function createStreamStates(client: EventStoreDBClient) {
  const states = new Map<string, StreamState>();

  function remember(stream: string, state: StreamState): StreamState {
    states.delete(stream);
    states.set(stream, state);
    if (states.size > MAX_STREAMS) states.delete(states.keys().next().value!);
    return state;
  }

  /** Reads what the stream gained after the revision known (the whole stream when none is). */
  async function refresh(stream: string): Promise<StreamState> {
    const state = states.get(stream) ?? { revision: -1, byId: new Map() };
    const from = state.revision + 1;
    try {
      await consume(
        client.readStream(stream, { fromRevision: from === 0 ? START : BigInt(from), direction: FORWARDS }),
        (r) => {
          const e = r.event;
          if (!e) return undefined;
          state.revision = Math.max(state.revision, Number(e.revision));
          const recon = reconMetaOf(e.metadata);
          const position = e.position ?? { commit: -1n, prepare: -1n };
          state.byId.set(e.id, {
            hash: recon?.contentHash ?? '',
            appendId: recon?.appendId ?? `position-${position.commit}`,
            position: { commit: position.commit, prepare: position.prepare },
          });
          return undefined;
        },
      );
    } catch (e) {
      if (!(e instanceof StreamNotFoundError)) throw e;
    }
    return remember(stream, state);
  }

  return {
    refresh,
    /** The state known, read when there is none. */
    async get(stream: string): Promise<StreamState> {
      const known = states.get(stream);
      return known ? remember(stream, known) : refresh(stream);
    },
  };
}

export type StreamStates = ReturnType<typeof createStreamStates>;

/**
 * Runs `fn` holding every named stream, taken in sorted order (two calls cannot wait for each other):
 * appends of one store to one stream run one at a time, so the same events raced by two calls of one
 * process are written once and reported once.
 */
export function createStreamLocks() {
  const tails = new Map<string, Promise<void>>();
  return async function withStreams<T>(streams: readonly string[], fn: () => Promise<T>): Promise<T> {
    const releases: (() => void)[] = [];
    try {
      for (const s of [...new Set(streams)].sort()) {
        const prior = tails.get(s) ?? Promise.resolve();
        let release!: () => void;
        const mine = new Promise<void>((r) => {
          release = r;
        });
        const tail = prior.then(() => mine);
        tails.set(s, tail);
        releases.push(() => {
          release();
          if (tails.get(s) === tail) tails.delete(s);
        });
        await prior;
      }
      return await fn();
    } finally {
      for (const r of releases) r();
    }
  };
}

/**
 * Runs `fn` over the items, at most `limit` at a time. After a failure no further item is started, and
 * the first failure is thrown once the running ones ended.
 */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length && errors.length === 0) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (e) {
        errors.push(e);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (errors.length) throw errors[0];
}
