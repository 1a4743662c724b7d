import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import type { PayoutStatusLine } from '../../src/export/payouts/paid-out';
import type { PayoutSection } from '../../src/export/payouts/sheets';
import { writePayoutStatusWorkbook, writePayoutsWorkbook } from '../../src/export/payouts/workbook';
import { figuresDigest, type StatementFigures, type StatementMeta } from '../../src/export/statements/figures';
import { DATE_FORMAT } from '../../src/export/workbook/xlsx';

/**
 * Finance's Payouts index (sheets Payouts and Payout status) and the payout-status workbook wrote their days —
 * payout_paid_on, due_on, paid_on — as text ("2024-04-02"), where every other workbook of recon writes a day as
 * a real date: finance could not sort or filter them as dates. They are Excel dates now, with the day format.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-index-dates-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const paid: PayoutStatusLine = {
  reference: 'RS-SM-1-2024-03-UAH',
  subMerchantId: 'SM-1',
  payeeName: 'Shop',
  currency: 'UAH',
  month: '2024-03',
  amount: 10_000n,
  status: 'paid',
  paidOut: 10_000n,
  returned: 0n,
  duplicated: 0n,
  dueOn: '2024-04-03',
  paidOn: '2024-04-02',
  bankRef: 'b1',
  paidTo: 'UA001',
};
const expected: PayoutStatusLine = {
  ...paid,
  reference: 'RS-SM-2-2024-03-UAH',
  subMerchantId: 'SM-2',
  status: 'expected',
  paidOut: 0n,
  dueOn: '2024-04-10',
  paidOn: null,
  bankRef: null,
  paidTo: null,
};

async function sheet(file: string, name: string) {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb.getWorksheet(name)!;
}

/** A column's cells of the rows whose first cell is `first`, with the number format each is shown in. */
function cells(ws: ExcelJS.Worksheet, header: string, first: string) {
  const col = (ws.getRow(1).values as unknown[]).indexOf(header);
  expect(col, header).toBeGreaterThan(0);
  const out: Array<[unknown, string]> = [];
  ws.eachRow((r) => {
    if (r.getCell(1).value === first) out.push([r.getCell(col).value, r.getCell(col).numFmt]);
  });
  return out;
}

const day = (iso: string) => new Date(`${iso}T00:00:00Z`);

describe('review15: the Payouts index writes its days as dates', () => {
  it('payout-status workbook: due_on and paid_on are dates in the day format, an unpaid paid_on empty', async () => {
    const file = path.join(dir, 'payout-status-2024-03.xlsx');
    await writePayoutStatusWorkbook(file, [paid, expected], {
      month: '2024-03',
      position: '1/1',
      writtenAt: new Date('2024-04-15T00:00:00Z'),
    });
    const ws = await sheet(file, 'Payout status');
    expect(cells(ws, 'due_on', paid.reference)).toEqual([[day('2024-04-03'), DATE_FORMAT]]);
    expect(cells(ws, 'paid_on', paid.reference)).toEqual([[day('2024-04-02'), DATE_FORMAT]]);
    expect(cells(ws, 'due_on', expected.reference)).toEqual([[day('2024-04-10'), DATE_FORMAT]]);
    expect(cells(ws, 'paid_on', expected.reference).map(([v]) => v ?? '')).toEqual(['']);
  });

  it('Payouts sheet: payout_paid_on of a row whose payout the bank paid is a date', async () => {
    const f: StatementFigures = {
      subMerchantId: 'SM-1',
      subMerchantName: 'Shop',
      currency: 'UAH',
      opening: 0n,
      gross: 10_000n,
      refunds: 0n,
      chargebacks: 0n,
      fees: 0n,
      reserveHeld: 0n,
      reserveReleased: 0n,
      netPayable: 10_000n,
      operations: 1,
      closing: 10_000n,
    };
    const meta: StatementMeta = {
      month: '2024-03',
      timezone: 'UTC',
      position: '1/1',
      figuresSha256: figuresDigest('2024-03', 'UTC', [f]),
    };
    const section: PayoutSection = {
      currency: 'UAH',
      reference: paid.reference,
      held: 0n,
      released: 0n,
      amountDue: 10_000n,
      payable: 10_000n,
      holds: [],
      paid: [],
      statuses: [paid],
    };
    const file = path.join(dir, 'payouts-2024-03.xlsx');
    await writePayoutsWorkbook(file, [f], { ...meta, issuedAt: new Date('2024-04-15T00:00:00Z') }, () => section);
    const ws = await sheet(file, 'Payouts');
    expect(cells(ws, 'payout_paid_on', 'SM-1')).toEqual([[day('2024-04-02'), DATE_FORMAT]]);
    const status = await sheet(file, 'Payout status');
    expect(cells(status, 'paid_on', paid.reference)).toEqual([[day('2024-04-02'), DATE_FORMAT]]);
  });
});
