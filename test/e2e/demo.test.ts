import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTS, demoBankConfig, expectedPayouts } from '../../src/cli/demo-bank';
import { cashSheetData } from '../../src/export/nightly/cash-sheet';
import { bankWorld } from '../../src/sandbox/bank';
import { orderFindingKey } from '../../src/cli/demo-intent';
import { pspSideOrderTruth, sandboxIntent } from '../../src/sandbox/intent';
import { generateScenario } from '../../src/sandbox/scenario';
import { LABELS } from '../../src/export/i18n/labels';
import { statementFileName } from '../../src/export/statements/figures';
import { parseSubMerchantCsv } from '../../src/ingest/sub-merchants';
import { SANDBOX_ISSUER, withLegalDetails } from '../../src/sandbox/legal-details';
import { createTestDatabase, type TestDatabase } from '../support/db';

/**
 * The main job end to end, as a user runs it: `recon demo` in its own process against a fresh database,
 * with debug logs. Then: the discrepancies recon reports are exactly the sandbox's injected ones, the
 * statements and report are written, a second run changes no figure, and no secret or card data appears
 * in logs, events, read models or exports.
 */
const SEED = 'e2e-demo';
const MONTH = '2025-03'; // Europe/Kyiv changes to summer time on 30 March
const ZONE = 'Europe/Kyiv';
const PAYMENTS = 200;
const CARDS = ['4111111111111111', '4000000000000002'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runDemo(env: NodeJS.ProcessEnv, out: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        'bin/recon.mjs',
        'demo',
        '--seed',
        SEED,
        '--payments',
        String(PAYMENTS),
        '--month',
        MONTH,
        '--out',
        out,
        '--json',
      ],
      {
        cwd: path.resolve(__dirname, '../..'),
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function workbookText(file: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  const parts: string[] = [];
  wb.eachSheet((ws) => ws.eachRow((row) => row.eachCell((cell) => parts.push(String(cell.text ?? cell.value)))));
  return parts.join('\n');
}

describe('recon demo, end to end', () => {
  let db: TestDatabase;
  let dir: string;
  let first: Run;
  let second: Run;
  let summary: {
    statements: { files: string[]; figuresSha256: string };
    nightlyReport: string;
    discrepancies: Record<string, number>;
    money: {
      imported: { entries: number; known: number };
      refused: string;
      discrepancies: Record<string, number>;
      groundTruth: Record<string, number>;
      paidOut: { reference: string; amount: string; paidOut: string; status: string; paidOn: string | null }[];
      payoutStatuses: { found: Record<string, number>; truth: Record<string, number>; file: string };
      charges: {
        booked: number;
        taken: number;
        bookedByCurrency: Record<string, string>;
        takenByCurrency: Record<string, string>;
      };
    };
    orders: { found: string[]; expected: string[] };
  };
  const scenario = generateScenario({ seed: SEED, payments: PAYMENTS, month: MONTH, timezone: ZONE });

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    dir = mkdtempSync(path.join(tmpdir(), 'recon-demo-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      RECON_DATA_DIR: dir,
      RECON_TIMEZONE: ZONE,
      RECON_LOG_LEVEL: 'debug',
    };
    for (const k of Object.keys(env)) if (k.startsWith('PSP_')) delete env[k];
    first = await runDemo(env, path.join(dir, 'out'));
    second = await runDemo(env, path.join(dir, 'out'));
    try {
      summary = JSON.parse(first.stdout);
    } catch {
      throw new Error(
        `demo printed no JSON summary (exit ${first.code}):\n${first.stdout.slice(-3000)}\n${first.stderr.slice(-3000)}`,
      );
    }
  }, 240_000);

  afterAll(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs to completion twice', () => {
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    expect(second.code, second.stderr.slice(-2000)).toBe(0);
  });

  it('writes one statement per sub-merchant, the payouts index and the nightly report', async () => {
    const files = readdirSync(path.join(dir, 'out'));
    expect(files).toContain(`payouts-${MONTH}.xlsx`);
    expect(files.filter((f) => f.endsWith(`-${MONTH}.xlsx`) && !f.startsWith('payouts')).length).toBeGreaterThan(0);
    expect(files.some((f) => f.startsWith('nightly-'))).toBe(true);
    expect(files.filter((f) => f.includes('.tmp') || f.startsWith('.'))).toEqual([]);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(dir, 'out', `payouts-${MONTH}.xlsx`));
    const header = (wb.worksheets[0]!.getRow(1).values as unknown[]).slice(1);
    expect(wb.worksheets[0]!.name).toBe('Payouts');
    expect(header).toEqual([
      'sub_merchant_id',
      'sub_merchant_name',
      'currency',
      'gross',
      'refunds',
      'chargebacks',
      'fees',
      'reserve_held',
      'reserve_released',
      'net_payable',
      'operations',
      'adjustments',
      'amount_due',
      'held',
      'paid_out',
      'payout_reference',
      'payout_status',
      'not_stated_before',
      'payout_paid',
      'payout_paid_on',
      'payout_bank_reference',
      'payout_paid_to',
    ]);
  });

  it("gives each sub-merchant its PDF in its language, headed by the sandbox marketplace and the sub-merchant's legal name", () => {
    const out = path.join(dir, 'out');
    const directory = parseSubMerchantCsv(withLegalDetails(scenario.subMerchantCsv()), 'sandbox');
    if (!directory.ok) throw new Error(JSON.stringify(directory.issues[0]));
    const pdfs = readdirSync(out).filter((f) => f.endsWith(`-${MONTH}.pdf`));
    const seen = new Set<string>();
    for (const row of directory.rows) {
      const file = statementFileName(row.subMerchantId, MONTH, false, row.name, 'pdf');
      if (!pdfs.includes(file)) continue; // a sub-merchant without figures in the month gets no statement
      const text = execFileSync('pdftotext', ['-layout', path.join(out, file), '-'], { encoding: 'utf8' }).replace(
        /\s+/g,
        ' ',
      );
      const language = row.language ?? 'en';
      expect(text).toContain(LABELS[language].title);
      expect(text).toContain(SANDBOX_ISSUER.issuerTaxId);
      expect(text).toContain(row.legalName!);
      expect(text).toContain(row.taxId!);
      seen.add(language);
    }
    expect([...seen].sort()).toEqual(['en', 'uk']);
  });

  it('a second run changes no figure', () => {
    const again = JSON.parse(second.stdout) as typeof summary;
    expect(again.statements.figuresSha256).toBe(summary.statements.figuresSha256);
    expect(again.discrepancies).toEqual(summary.discrepancies);
  });

  it('finds exactly the discrepancies the sandbox injected', async () => {
    const rows = await db.sql<{ type: string; payment_id: string | null; status: string }[]>`
      select type, payment_id, status from recon.discrepancies where status in ('open', 'accepted') order by type, payment_id`;
    const found = rows.map((r) => `${r.type} ${r.payment_id ?? ''}`).sort();
    const expected = scenario.groundTruth
      // a webhook that healing recovered is no discrepancy; one lost for good is
      .filter((g) => g.type !== 'missing_webhook' || (g.detail as { lostForGood?: boolean }).lostForGood)
      .map((g) => `${g.type} ${g.type === 'report_count_mismatch' ? '' : g.paymentId}`)
      .sort();
    expect(found).toEqual(expected);
  });

  it("the money loop finds exactly the sandbox bank's faults, and pays the rest", async () => {
    // the bank world again, from the expected payouts the statements recorded: its ground truth, keyed
    const bank = demoBankConfig();
    const world = bankWorld(scenario, {
      accounts: DEMO_ACCOUNTS,
      lagBusinessDays: bank.settlement.lagBusinessDays,
      holidays: bank.settlement.holidays,
      tolerance: bank.settlement.tolerance,
      payouts: await expectedPayouts(db.sql),
    });
    const truth = world.truth
      .flatMap((t) =>
        t.type === 'statement_unbalanced' ? [] : [`${t.type} ${'reference' in t ? t.reference : t.dueOn}`],
      )
      .sort();
    const rows = await db.sql<{ type: string; values: Record<string, unknown> }[]>`
      select type, "values" from recon.settlement_discrepancies where status = 'open'
      union all select type, "values" from recon.payout_discrepancies where status = 'open'`;
    const found = rows.map((r) => `${r.type} ${r.values['reference'] ?? [r.values['due_on']].flat().join(',')}`).sort();
    expect(found).toEqual(truth);
    expect(truth.map((t) => t.split(' ')[0])).toEqual([
      'payout_duplicate',
      'payout_missing',
      'payout_returned',
      'settlement_late',
      'settlement_short',
    ]);
    expect(summary.money.discrepancies).toEqual(summary.money.groundTruth);
    expect(summary.money.refused).toMatch(/does not foot: .*difference 1\.00/);
    // every expected payout but the missing, the duplicated and the returned one is paid in full once, on the
    // day the bank booked it
    const paid = summary.money.paidOut.filter((p) => p.status === 'paid');
    expect(paid.length).toBe(summary.money.paidOut.length - 3);
    expect(summary.money.paidOut.filter((p) => p.status === 'duplicated')).toHaveLength(1);
    // the payout status workbook, written after the bank paid, says what the bank did: its ground truth
    expect(summary.money.payoutStatuses.found).toEqual(summary.money.payoutStatuses.truth);
    expect(summary.money.payoutStatuses.found).toMatchObject({ missing: 1, returned: 1, duplicated: 1 });
    expect(summary.money.payoutStatuses.found['paid']).toBe(summary.money.paidOut.length - 3);
    const statusBook = new ExcelJS.Workbook();
    await statusBook.xlsx.readFile(summary.money.payoutStatuses.file);
    expect(statusBook.getWorksheet('Payout status')!.rowCount).toBeGreaterThan(summary.money.paidOut.length);
    // the bank's charges are bank fees, every one of them, and none is a payout discrepancy (checked above)
    expect(summary.money.charges.booked).toBe(summary.money.charges.taken);
    expect(summary.money.charges.bookedByCurrency).toEqual(summary.money.charges.takenByCurrency);
    expect(summary.money.charges.taken).toBeGreaterThanOrEqual(6);
    for (const p of paid) expect([p.paidOut, p.paidOn !== null]).toEqual([p.amount, true]);
    expect(summary.money.paidOut.filter((p) => p.status === 'returned')).toHaveLength(1);
    expect(summary.money.paidOut.filter((p) => p.paidOn === null)).toHaveLength(1);
    // the Cash sheet's bridge holds for the payouts accounts too (the journal booked the matched payouts)
    const cash = await cashSheetData(db.sql, { date: '2099-12-31' });
    const payoutsAccounts = new Set(Object.values(DEMO_ACCOUNTS).map((a) => a.payouts));
    const bridges = cash!.bridges.filter((b) => payoutsAccounts.has(b.accountId));
    expect(bridges.length).toBeGreaterThan(0);
    for (const b of bridges) expect([b.accountId, b.difference]).toEqual([b.accountId, 0n]);
    expect(bridges.some((b) => b.bookedInJournal !== 0n)).toBe(true);
    // a second run imports the same files: nothing new
    const again = JSON.parse(second.stdout) as typeof summary;
    expect(again.money.imported.entries).toBe(0);
    expect(again.money.imported.known).toBe(summary.money.imported.entries);
    expect(again.money.discrepancies).toEqual(summary.money.discrepancies);
  });

  it("finds exactly the order discrepancies the sandbox injected, its orders' own and those the PSP side causes", async () => {
    const intent = sandboxIntent(scenario);
    const caused = pspSideOrderTruth(scenario, intent);
    // the demo's world has split injections on the PSP side: the comparison must account for them
    expect(caused.length).toBeGreaterThan(0);
    const expected = [...intent.groundTruth, ...caused].map(orderFindingKey).sort();
    const rows = await db.sql<
      { type: string; order_id: string | null; payment_id: string | null; sub_merchant_id: string | null }[]
    >`select type, order_id, payment_id, sub_merchant_id from recon.order_discrepancies where status = 'open'`;
    const found = rows
      .map((r) =>
        orderFindingKey({
          type: r.type,
          orderId: r.order_id,
          paymentId: r.payment_id,
          subMerchantId: r.sub_merchant_id,
        }),
      )
      .sort();
    expect(found).toEqual(expected);
    expect(summary.orders).toEqual({ found: expected, expected });
  });

  it('never writes a secret, card data or a card token to logs, events, read models or exports', async () => {
    const creds = scenario.credentials;
    const secrets = creds.flatMap((c) => [c.apiKey, c.apiSecret, c.endpointsKey]);
    // the card tokens the sandbox PSP issued (it accepts them in place of the card): a sample of the month's
    const tokens = [...new Set([...scenario.operations()].map((op) => op.card.token).filter((t) => t !== ''))];
    expect(tokens.length).toBeGreaterThan(10);
    const haystacks: Array<[string, string]> = [
      ['logs', first.stderr + second.stderr],
      ['stdout', first.stdout + second.stdout],
      [
        'events',
        (
          await db.sql<
            { t: string }[]
          >`select coalesce(string_agg(data::text || metadata::text, E'\n'), '') as t from es_events`
        )[0]!.t,
      ],
    ];
    const schemas = await db.sql<
      { schema_name: string }[]
    >`select schema_name from information_schema.schemata where schema_name like 'rm\\_%' or schema_name = 'recon'`;
    for (const { schema_name } of schemas) {
      const tables = await db.sql<
        { table_name: string }[]
      >`select table_name from information_schema.tables where table_schema = ${schema_name}`;
      for (const { table_name } of tables) {
        const [row] = await db.sql.unsafe<{ t: string | null }[]>(
          `select string_agg(t::text, E'\\n') as t from "${schema_name}"."${table_name}" t`,
        );
        haystacks.push([`${schema_name}.${table_name}`, row?.t ?? '']);
      }
    }
    for (const f of readdirSync(path.join(dir, 'out')).filter((f) => f.endsWith('.xlsx')))
      haystacks.push([f, await workbookText(path.join(dir, 'out', f))]);
    expect(first.stderr).toMatch(/"level":"debug"/); // the logs really were at debug level
    for (const [where, text] of haystacks) {
      for (const s of secrets) expect(text.includes(s), `secret found in ${where}`).toBe(false);
      for (const card of CARDS) expect(text.includes(card), `card number found in ${where}`).toBe(false);
      expect(/card_cvv/.test(text), `card_cvv found in ${where}`).toBe(false);
      for (const token of tokens) expect(text.includes(token), `card token found in ${where}`).toBe(false);
    }
  });
});
