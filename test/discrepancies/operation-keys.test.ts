import { describe, expect, it } from 'vitest';
import { useTestStore } from '../support/db';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { matchPayment } from '../../src/reconciliation/matching';
import type { Observation } from '../../src/reconciliation/observations';
import {
  appendAll,
  at,
  discrepancies,
  periodRow,
  POS,
  project,
  recorded,
  registerRows,
  syncCompleted,
  webhook,
} from './fixtures';

/**
 * Operation keys name an operation by its time (`<posId>:<paymentId>:<method>:<occurred_at>`), and discrepancy
 * ids derive from them: a rank in time would shift every later refund's key when an earlier partial refund is
 * reported late, giving their discrepancies new ids and moving an auditor's acceptance to another operation.
 */

const P = 'pay-refunds';
const R1 = at('2024-03-01T10:00:00Z'); // reported late
const R2 = at('2024-03-01T14:00:00Z');
const day = { from: at('2024-03-01T00:00:00Z'), to: at('2024-03-02T00:00:00Z') };
const seen = at('2024-03-02T01:00:00Z');

/** key of each operation, by its register time, after each prefix of the observations */
function keysAsDataArrives(obs: Observation[]): Array<Record<string, string>> {
  return obs.map((_, i) =>
    Object.fromEntries(
      matchPayment(obs.slice(0, i + 1))
        .filter((o) => o.register)
        .map((o) => [o.register!.dateTime!, o.key]),
    ),
  );
}

describe('operation keys stay with their operation as data arrives', () => {
  it('an earlier refund reported later changes no other refund key; the ordinal is still the rank', () => {
    const obs = recorded([
      registerRows({
        paymentId: P,
        method: 'refund',
        dateTime: R2,
        amount: 45_00n,
        reportId: 'rep-1',
        observedAt: seen,
      }),
      webhook({
        paymentId: P,
        method: 'refund',
        operationId: 'op-r2',
        processedAt: R2,
        amount: 45_00n,
        receivedAt: R2,
      }),
      registerRows({
        paymentId: P,
        method: 'refund',
        dateTime: R1,
        amount: 30_00n,
        reportId: 'rep-3',
        observedAt: seen,
      }),
      webhook({
        paymentId: P,
        method: 'refund',
        operationId: 'op-r1',
        processedAt: R1,
        amount: 30_00n,
        receivedAt: seen,
      }),
    ]);
    const steps = keysAsDataArrives(obs);
    expect(steps.at(-1)).toEqual({ [R1]: `${POS}:${P}:refund:${R1}`, [R2]: `${POS}:${P}:refund:${R2}` });
    for (const s of steps) expect(s[R2]).toBe(`${POS}:${P}:refund:${R2}`);
    expect(matchPayment(obs).map((o) => [o.ordinal, o.register!.dateTime])).toEqual([
      [0, R1],
      [1, R2],
    ]);
  });

  it('operations at the same instant: the first seen keeps the plain key, later ones get #1, #2… and never take it', () => {
    const T = at('2024-03-01T12:00:00Z');
    // three refunds processed at the same instant, known from their webhooks (one operation_id each); the later
    // ones have smaller amounts, so they rank before the first
    const obs = recorded(
      (
        [
          [45_00n, 'op-a'],
          [30_00n, 'op-b'],
          [10_00n, 'op-c'],
        ] as const
      ).map(([amount, operationId]) =>
        webhook({ paymentId: 'p-same', method: 'refund', operationId, processedAt: T, amount, receivedAt: T }),
      ),
    );
    const keyOf = (prefix: number) =>
      Object.fromEntries(matchPayment(obs.slice(0, prefix)).map((o) => [o.webhook!.amount!.toString(), o.key]));
    const k = `${POS}:p-same:refund:${T}`;
    expect(keyOf(1)).toEqual({ '4500': k });
    expect(keyOf(2)).toEqual({ '4500': k, '3000': `${k}#1` });
    expect(keyOf(3)).toEqual({ '4500': k, '3000': `${k}#1`, '1000': `${k}#2` });
    // the same observations in any array order (same commit positions) give the same keys
    expect(
      Object.fromEntries(matchPayment([...obs].reverse()).map((o) => [o.webhook!.amount!.toString(), o.key])),
    ).toEqual(keyOf(3));
  });

  it('keys are the same however often a payment is matched (each time key remembered by its spelling)', () => {
    // timeKey keeps each spelling's key: asked again, it answers what it answered the first time, and two
    // instants never share an answer
    const refund = (paymentId: string, processedAt: string) =>
      recorded([
        webhook({
          paymentId,
          method: 'refund',
          operationId: `op-${paymentId}`,
          processedAt,
          amount: 12_00n,
          receivedAt: processedAt,
        }),
      ]);
    const noon = refund('p-noon', '2024-03-01T12:00:00.000Z');
    const later = refund('p-later', '2024-03-01T12:00:00.001Z');
    for (let i = 0; i < 3; i++) {
      expect(matchPayment(noon).map((o) => o.key)).toEqual([`${POS}:p-noon:refund:2024-03-01T12:00:00.000Z`]);
      expect(matchPayment(later).map((o) => o.key)).toEqual([`${POS}:p-later:refund:2024-03-01T12:00:00.001Z`]);
    }
    // an operation known by its first sighting only is keyed 'unknown', whatever was remembered before
    expect(matchPayment(noon.map((o) => ({ ...o, dateTime: null, seenAt: null })))[0]!.key).toBe(
      `${POS}:p-noon:refund:unknown`,
    );
  });
});

