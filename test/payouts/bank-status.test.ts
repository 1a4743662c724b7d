import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { PAYOUT_STATUS_HEADER, PAYOUTS_HEADER } from '../../src/export/payouts/workbook';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { judgePayouts } from '../../src/reconciliation/payouts/judge';
import { type ExpectedPayout, matchPayouts, type PayoutBankLine } from '../../src/reconciliation/payouts/match';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { appendAll, at, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { statementFile } from '../export/statement-files';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { bank, booked, payouts } from './support';

/**
 * What the bank did with each expected payout, where finance looks (issue 25): a status per payout (expected,
 * paid, partial, missing, returned, duplicated) with what was paid, when, the bank's reference and the account
 * paid to, from the payout matching, on the Payouts index and on each statement.
 */

const payout = (reference: string, amount = 100_00n): ExpectedPayout => ({
  reference,
  subMerchantId: reference.split('-')[1]!,
  currency: 'EUR',
  amount,
  issuedOn: '2026-11-02',
  payeeAccount: null,
  payeeName: reference,
  eventId: `ev-${reference}`,
});
const line = (id: string, reference: string, over: Partial<PayoutBankLine> = {}): PayoutBankLine => ({
  id,
  accountId: 'DE00PAYOUTS',
  currency: 'EUR',
  direction: 'debit',
  amount: 100_00n,
  bookingDate: '2026-11-03',
  endToEndId: null,
  remittance: reference,
  counterpartyName: null,
  counterpartyAccount: `DE${id.toUpperCase()}`,
  isReturn: false,
  bankRef: `BANK-${id}`,
  ...over,
});

describe('the status of each expected payout, from the bank lines (hand-made)', () => {
  const judged = (today: string) => {
    const expected = ['RS-E', 'RS-P', 'RS-H', 'RS-M', 'RS-R', 'RS-D'].map((r) => payout(r));
    const lines = [
      line('p', 'RS-P'),
      line('h', 'RS-H', { amount: 40_00n }),
      line('r', 'RS-R'),
      line('r2', 'RS-R', { direction: 'credit', isReturn: true, bookingDate: '2026-11-05' }),
      line('d', 'RS-D'),
      line('d2', 'RS-D', { bookingDate: '2026-11-04' }),
    ];
    const matches = matchPayouts(expected, lines, { windowDays: 10 });
    return new Map(
      judgePayouts(expected, lines, matches.lines, { today, dueDays: 5 }).payouts.map((s) => [s.payout.reference, s]),
    );
  };

  it('gives expected, paid, partial, returned and duplicated before the due day, missing after it', () => {
    const before = judged('2026-11-06');
    expect([...before.values()].map((s) => [s.payout.reference, s.status])).toEqual([
      ['RS-D', 'duplicated'],
      ['RS-E', 'expected'],
      ['RS-H', 'partial'],
      ['RS-M', 'expected'],
      ['RS-P', 'paid'],
      ['RS-R', 'returned'],
    ]);
    const after = judged('2026-11-08');
    expect(after.get('RS-M')!.status).toBe('missing');
    expect(after.get('RS-E')!.status).toBe('missing');
  });

  it('says what was paid, when, with which bank reference and to which account', () => {
    const s = judged('2026-11-06');
    expect(s.get('RS-P')).toMatchObject({
      paidOut: 100_00n,
      paidOn: '2026-11-03',
      bankRef: 'BANK-p',
      paidTo: 'DEP',
      duplicated: 0n,
    });
    expect(s.get('RS-H')).toMatchObject({ paidOut: 40_00n, bankRef: 'BANK-h', paidTo: 'DEH' });
    expect(s.get('RS-R')).toMatchObject({ paidOut: 0n, returned: 100_00n, bankRef: 'BANK-r' });
    // the first debit paid it; the second one is money to recover
    expect(s.get('RS-D')).toMatchObject({ paidOut: 100_00n, duplicated: 100_00n, bankRef: 'BANK-d' });
    expect(s.get('RS-M')).toMatchObject({ paidOut: 0n, paidOn: null, bankRef: null, paidTo: null });
  });
});

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-bank-status-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const TZ = 'UTC';
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: TZ, bank });

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections({
      ...deps(),
      graceHours: 48,
      projections: [journal, reconciliation, payouts],
    });
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const SHOPS = {
  'SM-P': 'Paid Shop',
  'SM-H': 'Half Shop',
  'SM-M': 'Missing Shop',
  'SM-R': 'Return Shop',
  'SM-D': 'Twice Shop',
};
const sales = (month: string, dayOf: string) =>
  Object.values(SHOPS).map((name, i) =>
    registerRows({
      paymentId: `pay-${month}-${i}`,
      dateTime: at(`${month}-${dayOf}T10:00:00Z`),
      amount: 101_00n,
      receivers: [{ name, amount: 100_00n, fee: 1_00n }],
      reportId: `rep-${month}`,
      observedAt: at(`${month}-${dayOf}T12:00:00Z`),
    }),
  );

