import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * `recon demo`'s own check passes on every month it offers (any month that has ended; by default the
 * previous one) and on other seeds: recon finds exactly what the sandbox injected, finding by finding
 * (PSP sources, orders, bank), and the summary's table agrees with the check. It failed on 2026-08, 09 and 10
 * with "NOT the injected ones: unexpected fee_below_contract …, missed split_differs_from_order …": the
 * sandbox's expected order findings read the payment's last operation (a dispute) instead of the distorted
 * one, and expected a split difference on a capture, which recon (docs/orders.md) does not compare with the
 * order. The month-end nightly report states the discrepancies open then (it said 0 while the CLI listed 36).
 */

interface Summary {
  month: string;
  discrepancies: Record<string, number>;
  groundTruth: Record<string, number>;
  check: {
    passed: boolean;
    checks: { name: string; passed: boolean; matched: number; unexpected: string[]; missed: string[] }[];
  };
  money: { discrepancies: Record<string, number>; groundTruth: Record<string, number> };
  nightlyReport: string;
}

function demo(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/recon.mjs', 'demo', ...args], {
      cwd: path.resolve(__dirname, '../..'),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const previous = (n: number) => DateTime.utc().minus({ months: n }).toFormat('yyyy-MM');
/** the default month (the previous one) and the two before it; then other seeds, in another zone */
const RUNS: { month: string; seed: string; zone: string; payments: number }[] = [
  { month: previous(1), seed: 'recon-demo', zone: 'UTC', payments: 200 },
  { month: previous(2), seed: 'recon-demo', zone: 'UTC', payments: 200 },
  { month: previous(3), seed: 'recon-demo', zone: 'UTC', payments: 200 },
  { month: previous(1), seed: 'second-seed', zone: 'Europe/Kyiv', payments: 200 },
  { month: previous(2), seed: 'third-seed', zone: 'Europe/Kyiv', payments: 200 },
  // fewer payments: the payment whose order is left out of the file is one with an unknown receiver, whose
  // fee is still judged against the contract (the sandbox's truth skipped it)
  { month: previous(1), seed: 'recon-demo', zone: 'UTC', payments: 120 },
];

const made: { db: TestDatabase; dir: string }[] = [];
afterAll(async () => {
  for (const m of made) {
    await m.db.drop();
    rmSync(m.dir, { recursive: true, force: true });
  }
});

describe('recon demo on every month and seed it offers', () => {
  it.each(RUNS)(
    '$month, seed $seed, $zone, $payments payments: the check passes and the month-end report states what was open',
    async ({ month, seed, zone, payments }) => {
      const db = await createTestDatabase({ migrate: false });
      const dir = mkdtempSync(path.join(tmpdir(), 'recon-demo-months-'));
      made.push({ db, dir });
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATABASE_URL: db.url,
        RECON_DATA_DIR: dir,
        RECON_TIMEZONE: zone,
        RECON_LOG_LEVEL: 'warn',
      };
      for (const k of Object.keys(env)) if (k.startsWith('PSP_') || k === 'RECON_SUB_MERCHANTS') delete env[k];
      const args = ['--seed', seed, '--payments', String(payments), '--out', path.join(dir, 'out'), '--json'];
      // the default month is the previous one: given without --month
      const r = await demo(month === previous(1) && payments === 200 ? args : [...args, '--month', month], env);
      let s: Summary;
      try {
        s = JSON.parse(r.stdout) as Summary;
      } catch {
        throw new Error(`no JSON summary (exit ${r.code}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-3000)}`);
      }
      expect(s.month).toBe(month);
      for (const c of s.check.checks)
        expect({ name: c.name, unexpected: c.unexpected, missed: c.missed }).toEqual({
          name: c.name,
          unexpected: [],
          missed: [],
        });
      expect(s.check.passed).toBe(true);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      // the summary's table says the same as the check: found equals injected, type by type
      expect(s.discrepancies).toEqual(s.groundTruth);
      expect(s.money.discrepancies).toEqual(s.money.groundTruth);
      expect(s.check.checks.map((c) => c.matched).every((n) => n > 0)).toBe(true);

      // the month-end report: every discrepancy that arose in or before the month and still stands
      const end = DateTime.fromFormat(month, 'yyyy-MM', { zone }).plus({ months: 1 }).toJSDate();
      const [standing] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from (
          select occurred_at, detected_at, status from recon.discrepancies
          union all select occurred_at, detected_at, status from recon.order_discrepancies
          union all select occurred_at, detected_at, status from recon.settlement_discrepancies
          union all select occurred_at, detected_at, status from recon.payout_discrepancies) d
        where status = 'open' and coalesce(occurred_at, detected_at) < ${end}`;
      expect(standing!.n).toBeGreaterThan(0);
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(s.nightlyReport);
      let open: string | undefined;
      wb.getWorksheet('Summary')!.eachRow((row) => {
        if (row.getCell(1).text === 'Open discrepancies') open = row.getCell(2).text;
      });
      expect(open).toBe(String(standing!.n));
    },
    600_000,
  );
});
