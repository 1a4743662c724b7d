import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { writeAuditWorkbook } from '../../src/export/statements/audit';
import { formatAmount, writeStatementPdf } from '../../src/export/statements/pdf';
import {
  figuresDigest,
  type StatementFigures,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * The held section of a statement (issue 25) names each item as the sub-merchant knows it: the order, the
 * payment, the payment's day (in the statement's zone), the amount and the reason in words, in the
 * statement's language; the discrepancy ids stay in finance's audit file (its Audit sheet).
 */

const hasPdftotext = (() => {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const dir = mkdtempSync(path.join(tmpdir(), 'recon-held-section-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ID_1 = '3f6b8f0e-2a8c-5d51-9a3e-0c1d2e3f4a5b';
const ID_2 = '7a1c2d3e-4f5a-5b6c-8d7e-9f0a1b2c3d4e';
const figures: StatementFigures = {
  subMerchantId: 'sm-kvitka',
  subMerchantName: 'Квітка Flowers ТОВ',
  currency: 'UAH',
  opening: 0n,
  gross: 500_00n,
  refunds: 0n,
  chargebacks: 0n,
  fees: 10_00n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: 490_00n,
  closing: 490_00n,
  operations: 2,
};
const holds = [
  {
    discrepancyId: ID_1,
    reason: "the payment's currency differs between the payment provider's reports",
    receiverName: 'Квітка Flowers ТОВ',
    currency: 'UAH',
    amount: 245_50n,
    type: 'currency_mismatch',
    orderId: 'ORD-1001',
    paymentId: 'pay-aaaa-1001',
    // 23:30 UTC on 31 March is 1 April in Kyiv: the day is the statement's zone's
    occurredAt: new Date('2024-03-30T23:30:00Z'),
  },
  {
    discrepancyId: ID_2,
    reason: 'the fee charged is above the contract: the difference is held',
    receiverName: 'Квітка Flowers ТОВ',
    currency: 'UAH',
    amount: 3_25n,
    type: 'fee_above_contract',
    orderId: 'ORD-1002',
    paymentId: 'pay-bbbb-1002',
    occurredAt: new Date('2024-03-12T10:00:00Z'),
  },
];
const meta: StatementMeta = {
  month: '2024-03',
  timezone: 'Europe/Kyiv',
  position: '10/10',
  figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', [figures]),
};
const source = {
  figures: [figures],
  lines: async function* () {},
  reserve: [],
  payouts: [
    {
      currency: 'UAH',
      reference: 'RS-X-2024-03-UAH',
      held: 248_75n,
      released: 0n,
      amountDue: 241_25n,
      payable: 241_25n,
      holds,
      paid: [],
    },
  ],
};
const header = (language: 'en' | 'uk') => ({
  language,
  issuer: { name: 'Marketplace Ltd', address: '1 Main St, Kyiv', taxId: '12345678' },
  recipient: { legalName: 'Квітка Flowers ТОВ', address: 'вул. Хрещатик, 1, Київ', taxId: '87654321' },
  number: '0001',
  issuedAt: new Date('2024-04-01T07:00:00Z'),
  contact: 'payouts@marketplace.test',
  dispute: 'within 30 days of the issue date',
});

async function sheetRows(file: string, name: string): Promise<string[][]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  const ws = wb.worksheets.find((w) => w.name.includes(name));
  if (!ws) throw new Error(`no sheet ${name} in ${wb.worksheets.map((w) => w.name).join(', ')}`);
  const rows: string[][] = [];
  ws.eachRow((r) =>
    rows.push(
      (r.values as unknown[]).slice(1).map((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : String(v ?? ''))),
    ),
  );
  return rows;
}

describe('the held section of a statement', () => {
  for (const [language, sheet, reasons, day] of [
    [
      'en',
      'Held pending investigation',
      [
        "the payment's currency differs between the payment provider's reports",
        'the fee charged is above the contract: the difference is held',
      ],
      'Date',
    ],
    [
      'uk',
      'Утримано до з’ясування',
      [
        'валюта платежу різниться у звітах платіжного провайдера',
        'стягнута комісія вища за договірну: утримано різницю',
      ],
      'Дата',
    ],
  ] as const) {
    it(`names each item by order, payment, date, amount and reason in words (${language})`, async () => {
      const file = path.join(dir, `statement-${language}.xlsx`);
      await writeStatementWorkbook(file, source, meta, header(language));
      const rows = await sheetRows(file, sheet);
      const head = rows.findIndex((r) => r.includes(day));
      expect(head).toBeGreaterThanOrEqual(0);
      const items = rows.slice(head + 1).filter((r) => r.some((c) => c.startsWith('ORD-')));
      // in date order: 12 March, then 1 April in Kyiv
      expect(items).toEqual([
        ['ORD-1002', 'pay-bbbb-1002', '2024-03-12', reasons[1], 'UAH', '3.25'],
        ['ORD-1001', 'pay-aaaa-1001', '2024-03-31', reasons[0], 'UAH', '245.5'],
      ]);
      // no discrepancy id on the sub-merchant's pages; finance's audit file keeps them
      expect(JSON.stringify(rows)).not.toContain(ID_1);
      const auditFile = path.join(dir, `statement-${language}-audit.xlsx`);
      await writeAuditWorkbook(auditFile, source, meta, header(language));
      const audit = JSON.stringify(await sheetRows(auditFile, 'Audit'));
      expect(audit).toContain(ID_1);
      expect(audit).toContain(ID_2);
    });
  }

  it.skipIf(!hasPdftotext)('prints the same in the PDF, the reason in full', async () => {
    for (const language of ['en', 'uk'] as const) {
      const pdf = path.join(dir, `statement-${language}.pdf`);
      await writeStatementPdf(pdf, source, meta, header(language));
      const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' });
      for (const h of holds) {
        const line = text.split('\n').find((l) => l.includes(h.orderId))!;
        expect(line).toContain(h.paymentId);
        expect(line).toContain(formatAmount(h.amount, 'UAH', language));
      }
      expect(text).not.toContain(ID_1);
      expect(text.replace(/\s+/g, ' ')).toContain(
        language === 'en' ? "the payment's currency differs" : 'валюта платежу різниться',
      );
    }
  });
});
