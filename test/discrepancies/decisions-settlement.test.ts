import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discrepancyStream } from '../../src/events/audit-events';
import { revokeDecision } from '../../src/reconciliation/decisions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore, NewEvent } from '../../src/store/types';
import { ACCOUNT, credit, projectCash, rebuildCash, sale, statement } from '../settlement/support';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { inDoubtAsBigint } from '../support/in-doubt';

/**
 * Decisions on the cash leg (settlement projection and journal), the week of test/settlement/settlement.test.ts:
 * 01-09's 29,700 never paid (settlement_missing), 777 credited for nothing (settlement_unexpected), 01-06 and
 * 01-12 paid late. A missing settlement written off is booked against the PSP receivable; the unexpected credit
 * written off is the one gain (the bank against the write-off account); a late one written off books nothing.
 * The missing day paid while its write-off stood stays accepted; the journal takes the write-off back by what
 * came (a recovery) and a `settlement_recovered` opens for a person to review it. When the write-off is revoked
 * the leg judges it again at once and it is resolved, the write-off and its recovery reversed, the
 * `settlement_recovered` resolved. A replay gives the same.
 */

const sales = [
  sale('p1', '2026-01-02', 100_000n, 900n),
  sale('p2', '2026-01-06', 50_000n, 500n),
  sale('p3', '2026-01-07', 20_000n, 200n),
  sale('p4', '2026-01-08', 30_000n, 300n),
  sale('p5', '2026-01-09', 40_000n, 400n),
  sale('p6', '2026-01-12', 10_000n, 100n),
];
const credits = [
  credit('B1', '2026-01-07', 148_597n),
  credit('B2', '2026-01-08', 15_000n),
  credit('B3', '2026-01-12', 777n),
  credit('B4', '2026-01-13', 39_600n),
];
const received = 148_597n + 15_000n + 777n + 39_600n;
const stmt = statement('S-2026-01', '2026-01-01', '2026-01-14', 1_000n, 1_000n + received, credits.length);

async function appendEach(store: EventStore, requests: readonly AppendRequest[]) {
  for (const r of requests) await store.append(r.stream, r.events as NewEvent[]);
}

interface Row {
  id: string;
  type: string;
  status: string;
  accepted_by_event: string | null;
  updated_at: Date | null;
  updated_by_event: string;
  resolved_by_event: string | null;
  amount_in_doubt: bigint | null;
  amount_in_doubt_now: bigint | null;
}

