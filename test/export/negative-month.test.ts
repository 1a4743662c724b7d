import path from 'node:path';
import ExcelJS from 'exceljs';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataOf } from '../../src/events/catalog';
import { StatementIssued } from '../../src/events/statement-events';
import { BRIDGE_LABELS } from '../../src/export/i18n/labels';
import { BRIDGE, bridgeLabel, bridgeOf } from '../../src/export/statements/figures';
import { issueStatements } from '../../src/export/statements/issue';
import { draftRun } from '../../src/payout-runs/actions';
import { parsePosition } from '../../src/store/types';
import { BANK, ENV, NONE_PAID, person } from '../payout-runs/fixtures';
import { statementFile } from './statement-files';
import { useStatementTest } from './support';

/**
 * A negative month (found by a reviewer): a January sale failed after January's statement asked for it, so
 * February's amount due was −500.00 and asked nothing; March's 200.00 sale was asked in full, and the −500.00
 * was never taken off any payout (the company paid 700.00 for 200.00 of sales). What a sub-merchant owes back
 * is carried forward and taken off the next payouts of the currency until recovered (docs/outputs.md,
 * "Money owed back").
 */

const t = useStatementTest({
  pos: 'pos-neg',
  outPrefix: 'recon-negative-month-',
  window: { from: '2025-01-01', to: '2025-06-01' },
});
const ana = person('ana', 'analyst');

beforeAll(() =>
  t.directory('sub_merchant_id,name,reserve_hold_days,payout_account\nSM-L,Late Shop,0,FR1420041010050500013M02606\n', {
    settle: false,
  }),
);

/** What a month's latest run records of Late Shop's EUR payout. */
async function payoutOf(month: string) {
  const runs = (await t.store.readStream(`statements-${month}`)).filter((e) => e.type === StatementIssued.type);
  const p = dataOf(StatementIssued, runs.at(-1)!).payouts!.find((x) => x.subMerchantId === 'SM-L')!;
  return { reference: p.reference, amountDue: p.amountDue, payable: p.payable, owedBack: p.owedBack };
}

async function summaryOf(month: string): Promise<Map<string, unknown>> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(t.out, statementFile(t.out, 'SM-L', month)));
  const rows = new Map<string, unknown>();
  wb.getWorksheet('Summary')!.eachRow((row) => rows.set(String(row.getCell(1).value), row.getCell(2).value));
  return rows;
}

/** What a payout run drafted now for the month pays (drafted, never sent: the plan of what it would pay). */
async function drafted(month: string) {
  const r = await draftRun(t.store, ana, { month, bank: BANK, env: ENV, paidByBank: NONE_PAID });
  return r.plan.lines.map((l) => [l.reference, l.amount]);
}

const BROUGHT = '− Brought forward from earlier statements (owed by you)';
const CARRIED = 'Carried forward to the next statement (owed by you)';

