import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { rebuildProjection } from '../../src/projector/runner';
import {
  appendAll,
  at,
  countMismatch,
  deps,
  discrepancies,
  periodRow,
  project,
  registerRows,
  resendRequested,
  subMerchant,
  syncCompleted,
  webhook,
  type Receiver,
  viewsDigest,
} from './fixtures';

/**
 * One day of operations (2024-03-01), each payment carrying one injected disagreement, then later syncs
 * that move the projection's clock past the grace period (48 h).
 */
const DAY = '2024-03-01';
const T = (h: number) => at(`${DAY}T${String(h).padStart(2, '0')}:00:00Z`);
const SYNC1 = at('2024-03-01T23:30:00Z'); // same day: everything inside the grace period
const SYNC2 = at('2024-03-04T01:00:00Z'); // 63 h later: past the grace
const split = (total: bigint): Receiver[] => [
  { name: 'Alpha Shop', amount: (total * 6n) / 10n - 120n, fee: 120n, reserve: 50n },
  { name: 'Beta Store', amount: total - (total * 6n) / 10n - 80n, fee: 80n },
];

interface Op {
  id: string;
  amount: bigint;
  hour: number;
  skip?: Array<'register' | 'period' | 'webhook'>;
  webhookStatus?: 'success' | 'failure';
  webhookAmount?: bigint;
  webhookCurrency?: string;
  periodMerchantFee?: bigint;
  receivers?: Receiver[];
}

const ops: Op[] = [
  { id: 'pay-ok', amount: 100_00n, hour: 9 },
  { id: 'pay-own', amount: 55_00n, hour: 9, receivers: [] },
  { id: 'pay-missing-report', amount: 120_00n, hour: 10, skip: ['register'] },
  { id: 'pay-missing-period', amount: 130_00n, hour: 10, skip: ['period'] },
  { id: 'pay-missing-webhook', amount: 140_00n, hour: 11, skip: ['webhook'] },
  { id: 'pay-status', amount: 150_00n, hour: 11, webhookStatus: 'failure' },
  { id: 'pay-amount', amount: 160_00n, hour: 12, webhookAmount: 159_00n },
  { id: 'pay-currency', amount: 170_00n, hour: 12, webhookCurrency: 'XTS' },
  { id: 'pay-fee', amount: 180_00n, hour: 13, periodMerchantFee: 999n },
  {
    id: 'pay-split',
    amount: 190_00n,
    hour: 13,
    receivers: [
      { name: 'Alpha Shop', amount: 100_00n, fee: 100n },
      { name: 'Beta Store', amount: 80_00n, fee: 100n },
    ],
  },
  { id: 'pay-unknown', amount: 200_00n, hour: 14, receivers: [{ name: 'Mystery Goods', amount: 199_00n, fee: 100n }] },
];

function eventsOf(op: Op): AppendRequest[] {
  const receivers = op.receivers ?? split(op.amount);
  const merchantFee = receivers.reduce((a, r) => a + r.fee, 0n);
  const out: AppendRequest[] = [];
  if (!op.skip?.includes('webhook')) {
    out.push(
      webhook({
        paymentId: op.id,
        processedAt: T(op.hour),
        amount: op.webhookAmount ?? op.amount,
        fee: merchantFee,
        currency: op.webhookCurrency ?? 'UAH',
        status: op.webhookStatus ?? 'success',
        receivedAt: hoursLater(T(op.hour), 0.01),
      }),
    );
  }
  if (!op.skip?.includes('register'))
    out.push(
      registerRows({
        paymentId: op.id,
        dateTime: T(op.hour),
        amount: op.amount,
        receivers,
        reportId: 'rep-1',
        observedAt: SYNC1,
      }),
    );
  if (!op.skip?.includes('period'))
    out.push(
      periodRow({
        paymentId: op.id,
        dateTime: T(op.hour),
        amount: op.amount,
        merchantFee: op.periodMerchantFee ?? merchantFee,
        reportId: 'rep-1',
        observedAt: SYNC1,
      }),
    );
  return out;
}

function hoursLater(t: string, h: number) {
  return new Date(Date.parse(t) + h * 3_600_000).toISOString();
}

const day = { from: at(`${DAY}T00:00:00Z`), to: at('2024-03-02T00:00:00Z') };

