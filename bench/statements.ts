import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issueStatements } from '../src/export/statements/issue';
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
 * beside exceljs's streaming writer alone writing as many plain rows in the same run (bench/export.ts's ceiling).
 */

const MONTH = '2025-01';
const TZ = 'Europe/Kyiv';
// the scenario books about 2.5 statement lines a payment (a line per receiver, refunds, captures)
const LINES_PER_PAYMENT = 2.5;

async function oneSize(ctx: BenchContext, lines: number): Promise<void> {
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
    const issued = await timed(() =>
      issueStatements(
        { sql: db.sql, store, log: silentLogger, timezone: TZ },
        { month: MONTH, outDir: dir, now: new Date('2025-03-01T00:00:00Z') },
      ),
    );
    const peak = rss.stop();
    const r = issued.result;
    // the reference: as many rows through exceljs alone, now, under the same load
    const ceiling = await timed(() => ceilingWorkbook(path.join(dir, 'ceiling.xlsx'), 0, r.lines));
    ctx.note(
      `statements: ${payments.toLocaleString('en-US')} payments → ${r.lines.toLocaleString('en-US')} lines in ${r.statements} statements ` +
        `(seeded and journal built in ${(seeded.ms / 1000).toFixed(1)} s; issued in ${(issued.ms / 1000).toFixed(1)} s; exceljs alone ${(ceiling.ms / 1000).toFixed(1)} s)`,
    );
    const size = r.lines >= 1000 ? `${Math.round(r.lines / 1000)}k` : String(r.lines);
    ctx.figure({
      name: `statements issued, ${size} lines (lines/s, workbook + PDF + details)`,
      value: perSecond(r.lines, issued.ms),
      unit: 'lines/s',
      reference: { name: 'exceljs streaming writer alone', value: perSecond(r.lines, ceiling.ms) },
      target: { minRatio: 0.7, text: '>= 0.70 of exceljs alone' },
    });
    ctx.figure({ name: `statements issued, ${size} lines: peak RSS`, value: peak / 1024 / 1024, unit: 'MB' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await store.close();
  }
}

export async function run(ctx: BenchContext): Promise<void> {
  const sizes = (process.env['BENCH_STATEMENT_LINES'] ?? (ctx.quick ? '10000' : '10000,100000')).split(',').map(Number);
  for (const lines of sizes) await oneSize(ctx, lines);
}
