import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGE_BUCKETS, openOnDayFrom } from '../../src/export/nightly/open';
import { writeNightlyReportFor } from '../../src/export/nightly/report';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { createPostgresEventStore } from '../../src/store/postgres';
import type { AppendRequest, EventStore } from '../../src/store/types';
import {
  appendAll,
  discrepancies,
  periodRow,
  project,
  registerRows,
  subMerchant,
  syncCompleted,
  webhook,
  type Receiver,
} from '../discrepancies/fixtures';
import { reconEnv } from '../../fixtures/psp-env';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The nightly report's view of the past, built from events: discrepancies detected, resolved and accepted on
 * chosen business days of a non-UTC zone (Europe/Kyiv, across the spring DST change of 2024-03-31), then the
 * report of every day from before the first to well after the last checked against what the history says
 * was open at that day's end: the set, the ageing buckets, the money in doubt per currency and sub-merchant,
 * the oldest item, the month to date.
 */

const TZ = 'Europe/Kyiv';
const GRACE = 48;
let db: TestDatabase;
let store: EventStore;
const out = mkdtempSync(path.join(tmpdir(), 'recon-nightly-history-'));

/** A local time in the business zone as an ISO instant. */
const local = (day: string, hhmm: string) => DateTime.fromISO(`${day}T${hhmm}`, { zone: TZ }).toUTC().toISO()!;
const dayOf = (iso: string | Date) =>
  DateTime.fromJSDate(typeof iso === 'string' ? new Date(iso) : iso, { zone: TZ }).toISODate()!;

interface Payment {
  readonly id: string;
  readonly amount: bigint;
  readonly currency: string;
  readonly receivers: Receiver[];
  /** the business day of the operation (09:00 local) */
  readonly day: string;
  readonly webhookAmount?: bigint;
  readonly webhookStatus?: 'success' | 'failure';
}

/** One payment seen by all three sources an hour after it, the webhook possibly disagreeing. */
function payment(p: Payment): AppendRequest[] {
  const dateTime = local(p.day, '09:00');
  const seen = local(p.day, '10:00');
  const common = { paymentId: p.id, dateTime, amount: p.amount, currency: p.currency, reportId: `rep-${p.day}` };
  return [
    registerRows({ ...common, receivers: p.receivers, observedAt: seen }),
    periodRow({ ...common, merchantFee: 0n, observedAt: seen }),
    webhook({
      paymentId: p.id,
      processedAt: dateTime,
      amount: p.webhookAmount ?? p.amount,
      fee: 0n,
      currency: p.currency,
      status: p.webhookStatus ?? 'success',
      receivedAt: seen,
    }),
  ];
}

/** The window of a business day, its sync completed at `completed`: the clock that judges what is past the grace. */
const windowOf = (day: string, completed: string) =>
  syncCompleted({
    from: local(day, '00:00'),
    to: DateTime.fromISO(day, { zone: TZ }).plus({ days: 1 }).toUTC().toISO()!,
    completedAt: completed,
    reportId: `rep-${day}`,
  });

const alpha = (amount: bigint): Receiver[] => [{ name: 'Alpha Shop', amount, fee: 0n }];
const beta = (amount: bigint): Receiver[] => [{ name: 'Beta Store', amount, fee: 0n }];
const P = {
  amount: {
    id: 'pay-amount',
    amount: 100_00n,
    currency: 'UAH',
    receivers: [...alpha(60_00n), ...beta(40_00n)],
    day: '2024-03-20',
    webhookAmount: 99_00n,
  },
  status: {
    id: 'pay-status',
    amount: 50_00n,
    currency: 'EUR',
    receivers: alpha(50_00n),
    day: '2024-03-20',
    webhookStatus: 'failure',
  },
  unknown: {
    id: 'pay-unknown',
    amount: 40_00n,
    currency: 'UAH',
    receivers: [{ name: 'Gamma Goods', amount: 40_00n, fee: 0n }],
    day: '2024-03-20',
  },
  // seen on the 28th; the grace (48 h) runs out at 09:00 on the 30th, and the next clock is 00:30 on the 31st,
  // the night the clocks go forward (22:30 UTC on the 30th)
  dst: {
    id: 'pay-dst',
    amount: 30_00n,
    currency: 'UAH',
    receivers: alpha(30_00n),
    day: '2024-03-28',
    webhookAmount: 31_00n,
  },
  may: {
    id: 'pay-may',
    amount: 20_00n,
    currency: 'EUR',
    receivers: beta(20_00n),
    day: '2024-04-29',
    webhookStatus: 'failure',
  },
} satisfies Record<string, Payment>;

