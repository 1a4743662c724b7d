import { describe, expect, it } from 'vitest';
import { useTestStore } from '../support/db';
import { rebuildProjection } from '../../src/projector/runner';
import {
  appendAll,
  at,
  deps,
  discrepancies,
  periodRow,
  project,
  registerRows,
  subMerchant,
  syncCompleted,
  webhook,
} from './fixtures';

/**
 * A sub-merchant renamed in the directory keeps the rows the register listed under its former name: they
 * stay its own (sub_merchant_id), and no unknown_sub_merchant is opened for them, as the journal's views and
 * the statements map former names (docs/ledger.md, "Names over time").
 */

const T = at('2024-03-01T10:00:00Z');
const S1 = at('2024-03-01T23:30:00Z');
const LATE = at('2024-03-05T01:00:00Z');
const day = { from: at('2024-03-01T00:00:00Z'), to: at('2024-03-02T00:00:00Z') };

const fx = useTestStore();

describe('a renamed sub-merchant', () => {
  it('keeps its rows under the former name, in one batch or across batches; a name nobody held is still unknown', async () => {
    const p = 'pay-renamed';
    await appendAll(fx.store, [
      subMerchant('sm-ren', 'Old Name'),
      registerRows({
        paymentId: p,
        dateTime: T,
        amount: 100_00n,
        receivers: [
          { name: 'Old Name', amount: 60_00n, fee: 0n },
          { name: 'Nobody', amount: 40_00n, fee: 0n },
        ],
        reportId: 'rep-1',
        observedAt: S1,
      }),
      periodRow({ paymentId: p, dateTime: T, amount: 100_00n, reportId: 'rep-1', observedAt: S1 }),
      webhook({ paymentId: p, processedAt: T, amount: 100_00n, receivedAt: T }),
      syncCompleted({ ...day, completedAt: S1, reportId: 'rep-1' }),
      syncCompleted({
        from: at('2024-03-04T00:00:00Z'),
        to: at('2024-03-05T00:00:00Z'),
        completedAt: LATE,
        reportId: 'rep-2',
      }),
    ]);
    await project(fx.db.sql, fx.store);
    await appendAll(fx.store, [subMerchant('sm-ren', 'New Name')]);
    await project(fx.db.sql, fx.store);

    const check = async () => {
      const receivers = await fx.db.sql<{ receiver_name: string; sub_merchant_id: string | null }[]>`
        select receiver_name, sub_merchant_id from recon.operation_receivers where payment_id = ${p} order by receiver_name`;
      expect(receivers.map((r) => [r.receiver_name, r.sub_merchant_id])).toEqual([
        ['Nobody', null],
        ['Old Name', 'sm-ren'],
      ]);
      const open = (await discrepancies(fx.db.sql)).filter((d) => d.payment_id === p && d.status === 'open');
      expect(open.map((d) => `${d.type}:${(d as { receiver_name?: string }).receiver_name ?? ''}`)).toEqual([
        'unknown_sub_merchant:Nobody',
      ]);
    };
    await check();
    // replayed from zero in one batch: the same
    await rebuildProjection(deps(fx.db.sql, fx.store), 'reconciliation', { batchSize: 100_000 });
    await check();
  });
});
