import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { figuresDigest, type StatementFigures, type StatementMeta } from '../../src/export/statements/workbooks';
import { writeAuditWorkbook } from '../../src/export/statements/audit';
import type { StatementHeader } from '../../src/export/statements/figures';

/**
 * The Audit sheet (finance's audit file beside the statement) traces each held item to its discrepancy and amount. It wrote the amount as the bigint of
 * hundredths ("118152" for 1,181.52 EUR): read as a figure, a hundred times the money held.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-audit-held-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const f: StatementFigures = {
  subMerchantId: 'sm-1',
  subMerchantName: 'Alpha Shop',
  currency: 'EUR',
  opening: 0n,
  gross: 121_680n,
  refunds: 0n,
  chargebacks: 0n,
  fees: 3_528n,
  reserveHeld: 0n,
  reserveReleased: 0n,
  netPayable: 118_152n,
  closing: 118_152n,
  operations: 1,
};
const meta: StatementMeta = {
  month: '2025-01',
  timezone: 'Europe/Kyiv',
  position: '10/1',
  figuresSha256: figuresDigest('2025-01', 'Europe/Kyiv', [f]),
};
const header: StatementHeader = {
  language: 'en',
  issuer: { name: 'Marketplace LLC' },
  recipient: { legalName: 'Alpha Shop LLC' },
  number: '0001',
  issuedAt: new Date('2025-02-03T08:30:00.000Z'),
};

describe('Audit sheet, held items', () => {
  it('states the amount held in the currency, not in hundredths', async () => {
    const file = path.join(dir, 'statement-audit.xlsx');
    await writeAuditWorkbook(
      file,
      {
        figures: [f],
        lines: async function* () {},
        payouts: [
          {
            currency: 'EUR',
            reference: null,
            held: 118_152n,
            released: 0n,
            amountDue: 0n,
            payable: 0n,
            holds: [
              { discrepancyId: 'd-42', reason: 'the payment is reported twice', currency: 'EUR', amount: 118_152n },
              { discrepancyId: '', reason: 'not registered', currency: 'EUR', amount: 5n },
            ],
            paid: [],
          },
        ],
      },
      meta,
      header,
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const audit = wb.getWorksheet('Audit')!;
    const held: string[] = [];
    audit.eachRow((row) => {
      if (row.getCell(1).value === 'Held for discrepancy') held.push(String(row.getCell(5).value));
    });
    expect(held).toHaveLength(2);
    expect(held[0]).toContain('d-42');
    expect(held[0]).toContain('1181.52');
    expect(held[0]).not.toMatch(/\b118152\b/);
    expect(held[1]).toContain('0.05');
  });
});
