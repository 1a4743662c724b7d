import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log';
import type { RunnerDeps } from '../../src/projector/runner';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { projection as settlement } from '../../projections/settlement';
import { discrepancies, registerRows } from '../discrepancies/fixtures';
import { useTestStore } from '../support/db';
import { projectionSpec } from '../support/projection-spec';
import { BANK } from '../settlement/support';

/**
 * One report lists a split sale of 100.00 (Alpha 59.00 + 1.00 fee, Beta 39.00 + 1.00 fee) and Alpha's row a
 * second time, at 69.00 + 1.00: a `duplicate`, and the PSP leg compares the report's first row (docs/
 * discrepancies.md, "Matching" 1), whose parts add up, so no split_mismatch. The journal and the cash leg took
 * the report's last row instead: Alpha owed 69.00, the PSP asked for 110.00 of a 100.00 payment and the
 * settlement day expected 108.00 while the PSP leg said the split was whole.
 */

const fx = useTestStore();
const DAY = '2026-01-13';
const rows = (alpha: bigint) =>
  registerRows({
    paymentId: 'pay-dup',
    dateTime: `${DAY}T12:00:00.000Z`,
    amount: 100_00n,
    currency: 'EUR',
    receivers: [
      { name: 'Alpha Shop', amount: alpha, fee: 1_00n },
      ...(alpha === 59_00n ? [{ name: 'Beta Shop', amount: 39_00n, fee: 1_00n }] : []),
    ],
    reportId: 'rep-1',
    observedAt: `${DAY}T23:00:00.000Z`,
  });

const deps = (): RunnerDeps => ({
  sql: fx.db.sql,
  store: fx.store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 48,
  bank: BANK,
  projections: [reconciliation, journal, settlement],
});

describe('a receiver listed twice in one report is booked as the PSP leg compares it: the first row', () => {
  it('the journal and the settlement day take the first row; no split_mismatch, a duplicate', async () => {
    const spec = projectionSpec(deps);
    // the report's rows in order: Alpha, Beta, then Alpha again with another amount; a clock event past the grace
    const later = registerRows({
      paymentId: 'pay-later',
      dateTime: '2026-01-20T12:00:00.000Z',
      amount: 10_00n,
      currency: 'EUR',
      reportId: 'rep-2',
      observedAt: '2026-01-20T23:00:00.000Z',
    });
    await spec.when(rows(59_00n), rows(69_00n), later).expect(async (sql, run) => {
      const found = (await discrepancies(sql)).filter((d) => d.payment_id === 'pay-dup').map((d) => d.type);
      expect(found, run).toContain('duplicate');
      expect(found, run).not.toContain('split_mismatch');
      const lines = await sql<{ account: string; receiver_name: string | null; amount: string }[]>`
        select l.account, l.receiver_name, sum(l.amount)::text as amount from recon.journal_lines l
        join recon.journal_entries e using (entry_id) where e.payment_id = 'pay-dup'
        group by l.account, l.receiver_name order by l.account, l.receiver_name`;
      expect(lines, run).toEqual([
        { account: 'payable', receiver_name: 'Alpha Shop', amount: '-5900' },
        { account: 'payable', receiver_name: 'Beta Shop', amount: '-3900' },
        { account: 'psp_clearing', receiver_name: 'Alpha Shop', amount: '6000' },
        { account: 'psp_clearing', receiver_name: 'Beta Shop', amount: '4000' },
        { account: 'psp_fees', receiver_name: 'Alpha Shop', amount: '-100' },
        { account: 'psp_fees', receiver_name: 'Beta Shop', amount: '-100' },
      ]);
      const days = await sql<{ activity_from: string; clearing: string; fees: string }[]>`
        select activity_from, clearing::text, fees::text from recon.settlements_expected where activity_from = ${DAY}`;
      expect(days, run).toEqual([{ activity_from: DAY, clearing: '10000', fees: '200' }]);
    });
  });
});
