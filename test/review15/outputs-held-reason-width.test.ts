import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { holdReason, LABELS } from '../../src/export/i18n/labels';
import { MORE_IN_DOUBT } from '../../src/export/payouts/holds';
import { type HeldByCurrency, writeHeldSheet } from '../../src/export/statements/held-sheet';
import { openWorkbook } from '../../src/export/workbook/xlsx';

/**
 * The statement's "Held pending investigation" sheet had a reason column of a fixed 70 characters, so a reason
 * recon writes printed cut against the Currency beside it: a reviewed item's "the fee differs between the payment
 * provider's reports: the difference is held (reviewed: released as accepted; more in doubt since)", 133
 * characters. The items are known before the sheet is begun: the column is as wide as its longest reason.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-held-width-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const REASONS = [
  'the receiver is not registered as a sub-merchant: nothing is paid until it is',
  `the fee differs between the payment provider's reports: the difference is held${MORE_IN_DOUBT}`,
];

const payouts: HeldByCurrency[] = [
  {
    currency: 'UAH',
    held: 3_000n,
    holds: REASONS.map((reason, i) => ({
      discrepancyId: `d-${i}`,
      reason,
      currency: 'UAH',
      amount: 1_500n,
      orderId: `ORD-${i}`,
      paymentId: `pay-${i}`,
      occurredAt: new Date(Date.UTC(2024, 2, 5 + i)),
    })),
  },
];

describe('review15: the held items’ reasons fit their column', () => {
  it.each(['en', 'uk'] as const)('%s', async (language) => {
    const file = path.join(dir, `held-${language}.xlsx`);
    const pending = openWorkbook(file);
    writeHeldSheet(pending.workbook, payouts, { timezone: 'UTC', labels: LABELS[language] });
    await pending.commit();
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const ws = wb.worksheets[0]!;
    const col = (ws.getRow(1).values as unknown[]).indexOf(LABELS[language].reason);
    const written: string[] = [];
    ws.eachRow((r, n) => {
      if (n > 1 && n <= REASONS.length + 1) written.push(String(r.getCell(col).value));
    });
    expect(written.sort()).toEqual(REASONS.map((r) => holdReason(r, language)).sort());
    const longest = Math.max(...written.map((w) => w.length));
    expect(longest).toBeGreaterThan(70);
    expect(ws.getColumn(col).width).toBe(longest + 2);
  });
});
