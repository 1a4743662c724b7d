import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { writeNightlyReportFor, type NightlyReportData } from '../../src/export/nightly/report';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { EventStore } from '../../src/store/types';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, webhook } from '../discrepancies/fixtures';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The nightly report's figures tie out: money by method (an authorisation moves none; refunds and chargebacks
 * negative), a net per source that ties to the journal for the day, the differences between sources; a
 * discrepancy touching several sub-merchants lists them all; fee and split mismatches show each source's
 * value and the difference. (The Sources sheet once added authorisations and refunds into one positive sum.)
 */

let db: TestDatabase;
let store: EventStore;
let data: NightlyReportData;
let wb: ExcelJS.Workbook;
let foundData: NightlyReportData;
let foundWb: ExcelJS.Workbook;
const out = mkdtempSync(path.join(tmpdir(), 'recon-nightly-sources-'));
const OBSERVED = at('2024-05-10T20:00:00Z');
const two = [
  { name: 'Alpha Shop', amount: 59_00n, fee: 1_00n },
  { name: 'Beta Shop', amount: 40_00n, fee: 0n },
];

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  const op = (paymentId: string, method: 'purchase' | 'auth' | 'refund' | 'dispute', amount: bigint, hour: number) => ({
    paymentId,
    method,
    dateTime: at(`2024-05-10T${String(hour).padStart(2, '0')}:00:00Z`),
    amount,
    reportId: 'r1',
    observedAt: OBSERVED,
  });
  await appendAll(store, [
    subMerchant('sm-alpha', 'Alpha Shop'),
    subMerchant('sm-beta', 'Beta Shop'),
    registerRows({ ...op('pay-1', 'purchase', 100_00n, 8), receivers: two }),
    periodRow({ ...op('pay-1', 'purchase', 100_00n, 8), merchantFee: 2_00n }),
    webhook({
      paymentId: 'pay-1',
      processedAt: at('2024-05-10T08:00:00Z'),
      amount: 90_00n,
      fee: 1_00n,
      receivedAt: OBSERVED,
    }),
    registerRows({ ...op('pay-2', 'auth', 50_00n, 9), receivers: [{ name: 'Alpha Shop', amount: 50_00n, fee: 0n }] }),
    registerRows({ ...op('pay-3', 'refund', 30_00n, 10), receivers: [{ name: 'Beta Shop', amount: 30_00n, fee: 0n }] }),
    registerRows({
      ...op('pay-4', 'dispute', 20_00n, 11),
      receivers: [{ name: 'Alpha Shop', amount: 20_00n, fee: 0n }],
    }),
    // shares 40.00 of 50.00
    registerRows({
      ...op('pay-5', 'purchase', 50_00n, 12),
      receivers: [{ name: 'Alpha Shop', amount: 40_00n, fee: 0n }],
    }),
    syncCompleted({
      from: at('2024-05-10T00:00:00Z'),
      to: at('2024-05-11T00:00:00Z'),
      completedAt: at('2024-05-13T00:00:00Z'),
      reportId: 'r1',
    }),
  ]);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections(
      {
        sql: db.sql,
        store,
        log: silentLogger,
        timezone: 'UTC',
        graceHours: 48,
        projections: [reconciliation, journal],
      },
      {},
    );
    if (r.projections.every((p) => p.position === r.head)) break;
  }
  const written = await writeNightlyReportFor(
    { sql: db.sql, store },
    { date: '2024-05-10', timezone: 'UTC', graceHours: 48, outDir: out },
  );
  data = written.data;
  wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(written.file);
  // the discrepancies are found when the window's sync completes, days later: their report is that day's
  const [last] = await db.sql<{ day: string }[]>`
    select to_char(max(detected_at) at time zone 'UTC', 'YYYY-MM-DD') as day from recon.discrepancies`;
  const found = await writeNightlyReportFor(
    { sql: db.sql, store },
    { date: last!.day, timezone: 'UTC', graceHours: 48, outDir: out },
  );
  foundData = found.data;
  foundWb = new ExcelJS.Workbook();
  await foundWb.xlsx.readFile(found.file);
});

afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

const rowsOf = (sheet: string, book: () => ExcelJS.Workbook = () => wb) => {
  const rows: unknown[][] = [];
  book()
    .getWorksheet(sheet)!
    .eachRow((r) => rows.push((r.values as unknown[]).slice(1)));
  return rows;
};