// A duplicate: the same operation and receiver twice in one report with different values.
const dupRows = (): AppendRequest[] => {
  const a = registerRows({
    paymentId: 'pay-dup',
    dateTime: T(15),
    amount: 210_00n,
    receivers: split(210_00n),
    reportId: 'rep-1',
    observedAt: SYNC1,
  });
  const b = registerRows({
    paymentId: 'pay-dup',
    dateTime: T(15),
    amount: 210_00n,
    receivers: [{ name: 'Alpha Shop', amount: 99_00n, fee: 120n, reserve: 50n }],
    reportId: 'rep-1',
    observedAt: SYNC1,
  });
  return [
    a,
    b,
    periodRow({
      paymentId: 'pay-dup',
      dateTime: T(15),
      amount: 210_00n,
      merchantFee: 200n,
      reportId: 'rep-1',
      observedAt: SYNC1,
    }),
    webhook({ paymentId: 'pay-dup', processedAt: T(15), amount: 210_00n, fee: 200n, receivedAt: T(15) }),
  ];
};

let db: TestDatabase;
let store: EventStore;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [subMerchant('sm-alpha', 'Alpha Shop'), subMerchant('sm-beta', 'Beta Store')]);
  await appendAll(store, ops.flatMap(eventsOf));
  await appendAll(store, dupRows());
  await appendAll(store, [
    countMismatch({ ...day, reportId: 'rep-1', announced: 40, received: 39, detectedAt: SYNC1 }),
    syncCompleted({ ...day, completedAt: SYNC1, reportId: 'rep-1', announced: 40, records: 39 }),
  ]);
});

afterAll(async () => {
  await db?.drop();
});

