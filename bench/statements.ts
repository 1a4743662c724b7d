import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import {
  figuresDigest,
  plainHeader,
  type StatementFigures,
  type StatementLine,
  type StatementMeta,
} from '../src/export/statements/figures';
import { issueStatements } from '../src/export/statements/issue';
import { writeStatementPdf } from '../src/export/statements/pdf';
import { silentLogger } from '../src/log';
import { loadProjections, runProjections } from '../src/projector/runner';
import { createPostgresEventStore } from '../src/store/postgres';
import { scenarioEvents, scenarioFor } from '../fixtures/scenario-events';
import { ceilingWorkbook } from './export';
import { perSecond, sampleRss, timed, type BenchContext } from './harness';

/**
 * `npm run bench -- statements`: a month's statements issued through recon's own path (the journal at its
 * checkpoint, each line's payment method and fee parts read from the payments' recorded events, workbook with
 * its Audit sheet, PDF, the Payouts index, the run recorded), at about 10k statement lines and, unless
 * `--quick`, 100k (BENCH_STATEMENT_LINES="10000,100000" sets the sizes). The sandbox scenario's events (register
 * rows, period records, webhooks) are appended in bulk and the journal built first; only the issue is timed,
 * beside two references measured in the same run, just before and just after it (their mean, so that the load of
 * a shared machine weighs on both alike): exceljs's streaming writer alone writing as many plain rows
 * (bench/export.ts's ceiling) and pdfkit alone writing as many rows of ten cells. With both sizes it prints the
 * growth from 10k to 100k lines: the time per line at 100k over the time per line at 10k, each beside its
 * reference (1.0 is linear). First, the statement PDF alone at the smaller size (no database) beside pdfkit alone.
 */

const MONTH = '2025-01';
const TZ = 'Europe/Kyiv';
// the scenario books about 2.5 statement lines a payment (a line per receiver, refunds, captures)
const LINES_PER_PAYMENT = 2.5;

const require = createRequire(import.meta.url);
const FONT = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf', 'DejaVuSans.ttf');

/** pdfkit alone: `rows` table rows of ten short cells (a date, an id, amounts) on A4 landscape pages. */
async function pdfkitAlone(file: string, rows: number): Promise<void> {
  const doc = new PDFDocument({ size: 'A4', layout: 'landscape', margin: 40 });
  doc.registerFont('regular', FONT);
  const out = createWriteStream(file);
  const done = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  doc.pipe(out);
  doc.font('regular').fontSize(8);
  let y = 40;
  for (let k = 0; k < rows; k++) {
    if (y > 540) {
      doc.addPage();
      y = 40;
    }
    const cells = [
      `2025-01-${String(1 + (k % 28)).padStart(2, '0')} ${String(k % 24).padStart(2, '0')}:${String(k % 60).padStart(2, '0')}`,
      `order-${k}`,
      'purchase',
      'success',
      'card, visa',
      ...[k * 101, k * 3, k, k * 7, k * 90].map(
        (v) => `${Math.floor(v / 100).toLocaleString('en-US')}.${String(v % 100).padStart(2, '0')}`,
      ),
    ];
    cells.forEach((c, i) => {
      doc.text(c, 40 + i * 76, y, { width: 72, lineBreak: false });
    });
    y += 13;
    if (k % 2000 === 1999) await new Promise((r) => setImmediate(r));
  }
  doc.end();
  await done;
}

/** `rows` statement lines of every kind: amounts of every width and sign, fee parts, ways of paying, minutes. */
function pdfLines(rows: number): StatementLine[] {
  return Array.from({ length: rows }, (_, i) => {
    const share = BigInt((i * 7919) % 10 ** (3 + (i % 5))) * (i % 9 === 8 ? -1n : 1n);
    const fee = BigInt((i * 37) % 5_000);
    const reserve = i % 4 === 0 ? 0n : BigInt((i * 13) % 900);
    return {
      at: new Date(Date.UTC(2025, 0, 1 + (i % 31), i % 24, (i * 7) % 60)),
      orderId: `order-${i.toString(36)}`,
      paymentId: `pay-${i}`,
      method: share < 0n ? 'refund' : 'purchase',
      status: 'success',
      share,
      fee,
      reserve,
      net: share - fee - reserve,
      eventIds: [],
      paidWith: i % 3 ? { payway: 'card', scheme: i % 2 ? 'visa' : 'mastercard' } : null,
      feeParts: i % 5 === 0 ? { fixed: fee / 3n, percent: fee - fee / 3n } : null,
    };
  });
}

/**
 * The statement PDF alone (writeStatementPdf, no database): `rows` operation lines beside pdfkit alone writing
 * as many rows, so that the PDF's own cost is seen apart from the reads and the workbook.
 */
