import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatAmount, writeStatementPdf } from '../../src/export/statements/pdf';
import { figuresDigest, plainHeader } from '../../src/export/statements/figures';
import type { StatementFigures, StatementLine, StatementMeta } from '../../src/export/statements/workbooks';

/**
 * The statement PDF fits every table cell to its column and cuts what is wider with "…". An amount is a cell like
 * any other: a month's totals of a sub-merchant selling some ten million a month (share 12,345,678.90 in bold, in a
 * column 70 pt wide; reserve 1,234,567.89 in one 54 pt wide) were printed cut ("12,345,67…"), so the document
 * that leaves the company did not state the figure at all.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review13-pdf-wide-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function line(i: number, share: bigint, fee: bigint, reserve: bigint): StatementLine {
  return {
    at: new Date(Date.UTC(2024, 2, 5 + i, 10, 0)),
    orderId: `ORD-${i}`,
    paymentId: `pay-${i}`,
    method: 'purchase',
    status: 'success',
    share,
    fee,
    reserve,
    net: share - fee - reserve,
    eventIds: [],
  };
}

describe('review13: large amounts on the statement PDF', () => {
  it('are printed whole in the operations table and its totals, in both languages', async () => {
    const lines = [line(0, 617_283_945n, 17_283_945n, 61_728_394n), line(1, 617_283_945n, 17_283_945n, 61_728_395n)];
    const sum = (k: 'share' | 'fee' | 'reserve' | 'net') => lines.reduce((s, l) => s + l[k], 0n);
    const f0 = {
      subMerchantId: 'sm-big',
      subMerchantName: 'Big Seller',
      currency: 'UAH',
      opening: 0n,
      gross: sum('share'),
      refunds: 0n,
      chargebacks: 0n,
      fees: sum('fee'),
      reserveHeld: sum('reserve'),
      reserveReleased: 0n,
      operations: lines.length,
    };
    const netPayable = sum('net');
    const figs: StatementFigures[] = [{ ...f0, netPayable, closing: netPayable }];
    const meta: StatementMeta = {
      month: '2024-03',
      timezone: 'Europe/Kyiv',
      position: '1/1',
      figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', figs),
    };
    for (const language of ['en', 'uk'] as const) {
      const pdf = path.join(dir, `big-${language}.pdf`);
      const source = {
        figures: figs,
        lines: async function* () {
          yield* lines;
        },
        reserve: [],
      };
      await writeStatementPdf(pdf, source, meta, { ...plainHeader(meta), language });
      const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' }).replace(/\u00a0/g, ' ');
      expect(text).not.toContain('…');
      for (const k of ['share', 'fee', 'reserve', 'net'] as const) {
        expect(text, `${language} total ${k}`).toContain(formatAmount(sum(k), 'UAH', language).replace(/\u00a0/g, ' '));
        for (const l of lines)
          expect(text, `${language} line ${k}`).toContain(formatAmount(l[k], 'UAH', language).replace(/\u00a0/g, ' '));
      }
    }
  });
});
