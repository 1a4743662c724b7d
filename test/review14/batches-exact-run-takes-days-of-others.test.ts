import { describe, expect, it } from 'vitest';
import { judgeSettlements } from '../../src/reconciliation/settlement/match';
import { useTestStore } from '../support/db';
import { projectionSpec } from '../support/projection-spec';
import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import {
  ACCOUNT,
  cashDeps,
  credit as bankCredit,
  dueDay as due,
  matchCredit as credit,
  NONE,
  sale,
  statement,
} from '../settlement/support';

/**
 * Three settlement days, Monday 500.00, Tuesday 500.00 and Wednesday 1,002.00, each paid on Thursday by a
 * credit of its own less a bank charge within the tolerance (5.00): 499.00, 498.50 and 1,000.00. The credits were
 * matched greedily, exact runs first: the 1,000.00 equals Monday + Tuesday exactly and took both, so the 499.00
 * and the 498.50 fitted nothing (each less than half of Wednesday: no short payment either): two credits
 * settlement_unexpected and Wednesday missing, where each credit pays one day of its own.
 */

describe('a credit equal to a run of days does not take the days other credits pay one to one', () => {
  it('each of three credits pays its own day, less a bank charge', () => {
    const days = [
      due('2026-01-12', 500_00n, '2026-01-11'),
      due('2026-01-13', 500_00n, '2026-01-12'),
      due('2026-01-14', 1002_00n, '2026-01-13'),
    ];
    const credits = [
      credit('wednesday', '2026-01-14', 1000_00n),
      credit('monday', '2026-01-15', 499_00n),
      credit('tuesday', '2026-01-15', 498_50n),
    ];
    const rules = { tolerance: 5_00n, lateBusinessDays: 3, holidays: NONE };
    const j = judgeSettlements(days, credits, '2026-01-31', rules);
    expect(j.unexpected.map((c) => c.id)).toEqual([]);
    expect(j.missing.map((d) => d.day)).toEqual([]);
    const paid = j.matches.map((m) => ({ credit: m.credit.id, days: m.days.map((d) => d.day), fee: m.bankFee }));
    expect(paid.sort((a, b) => (a.credit < b.credit ? -1 : 1))).toEqual([
      { credit: 'monday', days: ['2026-01-12'], fee: 1_00n },
      { credit: 'tuesday', days: ['2026-01-13'], fee: 1_50n },
      { credit: 'wednesday', days: ['2026-01-14'], fee: 2_00n },
    ]);
    expect(j.matches.every((m) => m.shortfall === 0n)).toBe(true);
  });

  it('a credit that equals two days exactly still pays both when no other credit needs them', () => {
    const days = [due('2026-01-12', 500_00n, '2026-01-11'), due('2026-01-13', 500_00n, '2026-01-12')];
    const j = judgeSettlements(days, [credit('both', '2026-01-14', 1000_00n)], '2026-01-31', {
      tolerance: 5_00n,
      lateBusinessDays: 3,
      holidays: NONE,
    });
    expect(j.matches.map((m) => m.days.map((d) => d.day))).toEqual([['2026-01-12', '2026-01-13']]);
    expect(j.unexpected).toEqual([]);
  });
});

describe('the cash leg, live and replayed in batches', () => {
  const fx = useTestStore();
  // a bank charge of up to 5.00 absorbed as a bank fee
  const bank = bankConfigFrom(
    bankConfigSchema.parse({
      accounts: [{ id: ACCOUNT, currency: 'EUR', role: 'settlement', name: 'Settlement EUR' }],
      settlement: { lagBusinessDays: 1, holidays: [], tolerance: { EUR: '500' }, lateBusinessDays: 3 },
    }),
  );

  it('pays each day by its own credit: no settlement_unexpected, settlement_missing nor settlement_short', async () => {
    // Friday's, Monday's and Tuesday's sales (EUR, lag 1: due Monday to Wednesday), all three credited on Wednesday
    // (Monday and Tuesday paid late: settlement_late, rightly)
    const spec = projectionSpec(() => cashDeps(fx.db.sql, fx.store, bank));
    await spec
      .given(sale('fri', '2026-01-09', 505_00n, 5_00n), sale('mon', '2026-01-12', 505_00n, 5_00n))
      .when(
        sale('tue', '2026-01-13', 1012_00n, 10_00n),
        bankCredit('C-1000', '2026-01-14', 1000_00n),
        bankCredit('C-499', '2026-01-14', 499_00n),
        bankCredit('C-498', '2026-01-14', 498_50n),
        statement('S-1', '2026-01-12', '2026-01-31', 0n, 1997_50n, 3),
      )
      .expect(async (sql, run) => {
        const open =
          await sql`select type from recon.settlement_discrepancies where status = 'open' and type <> 'settlement_late' order by type`;
        expect(
          open.map((r) => r.type),
          run,
        ).toEqual([]);
        const paid = await sql<{ bank_ref: string; due_on: string; bank_fee: string }[]>`
          select bank_ref, due_on::text, bank_fee::text from recon.settlement_matches order by due_on`;
        expect(paid, run).toEqual([
          { bank_ref: 'C-499', due_on: '{2026-01-12}', bank_fee: '100' },
          { bank_ref: 'C-498', due_on: '{2026-01-13}', bank_fee: '150' },
          { bank_ref: 'C-1000', due_on: '{2026-01-14}', bank_fee: '200' },
        ]);
      });
  }, 120_000);
});
