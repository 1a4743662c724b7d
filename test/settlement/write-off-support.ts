import type { AppendRequest, EventStore, NewEvent } from '../../src/store/types';
import type { TestDatabase } from '../support/db';

/** What the tests of a settlement written off, then paid or explained, read back (the cash leg and its journal). */

export async function appendEach(store: EventStore, requests: readonly AppendRequest[]) {
  for (const r of requests) await store.append(r.stream, r.events as NewEvent[]);
}

/** Each journal account's balance, minor units. */
export const balances = async (db: TestDatabase) => {
  const lines = await db.sql<{ account: string; balance: string }[]>`
    select account, sum(amount)::text as balance from recon.journal_lines group by account order by account`;
  return Object.fromEntries(lines.map((l) => [l.account, BigInt(l.balance)]));
};

export interface Row {
  id: string;
  type: string;
  status: string;
  values: Record<string, unknown>;
  evidence: string[];
  accepted_by_event: string | null;
  resolved_by_event: string | null;
  amount_in_doubt: bigint | null;
}

export const rows = (db: TestDatabase) =>
  db.sql<Row[]>`select id::text, type, status, "values", evidence, accepted_by_event::text, resolved_by_event::text,
    amount_in_doubt::int8 as amount_in_doubt from recon.settlement_discrepancies order by type, id`;
export const rowOf = async (db: TestDatabase, type: string) => (await rows(db)).find((r) => r.type === type);

/** The write-offs' entries and what was booked against them, in commit order. */
export const writeOffLines = (db: TestDatabase) =>
  db.sql<{ entry_id: string; kind: string; reverses: string | null; account: string; amount: bigint }[]>`
    select e.entry_id, e.kind, e.reverses, l.account, l.amount from recon.journal_entries e
    join recon.journal_lines l on l.entry_id = e.entry_id
    where e.row_key like 'write_off:%' order by e.commit_pos, e.prepare_pos, e.entry_id, l.line_no`;

/** Every row and entry a rebuild must give again (the journal's dates included). */
export const snapshot = async (db: TestDatabase) => ({
  discrepancies: await db.sql`select * from recon.settlement_discrepancies order by id`,
  entries: await db.sql`select * from recon.journal_entries order by entry_id`,
  lines: await db.sql`select * from recon.journal_lines order by entry_id, line_no`,
});
