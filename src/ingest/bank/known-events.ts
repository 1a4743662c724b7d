import type { Sql } from '../../db/connect';
import type { EventStore } from '../../store/types';

/**
 * Which of these event ids the store already holds. An entry already booked from an earlier, overlapping
 * statement carries that statement's id in its data: appending it again would be the same id with other
 * content, which the store refuses, so the import leaves out what is known before it appends.
 */
export type KnownEvents = (stream: string, ids: readonly string[]) => Promise<Set<string>>;

export function knownEventsOf(store: EventStore, sql: Sql): KnownEvents {
  if (store.backend === 'postgres') {
    return async (_stream, ids) => {
      if (ids.length === 0) return new Set();
      const rows = await sql<{ id: string }[]>`
        select event_id::text as id from es_events where event_id = any(${ids as string[]}::uuid[])`;
      return new Set(rows.map((r) => r.id));
    };
  }
  // EventStoreDB has no lookup by id: the stream's ids are read once per import (memory grows with the account's history)
  const cache = new Map<string, Set<string>>();
  return async (stream, ids) => {
    let known = cache.get(stream);
    if (!known) {
      known = new Set();
      for (let from = 0; ; ) {
        const page = await store.readStream(stream, { fromRevision: from, maxCount: 4096 });
        for (const e of page) known.add(e.id);
        if (page.length < 4096) break;
        from += page.length;
      }
      cache.set(stream, known);
    }
    const k = known;
    return new Set(ids.filter((id) => k.has(id)));
  };
}