describe('decisions on the cash leg', () => {
  let db: TestDatabase;
  let store: EventStore;
  const rowOf = async (type: string) =>
    inDoubtAsBigint(
      (await db.sql<Row[]>`select * from recon.settlement_discrepancies where type = ${type} order by id`)[0]!,
    );
  const lines = () =>
    db.sql<{ entry_id: string; kind: string; account: string; amount: bigint }[]>`
      select e.entry_id, e.kind, l.account, l.amount from recon.journal_entries e
      join recon.journal_lines l on l.entry_id = e.entry_id
      where e.row_key like 'write_off:%' order by e.commit_pos, e.prepare_pos, l.line_no`;
  const accept = (id: string, decision?: 'pay' | 'write_off') =>
    acceptDiscrepancy(
      { sql: db.sql, store },
      { id, note: 'the PSP will not pay it', by: 'Finance', at: new Date('2026-01-16T09:00:00Z'), decision },
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresEventStore(db.sql);
    await appendEach(store, [...sales, ...credits, stmt]);
    await projectCash(db.sql, store, 3);
  });
  afterAll(async () => db?.drop());

  it('writes off what is lost, against where it sits; books nothing for what is only late', async () => {
    const missing = await rowOf('settlement_missing');
    const unexpected = await rowOf('settlement_unexpected');
    expect([missing.amount_in_doubt, unexpected.amount_in_doubt]).toEqual([29_700n, 777n]);
    // money late is not lost: written off, it is closed and nothing is booked
    const late = await rowOf('settlement_late');
    expect((await accept(late.id, 'write_off')).ok).toBe(true);
    const [lateEvent] = await store.readStream(discrepancyStream(late.id));
    expect(lateEvent!.data).toMatchObject({
      decision: 'write_off',
      amount: `${late.amount_in_doubt}`,
      currency: 'EUR',
    });
    expect((lateEvent!.data as { writeOff?: unknown }).writeOff).toBeUndefined();
    // pay and withhold are for what the statements hold
    expect(await accept(missing.id, 'pay')).toMatchObject({ ok: false, code: 'DECISION_NOT_APPLICABLE' });
    const a = await accept(missing.id, 'write_off');
    const b = await accept(unexpected.id, 'write_off');
    expect(a.ok && b.ok).toBe(true);
    await projectCash(db.sql, store);
    const [ida, idb] = [a.ok ? a.eventId : '', b.ok ? b.eventId : ''];
    expect(await lines()).toEqual([
      { entry_id: `${ida}:w0`, kind: 'write_off', account: 'expense:write-offs', amount: 29_700n },
      { entry_id: `${ida}:w0`, kind: 'write_off', account: 'psp_clearing', amount: -29_700n },
      { entry_id: `${idb}:w0`, kind: 'write_off', account: 'expense:write-offs', amount: -777n },
      { entry_id: `${idb}:w0`, kind: 'write_off', account: `bank:${ACCOUNT}`, amount: 777n },
    ]);
    expect(await rowOf('settlement_missing')).toMatchObject({ status: 'accepted', accepted_by_event: ida });
    const [sum] = await db.sql<{ total: string }[]>`select sum(amount)::text as total from recon.journal_lines`;
    expect(sum!.total).toBe('0');
  });

  it('paid while written off, it stays accepted, recovered; revoked, it is judged again and resolved, the entries reversed', async () => {
    const before = await rowOf('settlement_missing');
    // 01-09's 29,700 turns up on a later statement of the account, booked on its deadline
    await appendEach(store, [credit('B5', '2026-01-13', 29_700n, 'stmt-2026-01-13-b')]);
    await projectCash(db.sql, store);
    // as accepted, but for what is in doubt now: nothing, the money came (stamped by the change)
    const { updated_at: _at, updated_by_event: _by, ...kept } = before;
    expect((await rowOf('settlement_missing')).updated_by_event).not.toBe(_by);
    expect(await rowOf('settlement_missing')).toMatchObject({ ...kept, amount_in_doubt_now: null });
    expect(before.amount_in_doubt_now).toBe(before.amount_in_doubt);
    expect((await lines()).filter((l) => l.kind === 'write_off_recovery')).toEqual([
      expect.objectContaining({ account: 'expense:write-offs', amount: -29_700n }),
      expect.objectContaining({ account: 'psp_clearing', amount: 29_700n }),
    ]);
    expect(await rowOf('settlement_recovered')).toMatchObject({ status: 'open', amount_in_doubt: null });
    const r = await revokeDecision(store, {
      id: before.id,
      reason: 'it was paid',
      by: 'Finance',
      at: new Date('2026-01-17T09:00:00Z'),
    });
    expect(r.ok).toBe(true);
    const revocation = r.ok ? r.eventId : '';
    await projectCash(db.sql, store);
    expect(await rowOf('settlement_missing')).toMatchObject({
      status: 'resolved',
      accepted_by_event: null,
      resolved_by_event: revocation,
      updated_by_event: revocation,
    });
    expect(await rowOf('settlement_recovered')).toMatchObject({ status: 'resolved', resolved_by_event: revocation });
    const reversal = (await lines()).filter((l) => l.entry_id === `${revocation}:wr0`);
    expect(reversal).toEqual([
      { entry_id: `${revocation}:wr0`, kind: 'reversal', account: 'expense:write-offs', amount: -29_700n },
      { entry_id: `${revocation}:wr0`, kind: 'reversal', account: 'psp_clearing', amount: 29_700n },
    ]);
    // the stream: the acceptance and its revocation; accepting again would append at revision 2
    expect((await store.readStream(discrepancyStream(before.id))).map((e) => e.type)).toEqual([
      'DiscrepancyAccepted',
      'DiscrepancyAcceptanceRevoked',
    ]);
    // resolved now: nothing left to accept
    expect(await accept(before.id, 'write_off')).toMatchObject({ ok: false, code: 'ALREADY_RESOLVED' });
  });

  it('a replay from zero gives the same discrepancies and write-offs', async () => {
    const snapshot = async () => ({
      discrepancies: await db.sql`select * from recon.settlement_discrepancies order by id`,
      lines: await lines(),
    });
    const live = await snapshot();
    await rebuildCash(db.sql, store, 1);
    expect(await snapshot()).toEqual(live);
  });
});