describe('money owed back by a negative month is taken off the next payouts', () => {
  it('January asks 500.00, February −500.00 (the sale failed), March 300.00, April 400.00: 700.00 paid in all', async () => {
    await t.observe(t.sale('pay-jan', '2025-01-20T10:00:00.000Z', 'Late Shop', 50_000n), '2025-01-21T00:00:00.000Z');
    await issueStatements(t.deps, { month: '2025-01', outDir: t.out });
    expect(await payoutOf('2025-01')).toEqual({
      reference: 'RS-SM-L-2025-01-EUR',
      amountDue: '50000',
      payable: '50000',
      owedBack: undefined,
    });

    // February: the PSP reports January's sale failed
    await t.observe(
      t.sale('pay-jan', '2025-01-20T10:00:00.000Z', 'Late Shop', 50_000n, { status: 'failure' }),
      '2025-02-03T00:00:00.000Z',
    );
    await issueStatements(t.deps, { month: '2025-02', outDir: t.out });
    // owed back: asked nothing, and 500.00 carried to the next statement
    expect(await payoutOf('2025-02')).toEqual({
      reference: null,
      amountDue: '-50000',
      payable: '0',
      owedBack: '50000',
    });
    const feb = await summaryOf('2025-02');
    expect(feb.get(CARRIED)).toBe(500);
    expect(feb.get(BROUGHT)).toBe(0);
    // decided: January's reference, asked before February knew, is paid as asked; what it paid beyond what
    // January owes is recovered from the next payouts (docs/outputs.md)
    expect(await drafted('2025-01')).toEqual([['RS-SM-L-2025-01-EUR', '50000']]);
    expect(await drafted('2025-02')).toEqual([]);

    // March: a new sale of 200.00 pays back 200.00 of the 500.00
    await t.observe(t.sale('pay-mar', '2025-03-10T10:00:00.000Z', 'Late Shop', 20_000n), '2025-03-11T00:00:00.000Z');
    const mar = await issueStatements(t.deps, { month: '2025-03', outDir: t.out });
    expect(await payoutOf('2025-03')).toEqual({
      reference: null,
      amountDue: '-30000',
      payable: '0',
      owedBack: '30000',
    });
    const marSummary = await summaryOf('2025-03');
    expect(marSummary.get(BROUGHT)).toBe(-500);
    expect(marSummary.get('= Amount due (adjustments + net payable − held + released − brought forward)')).toBe(-300);
    expect(marSummary.get(CARRIED)).toBe(300);
    expect(await drafted('2025-03')).toEqual([]);

    // issued again at its cut: the same statements, nothing recorded
    const again = await issueStatements(t.deps, {
      month: '2025-03',
      outDir: t.out,
      atPosition: parsePosition(mar.position),
    });
    expect({ sha: again.figuresSha256, newEvent: again.newEvent }).toEqual({ sha: mar.figuresSha256, newEvent: false });

    // a March sale of 100.00 reported late: March issued again is a correction, and carries what March owes now
    await t.observe(t.sale('pay-mar2', '2025-03-20T10:00:00.000Z', 'Late Shop', 10_000n), '2025-04-02T00:00:00.000Z');
    await issueStatements(t.deps, { month: '2025-03', outDir: t.out });
    expect(await payoutOf('2025-03')).toEqual({
      reference: null,
      amountDue: '-20000',
      payable: '0',
      owedBack: '20000',
    });
    expect(await drafted('2025-03')).toEqual([]);

    // April: 400.00, less the 200.00 still owed: 200.00 asked, nothing carried
    await t.observe(t.sale('pay-apr', '2025-04-10T10:00:00.000Z', 'Late Shop', 40_000n), '2025-04-11T00:00:00.000Z');
    await issueStatements(t.deps, { month: '2025-04', outDir: t.out });
    expect(await payoutOf('2025-04')).toEqual({
      reference: 'RS-SM-L-2025-04-EUR',
      amountDue: '20000',
      payable: '20000',
      owedBack: undefined,
    });
    const apr = await summaryOf('2025-04');
    expect(apr.get(BROUGHT)).toBe(-200);
    expect(apr.get(CARRIED)).toBe(0);
    expect(await drafted('2025-04')).toEqual([['RS-SM-L-2025-04-EUR', '20000']]);
    // paid in all: 500.00 (January, asked before its sale failed) + 200.00 = 700.00, the sales that stood
    // (200.00 + 100.00 + 400.00); the failed 500.00 taken off, once
  });
});

describe('the lines of money owed back', () => {
  const owed = ['broughtForward', 'dueOwed', 'dueGapOwed', 'carriedForward'];
  it('are in both languages, and only on a statement that brings or carries some forward', () => {
    for (const key of owed) expect(BRIDGE_LABELS.uk[key], key).toMatch(/ваша заборгованість|перенесено/);
    const line = BRIDGE.find((l) => l.key === 'broughtForward')!;
    expect([bridgeLabel(line, 'en'), bridgeLabel(line, 'uk')]).toEqual([
      '− Brought forward from earlier statements (owed by you)',
      '− Перенесено з попередніх виписок (ваша заборгованість)',
    ]);
    const f = {
      subMerchantId: 'SM-L',
      subMerchantName: 'Late Shop',
      currency: 'EUR',
      opening: 0n,
      gross: 100n,
      refunds: 0n,
      chargebacks: 0n,
      fees: 0n,
      reserveHeld: 0n,
      reserveReleased: 0n,
      netPayable: 100n,
      closing: 100n,
      operations: 1,
    };
    const p = {
      currency: 'EUR',
      reference: null,
      held: 0n,
      released: 0n,
      amountDue: 100n,
      payable: 100n,
      holds: [],
      paid: [],
    };
    const keys = (o: object) => bridgeOf([f], [{ ...p, ...o }]).map((l) => l.key);
    expect(keys({}).filter((k) => owed.includes(k))).toEqual([]);
    expect(keys({ broughtForward: 0n, owedBack: 0n })).toContain('due');
    expect(keys({ owedBack: 5n }).filter((k) => owed.includes(k) || k === 'due')).toEqual([
      'broughtForward',
      'dueOwed',
      'carriedForward',
    ]);
  });
});