describe('discrepancy detection', () => {
  it('inside the grace period only the report-level count mismatch exists', async () => {
    await project(db.sql, store);
    const rows = await discrepancies(db.sql);
    expect(rows.map((r) => r.type)).toEqual(['report_count_mismatch']);
    expect(rows[0]!.values).toMatchObject({ report_id: 'rep-1', announced_count: 40, received_count: 39 });
    const [ops] = await db.sql<{ n: number }[]>`select count(*)::int as n from recon.operations`;
    expect(ops!.n).toBe(12);
  });

  it('after the grace period every injected disagreement is found, once, on its payment', async () => {
    // Healing asked for the missing webhook; a later re-sync of the day completes past the grace.
    await appendAll(store, [
      resendRequested({ paymentId: 'pay-missing-webhook', requestedAt: at('2024-03-03T12:00:00Z') }),
    ]);
    await appendAll(store, [
      syncCompleted({ ...day, completedAt: SYNC2, reportId: 'rep-2', announced: 40, records: 40 }),
    ]);
    await project(db.sql, store);
    let rows = await discrepancies(db.sql);
    const open = rows
      .filter((r) => r.status === 'open')
      .map((r) => `${r.type}:${r.payment_id}${r.receiver_name ? `:${r.receiver_name}` : ''}`)
      .sort();
    // missing_webhook opens once healing has asked for a re-send that has not arrived.
    expect(open).toEqual([
      'amount_mismatch:pay-amount',
      'currency_mismatch:pay-currency',
      'duplicate:pay-dup:Alpha Shop',
      'fee_mismatch:pay-fee',
      'missing_in_period:pay-missing-period',
      'missing_in_report:pay-missing-report',
      'missing_webhook:pay-missing-webhook',
      'split_mismatch:pay-split',
      'status_mismatch:pay-status',
      'unknown_sub_merchant:pay-unknown:Mystery Goods',
    ]);
    // rep-2 of the same window matched its count: the count mismatch is resolved by that event
    const count = rows.find((r) => r.type === 'report_count_mismatch')!;
    expect(count.status).toBe('resolved');
    expect(count.resolved_at?.toISOString()).toBe(SYNC2);

    await appendAll(store, [
      syncCompleted({
        from: at('2024-03-05T00:00:00Z'),
        to: at('2024-03-06T00:00:00Z'),
        completedAt: at('2024-03-06T02:00:00Z'),
        reportId: 'rep-3',
      }),
    ]);
    await project(db.sql, store);
    rows = await discrepancies(db.sql);
    const mw = rows.filter((r) => r.type === 'missing_webhook');
    expect(mw.map((r) => [r.payment_id, r.status])).toEqual([['pay-missing-webhook', 'open']]);
    // detected when the re-send request was recorded, not later
    expect(mw[0]!.detected_at!.getTime()).toBeGreaterThanOrEqual(Date.parse('2024-03-03T12:00:00Z'));
    expect(mw[0]!.detected_at!.getTime()).toBeLessThanOrEqual(Date.parse(SYNC2));
  });

  it('each discrepancy carries the values per source and its evidence event ids', async () => {
    const rows = await discrepancies(db.sql);
    const amount = rows.find((r) => r.type === 'amount_mismatch')!;
    expect(amount.values).toMatchObject({
      register: { amount: '16000' },
      period: { amount: '16000' },
      webhook: { amount: '15900' },
    });
    const evidence = await db.sql<
      { id: string; type: string }[]
    >`select event_id::text as id, type from es_events where event_id = any(${amount.evidence}::uuid[])`;
    expect(evidence.map((e) => e.type).sort()).toEqual([
      'PeriodRecordObserved',
      'RegisterRecordObserved',
      'RegisterRecordObserved',
      'WebhookReceived',
    ]);
    const missing = rows.find((r) => r.type === 'missing_in_report')!;
    expect(missing.values).toMatchObject({ register: null, window: { report_id: 'rep-2' } });
    const fee = rows.find((r) => r.type === 'fee_mismatch')!;
    expect(fee.values).toMatchObject({ register: { merchant_fee: '200' }, period: { merchant_fee: '999' } });
    const split = rows.find((r) => r.type === 'split_mismatch')!;
    expect(split.values).toMatchObject({ shares_sum: '18200', original_amount: '19000' });
    const dup = rows.find((r) => r.type === 'duplicate')!;
    expect(dup.values).toMatchObject({ source: 'register', report_ids: ['rep-1'] });
    expect(dup.evidence).toHaveLength(2);
    expect(rows.find((r) => r.type === 'unknown_sub_merchant')!.sub_merchant_id).toBeNull();
    expect(rows.find((r) => r.type === 'status_mismatch')!.values).toMatchObject({
      register: { status: 'success' },
      webhook: { status: 'failure' },
    });
  });

  it('the operations view reads each source as documented (requested amounts, gross, fees, receivers)', async () => {
    const [op] = await db.sql<Record<string, unknown>[]>`select * from recon.operations where payment_id = 'pay-ok'`;
    expect(op).toMatchObject({
      method: 'purchase',
      register_present: true,
      period_present: true,
      webhook_present: true,
      register_amount: 100_00n,
      register_gross_amount: 100_00n,
      period_amount: 100_00n,
      webhook_amount: 100_00n,
      register_merchant_fee: 200n,
      webhook_fee: 200n,
    });
    const recv = await db.sql<
      { receiver_name: string; sub_merchant_id: string; share: bigint }[]
    >`select receiver_name, sub_merchant_id, share from recon.operation_receivers where payment_id = 'pay-ok' order by receiver_name`;
    expect(recv.map((r) => [r.receiver_name, r.sub_merchant_id, r.share])).toEqual([
      ['Alpha Shop', 'sm-alpha', 60_00n],
      ['Beta Store', 'sm-beta', 40_00n],
    ]);
    const [own] = await db.sql<
      { n: number }[]
    >`select count(*)::int as n from recon.operation_receivers where payment_id = 'pay-own'`;
    expect(own!.n).toBe(0);
  });

  it('later data that makes the sources agree resolves automatically, naming the event and the time', async () => {
    const late = registerRows({
      paymentId: 'pay-missing-report',
      dateTime: T(10),
      amount: 120_00n,
      receivers: split(120_00n),
      reportId: 'rep-4',
      observedAt: at('2024-03-06T03:00:00Z'),
    });
    const dirLate = subMerchant('sm-mystery', 'Mystery Goods');
    // the webhook that healing asked for finally arrives
    const resent = webhook({
      paymentId: 'pay-missing-webhook',
      processedAt: T(11),
      amount: 140_00n,
      fee: 200n,
      receivedAt: at('2024-03-06T03:30:00Z'),
    });
    await appendAll(store, [late, dirLate, resent]);
    await project(db.sql, store);
    const rows = await discrepancies(db.sql);
    const missing = rows.find((r) => r.type === 'missing_in_report')!;
    expect(missing.status).toBe('resolved');
    expect(missing.resolved_by_event).toBe(late.events[0]!.id);
    expect(missing.resolved_at?.toISOString()).toBe('2024-03-06T03:00:00.000Z');
    const unknown = rows.find((r) => r.type === 'unknown_sub_merchant')!;
    expect(unknown.status).toBe('resolved');
    expect(unknown.resolved_by_event).toBe(dirLate.events[0]!.id);
    const mw = rows.find((r) => r.type === 'missing_webhook')!;
    expect(mw.status).toBe('resolved');
    expect(mw.resolved_by_event).toBe(resent.events[0]!.id);
  });

  it('acceptance needs a note and a name, refuses unknown and repeated ids, and freezes the evidence', async () => {
    const status = (await discrepancies(db.sql)).find((r) => r.type === 'status_mismatch')!;
    const now = new Date('2024-03-07T10:00:00Z');
    expect(
      await acceptDiscrepancy({ sql: db.sql, store }, { id: status.id, note: '  ', by: 'Olena', at: now }),
    ).toMatchObject({ ok: false, code: 'EMPTY_NOTE' });
    expect(
      await acceptDiscrepancy({ sql: db.sql, store }, { id: status.id, note: 'PSP confirmed', by: '', at: now }),
    ).toMatchObject({ ok: false, code: 'EMPTY_NAME' });
    expect(
      await acceptDiscrepancy(
        { sql: db.sql, store },
        { id: '00000000-0000-5000-8000-000000000000', note: 'x', by: 'y', at: now },
      ),
    ).toMatchObject({ ok: false, code: 'UNKNOWN_ID' });
    // a status_mismatch holds money on the statements: the acceptance must say whether to pay it
    expect(
      await acceptDiscrepancy(
        { sql: db.sql, store },
        { id: status.id, note: 'PSP confirmed', by: 'Olena K.', at: now },
      ),
    ).toMatchObject({ ok: false, code: 'DECISION_REQUIRED' });
    const ok = await acceptDiscrepancy(
      { sql: db.sql, store },
      {
        id: status.id,
        note: 'PSP confirmed the refund of the failed charge',
        by: 'Olena K.',
        at: now,
        decision: 'pay',
      },
    );
    expect(ok.ok).toBe(true);
    // before the projection applies it, a second acceptance is refused by the stream
    expect(
      await acceptDiscrepancy(
        { sql: db.sql, store },
        { id: status.id, note: 'again', by: 'Someone', at: now, decision: 'pay' },
      ),
    ).toMatchObject({ ok: false, code: 'ALREADY_ACCEPTED' });
    await project(db.sql, store);
    // new data that would otherwise change or resolve it: a success webhook for the same operation
    await appendAll(store, [
      webhook({
        paymentId: 'pay-status',
        processedAt: T(11),
        amount: 150_00n,
        fee: 200n,
        status: 'success',
        receivedAt: at('2024-03-07T11:00:00Z'),
      }),
    ]);
    await project(db.sql, store);
    const after = (await discrepancies(db.sql)).find((r) => r.id === status.id)!;
    expect(after.status).toBe('accepted');
    expect(after.accepted_by).toBe('Olena K.');
    expect(after.accepted_note).toBe('PSP confirmed the refund of the failed charge');
    expect(after.values).toEqual(status.values);
    expect(after.evidence).toEqual(status.evidence);
    expect(
      await acceptDiscrepancy(
        { sql: db.sql, store },
        { id: status.id, note: 'again', by: 'Someone', at: now, decision: 'pay' },
      ),
    ).toMatchObject({ ok: false, code: 'ALREADY_ACCEPTED' });
  });

  it('a replay from zero in one batch gives the same rows as the runs in small steps', async () => {
    const digest = () => viewsDigest(db.sql, ['discrepancies', 'operations', 'operation_receivers']);
    const stepwise = await digest();
    await rebuildProjection(deps(db.sql, store), 'reconciliation', { batchSize: 100_000 });
    expect(await digest()).toEqual(stepwise);
    await rebuildProjection(deps(db.sql, store), 'reconciliation', { batchSize: 1 });
    expect(await digest()).toEqual(stepwise);
  });
});
