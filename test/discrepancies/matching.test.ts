import { describe, expect, it } from 'vitest';
import { matchMethod, matchPayment } from '../../src/reconciliation/matching';
import { observationFromRow, observationToRow } from '../../src/reconciliation/observations';
import { at, periodRow, recorded, registerRows, webhook } from './fixtures';

const seen = at('2024-06-02T00:00:00Z');

describe('matching the sources of one payment', () => {
  it('matches partial refunds one-to-one by amount, then by time, each source item claimed once', () => {
    const refunds = [
      { t: at('2024-06-01T10:00:00Z'), amount: 30_00n },
      { t: at('2024-06-01T12:00:00Z'), amount: 30_00n },
      { t: at('2024-06-01T15:00:00Z'), amount: 45_00n },
    ];
    const obs = recorded([
      // the period and webhook items arrive in another order than the register rows
      ...[...refunds].reverse().map((r) =>
        periodRow({
          paymentId: 'p1',
          method: 'refund',
          dateTime: r.t,
          amount: r.amount,
          reportId: 'r1',
          observedAt: seen,
        }),
      ),
      ...refunds.map((r) =>
        registerRows({
          paymentId: 'p1',
          method: 'refund',
          dateTime: r.t,
          amount: r.amount,
          receivers: [{ name: 'Alpha Shop', amount: r.amount - 10n, fee: 10n }],
          reportId: 'r1',
          observedAt: seen,
        }),
      ),
      webhook({
        paymentId: 'p1',
        method: 'refund',
        operationId: 'refund-op-2',
        processedAt: at('2024-06-01T12:00:01Z'),
        amount: 30_00n,
        fee: 10n,
        receivedAt: seen,
      }),
      webhook({
        paymentId: 'p1',
        method: 'refund',
        operationId: 'refund-op-3',
        processedAt: at('2024-06-01T15:00:02Z'),
        amount: 45_00n,
        fee: 10n,
        receivedAt: seen,
      }),
    ]);
    const ops = matchPayment(obs);
    expect(ops.map((o) => [o.key, o.register?.dateTime, o.period?.dateTime, o.webhook?.dateTime ?? null])).toEqual([
      [`6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f:p1:refund:${refunds[0]!.t}`, refunds[0]!.t, refunds[0]!.t, null],
      [
        `6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f:p1:refund:${refunds[1]!.t}`,
        refunds[1]!.t,
        refunds[1]!.t,
        at('2024-06-01T12:00:01Z'),
      ],
      [
        `6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f:p1:refund:${refunds[2]!.t}`,
        refunds[2]!.t,
        refunds[2]!.t,
        at('2024-06-01T15:00:02Z'),
      ],
    ]);
    // the same observations in another order give the same operations
    expect(matchPayment([...obs].reverse()).map((o) => o.key)).toEqual(ops.map((o) => o.key));
  });

  it('aggregates register split rows into one operation and reads amounts as requested', () => {
    const t = at('2024-06-01T09:00:00Z');
    const ops = matchPayment(
      recorded([
        registerRows({
          paymentId: 'p2',
          dateTime: t,
          amount: 100_00n,
          customerFee: 150n,
          receivers: [
            { name: 'A', amount: 59_00n, fee: 100n, reserve: 5n },
            { name: 'B', amount: 39_50n, fee: 50n },
          ],
          reportId: 'r1',
          observedAt: seen,
        }),
        periodRow({
          paymentId: 'p2',
          dateTime: t,
          amount: 100_00n,
          customerFee: 150n,
          merchantFee: 150n,
          reportId: 'r1',
          observedAt: seen,
        }),
      ]),
    );
    expect(ops).toHaveLength(1);
    const r = ops[0]!.register!;
    expect([r.amount, r.grossAmount, r.customerFee, r.merchantFee]).toEqual([100_00n, 101_50n, 150n, 150n]);
    expect(r.receivers.map((x) => [x.receiverName, x.share, x.reserveAmount])).toEqual([
      ['A', 60_00n, 5n],
      ['B', 40_00n, 0n],
    ]);
    expect(ops[0]!.period!.amount).toBe(100_00n);
  });

  it('a later status of the same row replaces the earlier one; a late non-final webhook never replaces a final one', () => {
    const t = at('2024-06-01T09:00:00Z');
    const ops = matchPayment(
      recorded([
        registerRows({
          paymentId: 'p3',
          status: 'pending',
          dateTime: t,
          amount: 10_00n,
          reportId: 'r1',
          observedAt: seen,
        }),
        registerRows({
          paymentId: 'p3',
          status: 'success',
          dateTime: t,
          amount: 10_00n,
          reportId: 'r2',
          observedAt: seen,
        }),
        webhook({ paymentId: 'p3', status: 'success', processedAt: t, amount: 10_00n, receivedAt: seen }),
        webhook({ paymentId: 'p3', status: 'pending', processedAt: t, amount: 10_00n, receivedAt: seen }),
      ]),
    );
    expect(ops).toHaveLength(1);
    expect(ops[0]!.register!.status).toBe('success');
    expect(ops[0]!.register!.eventIds).toHaveLength(2);
    expect(ops[0]!.webhook!.status).toBe('success');
  });

  it('stores observations compactly and reads them back exactly; a payment is the sum of its methods', () => {
    const t = at('2024-06-01T09:00:00Z');
    const obs = recorded([
      registerRows({
        paymentId: 'p4',
        dateTime: t,
        amount: 10_00n,
        customerFee: 25n,
        receivers: [{ name: 'Shop "A" \\ Co', amount: 9_90n, fee: 10n, reserve: 3n }],
        reportId: 'r1',
        observedAt: seen,
      }),
      periodRow({ paymentId: 'p4', dateTime: t, amount: 10_00n, merchantFee: 10n, reportId: 'r1', observedAt: seen }),
      webhook({ paymentId: 'p4', processedAt: t, amount: 10_00n, fee: null, receivedAt: seen }),
      registerRows({
        paymentId: 'p4',
        method: 'refund',
        dateTime: at('2024-06-03T09:00:00Z'),
        amount: 4_00n,
        reportId: 'r2',
        observedAt: seen,
      }),
    ]);
    for (const o of obs) expect(observationFromRow(o.posId, o.paymentId, observationToRow(o))).toEqual(o);
    const byMethod = ['purchase', 'refund'].flatMap((m) => matchMethod(obs.filter((o) => o.method === m)));
    expect(byMethod).toEqual(matchPayment(obs));
    expect(byMethod.map((o) => o.key)).toEqual([
      '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f:p4:purchase:2024-06-01T09:00:00.000Z',
      '6b1d2a4e-7c0f-4f51-9d3e-1a2b3c4d5e6f:p4:refund:2024-06-03T09:00:00.000Z',
    ]);
  });
});
