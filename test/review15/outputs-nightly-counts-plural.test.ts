import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { afterAll, describe, expect, it } from 'vitest';
import { ageingLines, type DiscrepancyTimes, openOnDay } from '../../src/export/nightly/open';
import { reportPeriods, writeNightlyReport } from '../../src/export/nightly/report';

/**
 * The nightly report counted with one word whatever the count: `recon report nightly` printed "oldest: … 1 days
 * open" and the Windows synced sheet's total "Total: 1 windows". Each count now takes the form English's plural
 * rules choose (1 day, 2 days; 1 window, 2 windows).
 */

const TZ = 'Europe/Kyiv';
const at = (iso: string) => DateTime.fromISO(iso, { zone: TZ }).toJSDate();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-review15-nightly-plural-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const open = (since: string): DiscrepancyTimes => ({
  id: 'a',
  type: 'amount_mismatch',
  since: at(since),
  detectedAt: at(since),
  resolvedAt: null,
  acceptedAt: null,
  subMerchantIds: [],
  currency: 'EUR',
  amount: 500n,
});

describe('review15: the nightly report counts in the plural rules of English', () => {
  it('says "1 day open" of a discrepancy a day old, "2 days open" of one two days old', () => {
    const one = openOnDay([open('2026-08-27T12:00')], '2026-08-28', TZ);
    expect(one.oldest?.ageDays).toBe(1);
    expect(ageingLines(one)).toContain('oldest: amount_mismatch a, 1 day open');
    const two = openOnDay([open('2026-08-26T12:00')], '2026-08-28', TZ);
    expect(two.oldest?.ageDays).toBe(2);
    expect(ageingLines(two)).toContain('oldest: amount_mismatch a, 2 days open');
  });

  it.each([
    [1, 'Total: 1 window'],
    [2, 'Total: 2 windows'],
  ])('writes the Windows synced total of %i as "%s"', async (n, total) => {
    const date = '2026-08-28';
    const window = (i: number) => ({
      posId: `pos-${i}`,
      from: at(`${date}T0${i}:00`),
      to: at(`${date}T0${i + 1}:00`),
      completedAt: at(`${date}T0${i + 1}:05`),
      reportId: `r-${i}`,
    });
    const file = path.join(dir, `nightly-${n}.xlsx`);
    await writeNightlyReport(file, {
      date,
      timezone: TZ,
      ...reportPeriods(date, TZ, 48),
      sources: [],
      matching: [],
      discrepancies: [],
      open: [],
      windows: Array.from({ length: n }, (_, i) => window(i)),
      facts: [],
    });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const texts: string[] = [];
    wb.getWorksheet('Windows synced')!.eachRow((r) => r.eachCell((c) => texts.push(c.text)));
    expect(texts.filter((t) => t.startsWith('Total'))).toEqual([total]);
  });
});
