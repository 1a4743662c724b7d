import type { Sql } from '../../db/connect';
import { BankStatementImported } from '../../events/bank-events';
import type { EventStore } from '../../store/types';

/**
 * Which of these event ids the store already holds. An entry already booked from an earlier, overlapping
 * statement carries that statement's id in its data: appending it again would be the same id with other
 * content, which the store refuses, so the import leaves out what is known before it appends.
 */
/** The ids of the BankStatementImported events of `stream` recorded under `statementId`. */
export type StoredStatements = (stream: string, statementId: string) => Promise<readonly string[]>;

export type KnownEvents = ((stream: string, ids: readonly string[]) => Promise<Set<string>>) & {
  /** the statements recorded under a statement id (src/ingest/bank/statement-ids.ts) */
  readonly statements?: StoredStatements;
};

export function knownEventsOf(store: EventStore, sql: Sql): KnownEvents {
  if (store.backend === 'postgres') {
    const known = async (_stream: string, ids: readonly string[]) => {
      if (ids.length === 0) return new Set<string>();
      const rows = await sql<{ id: string }[]>`
        select event_id::text as id from es_events where event_id = any(${ids as string[]}::uuid[])`;
      return new Set(rows.map((r) => r.id));
    };
    const statements: StoredStatements = async (stream, statementId) => {
      // es_events_bank_statement_id (migration 2000) answers it without reading the account's entries
      const rows = await sql<{ id: string }[]>`
        select event_id::text as id from es_events
        where type = ${BankStatementImported.type} and stream_id = ${stream} and data->>'statementId' = ${statementId}`;
      return rows.map((r) => r.id);
    };
    return Object.assign(known, { statements });
  }
  // EventStoreDB has no lookup by id: the stream's ids are read once per import (memory grows with the account's history)
  const cache = new Map<string, Set<string>>();
  const statements: StoredStatements = async (stream, statementId) => {
    const out: string[] = [];
    for (let from = 0; ; ) {
      const page = await store.readStream(stream, { fromRevision: from, maxCount: 4096 });
      for (const e of page)
        if (e.type === BankStatementImported.type && (e.data as { statementId?: unknown }).statementId === statementId)
          out.push(e.id);
      if (page.length < 4096) break;
      from += page.length;
    }
    return out;
  };
  const known = async (stream: string, ids: readonly string[]) => {
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
  return Object.assign(known, { statements });
}
