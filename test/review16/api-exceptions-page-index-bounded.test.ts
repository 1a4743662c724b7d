import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as exceptions } from '../../projections/exceptions';
import { projection as orders } from '../../projections/orders';
import { projection as reconciliation } from '../../projections/reconciliation';
import type { Sql } from '../../src/db/connect';
import { type ExceptionItem, listExceptions } from '../../src/exceptions/queries';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll } from '../discrepancies/fixtures';
import { listMonth } from '../discrepancies/list-month';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * GET /api/exceptions pages by keyset (operation time to the millisecond, then id). A page of 10 read every
 * discrepancy of every leg and sorted them all, on the first page and on the last: a few thousand rows read for
 * ten shown. Each leg's table now has an index on the list's order and a page reads a batch after its cursor.
 * The pages still put together the list read whole, in the order of the rows' own times (ties at one
 * millisecond, microseconds apart, broken by id).
 */

let db: TestDatabase;
let store: EventStore;
let tables: string[];
const NOW = new Date('2024-05-20T00:00:00Z');

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, listMonth());
  const deps = { sql: db.sql, store, log: silentLogger, timezone: 'UTC', graceHours: 48 };
  await runProjections({ ...deps, projections: [reconciliation, orders, exceptions] }, {});
  tables = [];
  for (const view of ['recon.discrepancies', 'recon.order_discrepancies']) {
    const [v] = await db.sql<{ def: string }[]>`select pg_get_viewdef(${view}::regclass) as def`;
    tables.push(/FROM (\S+\.discrepancies)/.exec(v!.def)![1]!);
  }
  // each leg's rows copied under new ids, a minute later each time: thousands of rows, many at one instant
  await db.sql.begin(async (tx) => {
    for (const table of tables) {
      await tx.unsafe(`create temp table copied on commit drop as select * from ${table}`);
      for (let i = 0; i < 12; i++) {
        await tx.unsafe(`update copied set id = gen_random_uuid(), occurred_at = occurred_at + interval '1 minute'`);
        await tx.unsafe(`insert into ${table} select * from copied`);
      }
      await tx.unsafe('drop table copied');
    }
    // one millisecond holding two rows microseconds apart, the later one of the lower id
    await tx.unsafe(`update ${tables[0]} set occurred_at = '2024-05-11T00:00:00.123900Z'
      where id = (select id from ${tables[0]} order by id limit 1)`);
    await tx.unsafe(`update ${tables[0]} set occurred_at = '2024-05-11T00:00:00.123100Z'
      where id = (select id from ${tables[0]} order by id desc limit 1)`);
  });
  for (const table of tables) await db.sql.unsafe(`analyze ${table}`);
}, 180_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

/** Rows of the legs' tables this backend read, by scan and through an index (pg_stat_xact_user_tables). */
async function rowsRead(tx: Sql): Promise<number> {
  const [r] = await tx<{ n: number }[]>`
    select coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0)::int as n
    from pg_stat_xact_user_tables where relname = 'discrepancies'`;
  return r!.n;
}

async function pageReading(filter: { after?: string }) {
  return db.sql.begin(async (tx) => {
    // the counts a backend has not yet reported include its earlier transactions': the difference is this page's
    const before = await rowsRead(tx as unknown as Sql);
    const page = await listExceptions(tx as unknown as Sql, { ...filter, limit: 10 }, NOW);
    return { page, read: (await rowsRead(tx as unknown as Sql)) - before };
  });
}

describe('a page of the exceptions list', () => {
  it('reads about its own rows, not every discrepancy, on the first page and after a cursor', async () => {
    const [r] = await db.sql<{ n: number }[]>`
      select (select count(*) from recon.discrepancies)::int + (select count(*) from recon.order_discrepancies)::int as n`;
    const n = r!.n;
    expect(n).toBeGreaterThan(3000);
    const first = await pageReading({});
    expect(first.page.items).toHaveLength(10);
    expect(first.read).toBeLessThan(100);
    const middle = (await listExceptions(db.sql, { limit: 1000 }, NOW)).next!;
    const later = await pageReading({ after: middle });
    expect(later.page.items).toHaveLength(10);
    expect(later.read).toBeLessThan(100);
  });

  it('a filter judged in memory that few rows match reads in growing batches, not a query per page size', async () => {
    const batches: number[] = [];
    const page = await listExceptions(db.sql, { state: 'pending_approval', limit: 10 }, NOW, undefined, {
      onBatch: (rows) => batches.push(rows),
    });
    expect(page.items).toEqual([]);
    // every row read once, in batches of 11, 22, 44 … up to 1,000
    expect(batches.reduce((a, b) => a + b, 0)).toBeGreaterThan(3000);
    expect(batches.length).toBeLessThan(15);
  });

  it('pages put together are the list read whole, in the order of the rows own times, ties by id', async () => {
    const whole = (await listExceptions(db.sql, {}, NOW)).items;
    const rows = await db.sql<{ id: string; t: string | null }[]>`
      select id::text, to_char(coalesce(occurred_at, detected_at) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') as t
      from recon.discrepancies union all
      select id::text, to_char(coalesce(occurred_at, detected_at) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')
      from recon.order_discrepancies`;
    const byTime = (a: { id: string; t: string | null }, b: { id: string; t: string | null }) =>
      a.t === b.t ? (a.id < b.id ? -1 : 1) : a.t === null ? -1 : b.t === null ? 1 : a.t < b.t ? -1 : 1;
    expect(whole.map((x) => x.id)).toEqual(rows.sort(byTime).map((r) => r.id));
    const paged: ExceptionItem[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await listExceptions(db.sql, { limit: 97, after }, NOW);
      paged.push(...page.items);
      if (page.next === null) break;
      after = page.next;
    }
    expect(paged.map((x) => x.id)).toEqual(whole.map((x) => x.id));
  });
});