/** What happened, in business days: the history the events below write, and the expectations' only source. */
interface Planned {
  readonly payment: Payment;
  readonly type: string;
  readonly detected: string;
  readonly resolved?: string;
  readonly accepted?: string;
  readonly subMerchants: readonly string[];
}
const DETECTED = '2024-03-22';
const plan: Planned[] = [
  { payment: P.amount, type: 'amount_mismatch', detected: DETECTED, subMerchants: ['sm-alpha', 'sm-beta'] },
  {
    payment: P.status,
    type: 'status_mismatch',
    detected: DETECTED,
    accepted: '2024-03-30',
    subMerchants: ['sm-alpha'],
  },
  { payment: P.unknown, type: 'unknown_sub_merchant', detected: DETECTED, resolved: '2024-03-26', subMerchants: [] },
  { payment: P.dst, type: 'amount_mismatch', detected: '2024-03-31', subMerchants: ['sm-alpha'] },
  { payment: P.may, type: 'status_mismatch', detected: '2024-05-01', subMerchants: ['sm-beta'] },
];
/** The money in doubt: the payment's largest stated amount (the whole payment is held while in doubt). */
const doubt = (p: Payment) =>
  p.webhookAmount !== undefined && p.webhookAmount > p.amount ? p.webhookAmount : p.amount;

beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db.sql);
  await appendAll(store, [subMerchant('sm-alpha', 'Alpha Shop'), subMerchant('sm-beta', 'Beta Store')]);
  await appendAll(store, [...payment(P.amount), ...payment(P.status), ...payment(P.unknown)]);
  await appendAll(store, [windowOf('2024-03-21', local(DETECTED, '10:00'))]);
  await project(db.sql, store, 1000, GRACE);
  // a clock on the 26th, then the unknown receiver is registered: resolved on the 26th
  await appendAll(store, [
    windowOf('2024-03-25', local('2024-03-26', '10:00')),
    subMerchant('sm-gamma', 'Gamma Goods'),
  ]);
  await project(db.sql, store, 1000, GRACE);
  const status = (await discrepancies(db.sql)).find((d) => d.type === 'status_mismatch')!;
  const accepted = await acceptDiscrepancy(
    { sql: db.sql, store },
    {
      id: status.id,
      note: 'refund confirmed by the PSP',
      by: 'Olena K.',
      at: new Date(local('2024-03-30', '12:00')),
      decision: 'pay',
    },
  );
  expect(accepted.ok).toBe(true);
  await appendAll(store, [...payment(P.dst), windowOf('2024-03-30', local('2024-03-31', '00:30'))]);
  await appendAll(store, [...payment(P.may), windowOf('2024-04-30', local('2024-05-01', '10:00'))]);
  await project(db.sql, store, 1000, GRACE);
  // every other read model too (the directory's names come from the journal's view)
  await runProjections({ sql: db.sql, store, log: silentLogger, timezone: TZ, graceHours: GRACE });
});

afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await db?.drop();
});

/** Every business day from `from` to `to`, in order. */
function daysFrom(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = DateTime.fromISO(from, { zone: 'utc' }); d.toISODate()! <= to; d = d.plus({ days: 1 }))
    out.push(d.toISODate()!);
  return out;
}
const DAYS = daysFrom('2024-03-19', '2024-05-06');
/** Days between two business days, counted on the list of days. */
const daysBetween = (a: string, b: string) => DAYS.indexOf(b) - DAYS.indexOf(a);
const bucketFor = (age: number) =>
  age <= 2 ? '0–2 days' : age <= 7 ? '3–7 days' : age <= 30 ? '8–30 days' : 'over 30 days';
/**
 * Open at a day's end: from the payment's day (when the difference arose, not when recon found it), until
 * resolved or accepted; one found after the day and resolved since never stood on it.
 */
const openOn = (day: string) =>
  plan.filter(
    (x) =>
      x.payment.day <= day &&
      !(x.resolved && x.resolved <= day) &&
      !(x.accepted && x.accepted <= day) &&
      !(x.resolved && x.detected > day),
  );
/** New in the month up to the day: arisen in it, unless found after the day and resolved since. */
const aroseBy = (x: Planned, day: string) => !(x.resolved && x.detected > day);

