import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { planInputOf, statementRunsOf } from '../../src/payout-runs/inputs';
import { planRun } from '../../src/payout-runs/plan';
import { killAll, runRecon } from '../faults/support/processes';
import { statementFile } from './statement-files';
import { TZ, useStatementTest } from './support';

/**
 * Issuing a month twice never pays twice (issue 25), through `recon statements` as finance types it:
 * - a month already issued, with nothing changed since, is reproduced: the same numbers, the same bytes
 *   (every workbook and PDF by its sha-256), nothing new recorded, and the command says so;
 * - a month that did change is issued as a correction: it names the statement it corrects (number and date),
 *   asks only the difference, keeps the reference already issued when it asks nothing new, and prints the
 *   issuer, contact and dispute lines the month was first issued with, whatever the environment says now.
 */

const t = useStatementTest({ pos: 'pos-runs', outPrefix: 'recon-statement-runs-' });
const MONTH = '2025-01';
const RUN_MS = 120_000;
const ISSUER = {
  RECON_ISSUER_NAME: 'Marketplace Ltd',
  RECON_STATEMENT_CONTACT: 'payouts@marketplace.example',
  RECON_STATEMENT_DISPUTE: 'Reply within 30 days of the issue date to dispute a figure.',
};

afterAll(() => killAll());
beforeAll(() => t.directory('sub_merchant_id,name,reserve_hold_days\nSM-A,Shop A,30\nSM-B,Shop B,30\n'));

const env = (extra: Record<string, string> = {}) =>
  reconEnv({ databaseUrl: t.db.url, timezone: TZ, extra: { RECON_LOG_LEVEL: 'error', ...extra } });

async function statements(out: string, extra: Record<string, string> = {}) {
  const r = await runRecon(['statements', '--month', MONTH, '--out', out], env(extra), RUN_MS);
  expect(r.code, r.stderr.slice(-2000)).toBe(0);
  return r.stdout;
}

const digests = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .filter((f) => !f.startsWith('.'))
      .sort()
      .map((f) => [
        f,
        createHash('sha256')
          .update(readFileSync(path.join(dir, f)))
          .digest('hex'),
      ]),
  );