describe('an accepted discrepancy of a partial refund', () => {
  const fx = useTestStore();

  it('stays the one decision on that refund when an earlier refund of the payment is reported later', async () => {
    // Refund R2 (45.00): the period states another merchant fee than the register → fee_mismatch.
    await appendAll(fx.store, [
      registerRows({
        paymentId: P,
        method: 'refund',
        dateTime: R2,
        amount: 45_00n,
        merchantFee: 100n,
        reportId: 'rep-1',
        observedAt: at('2024-03-02T01:00:00Z'),
      }),
      periodRow({
        paymentId: P,
        method: 'refund',
        dateTime: R2,
        amount: 45_00n,
        merchantFee: 999n,
        reportId: 'rep-1',
        observedAt: at('2024-03-02T01:00:00Z'),
      }),
      webhook({
        paymentId: P,
        method: 'refund',
        operationId: 'op-r2',
        processedAt: R2,
        amount: 45_00n,
        fee: 100n,
        receivedAt: R2,
      }),
      syncCompleted({ ...day, completedAt: at('2024-03-02T01:00:00Z'), reportId: 'rep-1' }),
      syncCompleted({
        from: at('2024-03-03T00:00:00Z'),
        to: at('2024-03-04T00:00:00Z'),
        completedAt: at('2024-03-04T01:00:00Z'),
        reportId: 'rep-2',
      }),
    ]);
    await project(fx.db.sql, fx.store);
    const before = (await discrepancies(fx.db.sql)).filter((d) => d.type === 'fee_mismatch');
    expect(before.map((d) => d.status)).toEqual(['open']);
    const accepted = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      {
        id: before[0]!.id,
        note: 'PSP fee correction pending, confirmed by e-mail',
        by: 'Olena',
        at: new Date('2024-03-04T09:00:00Z'),
        // a fee_mismatch holds its difference on the statements (docs/discrepancies.md, "What is held")
        decision: 'pay',
      },
    );
    expect(accepted.ok).toBe(true);
    await project(fx.db.sql, fx.store);

    // The lookback sync of the day now also lists refund R1 (30.00, 10:00), on which every source agrees.
    await appendAll(fx.store, [
      registerRows({
        paymentId: P,
        method: 'refund',
        dateTime: R1,
        amount: 30_00n,
        merchantFee: 50n,
        reportId: 'rep-3',
        observedAt: at('2024-03-04T10:00:00Z'),
      }),
      periodRow({
        paymentId: P,
        method: 'refund',
        dateTime: R1,
        amount: 30_00n,
        merchantFee: 50n,
        reportId: 'rep-3',
        observedAt: at('2024-03-04T10:00:00Z'),
      }),
      webhook({
        paymentId: P,
        method: 'refund',
        operationId: 'op-r1',
        processedAt: R1,
        amount: 30_00n,
        fee: 50n,
        receivedAt: at('2024-03-04T10:00:00Z'),
      }),
      syncCompleted({ ...day, completedAt: at('2024-03-04T10:05:00Z'), reportId: 'rep-3' }),
    ]);
    await project(fx.db.sql, fx.store);
    const after = (await discrepancies(fx.db.sql)).filter((d) => d.payment_id === P);
    const ops = await fx.db.sql<{ operation_key: string; ordinal: number; register_date_time: Date }[]>`
      select operation_key, ordinal, register_date_time from recon.operations where payment_id = ${P} order by ordinal`;
    expect(ops.map((o) => [o.ordinal, o.register_date_time.toISOString(), o.operation_key])).toEqual([
      [0, R1, `${POS}:${P}:refund:${R1}`],
      [1, R2, `${POS}:${P}:refund:${R2}`],
    ]);
    // R2's fee difference was accepted: it is not open again under a new id, and no row about R1 (on which
    // every source agrees) carries R2's accepted decision.
    expect(after.map((d) => [d.id, `${d.type}:${d.status}`])).toEqual([[before[0]!.id, 'fee_mismatch:accepted']]);
    expect(
      after.filter((d) => (d as unknown as { operation_key: string }).operation_key === ops[0]!.operation_key),
    ).toEqual([]);
  });
});
