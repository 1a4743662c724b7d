import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { formatAmount, writeStatementPdf } from '../../src/export/statements/pdf';
import { plainHeader } from '../../src/export/statements/figures';
import {
  bridgeOf,
  pdfBridgeLabel,
  figuresDigest,
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
  writeStatementWorkbook,
} from '../../src/export/statements/workbooks';

/**
 * The PDF is read back with poppler's pdftotext (installed by .ci/run): every figure of the workbook's
 * bridge and every operation's net appear in it, exactly, and no internal reference does.
 */

const hasPdftotext = (() => {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasPdftotext)
  console.warn('statement-pdf: pdftotext (poppler-utils) is not installed: the PDF read-back is skipped');

const dir = mkdtempSync(path.join(tmpdir(), 'recon-pdf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function figures(currency: string, gross: bigint): StatementFigures {
  const f = {
    subMerchantId: 'sm-kvitka',
    subMerchantName: 'Квітка Flowers ТОВ',
    currency,
    opening: 150_000n,
    gross,
    refunds: 10_050n,
    chargebacks: 2_000n,
    fees: 30_861n,
    reserveHeld: 61_728n,
    reserveReleased: 5_000n,
    operations: 60,
    adjustments: -1_500n,
    previousStatement: '2024-02',
  };
  const netPayable = f.gross - f.refunds - f.chargebacks - f.fees - f.reserveHeld + f.reserveReleased;
  return { ...f, netPayable, closing: f.opening + f.adjustments + netPayable };
}

/** A March 2024 statement PDF of these figures and lines (no reserve), in `dir`; its path. */
async function pdfOfLines(
  name: string,
  figs: StatementFigures[],
  lines: StatementLine[],
  language: 'en' | 'uk' = 'en',
): Promise<string> {
  const meta: StatementMeta = {
    month: '2024-03',
    timezone: 'Europe/Kyiv',
    position: '1/1',
    figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', figs),
  };
  const pdf = path.join(dir, name);
  const source = {
    figures: figs,
    lines: async function* () {
      yield* lines;
    },
    reserve: [],
  };
  await writeStatementPdf(pdf, source, meta, { ...plainHeader(meta), language });
  return pdf;
}

function linesOf(currency: string): StatementLine[] {
  // enough lines to run over several pages, each net distinct
  return Array.from({ length: 60 }, (_, i) => ({
    at: new Date(Date.UTC(2024, 2, 1 + (i % 28), 9, i)),
    orderId: `order-${currency}-${i}`,
    paymentId: `pay-${currency}-${i}`,
    method: i % 10 === 9 ? 'refund' : 'purchase',
    status: 'success',
    share: BigInt(10_000 + i * 101),
    fee: 250n,
    reserve: 0n,
    net: BigInt(10_000 + i * 101 - 250),
    eventIds: [`00000000-0000-5000-8000-${String(i).padStart(12, '0')}`],
  }));
}

describe('statement PDF', () => {
  it.skipIf(!hasPdftotext)(
    'shows the workbook’s figures exactly, in Ukrainian and Latin text, without internal references',
    async () => {
      // four currencies: more than one bridge table's width
      const figs = [
        figures('EUR', 1_234_567n),
        figures('PLN', 3_333_333n),
        figures('UAH', 98_765_432n),
        figures('USD', 7_654_321n),
      ];
      const meta: StatementMeta = {
        month: '2024-03',
        timezone: 'Europe/Kyiv',
        position: '98765/4321',
        figuresSha256: figuresDigest('2024-03', 'Europe/Kyiv', figs),
      };
      const reserve = [{ heldOn: '2024-03-01', currency: 'UAH', held: 50_000n, releaseOn: '2024-05-30', released: 0n }];
      const source = {
        figures: figs,
        lines: async function* (c: string) {
          yield* linesOf(c);
        },
        reserve,
      };
      const xlsx = path.join(dir, 'statement.xlsx');
      const pdf = path.join(dir, 'statement.pdf');
      const header = {
        language: 'en' as const,
        issuer: { name: 'Marketplace Ltd', address: '1 Main St, Kyiv', taxId: '12345678' },
        recipient: { legalName: 'Квітка Flowers ТОВ', address: 'вул. Хрещатик, 1, Київ', taxId: '87654321' },
        number: '0003',
        issuedAt: new Date('2024-04-01T07:00:00Z'),
        contact: 'payouts@marketplace.test',
        dispute: 'within 30 days of the issue date',
      };
      await writeStatementWorkbook(xlsx, source, meta, header);
      await writeStatementPdf(pdf, source, meta, header);
      expect(readFileSync(pdf).subarray(0, 5).toString()).toBe('%PDF-');
      expect(readdirSync(dir).filter((f) => f.endsWith('.partial'))).toEqual([]);
      const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' });

      // every bridge figure of the workbook, read back from its cells, is in the PDF as formatted
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(xlsx);
      const summary = wb.getWorksheet('Summary')!;
      let checked = 0;
      summary.eachRow((row) => {
        const label = String(row.getCell(1).value ?? '');
        const bridge = bridgeOf(figs).find((b) => b.label === label);
        if (!bridge) return;
        figs.forEach((f, i) => {
          const cell = Number(row.getCell(i + 2).value);
          const minor = bridge.value(f);
          expect(cell).toBe(Number(minor) / 100);
          const lines = text.split('\n').filter((l) => l.includes(pdfBridgeLabel(bridge, 'en').slice(0, 30)));
          expect(lines.length, label).toBeGreaterThan(0);
          expect(
            lines.some((l) => l.includes(formatAmount(minor, f.currency))),
            `${label} ${f.currency}`,
          ).toBe(true);
          checked++;
        });
      });
      expect(checked).toBe(bridgeOf(figs).length * figs.length);
      for (const c of ['EUR', 'PLN', 'UAH', 'USD'])
        for (const l of linesOf(c)) {
          expect(text).toContain(`${l.orderId}`);
          expect(text).toContain(formatAmount(l.net, c));
        }
      expect(text).toContain('Квітка Flowers ТОВ');
      expect(text).toContain('вул. Хрещатик, 1, Київ');
      expect(text).toContain('Statement no. 0003');
      expect(text).toContain('Issued on: 2024-04-01');
      const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [pdf], { encoding: 'utf8' }))![1]);
      expect(text).toContain(`Page 2 of ${pages}`);
      expect(text.match(new RegExp(`· Page \\d+ of ${pages}`, 'g'))).toHaveLength(pages);
      // nothing internal on a page meant for the sub-merchant
      expect(text).not.toContain(meta.position);
      expect(text).not.toContain(meta.figuresSha256);
      expect(text).not.toContain('00000000-0000-5000-8000');
    },
  );

  it.skipIf(!hasPdftotext)(
    'prints how each line was paid and its fee parts, a value too wide for its column cut on its own row',
    async () => {
      const figs = [figures('UAH', 20_000n)];
      const base = linesOf('UAH').slice(0, 3);
      const longWay = 'a_payment_way_name_far_longer_than_its_column_in_the_pdf';
      const lines: StatementLine[] = [
        { ...base[0]!, paidWith: { payway: 'card', scheme: 'visa' }, feeParts: { fixed: 50n, percent: 200n } },
        { ...base[1]!, paidWith: { payway: longWay, scheme: null } },
        { ...base[2]! },
      ];
      const pdf = await pdfOfLines('paid-with.pdf', figs, lines, 'uk');
      const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' });
      const row = (orderId: string) => text.split('\n').find((l) => l.includes(orderId)) ?? '';
      expect(row(base[0]!.orderId!)).toContain('Картка · Visa');
      // fixed 50 + percentage 200 minor units of the line's fee of 250, written the Ukrainian way
      expect(row(base[0]!.orderId!)).toContain('0,50 + 2,00');
      expect(row(base[1]!.orderId!)).toMatch(/a_payment_way\S*…/);
      expect(text).not.toContain('in_the_pdf');
      expect(row(base[2]!.orderId!)).toContain('—');
    },
  );

  it.skipIf(!hasPdftotext)(
    'writes each cell on its row’s line, amounts against their column’s right edge, text against its left',
    async () => {
      const figs = [figures('EUR', 1_234_567n)];
      // amounts of every width and sign, so that only alignment can put their right edges together
      const lines = linesOf('EUR').map((l, i) => {
        const share = BigInt((i * 7919) % 10 ** (1 + (i % 9))) * (i % 7 === 6 ? -1n : 1n);
        return { ...l, share, fee: BigInt(i * 3), net: share - BigInt(i * 3) };
      });
      const pdf = await pdfOfLines('aligned.pdf', figs, lines);
      const words = [
        ...execFileSync('pdftotext', ['-bbox', pdf, '-'], { encoding: 'utf8' }).matchAll(
          /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)<\/word>/g,
        ),
      ].map((m) => ({ xMin: Number(m[1]), y: Number(m[2]), xMax: Number(m[3]), text: m[4]! }));
      // the operations table's columns (pdf.ts): a cell's text sits 2 pt inside its column's edges
      const orderLeft = 40 + 78 + 2;
      const shareRight = 40 + 78 + 92 + 86 + 58 + 112 + 70 - 2;
      const netRight = 40 + 78 + 92 + 86 + 58 + 112 + 70 + 60 + 84 + 54 + 66 - 2;
      let rows = 0;
      for (const l of lines) {
        const order = words.find((w) => w.text === l.orderId);
        expect(order, String(l.orderId)).toBeDefined();
        const row = words.filter((w) => w.y === order!.y);
        const share = row.find((w) => w.text === formatAmount(l.share, 'EUR'));
        const net = row.filter((w) => w.text === formatAmount(l.net, 'EUR')).at(-1);
        expect(order!.xMin).toBeCloseTo(orderLeft, 0);
        expect(Math.abs(share!.xMax - shareRight), `share of ${l.orderId}`).toBeLessThan(0.5);
        expect(Math.abs(net!.xMax - netRight), `net of ${l.orderId}`).toBeLessThan(0.5);
        rows++;
      }
      expect(rows).toBe(lines.length);
      // the right-aligned headers too, on every page the table runs over
      const headerLines = new Set(words.filter((w) => w.text === 'Order').map((w) => w.y));
      const netHeaders = words.filter((w) => w.text === 'Net' && headerLines.has(w.y));
      expect(netHeaders.length).toBeGreaterThan(1);
      for (const h of netHeaders) expect(Math.abs(h.xMax - netRight)).toBeLessThan(0.5);
    },
  );

  it('formats minor units exactly, negative with a minus sign, by the currency’s decimals', () => {
    expect(formatAmount(123_456_789n, 'EUR')).toBe('1,234,567.89');
    expect(formatAmount(-5n, 'UAH')).toBe('−0.05');
    expect(formatAmount(0n, 'USD')).toBe('0.00');
    expect(formatAmount(2_500n, 'KWD')).toBe('25.000');
    expect(formatAmount(123_400n, 'JPY')).toBe('1,234');
  });
});
