import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ExcelJS from 'exceljs';
import {
  figuresDigest,
  writeStatementWorkbook,
  type StatementFigures,
  type StatementLine,
} from '../src/export/statements/workbooks';
import { DATE_TIME_FORMAT, moneyFormat } from '../src/export/workbook/xlsx';
import { createLogger } from '../src/log';
import { perSecond, sampleRss, timed, type BenchContext, type Figure } from './harness';

/**
 * `npm run bench -- export`: payout statements for 1,000 sub-merchants with 1M operation lines in all,
 * written by the project's writer layer (src/export/statements/workbooks.ts: summary, operations, reserve
 * schedule, exact bigint → number, local dates, formula-safe text, temp-then-rename) beside exceljs's
 * streaming writer writing the same operation rows with no project code (the ceiling), and the peak RSS of
 * the project's run. Rows come from a generator, so no database is needed. Runnable standalone:
 * `node --import tsx bench/export.ts [--quick]`.
 */

const MONTH = '2025-01';
const TZ = 'Europe/Kyiv';
const METHODS = ['purchase', 'purchase', 'purchase', 'capture', 'refund', 'recurrent'] as const;
const MONTH_START = Date.parse('2024-12-31T22:00:00.000Z');

function subMerchantId(i: number): string {
  return `3f0b7c1e-2f57-4a43-9d59-${i.toString(16).padStart(12, '0')}`;
}

/** Line k of sub-merchant i: deterministic, realistic sizes (uuid-like ids, two event ids). */
function line(i: number, k: number, perSub: number): StatementLine {
  const share = BigInt(1000 + ((i * 7919 + k * 104729) % 500_000));
  const method = METHODS[(i + k) % METHODS.length]!;
  const signed = method === 'refund' ? -share : share;
  const fee = share / 40n;
  const reserve = i % 3 === 0 ? share / 20n : 0n;
  return {
    at: new Date(MONTH_START + Math.floor((k * 31 * 86_400_000) / perSub)),
    orderId: `order-${i}-${k}`,
    paymentId: `pay-${(i * 1_000_003 + k).toString(36)}-${k}`,
    method,
    status: 'success',
    share: signed,
    fee,
    reserve,
    net: signed - fee - reserve,
    eventIds: [
      `0a1b2c3d-${i.toString(16).padStart(4, '0')}-5e6f-8a9b-${k.toString(16).padStart(12, '0')}`,
      `1a1b2c3d-${i.toString(16).padStart(4, '0')}-5e6f-8a9b-${k.toString(16).padStart(12, '0')}`,
    ],
  };
}

function figuresFor(i: number, perSub: number): StatementFigures {
  let gross = 0n,
    refunds = 0n,
    fees = 0n,
    reserveHeld = 0n;
  for (let k = 0; k < perSub; k++) {
    const l = line(i, k, perSub);
    if (l.share < 0n) refunds -= l.share;
    else gross += l.share;
    fees += l.fee;
    reserveHeld += l.reserve;
  }
  const netPayable = gross - refunds - fees - reserveHeld;
  const opening = BigInt(i * 1000);
  return {
    subMerchantId: subMerchantId(i),
    subMerchantName: `Sub-merchant ${i}`,
    currency: 'UAH',
    opening,
    gross,
    refunds,
    chargebacks: 0n,
    fees,
    reserveHeld,
    reserveReleased: 0n,
    netPayable,
    closing: opening + netPayable,
    operations: perSub,
  };
}

async function* lines(i: number, perSub: number): AsyncIterable<StatementLine> {
  for (let k = 0; k < perSub; k++) yield line(i, k, perSub);
}