describe('nightly report of a past day', () => {
  it('the events wrote the history planned: detection, resolution and acceptance on their business days', async () => {
    const rows = await db.sql<
      { payment_id: string; type: string; detected_at: Date; resolved_at: Date | null; accepted_at: Date | null }[]
    >`select payment_id, type, detected_at, resolved_at, accepted_at from recon.discrepancies order by payment_id, type`;
    const seen = rows.map((r) => ({
      payment: r.payment_id,
      type: r.type,
      detected: dayOf(r.detected_at),
      resolved: r.resolved_at ? dayOf(r.resolved_at) : undefined,
      accepted: r.accepted_at ? dayOf(r.accepted_at) : undefined,
    }));
    const planned = plan.map((x) => ({
      payment: x.payment.id,
      type: x.type,
      detected: x.detected,
      resolved: x.resolved,
      accepted: x.accepted,
    }));
    const key = (x: { payment: string; type: string }) => `${x.payment}/${x.type}`;
    expect(seen.sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
      planned.sort((a, b) => key(a).localeCompare(key(b))),
    );
    // the DST night: found at 00:30 local on the 31st, which is still the 30th in UTC
    const dst = rows.find((r) => r.payment_id === P.dst.id)!;
    expect(dst.detected_at.toISOString().slice(0, 10)).toBe('2024-03-30');
  });

  it('shows, for every day, exactly what was open at its end: the set, ages, buckets, money, oldest, month to date', async () => {
    const ids = new Map(
      (await db.sql<{ id: string; payment_id: string }[]>`select id::text, payment_id from recon.discrepancies`).map(
        (r) => [r.payment_id, r.id],
      ),
    );
    for (const day of DAYS) {
      const v = await openOnDayFrom(db.sql, day, TZ);
      const want = openOn(day);
      const where = `report of ${day}`;
      expect(v.open.map((o) => o.id).sort(), where).toEqual(want.map((x) => ids.get(x.payment.id)).sort());
      for (const o of v.open) {
        const x = want.find((w) => ids.get(w.payment.id) === o.id)!;
        expect(o.ageDays, where).toBe(daysBetween(x.payment.day, day));
        expect(o.bucket, where).toBe(bucketFor(daysBetween(x.payment.day, day)));
        expect([o.currency, o.amount, o.subMerchantIds], where).toEqual([
          x.payment.currency,
          doubt(x.payment),
          x.subMerchants,
        ]);
      }
      // ageing: every bucket, per currency; counts and money summed from the plan
      for (const b of AGE_BUCKETS) {
        const inBucket = want.filter((x) => bucketFor(daysBetween(x.payment.day, day)) === b.label);
        const rows = v.ageing.filter((r) => r.bucket === b.label);
        const currencies = [...new Set(inBucket.map((x) => x.payment.currency))].sort();
        expect(
          rows.map((r) => r.currency),
          `${where} ${b.label}`,
        ).toEqual(currencies.length ? currencies : ['']);
        for (const r of rows) {
          const xs = inBucket.filter((x) => x.payment.currency === r.currency);
          expect([r.count, r.amount], `${where} ${b.label}`).toEqual([
            xs.length,
            xs.reduce((a, x) => a + doubt(x.payment), 0n),
          ]);
        }
      }
      // money in doubt per currency and set of sub-merchants, with the directory's names
      const groups = new Map<string, bigint>();
      for (const x of want) {
        const k = `${x.payment.currency}|${x.subMerchants.join(',')}`;
        groups.set(k, (groups.get(k) ?? 0n) + doubt(x.payment));
      }
      expect(new Map(v.inDoubt.map((r) => [`${r.currency}|${r.subMerchantIds.join(',')}`, r.amount])), where).toEqual(
        groups,
      );
      const names: Record<string, string> = { 'sm-alpha': 'Alpha Shop', 'sm-beta': 'Beta Store' };
      for (const r of v.inDoubt) expect(r.names, where).toEqual(r.subMerchantIds.map((id) => names[id]));
      // the oldest open item: one that arose on the earliest day still open
      const earliest = want.map((x) => x.payment.day).sort()[0];
      if (earliest === undefined) expect(v.oldest, where).toBeNull();
      else {
        expect(dayOf(v.oldest!.since!), where).toBe(earliest);
        expect(
          want.filter((x) => x.payment.day === earliest).map((x) => ids.get(x.payment.id)),
          where,
        ).toContain(v.oldest!.id);
      }
      // month to date: the month of the day, up to its end
      const month = day.slice(0, 7);
      const inMonth = (d?: string) => d !== undefined && d.slice(0, 7) === month && d <= day;
      const currencies = [
        ...new Set(
          plan
            .filter(
              (x) =>
                (inMonth(x.payment.day) && aroseBy(x, day)) ||
                inMonth(x.resolved) ||
                inMonth(x.accepted) ||
                want.includes(x),
            )
            .map((x) => x.payment.currency),
        ),
      ].sort();
      expect(
        v.monthToDate.map((r) => r.currency),
        where,
      ).toEqual(currencies);
      for (const r of v.monthToDate) {
        const xs = plan.filter((x) => x.payment.currency === r.currency);
        const tally = (f: (x: Planned) => boolean) => {
          const ys = xs.filter(f);
          return [ys.length, ys.reduce((a, x) => a + doubt(x.payment), 0n)];
        };
        expect([r.detected, r.detectedAmount], `${where} arose`).toEqual(
          tally((x) => inMonth(x.payment.day) && aroseBy(x, day)),
        );
        expect([r.resolved, r.resolvedAmount], `${where} resolved`).toEqual(tally((x) => inMonth(x.resolved)));
        expect([r.accepted, r.acceptedAmount], `${where} accepted`).toEqual(tally((x) => inMonth(x.accepted)));
        expect([r.open, r.openAmount], `${where} open`).toEqual(tally((x) => want.includes(x)));
      }
    }
  });

  it('writes the same in the workbook of a past day, and the same cells whenever it is run', async () => {
    for (const day of ['2024-03-21', '2024-03-26', '2024-03-30', '2024-03-31', '2024-04-25', '2024-05-01']) {
      const before = new Date();
      const { file, data } = await writeNightlyReportFor(
        { sql: db.sql, store },
        { date: day, timezone: TZ, graceHours: GRACE, outDir: out },
      );
      const after = new Date();
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(file);
      const rows = (name: string) => {
        const r: unknown[][] = [];
        wb.getWorksheet(name)!.eachRow((row, n) => n > 1 && r.push((row.values as unknown[]).slice(1)));
        return r;
      };
      const want = openOn(day);
      expect(data.open.map((o) => o.paymentId).sort(), day).toEqual(want.map((x) => x.payment.id).sort());
      // the Ageing sheet: bucket, currency, count, amount as the data says, every bucket present
      const ageing = rows('Ageing');
      expect(new Set(ageing.map((r) => r[0]))).toEqual(new Set(AGE_BUCKETS.map((b) => b.label)));
      for (const b of AGE_BUCKETS) {
        const n = want.filter((x) => bucketFor(daysBetween(x.payment.day, day)) === b.label).length;
        expect(
          ageing.filter((r) => r[0] === b.label).reduce((a, r) => a + Number(r[2]), 0),
          `${day} ${b.label}`,
        ).toBe(n);
      }
      // In doubt: per currency, the total row is the sum of the plan's money (major units, exact for these sums)
      const inDoubt = rows('In doubt');
      for (const c of [...new Set(want.map((x) => x.payment.currency))]) {
        const total = want.filter((x) => x.payment.currency === c).reduce((a, x) => a + doubt(x.payment), 0n);
        expect(inDoubt.find((r) => r[0] === `Total ${c}`)?.[4], `${day} ${c}`).toBe(Number(total) / 100);
      }
      if (want.length === 0) expect(inDoubt[0]?.[0]).toBe('none');
      const props = wb;
      // issued when the report was written (the properties keep whole seconds)
      expect(props.created!.getTime(), day).toBeGreaterThanOrEqual(Math.floor(before.getTime() / 1000) * 1000);
      expect(props.created!.getTime(), day).toBeLessThanOrEqual(after.getTime());
      expect(props.title).toContain(day);
    }
    // run again later: the same title, cells, print setup and widths; only the issue time moves
    const parts = async (file: string) => {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(file);
      const values = (ws: ExcelJS.Worksheet) =>
        JSON.stringify(ws.getSheetValues()).replace(/"Issue time","[^"]*"/, '"Issue time",""');
      return {
        props: [wb.title, wb.subject],
        sheets: wb.worksheets.map((ws) => [
          ws.name,
          values(ws),
          ws.pageSetup,
          ws.headerFooter,
          (ws.columns ?? []).map((c) => c.width),
        ]),
      };
    };
    const first = path.join(out, 'nightly-2024-03-31.xlsx');
    const before = await parts(first);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await writeNightlyReportFor(
      { sql: db.sql, store },
      { date: '2024-03-31', timezone: TZ, graceHours: GRACE, outDir: out },
    );
    expect(await parts(first)).toEqual(before);
  });

  it('recon report nightly --date D writes the report of that day and prints its ageing', async () => {
    const day = '2024-03-26';
    const dir = path.join(out, 'cli');
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [path.resolve('bin/recon.mjs'), 'report', 'nightly', '--date', day, '--out', dir],
        {
          env: reconEnv({ databaseUrl: db.url, timezone: TZ, extra: { RECON_GRACE_HOURS: String(GRACE) } }),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.code, r.stderr).toBe(0);
    const want = openOn(day);
    expect(r.stdout).toContain(`open discrepancies at the day's end ${want.length}`);
    const counts = AGE_BUCKETS.map(
      (b) => `${b.label} ${want.filter((x) => bucketFor(daysBetween(x.detected, day)) === b.label).length}`,
    );
    expect(r.stdout).toContain(`ageing: ${counts.join(', ')}`);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(dir, `nightly-${day}.xlsx`));
    expect(wb.getWorksheet('Ageing')!.rowCount).toBeGreaterThan(AGE_BUCKETS.length);
  }, 120_000);
});
