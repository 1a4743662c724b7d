import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { plainHeader } from '../../src/export/statements/figures';
import { writeStatementPdf } from '../../src/export/statements/pdf';
import { drainSheet, openWorkbook } from '../../src/export/workbook/xlsx';
import {
  figuresDigest,
  type StatementFigures,
  type StatementHeader,
  type StatementLine,
  type StatementMeta,
} from '../../src/export/statements/workbooks';

/**
 * A statement PDF or workbook whose file cannot be opened (a name longer than the file system allows, a directory
 * gone) fails with the file system's error. Both hung: the write stream failed at its open, the pages or the zip
 * piled up unread, and the wait for them to drain waited for ever, so the month's statements never finished (a
 * receiver name of 300 letters, found in review).
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-pdf-unwritable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function linesOf(count: number): StatementLine[] {
  return Array.from({ length: count }, (_, i) => {
    const share = BigInt(1_000 + ((i * 7919) % 100_000));
    return {
      at: new Date(Date.UTC(2025, 0, 1 + (i % 31), i % 24, (i * 7) % 60)),
      orderId: `order-${i.toString(36)}`,
      paymentId: `pay-${i}`,
      method: 'purchase',
      status: 'success',
      share,
      fee: 10n,
      reserve: 0n,
      net: share - 10n,
      currency: 'EUR',
      eventIds: [],
      paidWith: null,
      feeParts: null,
    } as StatementLine;
  });
}

async function write(file: string): Promise<void> {
  const lines = linesOf(20_000);
  const gross = lines.reduce((s, l) => s + l.share, 0n);
  const fees = 10n * BigInt(lines.length);
  const figures: StatementFigures = {
    subMerchantId: 'sm-1',
    subMerchantName: 'Shop',
    currency: 'EUR',
    opening: 0n,
    gross,
    refunds: 0n,
    chargebacks: 0n,
    fees,
    reserveHeld: 0n,
    reserveReleased: 0n,
    netPayable: gross - fees,
    closing: gross - fees,
    operations: lines.length,
  };
  const meta: StatementMeta = {
    month: '2025-01',
    timezone: 'UTC',
    position: '1/1',
    figuresSha256: figuresDigest('2025-01', 'UTC', [figures]),
  };
  const header: StatementHeader = { ...plainHeader(meta), language: 'en', number: '0001' };
  const source = {
    figures: [figures],
    lines: async function* () {
      yield* lines;
    },
    reserve: [],
  };
  await writeStatementPdf(file, source, meta, header);
}

describe('a statement PDF that cannot be written', () => {
  it('fails naming the file system error when its name is too long, leaving nothing behind', async () => {
    const file = path.join(dir, `${'x'.repeat(250)}.pdf`);
    await expect(write(file)).rejects.toThrow(/ENAMETOOLONG/);
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  it('fails when its directory is gone', async () => {
    await expect(write(path.join(dir, 'gone', 'statement.pdf'))).rejects.toThrow(/ENOENT/);
  }, 60_000);
});

describe('a workbook that cannot be written', () => {
  it('fails naming the file when its name is too long, instead of waiting for ever', async () => {
    const pending = openWorkbook(path.join(dir, `${'y'.repeat(250)}.xlsx`));
    const sheet = pending.workbook.addWorksheet('Operations');
    const writeAll = async () => {
      for (let i = 0; i < 200_000; i++) {
        sheet.addRow([i, 'a line of text long enough to fill the zip', i * 2]).commit();
        if (i % 1_000 === 0) await drainSheet(sheet);
      }
      sheet.commit();
      await pending.commit();
    };
    await expect(writeAll()).rejects.toThrow(/cannot write .*y{250}\.xlsx: ENAMETOOLONG/);
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  it('fails at its commit when nothing waited for the zip', async () => {
    const pending = openWorkbook(path.join(dir, `${'z'.repeat(250)}.xlsx`));
    pending.workbook.addWorksheet('Summary').addRow(['one row']).commit();
    await expect(pending.commit()).rejects.toThrow(/ENAMETOOLONG/);
  }, 60_000);
});