describe('nightly report: Sources', () => {
  it('shows money by method, signed as it moves; an authorisation moves none', () => {
    const register = data.sources.find((s) => s.scope === 'day' && s.source === 'register')!;
    expect(register).toMatchObject({
      sales: 150_00n,
      refunds: -30_00n,
      chargebacks: -20_00n,
      authorised: 50_00n,
      net: 100_00n,
    });
  });

  it('ties each source’s net to the journal for the day, and shows the difference between sources', async () => {
    const [booked] = await db.sql<{ net: bigint }[]>`
      select coalesce(sum(amount), 0)::int8 as net from recon.journal_lines
      where account = 'psp_clearing' and booked_at >= '2024-05-10T00:00:00Z' and booked_at < '2024-05-11T00:00:00Z'`;
    // the journal books the receivers' shares: pay-5's split is 10.00 short of its amount
    expect(booked!.net).toBe(90_00n);
    expect(data.journal).toEqual([
      { scope: 'day', currency: 'UAH', net: 90_00n },
      { scope: 'open window', currency: 'UAH', net: 90_00n },
    ]);
    const sheet = rowsOf('Sources');
    expect(sheet[0]).toEqual([
      'scope',
      'source',
      'currency',
      'operations',
      'successful',
      'sales',
      'refunds',
      'chargebacks',
      'net (sales + refunds + chargebacks)',
      'authorised (moves no money)',
      'merchant fees (successful)',
      'net − register net',
      'net − journal',
    ]);
    expect(sheet.find((r) => r[0] === 'day' && r[1] === 'register')).toEqual([
      'day',
      'register',
      'UAH',
      5,
      5,
      150,
      -30,
      -20,
      100,
      50,
      1,
      0,
      10,
    ]);
    expect(sheet.find((r) => r[0] === 'day' && r[1] === 'period')).toEqual([
      'day',
      'period',
      'UAH',
      1,
      1,
      100,
      0,
      0,
      100,
      0,
      2,
      0,
      10,
    ]);
    expect(sheet.find((r) => r[0] === 'day' && r[1] === 'webhook')?.slice(8)).toEqual([90, 0, 1, -10, 0]);
    // the net column is what its header says, with refunds and chargebacks shown negative
    for (const r of sheet.slice(1).filter((x) => x[1] !== 'journal')) {
      expect(Math.round(((r[5] as number) + (r[6] as number) + (r[7] as number)) * 100)).toBe(
        Math.round((r[8] as number) * 100),
      );
    }
    expect(sheet.find((r) => r[0] === 'day' && r[1] === 'journal')?.slice(0, 9)).toEqual([
      'day',
      'journal',
      'UAH',
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      90,
    ]);
    // the register's net ties to the journal but for what the split mismatches leave out of the shares
    const register = data.sources.find((s) => s.scope === 'day' && s.source === 'register')!;
    const splits = foundData.open
      .filter((d) => d.type === 'split_mismatch')
      .reduce((a, d) => a + (d.difference ?? 0n), 0n);
    expect(register.net + splits).toBe(data.journal!.find((j) => j.scope === 'day')!.net);
  });
});

describe('nightly report: discrepancies', () => {
  it('lists every sub-merchant a discrepancy touches, never "(none)"', () => {
    const counts = rowsOf('Discrepancies', () => foundWb);
    expect(counts.find((r) => r[0] === 'amount_mismatch')?.[1]).toBe('sm-alpha, sm-beta');
    expect(counts.filter((r) => r[1] === '(none)')).toEqual([]);
    const open = rowsOf('Open discrepancies', () => foundWb);
    // by the directory's names, one a line
    expect(open.find((r) => r[0] === 'amount_mismatch')?.[4]).toBe('Alpha Shop\nBeta Shop');
  });

  it('shows each source’s value and the difference of a fee or split mismatch', () => {
    const open = rowsOf('Open discrepancies', () => foundWb);
    const values = rowsOf('Source values', () => foundWb);
    const row = (type: string) => {
      const i = open.findIndex((r) => r[0] === type);
      return [open[i]!.at(-1), values[i]!.at(-1)];
    };
    expect([open[0]!.at(-1), values[0]!.at(-1)]).toEqual(['what differs', 'difference']);
    expect(row('fee_mismatch')).toEqual([
      'merchant fee: register 1.00 UAH, period 2.00 UAH, webhook 1.00 UAH; difference 1.00 UAH',
      1,
    ]);
    expect(row('split_mismatch')).toEqual([
      'receivers’ shares 40.00 UAH, amount 50.00 UAH; difference -10.00 UAH',
      -10,
    ]);
  });
});
