import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newEvent } from '../../src/events/catalog';
import {
  RegisterRecordObserved,
  paymentStream,
  type NormalizedRegisterRecord,
  type OperationMethod,
} from '../../src/events/ingest-events';
import { SubMerchantRegistered, subMerchantStream } from '../../src/events/ledger-events';
import { assertBalanced, entriesFor, rowFacts, UnbalancedEntryError } from '../../src/journal-rules';
import { ledgerBalance } from '../../src/ledger/balances';
import { reserveSchedule, statementFigures, statementLines } from '../../src/ledger/ledger-queries';
import { runProjections } from '../../src/projector/runner';
import type { Position } from '../../src/store/types';
import { projection as journal } from '../../projections/journal';
import type { Tx } from '../../src/projector/projection';
import { registerRows, TZ, useJournalStore } from './journal-support';
import { waitVisible } from './visible';

const POS = 'pos-1';
const fx = useJournalStore();
const { record, splitRow } = registerRows(POS);

/** Appends one register row observation; returns its position. */
async function observe(r: NormalizedRegisterRecord): Promise<Position> {
  const ev = newEvent(
    RegisterRecordObserved,
    { posId: POS, raw: JSON.stringify(r), record: r },
    { metadata: { observedAt: '2025-03-01T00:00:00.000Z', source: 'register' } },
  );
  const res = await fx.store.append(paymentStream(POS, r.paymentId), [ev]);
  return res.position!;
}

async function registerSubMerchant(id: string, name: string, hold: number): Promise<void> {
  await fx.store.append(subMerchantStream(id), [
    newEvent(SubMerchantRegistered, { subMerchantId: id, name, reserveHoldDays: hold }),
  ]);
}