/** The ceiling: exceljs's streaming writer, the same rows as plain cell values, one workbook per sub-merchant. */
export async function ceilingWorkbook(file: string, i: number, perSub: number): Promise<void> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useStyles: true, useSharedStrings: false });
  const money = moneyFormat('UAH');
  const ws = wb.addWorksheet('Operations', { views: [{ state: 'frozen', ySplit: 1 }] });
  ws.columns = [DATE_TIME_FORMAT, '', '', '', '', money, money, money, money, ''].map((numFmt) => ({
    width: 16,
    ...(numFmt ? { style: { numFmt } } : {}),
  }));
  ws.addRow([
    'Date and time',
    'Order',
    'Payment',
    'Method',
    'Status',
    'Share',
    'Fee',
    'Reserve',
    'Net',
    'Event ids',
  ]).commit();
  for (let k = 0; k < perSub; k++) {
    const l = line(i, k, perSub);
    ws.addRow([
      new Date(l.at.getTime() + 7_200_000),
      l.orderId,
      l.paymentId,
      l.method,
      l.status,
      Number(l.share) / 100,
      Number(l.fee) / 100,
      Number(l.reserve) / 100,
      Number(l.net) / 100,
      l.eventIds.join(' '),
    ]).commit();
    if (k % 2000 === 1999) await new Promise((r) => setImmediate(r));
  }
  ws.commit();
  await wb.commit();
}

export async function run(ctx: Pick<BenchContext, 'quick' | 'figure' | 'note'>): Promise<void> {
  // BENCH_EXPORT_SUBS / BENCH_EXPORT_LINES override the sizes (profiling runs)
  const subs = Number(process.env['BENCH_EXPORT_SUBS'] ?? (ctx.quick ? 100 : 1000));
  const perSub = Number(process.env['BENCH_EXPORT_LINES'] ?? (ctx.quick ? 200 : 1000));
  const total = subs * perSub;
  ctx.note(
    `export: ${subs.toLocaleString('en-US')} sub-merchants × ${perSub.toLocaleString('en-US')} lines = ${total.toLocaleString('en-US')} operation lines, one workbook each`,
  );
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-bench-export-'));
  try {
    // Ours and the ceiling alternate workbook by workbook, so that whatever else the machine does weighs on
    // both alike; each side's time is the sum of its own workbooks.
    const only = process.env['BENCH_EXPORT_ONLY'];
    global.gc?.();
    const rss = sampleRss(10);
    let oursMs = 0;
    let ceilingMs = 0;
    for (let i = 0; i < subs; i++) {
      if (only !== 'ceiling') {
        const f = figuresFor(i, perSub);
        const meta = { month: MONTH, timezone: TZ, position: '1/1', figuresSha256: figuresDigest(MONTH, TZ, [f]) };
        const file = path.join(dir, `ours-${i}.xlsx`);
        oursMs += (
          await timed(() =>
            writeStatementWorkbook(file, { figures: [f], lines: () => lines(i, perSub), reserve: [] }, meta),
          )
        ).ms;
        rmSync(file);
      }
      if (only !== 'ours') {
        const file = path.join(dir, `ceiling-${i}.xlsx`);
        ceilingMs += (await timed(() => ceilingWorkbook(file, i, perSub))).ms;
        rmSync(file);
      }
    }
    const peak = rss.stop();
    const oursRate = perSecond(total, oursMs);
    const ceilingRate = perSecond(total, ceilingMs);
    ctx.figure({
      name: 'statements written (rows/s)',
      value: oursRate,
      unit: 'rows/s',
      reference: { name: 'exceljs streaming writer alone', value: ceilingRate },
      target: { minRatio: 0.7, text: '>= 0.70 of exceljs alone' },
    });
    ctx.figure({
      name: 'statements: peak RSS (both writers)',
      value: peak / 1024 / 1024,
      unit: 'MB',
      target: { max: 300, text: '< 300 MB' },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const log = createLogger({ level: 'info' });
  const figures: Figure[] = [];
  await run({
    quick: process.argv.includes('--quick'),
    note: (t) => process.stdout.write(`${t}\n`),
    figure: (f) => {
      figures.push(f);
      const ratio = f.reference
        ? ` (${f.reference.name}: ${Math.round(f.reference.value).toLocaleString('en-US')}; ratio ${(f.value / f.reference.value).toFixed(2)})`
        : '';
      process.stdout.write(
        `${f.name}: ${Math.round(f.value).toLocaleString('en-US')} ${f.unit}${ratio}${f.target?.text ? ` target ${f.target.text}` : ''}\n`,
      );
    },
  });
  log.debug('done', { figures: figures.length });
}