async function sheetRows(file: string, sheet: string): Promise<unknown[][]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(out, file));
  const ws = wb.getWorksheet(sheet);
  if (!ws) throw new Error(`no sheet ${sheet} in ${file}: ${wb.worksheets.map((w) => w.name).join(', ')}`);
  // an empty cell reads back as nothing: as '' here, as it was written
  return ws.getSheetValues().flatMap((r) => (Array.isArray(r) ? [Array.from(r.slice(1), (v) => v ?? '')] : []));
}

describe('the Payouts index and each statement show what the bank did with every payout', () => {
  it('a statement issued after the bank paid shows each earlier payout paid, partial, missing, returned or duplicated', async () => {
    await appendAll(fx.store, [
      ...Object.entries(SHOPS).map(([id, name]) => subMerchant(id, name)),
      ...sales('2024-03', '10'),
      syncCompleted({
        from: at('2024-03-10T00:00:00Z'),
        to: at('2024-03-11T00:00:00Z'),
        completedAt: at('2024-03-11T00:00:00Z'),
        reportId: 'rep-2024-03',
        announced: 5,
      }),
    ]);
    await settle();
    await issueStatements(deps(), { month: '2024-03', outDir: out, now: new Date('2024-04-01T09:00:00Z') });
    await settle();
    const refs = await fx.db.sql<{ reference: string; amount: string }[]>`
      select reference, amount::text from recon.payout_expected order by reference`;
    expect(refs.map((r) => r.reference)).toEqual([
      'RS-SM-D-2024-03-UAH',
      'RS-SM-H-2024-03-UAH',
      'RS-SM-M-2024-03-UAH',
      'RS-SM-P-2024-03-UAH',
      'RS-SM-R-2024-03-UAH',
    ]);
    const amount = BigInt(refs[0]!.amount);
    const pay = (bankRef: string, ref: string, on: string, over: Partial<Parameters<typeof booked>[0]> = {}) =>
      booked({
        bankRef,
        amount,
        currency: 'UAH',
        bookingDate: on,
        remittance: `Statement ${ref}`,
        counterpartyAccount: `UA${bankRef.toUpperCase()}`,
        ...over,
      });
    await appendAll(fx.store, [
      pay('p1', 'RS-SM-P-2024-03-UAH', '2024-04-02'),
      pay('h1', 'RS-SM-H-2024-03-UAH', '2024-04-02', { amount: amount / 2n }),
      pay('r1', 'RS-SM-R-2024-03-UAH', '2024-04-02'),
      pay('r2', 'RS-SM-R-2024-03-UAH', '2024-04-05', { direction: 'credit', isReturn: true }),
      pay('d1', 'RS-SM-D-2024-03-UAH', '2024-04-02'),
      pay('d2', 'RS-SM-D-2024-03-UAH', '2024-04-03'),
      // April's sales, and the bank's days run past the due day of March's payouts
      ...sales('2024-04', '15'),
      syncCompleted({
        from: at('2024-04-15T00:00:00Z'),
        to: at('2024-04-16T00:00:00Z'),
        completedAt: at('2024-04-16T00:00:00Z'),
        reportId: 'rep-2024-04',
        announced: 5,
      }),
    ]);
    await settle();
    await issueStatements(deps(), { month: '2024-04', outDir: out, now: new Date('2024-05-02T09:00:00Z') });

    // the index: every payout asked for up to April, with what the bank did
    const status = await sheetRows('payouts-2024-04.xlsx', 'Payout status');
    expect(status[0]).toEqual([...PAYOUT_STATUS_HEADER]);
    const col = (name: (typeof PAYOUT_STATUS_HEADER)[number]) => PAYOUT_STATUS_HEADER.indexOf(name);
    const byRef = new Map(status.slice(1).map((r) => [r[col('payout_reference')], r]));
    const major = Number(amount) / 100;
    expect(
      [...byRef.values()].map((r) =>
        (['payout_reference', 'payout_status', 'paid_out', 'paid_on', 'bank_reference', 'paid_to'] as const).map(
          (c) => r[col(c)] ?? '',
        ),
      ),
    ).toEqual([
      ['RS-SM-D-2024-03-UAH', 'duplicated', major, new Date('2024-04-02T00:00:00Z'), 'd1', 'UAD1'],
      ['RS-SM-D-2024-04-UAH', 'expected', 0, '', '', ''],
      ['RS-SM-H-2024-03-UAH', 'partial', major / 2, new Date('2024-04-02T00:00:00Z'), 'h1', 'UAH1'],
      ['RS-SM-H-2024-04-UAH', 'expected', 0, '', '', ''],
      ['RS-SM-M-2024-03-UAH', 'missing', 0, '', '', ''],
      ['RS-SM-M-2024-04-UAH', 'expected', 0, '', '', ''],
      ['RS-SM-P-2024-03-UAH', 'paid', major, new Date('2024-04-02T00:00:00Z'), 'p1', 'UAP1'],
      ['RS-SM-P-2024-04-UAH', 'expected', 0, '', '', ''],
      ['RS-SM-R-2024-03-UAH', 'returned', 0, new Date('2024-04-02T00:00:00Z'), 'r1', 'UAR1'],
      ['RS-SM-R-2024-04-UAH', 'expected', 0, '', '', ''],
    ]);
    expect(byRef.get('RS-SM-D-2024-03-UAH')![col('duplicated')]).toBe(major);
    expect(byRef.get('RS-SM-R-2024-03-UAH')![col('returned')]).toBe(major);

    // the Payouts sheet's own row: this run's reference is expected (nothing can have paid it yet)
    const index = await sheetRows('payouts-2024-04.xlsx', 'Payouts');
    expect(index[0]).toEqual([...PAYOUTS_HEADER]);
    const rowStatus = index
      .slice(1)
      .filter((r) => String(r[0]).startsWith('SM-'))
      .map((r) => r[PAYOUTS_HEADER.indexOf('payout_status')]);
    expect(rowStatus).toEqual(['expected', 'expected', 'expected', 'expected', 'expected']);

    // each statement: its own payouts, in words
    const paidShop = await sheetRows(statementFile(out, 'SM-P', '2024-04'), 'Payouts and the bank');
    expect(paidShop.filter((r) => String(r[0]).startsWith('RS-'))).toEqual([
      ['RS-SM-P-2024-03-UAH', '2024-03', 'UAH', major, 'paid', major, expect.any(Date), 'p1', 'UAP1', expect.any(Date)],
    ]);
    const missing = await sheetRows(statementFile(out, 'SM-M', '2024-04'), 'Payouts and the bank');
    expect(missing.filter((r) => String(r[0]).startsWith('RS-')).map((r) => [r[0], r[4], r[5]])).toEqual([
      ['RS-SM-M-2024-03-UAH', 'not paid by the due day', 0],
    ]);
  });

  it('the March index, issued before the bank paid, says expected with nothing paid', async () => {
    const index = await sheetRows('payouts-2024-03.xlsx', 'Payout status');
    const col = (name: (typeof PAYOUT_STATUS_HEADER)[number]) => PAYOUT_STATUS_HEADER.indexOf(name);
    expect(index.slice(1).map((r) => [r[col('payout_status')], r[col('paid_out')]])).toEqual(
      Array.from({ length: 5 }, () => ['expected', 0]),
    );
  });
});
