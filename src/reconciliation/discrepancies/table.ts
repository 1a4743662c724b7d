import { ident } from '../../db/identifier';
import { type Cell, copyRows } from '../../projector/copy-rows';
import type { Tx } from '../../projector/projection';
import {
  DISCREPANCY_DEFINITIONS,
  DISCREPANCY_SELECT_LIST,
  DISCREPANCY_SQL_NAMES,
  discrepancyCells,
  discrepancyFromRow,
  type DiscrepancyRow,
} from './columns';
import type { Leg } from './registry';

/**
 * A leg's table of discrepancies in its build schema, its view, and its writer: every leg keeps its rows in
 * a table named `discrepancies` with the columns of columns.ts (the orders' with the order they belong to in
 * front, `leading`), and writes what changed the same way: the rows replaced deleted by id, then every
 * changed row with the one bulk writer (COPY).
 */

/** Columns a leg keeps in front of the discrepancy's own (the orders' `order_key`). */
export interface Leading {
  readonly names: readonly string[];
  readonly cells: (r: DiscrepancyRow) => Cell[];
}

const TABLE = 'discrepancies';

/**
 * Every leg's indexes for the console's queue (docs/console.md): in detection order (its keyset paging), by
 * status, by type and status, and by sub-merchant (`sub_merchant_ids @> array[…]` through the array's GIN index);
 * and in the exceptions list's order (exceptions/queries.ts `EXCEPTION_ORDER`: the operation's time to the
 * millisecond, in UTC so that the expression is immutable, none first, then id), so that a page of the API
 * reads its rows and no more.
 */
const QUEUE_INDEXES = [
  '(detected_at, id)',
  `((date_trunc('milliseconds', coalesce(occurred_at, detected_at) at time zone 'UTC')) nulls first, id)`,
  '(status, detected_at, id)',
  '(type, status, detected_at, id)',
  'using gin (sub_merchant_ids)',
];

/** Creates the table (keyed by id) and the indexes a leg reads it by (`indexes`: column lists). */
export async function createDiscrepancyTable(
  tx: Tx,
  schema: string,
  opts: { leading?: string; indexes?: readonly string[] } = {},
): Promise<void> {
  const columns = opts.leading ? `${opts.leading}, ${DISCREPANCY_DEFINITIONS}` : DISCREPANCY_DEFINITIONS;
  await tx`create table ${tx(schema)}.${tx(TABLE)} (${tx.unsafe(columns)}, primary key (id))`;
  for (const on of [...QUEUE_INDEXES, ...(opts.indexes ?? [])])
    await tx`create index on ${tx(schema)}.${tx(TABLE)} ${tx.unsafe(on)}`;
}

/**
 * Each leg's view in the recon schema, in the order readers union them (discrepancy-queries.ts
 * `allDiscrepancies`: the PSP's first, read when none is live yet).
 */
export const DISCREPANCY_VIEW_OF = {
  psp: 'discrepancies',
  payouts: 'payout_discrepancies',
  settlement: 'settlement_discrepancies',
  orders: 'order_discrepancies',
} as const satisfies Readonly<Record<Leg, string>>;

/** The statement that publishes a leg's table as its recon.* view (the same columns in every view). */
export const discrepancyView = (schema: string, leg: Leg): string =>
  `create or replace view recon.${DISCREPANCY_VIEW_OF[leg]} as select ${DISCREPANCY_SELECT_LIST} from ${ident(schema)}.${TABLE}`;

/** The rows whose `column` is one of `values`, read back as rows. */
export async function readDiscrepancies(
  tx: Tx,
  schema: string,
  column: 'id' | 'currency',
  values: readonly string[],
): Promise<DiscrepancyRow[]> {
  const rows = await tx<Record<string, unknown>[]>`
    select * from ${tx(schema)}.${tx(TABLE)} where ${tx(column)}::text = any(${values as string[]}::text[])`;
  return rows.map(discrepancyFromRow);
}

/**
 * Writes the rows a batch changed: `replaced` (ids stored before, or 'all' for a leg that writes its rows
 * whole each time) are deleted first, then the rows are copied in.
 */
export async function writeDiscrepancies(
  tx: Tx,
  schema: string,
  rows: readonly DiscrepancyRow[],
  replaced: readonly string[] | 'all',
  leading?: Leading,
): Promise<void> {
  if (replaced === 'all') await tx`delete from ${tx(schema)}.${tx(TABLE)}`;
  else if (replaced.length) await tx`delete from ${tx(schema)}.${tx(TABLE)} where id = any(${replaced}::uuid[])`;
  const names = leading ? [...leading.names, ...DISCREPANCY_SQL_NAMES] : DISCREPANCY_SQL_NAMES;
  const cells = leading ? rows.map((r) => [...leading.cells(r), ...discrepancyCells(r)]) : rows.map(discrepancyCells);
  await copyRows(tx, `${ident(schema)}.${TABLE}`, names, cells);
}
