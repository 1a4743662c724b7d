import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { afterAll, describe, expect, it } from 'vitest';
import { type DiscrepancyTimes, openAt, openOnDay } from '../../src/export/nightly/open';
import { reportPeriods, writeNightlyReport } from '../../src/export/nightly/report';
import { reconEnv } from '../../fixtures/psp-env';

/**
 * Ageing counts from when the money was due or the operation happened, not from when recon first ran. A
 * month synced weeks after it ended (as `recon demo` does, and any first run on history) showed 0 open
 * discrepancies on its last day while `recon discrepancies` listed them all: every one had been "detected"
 * after that day. The report is issued when it is written; a day after today has nothing to state.
 */

const TZ = 'Europe/Kyiv';
const at = (iso: string) => DateTime.fromISO(iso, { zone: TZ }).toJSDate();
const ranLater = at('2026-11-27T14:00');

const base = { resolvedAt: null, acceptedAt: null, subMerchantIds: [], currency: 'EUR' } as const;
/** August, synced and judged on 27 November */
const august: DiscrepancyTimes[] = [
  // an amount that differs on a payment of 10 August: still open now
  { ...base, id: 'a', type: 'amount_mismatch', since: at('2026-08-10T12:00'), detectedAt: ranLater, amount: 500n },
  // a settlement due on 21 August that came short: still open now
  { ...base, id: 'b', type: 'settlement_short', since: at('2026-08-21T00:00'), detectedAt: ranLater, amount: 70n },
  // an order of 2 August the PSP's records of the same sync paid: found and cleared in the same run
  {
    ...base,
    id: 'c',
    type: 'order_not_at_psp',
    since: at('2026-08-02T00:00'),
    detectedAt: ranLater,
    resolvedAt: ranLater,
    amount: 4200n,
  },
  // a payout due on 30 November: not yet due at the end of August
  { ...base, id: 'd', type: 'payout_missing', since: at('2026-11-30T00:00'), detectedAt: ranLater, amount: 9n },
];

describe('open and ageing from when the difference arose', () => {
  it('states on the last day of a month synced later what was open then, aged from then', () => {
    const v = openOnDay(august, '2026-08-31', TZ);
    expect(v.open.map((o) => [o.id, o.ageDays, o.bucket])).toEqual([
      ['a', 21, '8–30 days'],
      ['b', 10, '8–30 days'],
    ]);
    expect(v.oldest?.id).toBe('a');
    expect(v.monthToDate).toEqual([
      {
        currency: 'EUR',
        detected: 2,
        detectedAmount: 570n,
        resolved: 0,
        resolvedAmount: 0n,
        accepted: 0,
        acceptedAmount: 0n,
        open: 2,
        openAmount: 570n,
      },
    ]);
  });

  it('a difference found before the day and resolved after it was open on the day', () => {
    const d: DiscrepancyTimes = {
      ...base,
      id: 'e',
      type: 'missing_webhook',
      since: at('2026-08-05T10:00'),
      detectedAt: at('2026-08-07T10:00'),
      resolvedAt: at('2026-08-12T10:00'),
      amount: 1n,
    };
    expect(openAt(d, at('2026-08-05T09:00'))).toBe(false);
    expect(openAt(d, at('2026-08-08T00:00'))).toBe(true);
    expect(openAt(d, at('2026-08-12T00:00'))).toBe(true);
    // before it was found, it is one found later and cleared since: not counted on that day
    expect(openAt(d, at('2026-08-06T00:00'))).toBe(false);
    expect(openAt(d, at('2026-08-13T00:00'))).toBe(false);
  });

  it('an accepted one stops being open when it was accepted', () => {
    const d: DiscrepancyTimes = {
      ...base,
      id: 'f',
      type: 'fee_below_contract',
      since: at('2026-08-05T10:00'),
      detectedAt: ranLater,
      acceptedAt: at('2026-11-28T09:00'),
      amount: 2n,
    };
    expect(openAt(d, at('2026-09-01T00:00'))).toBe(true);
    expect(openAt(d, at('2026-11-29T00:00'))).toBe(false);
  });
});

describe('the issue time is when the report was written', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'recon-report-ageing-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('in the properties and on the Summary; the discrepancies stay stated as at the end of the day', async () => {
    const writtenAt = new Date('2026-11-27T12:34:00Z');
    const file = path.join(dir, 'nightly-2026-08-31.xlsx');
    await writeNightlyReport(file, {
      date: '2026-08-31',
      timezone: TZ,
      writtenAt,
      ...reportPeriods('2026-08-31', TZ, 48),
      sources: [],
      matching: [],
      discrepancies: [],
      open: [],
      windows: [],
      facts: [],
      asOfDay: openOnDay(august, '2026-08-31', TZ),
    });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    expect(wb.created?.toISOString()).toBe(writtenAt.toISOString());
    const summary: string[] = [];
    wb.getWorksheet('Summary')!.eachRow((r) => summary.push(`${r.getCell(1).text}: ${r.getCell(2).text}`));
    expect(summary).toContain('Issue time: 2026-11-27 14:34 (Europe/Kyiv), when this report was written');
    expect(summary).toContain('Discrepancies stated as at: 2026-09-01 00:00 (Europe/Kyiv)');
    expect(summary).toContain('Open discrepancies: 2');
  });
});

describe('recon report nightly --date after today', () => {
  it('is refused with a usage error naming the option, before any database is reached', async () => {
    const tomorrow = DateTime.now().setZone(TZ).plus({ days: 1 }).toISODate()!;
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.resolve('bin/recon.mjs'), 'report', 'nightly', '--date', tomorrow], {
        // nothing listens there: reaching the database would fail otherwise than with a usage error
        env: reconEnv({ databaseUrl: 'postgres://recon:pw@127.0.0.1:9/recon', timezone: TZ }),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--date ${tomorrow} is after today`);
    expect(r.stderr).toContain('RECON_TIMEZONE Europe/Kyiv');
  });
});
