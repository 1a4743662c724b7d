import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/export/i18n/labels';
import { writeStatementPdf } from '../../src/export/statements/pdf';
import {
  figuresDigest,
  plainHeader,
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
} from '../../src/export/statements/figures';

/**
 * The statement PDF broke its pages where a row ran out of room, whatever the row. The reserve balance lines
 * under the schedule were written without looking at the room left: at a page's foot pdfkit opened the next page
 * itself, a page with no footer (a two-page statement numbered "page 1" only), the balance away from its
 * schedule. An Operations total could print alone at the top of a page under a repeated header, away from the
 * rows it adds up. And the footer said "page 3" with no count of pages, so a reader could not tell the statement
 * was whole. Now the last row goes with the total (and the fee not split), the balance stays with the schedule,
 * a heading goes to the next page with its table's header and first row, and every page says "Page N of M".
 */

const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-pdf-breaks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const t = LABELS.en;
const HEADINGS = [t.heldSheet, t.paidOutSheet, t.reserveSheet, t.releasesToCome, t.operationsIn('UAH')];
const HEADERS = [t.order, t.bookedOn, t.heldOn, t.releaseOn, t.date];
const startsWithAny = (line: string, words: readonly string[]) => words.some((w) => line.startsWith(w));

const line = (i: number): StatementLine => ({
  at: new Date(Date.UTC(2024, 2, 1 + (i % 28), 10, i % 60)),
  orderId: `ORD-${i}`,
  paymentId: `pay-${i}`,
  method: 'purchase',
  status: 'success',
  share: 10_000n,
  fee: 200n,
  reserve: 1_000n,
  net: 8_800n,
  eventIds: [],
});

async function statement(reserveRows: number, lines: number, currencies = ['UAH']): Promise<string[]> {
  const fig = (currency: string): StatementFigures => ({
    subMerchantId: 'sm-1',
    subMerchantName: 'Shop',
    currency,
    opening: 0n,
    gross: 10_000n * BigInt(lines),
    refunds: 0n,
    chargebacks: 0n,
    fees: 200n * BigInt(lines),
    reserveHeld: 1_000n * BigInt(lines),
    reserveReleased: 0n,
    netPayable: 8_800n * BigInt(lines),
    operations: lines,
    closing: 8_800n * BigInt(lines),
  });
  const figures = currencies.map(fig);
  const meta: StatementMeta = {
    month: '2024-03',
    timezone: 'UTC',
    position: '1/1',
    figuresSha256: figuresDigest('2024-03', 'UTC', figures),
  };
  const reserve = Array.from({ length: reserveRows }, (_, i) => ({
    heldOn: `2024-03-${String(1 + (i % 28)).padStart(2, '0')}`,
    currency: 'UAH',
    held: 1_000n,
    releaseOn: '2024-06-03',
    // all but the first released in the month: one release to come, so each row moves what follows by one row
    released: i === 0 ? 0n : 1_000n,
  }));
  const source = {
    figures,
    lines: async function* () {
      for (let i = 0; i < lines; i++) yield line(i);
    },
    reserve,
  };
  const pdf = path.join(dir, `s-${reserveRows}-${lines}-${currencies.length}.pdf`);
  await writeStatementPdf(pdf, source, meta, { ...plainHeader(meta), language: 'en' });
  return execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' }).split('\f').slice(0, -1);
}

/** What is wrong with a statement's pages, page by page (an empty list when nothing is). */
function faults(pages: readonly string[]): string[] {
  const found: string[] = [];
  pages.forEach((page, i) => {
    const lines = page
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const footer = lines.findIndex((l) => / · Page \d+ of \d+$/.test(l));
    if (!lines[footer]?.endsWith(`Page ${i + 1} of ${pages.length}`)) found.push(`page ${i + 1}: no "Page N of M"`);
    const body = lines.filter((_, j) => j !== footer);
    const last = body[body.length - 1] ?? '';
    if (startsWithAny(last, HEADINGS) || startsWithAny(last, HEADERS))
      found.push(`page ${i + 1} ends with a heading or a table's header: ${last}`);
    const total = body.findIndex((l) => l.startsWith(t.total));
    if (total > 0 && startsWithAny(body[total - 1]!, HEADERS))
      found.push(`page ${i + 1} starts with a total under its header alone`);
    const balance = body.findIndex((l) => l.startsWith(t.reserveBalance));
    if (balance === 0) found.push(`page ${i + 1} starts with the reserve balance, away from its schedule`);
  });
  return found;
}

describe('review15: the statement PDF breaks its pages as a printed document', () => {
  it('numbers every page and leaves nothing alone at a page’s foot or head, wherever the schedule ends', async () => {
    for (let k = 0; k <= 20; k++) expect(faults(await statement(k, 2)), `${k} reserve rows`).toEqual([]);
    // four balance lines under the schedule
    for (let k = 0; k <= 8; k++)
      expect(faults(await statement(k, 0, ['EUR', 'UAH', 'USD', 'XTS'])), `${k} reserve rows, 4 currencies`).toEqual(
        [],
      );
  });

  it('keeps the operations total with the rows it adds up, however many they are', async () => {
    for (let n = 28; n <= 44; n++) expect(faults(await statement(0, n)), `${n} lines`).toEqual([]);
  });
});