describe('journal rules', () => {
  it('every entry of any row nets to zero', () => {
    const amount = fc.bigInt({ min: 0n, max: 10n ** 12n });
    fc.assert(
      fc.property(
        fc.constantFrom<OperationMethod>(
          'auth',
          'purchase',
          'capture',
          'void',
          'p2p',
          'credit',
          'lookup',
          'refund',
          'dispute',
          'recurrent',
        ),
        fc.constantFrom('success', 'failure', 'pending', 'init'),
        fc.option(fc.constantFrom('Kyiv Crafts', ' Lviv Books ')),
        amount,
        amount,
        amount,
        fc.integer({ min: 0, max: 400 }),
        (method, status, receiver, a, f, r, hold) => {
          const rec = record({
            paymentId: 'p',
            method,
            status: status as never,
            dateTime: '2025-01-31T22:30:00.000Z',
            receiverName: receiver,
            receiverAmount: String(a),
            receiverFee: String(f),
            reserveAmount: String(r),
            originalAmount: String(a + f),
          });
          const drafts = entriesFor(rowFacts(POS, rec, new Date(0), TZ), hold, TZ);
          for (const d of drafts) expect(d.lines.reduce((s, l) => s + l.amount, 0n)).toBe(0n);
          if (status !== 'success' || ['auth', 'void', 'p2p', 'credit', 'lookup'].includes(method))
            expect(drafts).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses an unbalanced entry', () => {
    expect(() =>
      assertBalanced([
        { account: 'payable', component: 'gross', amount: -5n },
        { account: 'psp_clearing', component: 'gross', amount: 4n },
      ]),
    ).toThrow(UnbalancedEntryError);
  });

  it('dates a reserve release hold days after the local day of the sale', () => {
    // 22:30 UTC on 31 January is 1 February in Kyiv
    const f = rowFacts(POS, splitRow('p', '2025-01-31T22:30:00.000Z', 'A', 1000n, 10n, 100n), new Date(0), TZ);
    expect(f.bookedOn).toBe('2025-02-01');
    const [, release] = entriesFor(f, 30, TZ);
    expect(release!.bookedOn).toBe('2025-03-03');
    expect(release!.bookedAt.toISOString()).toBe('2025-03-02T22:00:00.000Z');
  });
});

describe('journal projection and ledger queries', () => {
  it('books the rules of issue 5 and answers statements, balances and reserve schedules', async () => {
    await registerSubMerchant('SM-1', 'Kyiv Crafts', 30);
    await registerSubMerchant('SM-2', 'Lviv Books', 0);
    // January: a split sale (two known receivers, one unknown), a refund, a chargeback, an auth, a marketplace sale
    await observe(splitRow('pay-1', '2025-01-10T10:00:00.000Z', 'Kyiv Crafts', 60_000n, 600n, 3_000n));
    await observe(splitRow('pay-1', '2025-01-10T10:00:00.000Z', 'Lviv Books', 30_000n, 300n, 0n));
    await observe(splitRow('pay-1', '2025-01-10T10:00:00.000Z', 'Odesa Ghost', 9_100n, 0n, 0n));
    await observe(
      record({
        paymentId: 'pay-1',
        method: 'refund',
        dateTime: '2025-01-20T12:00:00.000Z',
        receiverName: 'Kyiv Crafts',
        receiverAmount: '9900',
        receiverFee: '100',
        reserveAmount: '0',
        originalAmount: '10000',
      }),
    );
    await observe(
      record({
        paymentId: 'pay-2',
        method: 'dispute',
        dateTime: '2025-01-25T12:00:00.000Z',
        receiverName: 'Kyiv Crafts',
        receiverAmount: '4950',
        receiverFee: '50',
        originalAmount: '5000',
      }),
    );
    await observe(
      record({
        paymentId: 'pay-3',
        method: 'auth',
        dateTime: '2025-01-11T12:00:00.000Z',
        receiverName: 'Kyiv Crafts',
        receiverAmount: '70000',
        receiverFee: '700',
        reserveAmount: '5000',
        originalAmount: '70700',
      }),
    );
    await observe(
      record({
        paymentId: 'pay-4',
        method: 'purchase',
        dateTime: '2025-01-12T12:00:00.000Z',
        originalAmount: '20000',
        merchantFee: '400',
      }),
    );
    // a pending row, then the same row as success: only the latest counts
    const pending = splitRow('pay-5', '2025-01-31T22:30:00.000Z', 'Kyiv Crafts', 8_000n, 80n, 400n, {
      status: 'pending',
    });
    await observe(pending);
    const beforeSuccess = await observe(
      splitRow('pay-6', '2025-01-05T09:00:00.000Z', 'Lviv Books', 1_000n, 10n, 0n, { status: 'failure' }),
    );
    await observe({ ...pending, status: 'success' });
    // a success that turns out failed: reversed
    const wrong = splitRow('pay-7', '2025-01-15T09:00:00.000Z', 'Lviv Books', 5_000n, 50n, 0n);
    const bookedWrong = await observe(wrong);
    await observe({ ...wrong, status: 'failure' });

    await waitVisible(fx.db.sql, fx.store);
    await runProjections(fx.deps, { batchSize: 3 });

    const jan = await statementFigures(fx.db.sql, { month: '2025-01', timezone: TZ });
    const kyivJan = jan.find((f) => f.subMerchantId === 'SM-1')!;
    // share = receiverAmount + receiverFee
    expect(kyivJan).toMatchObject({
      subMerchantName: 'Kyiv Crafts',
      known: true,
      currency: 'EUR',
      opening: 0n,
      gross: 60_600n,
      refunds: 10_000n,
      chargebacks: 5_000n,
      fees: 600n + 100n + 50n,
      reserveHeld: 3_000n,
      reserveReleased: 0n,
      operations: 3,
    });
    expect(kyivJan.netPayable).toBe(60_600n - 10_000n - 5_000n - 750n - 3_000n);
    expect(kyivJan.closing).toBe(kyivJan.netPayable);
    const lvivJan = jan.find((f) => f.subMerchantId === 'SM-2')!;
    expect(lvivJan).toMatchObject({ gross: 30_300n, fees: 300n, operations: 1, reserveHeld: 0n });
    // an unknown receiver stays traceable under a placeholder
    expect(jan.find((f) => f.subMerchantId === 'receiver:Odesa Ghost')).toMatchObject({
      known: false,
      gross: 9_100n,
      netPayable: 9_100n,
    });
    // the marketplace's own sale is not a sub-merchant's
    expect(jan.some((f) => f.subMerchantName === '')).toBe(false);
    const [mkt] = await fx.db.sql<
      { balance: bigint }[]
    >`select sum(-amount)::int8 as balance from recon.journal_lines where account = 'marketplace'`;
    expect(mkt!.balance).toBe(20_000n - 400n);

    // February (Kyiv time): the pending-then-success sale of 31 Jan 22:30 UTC, and the release of January's reserve (30 days)
    const feb = await statementFigures(fx.db.sql, { month: '2025-02', timezone: TZ, subMerchantId: 'SM-1' });
    expect(feb).toHaveLength(1);
    expect(feb[0]).toMatchObject({
      opening: kyivJan.closing,
      gross: 8_080n,
      fees: 80n,
      reserveHeld: 400n,
      reserveReleased: 3_000n,
      operations: 1,
    });
    expect(feb[0]!.closing).toBe(feb[0]!.opening + 8_080n - 80n - 400n + 3_000n);

    // balances at any date; opening + movements = closing
    const feb1 = new Date('2025-01-31T22:00:00.000Z');
    expect(
      await ledgerBalance(fx.db.sql, { subMerchantId: 'SM-1', currency: 'EUR', account: 'payable', at: feb1 }),
    ).toBe(kyivJan.closing);
    expect(
      await ledgerBalance(fx.db.sql, { subMerchantId: 'SM-1', currency: 'EUR', account: 'reserve', at: feb1 }),
    ).toBe(3_000n);
    expect(
      await ledgerBalance(fx.db.sql, {
        subMerchantId: 'SM-1',
        currency: 'EUR',
        account: 'reserve',
        at: new Date('2025-03-01T00:00:00.000Z'),
      }),
    ).toBe(400n);
    expect(await ledgerBalance(fx.db.sql, { subMerchantId: 'SM-1', currency: 'EUR', account: 'fees', at: feb1 })).toBe(
      750n,
    );

    // statement lines: signed shares, net = share - fee - reserve, sum of nets = the month's movements except releases
    const lines = [];
    for await (const l of statementLines(fx.db.sql, { month: '2025-01', timezone: TZ, subMerchantId: 'SM-1' }))
      lines.push(l);
    expect(lines.map((l) => [l.method, l.share, l.fee, l.reserve, l.net])).toEqual([
      ['purchase', 60_600n, 600n, 3_000n, 57_000n],
      ['refund', -10_000n, 100n, 0n, -10_100n],
      ['dispute', -5_000n, 50n, 0n, -5_050n],
    ]);
    expect(lines.reduce((s, l) => s + l.net, 0n)).toBe(kyivJan.netPayable - kyivJan.reserveReleased);
    for (const l of lines) expect(l.eventIds.length).toBeGreaterThan(0);

    // reserve schedule
    expect(await reserveSchedule(fx.db.sql, { month: '2025-01', timezone: TZ, subMerchantId: 'SM-1' })).toEqual([
      { heldOn: '2025-01-10', currency: 'EUR', held: 3_000n, releaseOn: '2025-02-09', released: 0n },
    ]);
    const febSchedule = await reserveSchedule(fx.db.sql, { month: '2025-02', timezone: TZ, subMerchantId: 'SM-1' });
    expect(febSchedule).toEqual([
      { heldOn: '2025-01-10', currency: 'EUR', held: 3_000n, releaseOn: '2025-02-09', released: 3_000n },
      { heldOn: '2025-02-01', currency: 'EUR', held: 400n, releaseOn: '2025-03-03', released: 0n },
    ]);

    // cut at a position: before the pending row turned success, and while pay-7 still looked successful
    const cutEarly = await statementFigures(fx.db.sql, {
      month: '2025-02',
      timezone: TZ,
      subMerchantId: 'SM-1',
      atPosition: beforeSuccess,
    });
    expect(cutEarly[0]).toMatchObject({ gross: 0n, reserveReleased: 3_000n });
    const lvivAtWrong = (
      await statementFigures(fx.db.sql, {
        month: '2025-01',
        timezone: TZ,
        subMerchantId: 'SM-2',
        atPosition: bookedWrong,
      })
    )[0]!;
    expect(lvivAtWrong.gross).toBe(30_300n + 5_050n);
    expect(lvivAtWrong.operations).toBe(2);

    // every line is traceable to its event and position
    const [untraced] = await fx.db
      .sql`select 1 from recon.journal_entries where cardinality(event_ids) = 0 or position is null limit 1`;
    expect(untraced).toBeUndefined();
    const [reversal] = await fx.db.sql<
      { event_ids: string[] }[]
    >`select event_ids::text[] as event_ids from recon.journal_entries where kind = 'reversal'`;
    expect(reversal!.event_ids).toHaveLength(2);
    const accounts = await fx.db.sql<
      { account_code: string }[]
    >`select distinct account_code from recon.journal_lines order by 1`;
    expect(accounts.map((a) => a.account_code)).toEqual(
      expect.arrayContaining([
        'payable:SM-1',
        'reserve:SM-1',
        'payable:receiver:Odesa Ghost',
        'psp_clearing',
        'psp_fees',
        'marketplace',
      ]),
    );
  });

  it('never commits an unbalanced entry (database check in the same transaction)', async () => {
    const ctx = { schema: 'rm_unbalanced', timezone: TZ, graceHours: 48 };
    await expect(
      fx.db.sql.begin(async (tx) => {
        await tx.unsafe('create schema rm_unbalanced');
        await journal.setup(tx, ctx);
        // a line written behind the projection's back makes the entry it joins unbalanced
        const ev = newEvent(RegisterRecordObserved, {
          posId: POS,
          raw: '{}',
          record: splitRow('u', '2025-01-01T00:00:00.000Z', 'X', 1n, 0n, 0n),
        });
        await tx.unsafe(
          `insert into rm_unbalanced.lines values ('${ev.id}:0', 99, 'payable', 'X', 'gross', 'EUR', 1, now(), 1, 1)`,
        );
        await journal.apply(
          tx,
          [
            {
              ...ev,
              stream: 's',
              revision: 0,
              position: { commit: 1n, prepare: 1n },
              metadata: {},
              recordedAt: new Date(),
            } as never,
          ],
          ctx,
        );
      }),
    ).rejects.toThrow(/does not net to zero.*database check/);
    const [schema] = await fx.db.sql`select 1 from information_schema.schemata where schema_name = 'rm_unbalanced'`;
    expect(schema).toBeUndefined();
  });

  it('a build goes live only when its whole journal balances and no line or entry is written twice', async () => {
    const ctx = { schema: 'rm_golive', timezone: TZ, graceHours: 48 };
    const ev = newEvent(RegisterRecordObserved, {
      posId: POS,
      raw: '{}',
      record: splitRow('g', '2025-01-01T00:00:00.000Z', 'X', 100n, 1n, 5n),
    });
    const recorded = {
      ...ev,
      stream: 's',
      revision: 0,
      position: { commit: 5n, prepare: 5n },
      metadata: {},
      recordedAt: new Date(),
    } as never;
    const goLive = (tx: Tx) =>
      tx.unsafe('create schema if not exists recon').then(async () => {
        for (const s of journal.views(ctx)) await tx.unsafe(s);
      });
    let indexes: string[] = [];
    const build = async (tamper: string) =>
      fx.db.sql.begin(async (tx) => {
        await tx.unsafe('create schema rm_golive');
        await journal.setup(tx, ctx);
        await journal.apply(tx, [recorded], ctx);
        await tx.unsafe(tamper);
        await goLive(tx);
        indexes = (
          await tx<{ indexname: string }[]>`select indexname from pg_indexes where schemaname = 'rm_golive' order by 1`
        ).map((x) => x.indexname);
        // not committed: every case is tried on a fresh schema (and the views stay as they were)
        throw new Error('went live');
      });
    // a line at a position no batch checked (written behind the projection's back) unbalances its entry
    await expect(
      build(
        `insert into rm_golive.lines select entry_id, 99, 'payable', 'X', 'gross', 'EUR', 7, now(), 1, 1 from rm_golive.lines limit 1`,
      ),
    ).rejects.toThrow(/does not net to zero.*whole build/);
    // a line written twice (balanced, so only the unique key can tell)
    await expect(build(`insert into rm_golive.lines select * from rm_golive.lines`)).rejects.toThrow(
      /lines_pkey|duplicate/,
    );
    await expect(build(`insert into rm_golive.entries select * from rm_golive.entries`)).rejects.toThrow(
      /entries_pkey|duplicate/,
    );
    // untouched, it goes live with its unique keys and the indexes the ledger queries use
    await expect(build('select 1')).rejects.toThrow('went live');
    expect(indexes).toEqual(
      expect.arrayContaining([
        'entries_pkey',
        'lines_pkey',
        'lines_receiver_currency_account_booked_at_idx',
        'entries_receiver_currency_booked_at_idx',
      ]),
    );
    const [left] = await fx.db.sql`select 1 from information_schema.schemata where schema_name = 'rm_golive'`;
    expect(left).toBeUndefined();
  });
});
