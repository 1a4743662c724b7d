import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explain } from '../../src/reconciliation/explain';
import { appendAll, at, POS, project, registerRows } from '../discrepancies/fixtures';
import { type CollatedDatabase, createCollatedDatabase } from '../support/collated-db';

/**
 * Review 16: `recon explain` listed an order's operations by payment id and an operation's receivers by name in
 * the database server's collation: on an operator's server collating in en-US (DATABASE_URL) "alpha Shop" came
 * before "Beta Shop" and "pay-b" before "PAY-C", on the embedded server (C) after. Both follow the code unit
 * order now, as the statements do.
 */

const RECEIVERS = ['alpha Shop', 'Beta Shop', 'gamma Shop'];
const PAYMENTS = ['pay-b', 'PAY-C', 'pay-a'];
const byCodeUnit = (xs: readonly string[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const made: CollatedDatabase[] = [];
afterAll(async () => {
  for (const d of made) await d.drop();
});

async function explained(locale: 'C' | 'icu') {
  const d = await createCollatedDatabase(locale);
  made.push(d);
  await appendAll(
    d.store,
    PAYMENTS.map((paymentId) =>
      registerRows({
        paymentId,
        orderId: 'order-1',
        dateTime: at('2024-03-10T10:00:00Z'),
        amount: 303_00n,
        receivers: RECEIVERS.map((name) => ({ name, amount: 100_00n, fee: 1_00n })),
        reportId: 'rep-1',
        observedAt: at('2024-03-14T00:00:00Z'),
      }),
    ),
  );
  await project(d.sql, d.store);
  const x = await explain({ sql: d.sql, store: d.store, posIds: [POS] }, 'order-1');
  return {
    payments: x.operations.map((o) => String(o.payment_id)),
    receivers: x.receivers.map((r) => [String(r.operation_key), String(r.receiver_name)]),
  };
}

describe('review16: explain on a server that collates by locale', () => {
  let c: Awaited<ReturnType<typeof explained>>;
  let icu: Awaited<ReturnType<typeof explained>>;
  beforeAll(async () => {
    c = await explained('C');
    icu = await explained('icu');
  }, 240_000);

  it("lists an order's operations by payment id in code unit order on both servers", () => {
    expect(c.payments).toEqual(byCodeUnit(PAYMENTS));
    expect(icu.payments).toEqual(c.payments);
  });

  it("lists each operation's receivers by name in code unit order on both servers", () => {
    expect(c.receivers.length).toBe(PAYMENTS.length * RECEIVERS.length);
    const keys = [...new Set(c.receivers.map(([k]) => k))];
    for (const k of keys)
      expect(c.receivers.filter(([key]) => key === k).map(([, name]) => name)).toEqual(byCodeUnit(RECEIVERS));
    expect(icu.receivers).toEqual(c.receivers);
  });
});
