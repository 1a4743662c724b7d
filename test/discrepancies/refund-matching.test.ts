import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchPayment } from '../../src/reconciliation/matching';
import { findDiscrepancies } from '../../src/reconciliation/discrepancy-rules';
import { at, periodRow, recorded, registerRows, webhook } from './fixtures';

const seen = at('2024-06-02T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('partial refunds with equal amounts at close times', () => {
  // Two refunds of 30.00, 3 s apart: A succeeded, B failed. Each webhook's processed_at lags its operation's
  // register dateTime (the sandbox models 0.2–5 s): A's by 2.5 s, B's by 5 s. So A's webhook is nearer in time
  // to B's register row (0.5 s) than to its own (2.5 s); nearest pairs taken first crossed them.
  const A = at('2024-06-01T10:00:00.000Z');
  const B = at('2024-06-01T10:00:03.000Z');
  const obs = recorded([
    registerRows({
      paymentId: 'p-ref',
      method: 'refund',
      status: 'success',
      dateTime: A,
      amount: 30_00n,
      reportId: 'r1',
      observedAt: seen,
    }),
    registerRows({
      paymentId: 'p-ref',
      method: 'refund',
      status: 'failure',
      dateTime: B,
      amount: 30_00n,
      reportId: 'r1',
      observedAt: seen,
    }),
    periodRow({
      paymentId: 'p-ref',
      method: 'refund',
      status: 'success',
      dateTime: A,
      amount: 30_00n,
      reportId: 'r1',
      observedAt: seen,
    }),
    periodRow({
      paymentId: 'p-ref',
      method: 'refund',
      status: 'failure',
      dateTime: B,
      amount: 30_00n,
      reportId: 'r1',
      observedAt: seen,
    }),
    webhook({
      paymentId: 'p-ref',
      method: 'refund',
      operationId: 'op-A',
      status: 'success',
      processedAt: at('2024-06-01T10:00:02.500Z'),
      amount: 30_00n,
      receivedAt: seen,
    }),
    webhook({
      paymentId: 'p-ref',
      method: 'refund',
      operationId: 'op-B',
      status: 'failure',
      processedAt: at('2024-06-01T10:00:08.000Z'),
      amount: 30_00n,
      receivedAt: seen,
    }),
  ]);

  it("each refund's webhook is matched to its own operation (order in time kept, not a crossed greedy pair)", () => {
    const ops = matchPayment(obs);
    expect(ops.map((o) => [o.register?.status, o.period?.status, o.webhook?.status])).toEqual([
      ['success', 'success', 'success'],
      ['failure', 'failure', 'failure'],
    ]);
    // the same observations committed in another order give the same operations
    expect(
      matchPayment([...obs].reverse().map((o, i) => ({ ...o, commit: BigInt(i + 1), prepare: BigInt(i + 1) }))).map(
        (o) => [o.key, o.webhook?.status],
      ),
    ).toEqual(ops.map((o) => [o.key, o.webhook?.status]));
  });

  it('no status_mismatch is reported when every source agrees on every refund', () => {
    const ops = matchPayment(obs);
    const findings = findDiscrepancies(ops, {
      now: Date.parse(at('2024-06-10T00:00:00Z')),
      graceMs: 48 * 3_600_000,
      windows: [],
      resends: [],
      subMerchantOf: () => undefined,
    });
    expect(findings.map((f) => `${f.type}:${f.operationKey}`)).toEqual([]);
  });

  it('any number of equal refunds whose webhooks lag 0.2–5 s: each webhook goes to its own refund, each once, whatever the commit order', () => {
    const base = Date.parse(at('2024-06-01T10:00:00Z'));
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 20_000 }), lag: fc.integer({ min: 200, max: 5_000 }) }), {
          minLength: 2,
          maxLength: 7,
        }),
        fc.boolean(),
        (refunds, reversed) => {
          let t = base;
          const times = refunds.map((r) => (t += r.gap + 1));
          const hooks = refunds.map((r, i) => times[i]! + r.lag);
          // the webhooks' own order in time is their operations' (a later operation processed later)
          fc.pre(hooks.every((h, i) => i === 0 || h > hooks[i - 1]!));
          const requests = [
            ...times.map((d) =>
              registerRows({
                paymentId: 'p-many',
                method: 'refund',
                dateTime: iso(d),
                amount: 30_00n,
                reportId: 'r1',
                observedAt: seen,
              }),
            ),
            ...hooks.map((h, i) =>
              webhook({
                paymentId: 'p-many',
                method: 'refund',
                operationId: `op-${i}`,
                processedAt: iso(h),
                amount: 30_00n,
                receivedAt: seen,
              }),
            ),
          ];
          const ops = matchPayment(recorded(reversed ? [...requests].reverse() : requests));
          expect(ops.map((o) => [o.register?.dateTime, o.webhook?.dateTime])).toEqual(
            times.map((d, i) => [iso(d), iso(hooks[i]!)]),
          );
        },
      ),
      { numRuns: 300, seed: 20261121 },
    );
  });

  it('fewer webhooks than refunds: each goes to the refund nearest in time, keeping their order', () => {
    // refunds at 10:00, 10:00:03, 10:00:06; webhooks of the second and the third only
    const t = (s: number) => at(`2024-06-01T10:00:0${s}.000Z`);
    const ops = matchPayment(
      recorded([
        ...[0, 3, 6].map((s) =>
          registerRows({
            paymentId: 'p-few',
            method: 'refund',
            dateTime: t(s),
            amount: 30_00n,
            reportId: 'r1',
            observedAt: seen,
          }),
        ),
        webhook({
          paymentId: 'p-few',
          method: 'refund',
          operationId: 'op-2',
          processedAt: t(5),
          amount: 30_00n,
          receivedAt: seen,
        }),
        webhook({
          paymentId: 'p-few',
          method: 'refund',
          operationId: 'op-3',
          processedAt: t(9),
          amount: 30_00n,
          receivedAt: seen,
        }),
      ]),
    );
    expect(ops.map((o) => [o.register?.dateTime, o.webhook?.dateTime ?? null])).toEqual([
      [t(0), null],
      [t(3), t(5)],
      [t(6), t(9)],
    ]);
  });
});