async function pdfAlone(ctx: BenchContext, rows: number): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-bench-statement-pdf-'));
  try {
    const lines = pdfLines(rows);
    const figures: StatementFigures[] = [
      {
        subMerchantId: 'sm-bench',
        subMerchantName: 'Квітка Flowers ТОВ',
        currency: 'EUR',
        ...{ opening: 0n, gross: 0n, refunds: 0n, chargebacks: 0n, fees: 0n, reserveHeld: 0n, reserveReleased: 0n },
        ...{ netPayable: 0n, closing: 0n, operations: rows },
      },
    ];
    const meta: StatementMeta = {
      month: MONTH,
      timezone: TZ,
      position: '1/1',
      figuresSha256: figuresDigest(MONTH, TZ, figures),
    };
    const source = {
      figures,
      lines: async function* () {
        yield* lines;
      },
      reserve: [],
    };
    const r = await referenceMs(
      () => pdfkitAlone(path.join(dir, 'pdfkit.pdf'), rows),
      () => writeStatementPdf(path.join(dir, 'statement.pdf'), source, meta, plainHeader(meta)),
    );
    ctx.figure({
      name: `statement PDF alone, ${Math.round(rows / 1000)}k lines`,
      value: perSecond(rows, r.measured.ms),
      unit: 'lines/s',
      reference: { name: 'pdfkit alone (rows of ten cells)', value: perSecond(rows, r.ms) },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A reference's time: the mean of a run before and a run after the measured one. */
async function referenceMs<T>(run: () => Promise<void>, around: () => Promise<T>) {
  const before = await timed(run);
  const measured = await timed(around);
  const after = await timed(run);
  return { ms: (before.ms + after.ms) / 2, measured };
}

interface SizeResult {
  readonly lines: number;
  readonly ms: number;
  readonly exceljsMs: number;
  readonly pdfkitMs: number;
}

async function oneSize(ctx: BenchContext, lines: number): Promise<SizeResult> {
  const payments = Math.round(lines / LINES_PER_PAYMENT);
  const db = await ctx.createDatabase({ max: 10 });
  const store = createPostgresEventStore(db.sql);
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-bench-statements-'));
  try {
    const scenario = scenarioFor({ seed: 26, payments, month: MONTH, timezone: TZ, subMerchants: 4 });
    const seeded = await timed(async () => {
      await store.appendBulk(
        (async function* () {
          let batch = [];
          for (const k of scenarioEvents(scenario)) {
            batch.push(k);
            if (batch.length >= 2000) {
              yield batch;
              batch = [];
            }
          }
          if (batch.length) yield batch;
        })(),
      );
      const journal = (await loadProjections()).filter((p) => p.name === 'journal');
      await runProjections({
        sql: db.sql,
        store,
        log: silentLogger,
        timezone: TZ,
        graceHours: 48,
        projections: journal,
      });
    });
    global.gc?.();
    const rss = sampleRss(20);
    // as many rows as the scenario books lines (about LINES_PER_PAYMENT a payment)
    const rows = Math.round(payments * LINES_PER_PAYMENT);
    let pdfkitMs = 0;
    const excel = await referenceMs(
      () => ceilingWorkbook(path.join(dir, 'ceiling.xlsx'), 0, rows),
      async () => {
        const p = await referenceMs(
          () => pdfkitAlone(path.join(dir, 'pdfkit.pdf'), rows),
          () =>
            issueStatements(
              { sql: db.sql, store, log: silentLogger, timezone: TZ },
              { month: MONTH, outDir: dir, now: new Date('2025-03-01T00:00:00Z') },
            ),
        );
        pdfkitMs = p.ms;
        return p.measured;
      },
    );
    const peak = rss.stop();
    // the run itself, timed inside both references' before and after
    const issuedMs = excel.measured.result.ms;
    const r = excel.measured.result.result;
    // per line: the references wrote `rows`, the run wrote r.lines
    const exceljsMs = (excel.ms * r.lines) / rows;
    const pdfMs = (pdfkitMs * r.lines) / rows;
    ctx.note(
      `statements: ${payments.toLocaleString('en-US')} payments → ${r.lines.toLocaleString('en-US')} lines in ${r.statements} statements ` +
        `(seeded and journal built in ${(seeded.ms / 1000).toFixed(1)} s; issued in ${(issuedMs / 1000).toFixed(1)} s; ` +
        `as many rows: exceljs alone ${(exceljsMs / 1000).toFixed(1)} s, pdfkit alone ${(pdfMs / 1000).toFixed(1)} s)`,
    );
    const size = r.lines >= 1000 ? `${Math.round(r.lines / 1000)}k` : String(r.lines);
    ctx.figure({
      name: `statements issued, ${size} lines (lines/s, workbook + PDF + details)`,
      value: perSecond(r.lines, issuedMs),
      unit: 'lines/s',
      reference: { name: 'exceljs streaming writer alone', value: perSecond(r.lines, exceljsMs) },
      target: { minRatio: 0.7, text: '>= 0.70 of exceljs alone' },
    });
    ctx.figure({
      name: `statements issued, ${size} lines, beside pdfkit alone`,
      value: perSecond(r.lines, issuedMs),
      unit: 'lines/s',
      reference: { name: 'pdfkit alone (rows of ten cells)', value: perSecond(r.lines, pdfMs) },
    });
    ctx.figure({ name: `statements issued, ${size} lines: peak RSS`, value: peak / 1024 / 1024, unit: 'MB' });
    return { lines: r.lines, ms: issuedMs, exceljsMs, pdfkitMs: pdfMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await store.close();
  }
}

export async function run(ctx: BenchContext): Promise<void> {
  const sizes = (process.env['BENCH_STATEMENT_LINES'] ?? (ctx.quick ? '10000' : '10000,100000')).split(',').map(Number);
  await pdfAlone(ctx, sizes[0] ?? 10_000);
  const results: SizeResult[] = [];
  for (const lines of sizes) results.push(await oneSize(ctx, lines));
  const [small, large] = [results[0], results.at(-1)];
  if (!small || !large || large === small) return;
  // time per line at the larger size over the time per line at the smaller: 1.0 grows linearly
  const perLine = (r: SizeResult, ms: number) => ms / r.lines;
  const growth = (ms: (r: SizeResult) => number) => perLine(large, ms(large)) / perLine(small, ms(small));
  ctx.figure({
    name: `statements: time per line, ${Math.round(large.lines / 1000)}k over ${Math.round(small.lines / 1000)}k lines`,
    value: growth((r) => r.ms),
    unit: '×',
    reference: { name: 'exceljs alone, the same growth', value: growth((r) => r.exceljsMs) },
    target: { max: 1.1, text: '<= 1.1 (linear)' },
  });
}
