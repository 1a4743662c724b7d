import { describe, expect, it } from 'vitest';
import { matchPayment } from '../../src/reconciliation/matching';
import { findDiscrepancies } from '../../src/reconciliation/discrepancy-rules';
import { at, periodRow, recorded, registerRows, webhook } from './fixtures';

const T = at('2024-06-01T10:00:00Z');
const seen = at('2024-06-02T00:00:00Z');

describe('values of every operation-level discrepancy hold what each source said ({ register, period, webhook })', () => {
  // duplicate and unknown_sub_merchant carried only their own fields (unknown_sub_merchant: the register's values
  // alone)
  it('duplicate and unknown_sub_merchant too, beside their own fields (docs/discrepancies.md: values, "plus per type")', () => {
    const obs = recorded([
      registerRows({
        paymentId: 'p-v',
        dateTime: T,
        amount: 100_00n,
        receivers: [{ name: 'Nobody Known', amount: 99_00n, fee: 100n }],
        reportId: 'r1',
        observedAt: seen,
      }),
      // the same receiver row again in the same report, another receiver amount: a duplicate
      registerRows({
        paymentId: 'p-v',
        dateTime: T,
        amount: 100_00n,
        receivers: [{ name: 'Nobody Known', amount: 98_00n, fee: 100n }],
        reportId: 'r1',
        observedAt: seen,
      }),
      periodRow({
        paymentId: 'p-v',
        dateTime: T,
        amount: 100_00n,
        merchantFee: 100n,
        reportId: 'r1',
        observedAt: seen,
      }),
      webhook({ paymentId: 'p-v', processedAt: T, amount: 100_00n, fee: 100n, receivedAt: seen }),
    ]);
    const findings = findDiscrepancies(matchPayment(obs), {
      now: Date.parse(at('2024-06-10T00:00:00Z')),
      graceMs: 48 * 3_600_000,
      windows: [],
      resends: [],
      subMerchantOf: () => undefined,
    });
    const byType = Object.fromEntries(
      findings.map((f) => [
        f.type,
        Object.keys(f.values)
          .filter((k) => ['register', 'period', 'webhook'].includes(k))
          .sort(),
      ]),
    );
    expect(byType).toEqual({
      duplicate: ['period', 'register', 'webhook'],
      unknown_sub_merchant: ['period', 'register', 'webhook'],
    });

    const dup = findings.find((f) => f.type === 'duplicate')!;
    expect(dup.values).toMatchObject({
      source: 'register',
      receiver_name: 'Nobody Known',
      report_ids: ['r1'],
      period: { amount: '10000', merchant_fee: '100' },
      webhook: { amount: '10000', fee: '100' },
    });
    expect((dup.values.rows as unknown[]).length).toBe(2); // both rows of the report
    const unknown = findings.find((f) => f.type === 'unknown_sub_merchant')!;
    expect(unknown.values).toMatchObject({
      receiver_name: 'Nobody Known',
      register: { amount: '10000' },
      period: { amount: '10000' },
      webhook: { status: 'success' },
    });
  });
});
