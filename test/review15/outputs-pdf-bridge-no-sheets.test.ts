import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeStatementPdf } from '../../src/export/statements/pdf';
import {
  bridgeOf,
  figuresDigest,
  pdfBridgeLabel,
  plainHeader,
  type StatementFigures,
  type StatementMeta,
} from '../../src/export/statements/figures';

/**
 * The statement PDF's bridge pointed its reader to workbook sheets: "± Adjustments to earlier months (sheet
 * Adjustments)", "− Paid out (sheet Paid out: …)", in Ukrainian "(аркуш «Коригування»)". A PDF has no sheets;
 * it says where the items are: in the tables below it, or (adjustments, months never stated) in the Excel
 * statement sent with it.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-pdf-sheets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('review15: the statement PDF names no workbook sheet', () => {
  it('words every bridge line for a PDF, in both languages', async () => {
    const f: StatementFigures = {
      subMerchantId: 'sm-1',
      subMerchantName: 'Shop',
      currency: 'UAH',
      opening: 10_000n,
      gross: 50_000n,
      refunds: 0n,
      chargebacks: 0n,
      fees: 1_000n,
      reserveHeld: 0n,
      reserveReleased: 0n,
      netPayable: 49_000n,
      operations: 0,
      adjustments: 500n,
      notStated: 700n,
      notStatedMonths: '2024-01',
      paidOut: 10_000n,
      closing: 50_200n,
    };
    const meta: StatementMeta = {
      month: '2024-03',
      timezone: 'Europe/Kyiv',
      position: '1/1',
      figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', [f]),
    };
    // the lines that point to where their items are listed
    const pointing = ['adjustments', 'notStated', 'held', 'paidOut'];
    const lines = bridgeOf([f]).filter((l) => pointing.includes(l.key));
    expect(lines.map((l) => l.key)).toEqual(pointing);
    for (const language of ['en', 'uk'] as const) {
      const pdf = path.join(dir, `statement-${language}.pdf`);
      const source = { figures: [f], lines: async function* () {}, reserve: [] };
      await writeStatementPdf(pdf, source, meta, { ...plainHeader(meta), language });
      const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' });
      expect(text, language).not.toMatch(/\bsheets?\b|аркуш/i);
      for (const l of lines) expect(text, `${language} ${l.key}`).toContain(pdfBridgeLabel(l, language));
    }
  });
});
