import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  nightlyReportData,
  previousDay,
  previousMonth,
  reportPeriods,
  writeNightlyReport,
  writeNightlyReportFor,
  type NightlyReportData,
} from '../../src/export/nightly/report';
import { moneyFormat } from '../../src/export/workbook/xlsx';
import { runProjections } from '../../src/projector/runner';
import { silentLogger } from '../../src/log';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { appendChunks, scenarioEvents, scenarioFor } from '../../fixtures/scenario-events';

const TZ = 'Europe/Kyiv';
let db: TestDatabase;
let store: EventStore;
const out = mkdtempSync(path.join(tmpdir(), 'recon-nightly-'));

async function open(file: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb;
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const scenario = scenarioFor({ seed: 77, payments: 200, month: '2025-01', timezone: TZ, subMerchants: 5 });
  for (const c of appendChunks(scenarioEvents(scenario), 500)) await store.appendMany(c);
  await runProjections({ sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: 48 });
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

describe('nightly report', () => {
  it('computes the day and open window in the business zone', () => {
    const p = reportPeriods('2025-03-30', TZ, 48);
    expect(p.day.from.toISOString()).toBe('2025-03-29T22:00:00.000Z');
    expect(p.day.to.toISOString()).toBe('2025-03-30T21:00:00.000Z'); // 23-hour day: DST starts
    expect(p.openWindow.from.toISOString()).toBe('2025-03-28T21:00:00.000Z');
    expect(previousDay(new Date('2025-04-01T00:30:00Z'), TZ)).toBe('2025-03-31');
    expect(previousMonth(new Date('2025-04-01T03:00:00Z'), TZ)).toBe('2025-03');
    expect(() => reportPeriods('2025-3-1', TZ, 48)).toThrow(RangeError);
  });

  it('matches the reconciliation views, and reads back cell by cell', async () => {
    const date = '2025-01-15';
    const { file, data } = await writeNightlyReportFor(
      { sql: db.sql, store },
      { date, timezone: TZ, graceHours: 48, outDir: out, facts: [['Job: healing requests', 3]] },
    );
    expect(path.basename(file)).toBe('nightly-2025-01-15.xlsx');

    // independent count from the operations view, in JS
    const { from, to } = reportPeriods(date, TZ, 48).day;
    const ops = await db.sql<
      {
        occurred_at: Date;
        register_present: boolean;
        method: string;
        register_status: string | null;
        register_amount: bigint | null;
        register_currency: string | null;
        period_present: boolean;
        webhook_present: boolean;
        operation_key: string;
      }[]
    >`
      select occurred_at, method, register_present, register_status, register_amount, register_currency, period_present, webhook_present, operation_key from recon.operations`;
    const dayOps = ops.filter((o) => o.occurred_at >= from && o.occurred_at < to);
    expect(dayOps.length).toBeGreaterThan(0);
    const dayMatching = data.matching.find((m) => m.scope === 'day')!;
    expect(dayMatching.operations).toBe(dayOps.length);
    expect(dayMatching.inAllThree).toBe(
      dayOps.filter((o) => o.register_present && o.period_present && o.webhook_present).length,
    );
    expect(dayMatching.matched + dayMatching.unmatched).toBe(dayOps.length);
    const register = dayOps.filter((o) => o.register_present);
    // money as it moves: sales in, refunds and chargebacks out, an authorisation not at all
    const sign: Record<string, bigint> = { purchase: 1n, capture: 1n, recurrent: 1n, refund: -1n, dispute: -1n };
    const byCurrency = new Map<string, { n: number; net: bigint }>();
    for (const o of register) {
      const t = byCurrency.get(o.register_currency ?? '') ?? { n: 0, net: 0n };
      t.n++;
      if (o.register_status === 'success') t.net += (sign[o.method] ?? 0n) * (o.register_amount ?? 0n);
      byCurrency.set(o.register_currency ?? '', t);
    }
    const reg = data.sources.filter((s) => s.scope === 'day' && s.source === 'register');
    expect(new Map(reg.map((s) => [s.currency, { n: s.operations, net: s.net }]))).toEqual(byCurrency);

    // open at a day's end, counted in JS from each discrepancy's times (every view read as one): from when it
    // arose (the operation's time), until resolved or accepted; one found after the day and resolved since
    // never stood on it
    const times = await db.sql<{ s: Date | null; d: Date | null; r: Date | null; a: Date | null }[]>`
      select coalesce(occurred_at, detected_at) as s, coalesce(detected_at, occurred_at) as d, resolved_at as r,
        accepted_at as a from recon.discrepancies
      union all select coalesce(occurred_at, detected_at), coalesce(detected_at, occurred_at), resolved_at, accepted_at
        from recon.order_discrepancies`;
    const openAt = (end: Date) =>
      times.filter((t) => t.s !== null && t.s < end && !(t.r && (t.r < end || t.d! >= end)) && !(t.a && t.a < end))
        .length;
    expect(data.open.length).toBe(openAt(to));
    expect(data.sources.some((x) => x.scope === 'open window')).toBe(true);
    expect(data.discrepancies.reduce((a, d) => a + d.open, 0)).toBe(openAt(to));
    // the month's discrepancies are found when its windows are synced, after the grace: that day's report lists them
    const lastFound = times.reduce((m, t) => (t.d && t.d > m ? t.d : m), new Date(0));
    const foundDay = DateTime.fromJSDate(lastFound, { zone: TZ }).toISODate()!;
    const found = await writeNightlyReportFor(
      { sql: db.sql, store },
      { date: foundDay, timezone: TZ, graceHours: 48, outDir: out },
    );
    const foundEnd = reportPeriods(foundDay, TZ, 48).day.to;
    expect(found.data.open.length).toBe(openAt(foundEnd));
    expect(found.data.open.length).toBeGreaterThan(0);
    expect(found.data.discrepancies.reduce((a, d) => a + d.open, 0)).toBe(openAt(foundEnd));

    const wb = await open(file);
    expect(wb.worksheets.map((w) => w.name)).toEqual([
      'Summary',
      'Ageing',
      'In doubt',
      'Month to date',
      'Sources',
      'Matching',
      'Discrepancies',
      'Open discrepancies',
      'Source values',
      'Cash',
      'Job',
      'Windows synced',
      'Orders',
      'Fee differences',
      'Decisions',
    ]);
    const s = wb.getWorksheet('Sources')!;
    data.sources.forEach((x, i) => {
      const r = s.getRow(i + 2);
      expect((r.values as unknown[]).slice(1)).toEqual([
        x.scope,
        x.source,
        x.currency,
        x.operations,
        x.successful,
        ...[x.sales, x.refunds, x.chargebacks, x.net, x.authorised, x.fees].map((v) => Number(v) / 100),
        ((r) => (r ? Number(x.net - r.net) / 100 : null))(
          data.sources.find((r) => r.source === 'register' && r.currency === x.currency && r.scope === x.scope),
        ),
        Number(x.net - (data.journal!.find((j) => j.currency === x.currency && j.scope === x.scope)?.net ?? 0n)) / 100,
      ]);
      expect(r.getCell(6).numFmt).toBe(moneyFormat(x.currency));
    });
    const m = wb.getWorksheet('Matching')!;
    data.matching.forEach((x, i) => {
      expect((m.getRow(i + 2).values as unknown[]).slice(1)).toEqual([
        x.scope,
        x.operations,
        x.matched,
        x.unmatched,
        x.inAllThree,
        x.noRegister,
        x.noPeriod,
        x.noWebhook,
        x.withOpenDiscrepancy,
      ]);
    });
    const d = wb.getWorksheet('Discrepancies')!;
    data.discrepancies.forEach((x, i) => {
      expect((d.getRow(i + 2).values as unknown[]).slice(1)).toEqual([
        x.type,
        x.subMerchantId ?? '(none)',
        x.opened,
        x.resolved,
        x.accepted,
        x.open,
      ]);
    });
    const foundWb = await open(found.file);
    const o = foundWb.getWorksheet('Open discrepancies')!;
    const sv = foundWb.getWorksheet('Source values')!;
    found.data.open.forEach((x, i) => {
      const r = o.getRow(i + 2);
      expect(r.getCell(1).value).toBe(x.type);
      // the discrepancy's id, then its payment and order, one a line
      expect(String(r.getCell(2).value).split('\n')).toEqual([x.id, x.paymentId ?? '–', x.orderId ?? '–']);
      expect(r.getCell(4).value).toBe(x.ageDays);
      const s = sv.getRow(i + 2);
      expect([s.getCell(1).value, s.getCell(2).value]).toEqual([x.type, x.id]);
      const reg = x.values.register;
      expect(s.getCell(6).value).toBe(reg ? reg.status : '(absent)');
      expect(s.getCell(7).value ?? null).toBe(reg?.amount != null ? Number(reg.amount) / 100 : null);
      if (x.detectedAt) {
        const l = DateTime.fromJSDate(x.detectedAt, { zone: TZ });
        expect(r.getCell(3).value).toEqual(
          new Date(Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second, l.millisecond)),
        );
      }
    });
    const job = wb.getWorksheet('Job')!;
    const facts = new Map(
      job
        .getSheetValues()
        .slice(2)
        .filter(Array.isArray)
        .map((r) => [r[1], r[2]]),
    );
    expect(facts.get('Business day')).toBe('2025-01-15 (Europe/Kyiv)');
    expect(facts.get('Job: healing requests')).toBe(3);
    expect(facts.get('Windows synced')).toBe(data.windows.length);
    // no window synced that day: said in words, not as '- (a placeholder starting like a formula got an apostrophe)
    if (data.windows.length === 0) expect(facts.get('Register report ids')).toBe('(none)');
    else expect(String(facts.get('Register report ids'))).not.toMatch(/^'/);
  });

  it('writes formula-looking values as inert text', async () => {
    const data: NightlyReportData = {
      date: '2025-01-01',
      timezone: 'UTC',
      ...reportPeriods('2025-01-01', 'UTC', 48),
      sources: [],
      matching: [],
      discrepancies: [],
      open: [
        {
          id: 'x',
          type: 'amount_mismatch',
          detectedAt: null,
          occurredAt: null,
          posId: 'p',
          orderId: '=cmd|"/c calc"!A1',
          paymentId: '@x',
          method: 'purchase',
          subMerchantId: null,
          receiverName: '+name',
          currency: 'EUR',
          values: {
            register: { status: 'success', amount: 1000n, currency: 'EUR' },
            period: null,
            webhook: { status: 'success', amount: 999n, currency: 'EUR' },
          },
          evidence: 2,
        },
      ],
      windows: [],
      facts: [['=1+1', '-2']],
    };
    const file = path.join(out, 'inject.xlsx');
    await writeNightlyReport(file, data);
    const wb = await open(file);
    const o = wb.getWorksheet('Open discrepancies')!;
    // the payment and order follow the id in one cell: text that starts with the id, never a formula
    expect(o.getCell('B2').type).toBe(ExcelJS.ValueType.String);
    expect(o.getCell('B2').value).toBe('x\n@x\n=cmd|"/c calc"!A1');
    const sv = wb.getWorksheet('Source values')!;
    expect(sv.getCell('E2').type).toBe(ExcelJS.ValueType.String);
    expect(sv.getCell('E2').value).toBe("'+name");
    expect([sv.getCell('G2').value, sv.getCell('H2').value, sv.getCell('K2').value]).toEqual([10, '(absent)', 9.99]);
    const job = wb.getWorksheet('Job')!;
    expect([job.getCell('A4').value, job.getCell('B4').value]).toEqual(["'=1+1", "'-2"]);
  });

  it('asks for the projections when the views are missing', async () => {
    const empty = await createTestDatabase();
    try {
      await expect(
        nightlyReportData(
          { sql: empty.sql, store: createPostgresEventStore(empty.sql) },
          { date: '2025-01-01', timezone: 'UTC', graceHours: 48 },
        ),
      ).rejects.toThrow(/recon project/);
    } finally {
      await empty.drop();
    }
  });
});
