import { describe, expect, it } from 'vitest';
import { useTestStore } from '../support/db';
import type { AppendRequest } from '../../src/store/types';
import { periodObserved, toAppendRequests } from '../../src/ingest/observations';
import { appendAll, at, discrepancies, POS, project, registerRows, syncCompleted, webhook } from './fixtures';

/**
 * One period fetch that lists an operation twice with different values is a `duplicate`, as in the
 * register: the sync gives period records the window's report id (src/ingest/sync.ts). With `reportId: null`,
 * as the sync stored them before, the second record replaced the first unseen and the injected amount became
 * an amount_mismatch.
 */

const DAY = '2024-03-01';
const T = at(`${DAY}T10:00:00Z`);
const S1 = at('2024-03-01T23:30:00Z');
const LATE = at('2024-03-05T01:00:00Z'); // past the 48 h grace of T
const day = { from: at(`${DAY}T00:00:00Z`), to: at('2024-03-02T00:00:00Z') };

/** A period record as the sync appends it: the window's metadata, with its register report id. */
function periodAsSynced(paymentId: string, amount: bigint, observedAt: string, reportId: string | null): AppendRequest {
  const record = {
    projectId: POS,
    orderId: `order-${paymentId}`,
    paymentId,
    method: 'purchase' as const,
    status: 'success' as const,
    dateTime: T,
    currency: 'UAH',
    amount: amount.toString(),
    customerFee: '0',
    merchantFee: '0',
    other: {},
  };
  const [req] = toAppendRequests([
    periodObserved(POS, JSON.stringify(record), record, { source: 'period', reportId, window: day, observedAt }),
  ]);
  return req!;
}

const fx = useTestStore();

describe('duplicates in the period transactions', () => {
  it('one fetch listing an operation twice with different values is a duplicate; the first record stays the one compared', async () => {
    const p = 'pay-period-dup';
    await appendAll(fx.store, [
      registerRows({ paymentId: p, dateTime: T, amount: 100_00n, reportId: 'rep-p1', observedAt: S1 }),
      periodAsSynced(p, 100_00n, S1, 'rep-p1'),
      periodAsSynced(p, 150_00n, S1, 'rep-p1'),
      webhook({ paymentId: p, processedAt: T, amount: 100_00n, receivedAt: T }),
      syncCompleted({ ...day, completedAt: S1, reportId: 'rep-p1' }),
      syncCompleted({
        from: at('2024-03-04T00:00:00Z'),
        to: at('2024-03-05T00:00:00Z'),
        completedAt: LATE,
        reportId: 'rep-p2',
      }),
    ]);
    await project(fx.db.sql, fx.store);
    const rows = (await discrepancies(fx.db.sql)).filter((d) => d.payment_id === p);
    expect(rows.map((d) => `${d.type}:${d.status}`)).toEqual(['duplicate:open']);
    expect(rows[0]!.values).toMatchObject({ source: 'period' });
  });
});
