import type { Projection } from '../../src/projector/projection';
import type { RunnerDeps } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import type { Sql } from '../../src/db/connect';
import type { EventStore, NewEvent } from '../../src/store/types';
import { waitVisible } from '../ledger/visible';

/**
 * A small read model for the runner tests: one row per event (stream, amount × version) and a per-stream
 * total in the view recon.<name>; `failOn` makes apply throw on events with that tag: a failure that is
 * not the event's (a serialization failure, SQLSTATE 40001: the batch fails and is tried again), or with
 * `poison`, one that is (the runner sets the event aside, src/projector/set-aside.ts).
 */
export function tallyProjection(
  o: { name?: string; version?: number; failOn?: string; poison?: boolean } = {},
): Projection {
  const name = o.name ?? 'tally';
  const version = o.version ?? 1;
  return {
    name,
    version,
    // every event the tests append (their types are not the catalogue's)
    handles: 'every event',
    async setup(tx, ctx) {
      await tx.unsafe(
        `create table ${ctx.schema}.seen (event_id uuid primary key, stream text not null, amount bigint not null)`,
      );
    },
    async apply(tx, events, ctx) {
      for (const e of events) {
        if (o.failOn && (e.data as { tag?: string }).tag === o.failOn)
          throw o.poison ? new Error('projection bug') : Object.assign(new Error('projection bug'), { code: '40001' });
      }
      await tx`insert into ${tx(ctx.schema)}.seen ${tx(events.map((e) => ({ event_id: e.id, stream: e.stream, amount: BigInt((e.data as { amount: string }).amount) * BigInt(version) })))}`;
    },
    views(ctx) {
      return [
        `create or replace view recon.${name} as select stream, sum(amount)::int8 as total, count(*)::int8 as events from ${ctx.schema}.seen group by stream`,
      ];
    },
  };
}

/** An event builder for the tally projection: each event numbered (data.n) in the order built. */
export function tallyEvents(): (tag: string, amount: number) => NewEvent {
  let n = 0;
  return (tag, amount) => ({
    id: crypto.randomUUID(),
    type: 'Tallied',
    version: 1,
    data: { tag, amount: String(amount), n: ++n },
  });
}

export function tallyDeps(sql: Sql, store: EventStore, ...projections: Projection[]): RunnerDeps {
  return { sql, store, log: silentLogger, timezone: 'UTC', graceHours: 48, projections };
}

/** The per-stream totals of the view recon.<view>. */
export async function tallyTotals(sql: Sql, view = 'tally'): Promise<Record<string, bigint>> {
  const rows = await sql.unsafe<{ stream: string; total: bigint }[]>(
    `select stream, total from recon.${view} order by stream`,
  );
  return Object.fromEntries(rows.map((r) => [r.stream, r.total]));
}

/**
 * readAll shows an event once no older transaction is running on the server (any database of it: the other
 * test files run beside this one), so each append waits until it is visible before the test projects.
 */
export async function appendVisible(store: EventStore, sql: Sql, stream: string, events: NewEvent[]) {
  const r = await store.append(stream, events);
  await waitVisible(sql, store);
  return r;
}