async function recorded() {
  const [runs] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from statement_runs`;
  const events = await t.db.sql<{ type: string; n: number }[]>`
    select type, count(*)::int as n from es_events where stream_id like 'statement%' group by type order by type`;
  return { runs: runs!.n, ...Object.fromEntries(events.map((e) => [e.type, e.n])) };
}

async function summary(dir: string, id: string): Promise<Map<string, unknown>> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(dir, statementFile(dir, id, MONTH)));
  const rows = new Map<string, unknown>();
  wb.getWorksheet('Summary')!.eachRow((row) => rows.set(String(row.getCell(1).value), row.getCell(2).value));
  return rows;
}

async function index(dir: string): Promise<Record<string, unknown>[]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path.join(dir, `payouts-${MONTH}.xlsx`));
  const [head, ...rows] = wb
    .getWorksheet('Payouts')!
    .getSheetValues()
    .flatMap((r) => (Array.isArray(r) ? [r.slice(1) as unknown[]] : []));
  return rows.filter((r) => r[0] && r[0] !== 'Total').map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i]])));
}

/** The PDF's text (pdftotext), undefined where it is not installed. */
function pdfText(file: string): string | undefined {
  try {
    return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  } catch {
    return undefined;
  }
}

const dir = (name: string) => mkdtempSync(path.join(t.out, `${name}-`));
const AMOUNT_DUE = '= Amount due (adjustments + net payable − held + released)';

describe('recon statements for a month already issued', () => {
  let first: string;

  it('with nothing changed: the same statements, byte for byte, and nothing recorded', {
    timeout: 600_000,
  }, async () => {
    await t.observe(t.sale('p1', '2025-01-10T10:00:00.000Z', 'Shop A', 1_000_00n), '2025-01-11T00:00:00.000Z');
    await t.observe(t.sale('p2', '2025-01-12T10:00:00.000Z', 'Shop B', 500_00n), '2025-01-13T00:00:00.000Z');
    first = dir('first');
    const out1 = await statements(first, ISSUER);
    expect(out1).not.toContain('unchanged');
    expect(await recorded()).toEqual({ runs: 1, StatementIssued: 1, StatementNumbered: 2 });
    const issued = await summary(first, 'SM-A');
    expect(issued.get('Payout statement')).toBe('Statement no. 0001');
    expect(issued.get('Issued by')).toBe('Marketplace Ltd');

    // February's sales come in (the journal's checkpoint moves on); nothing about January changed
    await t.observe(t.sale('p3', '2025-02-03T10:00:00.000Z', 'Shop A', 70_00n), '2025-02-04T00:00:00.000Z');
    // the issuer variables are no longer set where the command runs now
    for (const name of ['second', 'third']) {
      const again = dir(name);
      const out = await statements(again);
      expect(out).toMatch(/unchanged since the statements issued on \d{4}-\d{2}-\d{2}/);
      expect(out).toContain('nothing recorded');
      expect(digests(again)).toEqual(digests(first));
      expect(await recorded()).toEqual({ runs: 1, StatementIssued: 1, StatementNumbered: 2 });
    }
  });

  it('with a late sale: a correction that names what it corrects and asks only the difference', {
    timeout: 600_000,
  }, async () => {
    const issuedOn = String((await summary(first, 'SM-A')).get('Issued on') ?? '');
    // a January sale of Shop A first reported in February
    await t.observe(t.sale('p4', '2025-01-25T10:00:00.000Z', 'Shop A', 300_00n), '2025-02-05T00:00:00.000Z');
    const corrected = dir('correction');
    const out = await statements(corrected);
    expect(out).toMatch(/a correction of the statements issued on \d{4}-\d{2}-\d{2}/);
    expect(await recorded()).toEqual({ runs: 2, StatementIssued: 2, StatementNumbered: 4 });

    const a = await summary(corrected, 'SM-A');
    expect(a.get('Payout statement')).toBe('Statement no. 0002');
    expect(a.get('Corrects')).toBe(`Statement no. 0001 issued on ${new Date(issuedOn).toISOString().slice(0, 10)}`);
    // the month now comes to 1,300.00; 1,000.00 was asked on statement no. 0001
    expect(a.get(AMOUNT_DUE)).toBe(1_300);
    expect(a.get('− Already asked on the statement corrected')).toBe(-1_000);
    expect(a.get('= Amount due on this correction')).toBe(300);
    expect(a.get('Payout reference (in the transfer)')).toBe('RS-SM-A-2025-01-EUR-2');
    // what the month was first issued with, not what the environment says now (nothing)
    expect(a.get('Issued by')).toBe(ISSUER.RECON_ISSUER_NAME);
    expect(a.get('Contact')).toBe(ISSUER.RECON_STATEMENT_CONTACT);
    expect(a.get('Disputes')).toBe(ISSUER.RECON_STATEMENT_DISPUTE);

    // the PDF says the same
    const pdf = pdfText(path.join(corrected, statementFile(corrected, 'SM-A', MONTH, false, 'pdf')));
    if (pdf !== undefined) {
      expect(pdf).toMatch(/Corrects: Statement no\. 0001 issued on \d{4}-\d{2}-\d{2}/);
      expect(pdf).toMatch(/= Amount due on this correction\s+300\.00/);
      expect(pdf).toContain(ISSUER.RECON_ISSUER_NAME);
    }

    // Shop B did not change: its correction asks nothing, and keeps the reference already issued
    const b = await summary(corrected, 'SM-B');
    expect(b.get('= Amount due on this correction')).toBe(0);
    expect(b.get('Payout reference (in the transfer)')).toBe('RS-SM-B-2025-01-EUR');

    const rows = await index(corrected);
    expect(rows.map((r) => [r.sub_merchant_id, r.amount_due, r.payout_reference, r.payout_status])).toEqual([
      ['SM-A', 300, 'RS-SM-A-2025-01-EUR-2', 'expected'],
      ['SM-B', 0, 'RS-SM-B-2025-01-EUR', 'expected'],
    ]);

    // and the correction, issued again with nothing changed, is reproduced as it was
    const again = dir('correction-again');
    expect(await statements(again)).toContain('unchanged');
    expect(digests(again)).toEqual(digests(corrected));
    expect(await recorded()).toEqual({ runs: 2, StatementIssued: 2, StatementNumbered: 4 });
  });

  it('stated lower (the late sale failed): the correction asks nothing, and a payout run pays only what the month still asks', {
    timeout: 600_000,
  }, async () => {
    // the PSP reports p4 failed after all: Shop A's month comes back to 1,000.00, 1,300.00 having been asked
    await t.observe(
      t.sale('p4', '2025-01-25T10:00:00.000Z', 'Shop A', 300_00n, { status: 'failure' }),
      '2025-02-06T00:00:00.000Z',
    );
    const lower = dir('lower');
    expect(await statements(lower)).toMatch(/a correction of the statements issued on/);
    const a = await summary(lower, 'SM-A');
    expect(a.get(AMOUNT_DUE)).toBe(1_000);
    expect(a.get('− Already asked on the statement corrected')).toBe(-1_300);
    expect(a.get('= Amount due on this correction')).toBe(-300);

    // what the run recorded: nothing asked, and what the month's runs now ask in all
    const runs = await statementRunsOf(t.store, MONTH);
    expect(runs).toHaveLength(3);
    const latest = (id: string) => runs.at(-1)!.payouts.find((p) => p.subMerchantId === id);
    expect(latest('SM-A')).toMatchObject({ reference: null, payable: '0', stillAsked: '100000' });
    expect(latest('SM-B')).toMatchObject({ payable: '0', stillAsked: '50000' });

    // a payout run drafted now: Shop A's first ask at 1,000.00, the second (300.00) no more; Shop B as asked.
    // Neither has a payout account in this directory, so both are listed as left out, with what they would be paid.
    const plan = planRun(await planInputOf(t.store, MONTH, [], new Map()));
    expect(plan.lines).toEqual([]);
    expect(plan.leftOut.map((l) => [l.reference, l.amount, l.reason])).toEqual([
      ['RS-SM-A-2025-01-EUR', '100000', 'no_payout_account'],
      ['RS-SM-B-2025-01-EUR', '50000', 'no_payout_account'],
    ]);
  });

  it('stated higher again after that: it says 1,000.00 was already asked (what the statement it corrects asked), not 1,300.00', {
    timeout: 600_000,
  }, async () => {
    // another late January sale of Shop A: the month is 1,100.00
    await t.observe(t.sale('p5', '2025-01-26T10:00:00.000Z', 'Shop A', 100_00n), '2025-02-07T00:00:00.000Z');
    const higher = dir('higher');
    expect(await statements(higher)).toMatch(/a correction of the statements issued on/);
    const a = await summary(higher, 'SM-A');
    expect(a.get(AMOUNT_DUE)).toBe(1_100);
    expect(a.get('− Already asked on the statement corrected')).toBe(-1_000);
    expect(a.get('= Amount due on this correction')).toBe(100);
    const b = await summary(higher, 'SM-B');
    expect(b.get('− Already asked on the statement corrected')).toBe(-500);
    expect(b.get('= Amount due on this correction')).toBe(0);

    // nothing new asked (1,300.00 was): the lowered ask (…-2) comes back by 100.00
    const runs = await statementRunsOf(t.store, MONTH);
    expect(runs.at(-1)!.payouts.find((p) => p.subMerchantId === 'SM-A')).toMatchObject({
      reference: null,
      payable: '0',
      stillAsked: '110000',
    });
    const plan = planRun(await planInputOf(t.store, MONTH, [], new Map()));
    expect(plan.leftOut.map((l) => [l.reference, l.amount])).toEqual([
      ['RS-SM-A-2025-01-EUR', '100000'],
      ['RS-SM-B-2025-01-EUR', '50000'],
      ['RS-SM-A-2025-01-EUR-2', '10000'],
    ]);
  });
});
