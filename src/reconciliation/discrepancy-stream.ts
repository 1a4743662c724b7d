import type { Sql } from '../db/connect';
import { compareSortKeys, type DiscrepancySort, type SortKey, sortKeyOf } from './discrepancy-listing';
import {
  checkFilter,
  type DiscrepancyFilter,
  guardView,
  matchingDiscrepancies,
  type QueryResult,
  type Reader,
  toRecord,
} from './discrepancy-queries';
import type { DiscrepancyRecord } from './discrepancy-types';

/**
 * Every discrepancy matching a filter, read a batch at a time, for the lists that have no page (the CLI's):
 * a month of a million payments has a million resolved `order_not_at_psp` alone, more than a process holds
 * as records. Memory is a batch of records, and, ordered by amount, a sort key (id, time, size) a row.
 */

/** One pass over the list in its order: `each` gets every batch in turn; resolves to how many rows there were. */
export type DiscrepancyPass = (each: (rows: readonly DiscrepancyRecord[]) => void | Promise<void>) => Promise<number>;

export const LIST_BATCH = 1000;

/**
 * Runs `use` with passes over every discrepancy matching `f`, in `sort`'s order (sortDiscrepancies), each pass
 * reading the list again (the table measures its columns first, then prints). All passes read one snapshot of
 * the views (a repeatable-read, read-only transaction), so a projection writing meanwhile changes none of them.
 */
export async function withDiscrepancyPasses<T>(
  sql: Sql,
  f: DiscrepancyFilter,
  sort: DiscrepancySort,
  use: (pass: DiscrepancyPass) => Promise<T>,
  batch: number = LIST_BATCH,
): Promise<QueryResult<T>> {
  const checked = checkFilter(f);
  if (!checked.ok) return checked;
  return guardView(
    async () =>
      (await sql.begin('isolation level repeatable read read only', async (tx) => {
        const pass = sort === 'age' ? await byAge(tx, f, batch) : await byAmount(tx, f, batch);
        return use(pass);
      })) as T,
  );
}

/**
 * Oldest operation first, as the database orders them: the time to the millisecond (what `sortKeyOf` reads
 * of the record's ISO time) with no time first, then the id (a uuid orders as its lower-case text does).
 */
async function byAge(tx: Reader, f: DiscrepancyFilter, batch: number): Promise<DiscrepancyPass> {
  const matching = await matchingDiscrepancies(tx, f);
  return async (each) => {
    let n = 0;
    const query = tx<Record<string, unknown>[]>`
      ${matching.query}
      order by date_trunc('milliseconds', coalesce(occurred_at, detected_at)) nulls first, id`;
    for await (const rows of query.cursor(batch)) {
      n += rows.length;
      await each(rows.map(toRecord));
    }
    return n;
  };
}

/**
 * Largest amount first: the amount is read from a discrepancy's values (discrepancyAmount), so a first read
 * keeps each row's sort key only; a pass then reads the records a batch of ids at a time, in the keys' order.
 */
async function byAmount(tx: Reader, f: DiscrepancyFilter, batch: number): Promise<DiscrepancyPass> {
  const matching = await matchingDiscrepancies(tx, f);
  const keys: SortKey[] = [];
  for await (const rows of tx<Record<string, unknown>[]>`${matching.query}`.cursor(batch))
    for (const r of rows) keys.push(sortKeyOf(toRecord(r)));
  keys.sort(compareSortKeys('amount'));
  return async (each) => {
    for (let i = 0; i < keys.length; i += batch) {
      const ids = keys.slice(i, i + batch).map((k) => k.id);
      const rows = await tx<Record<string, unknown>[]>`
        select * from (${matching.query}) as matching where id = any(${ids}::uuid[])`;
      const byId = new Map(rows.map((r) => [String(r.id), toRecord(r)]));
      await each(ids.map((id) => byId.get(id)!));
    }
    return keys.length;
  };
}
