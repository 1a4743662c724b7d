import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTS, demoBankConfig, fileStatement, statusTruth } from '../../src/cli/demo-bank';
import { cutDay, payoutStatusesAt } from '../../src/export/payouts/paid-out';
import { importBankFiles } from '../../src/ingest/bank/import';
import { knownEventsOf } from '../../src/ingest/bank/known-events';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { bankWorld, type ExpectedPayout } from '../../src/sandbox/bank';
import { renderCamt053, renderMt940 } from '../../src/sandbox/bank-files';
import { projection as bankProjection } from '../../projections/bank';
import { projection as journal } from '../../projections/journal';
import { projection as payoutsProjection } from '../../projections/payouts';
import { projection as settlement } from '../../projections/settlement';
import { scenarioFor } from '../../fixtures/scenario-events';
import { useTestStore } from '../support/db';
import { appendAll, issued, payee } from './support';

/**
 * The demo's sandbox bank (src/sandbox/bank.ts through src/cli/demo-bank.ts): its statements written as the
 * demo writes them (camt.053 for the payouts accounts, MT940 for the settlement accounts) and imported; every
 * expected payout's status, read as a statement reads it, is the bank's ground truth (one missing, one paid
 * twice, one returned, the rest paid), and the bank's charges are bank fees, no payout discrepancy.
 */

const fx = useTestStore();
const dir = mkdtempSync(path.join(tmpdir(), 'recon-bank-sandbox-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const bank = demoBankConfig();
const scenario = scenarioFor({ seed: 'bank-truth', payments: 120, month: '2025-03', timezone: 'UTC', subMerchants: 4 });
const shops = scenario.subMerchants.slice(0, 4);
const payouts: ExpectedPayout[] = shops.flatMap((s, i) =>
  ['EUR', 'UAH'].map((currency, k) => ({
    reference: `RS-P${i}-2025-03-${currency}`,
    subMerchantId: s.id,
    payeeAccount: `UA21322313000002600723356${i}${k}0`,
    payeeName: s.name,
    currency,
    amount: 500_00n + BigInt(i * 2 + k) * 1_11n,
    issuedOn: '2025-04-01',
  })),
);

describe("the demo's sandbox bank", () => {
  it("every expected payout's status is the bank's ground truth; its charges are bank fees", async () => {
    await appendAll(fx.store, [
      ...shops.map((s) => payee(s.id, s.name)),
      issued(
        '2025-03',
        '2025-04-01T08:00:00Z',
        payouts.map((p) => ({
          subMerchantId: p.subMerchantId,
          reference: p.reference,
          payable: p.amount,
          currency: p.currency,
        })),
      ),
    ]);
    const world = bankWorld(scenario, {
      accounts: DEMO_ACCOUNTS,
      lagBusinessDays: 1,
      holidays: [],
      tolerance: { EUR: 50n, UAH: 200n, USD: 50n, XTS: 50n },
      payouts,
    });
    const payoutsAccounts = new Set(Object.values(DEMO_ACCOUNTS).map((a) => a.payouts));
    const files = world.statements.map((s) => {
      const camt = payoutsAccounts.has(s.account);
      const f = path.join(dir, `${s.statementId}.${camt ? 'xml' : 'sta'}`);
      writeFileSync(f, camt ? renderCamt053(fileStatement(s)) : renderMt940(fileStatement(s)));
      return f;
    });
    await importBankFiles(fx.store, knownEventsOf(fx.store, fx.db.sql), files, { accounts: bank.accounts });
    for (let i = 0; i < 100; i++) {
      const r = await runProjections({
        sql: fx.db.sql,
        store: fx.store,
        log: silentLogger,
        timezone: 'UTC',
        graceHours: 48,
        bank,
        projections: [bankProjection, journal, payoutsProjection, settlement],
      });
      if (r.projections.every((p) => p.position === r.head)) break;
    }

    const head = (await fx.store.headPosition())!;
    const statuses = (await payoutStatusesAt(fx.db.sql, head, bank.payouts, await cutDay(fx.store, head, 'UTC')))!;
    const truth = statusTruth(
      payouts.map((p) => p.reference),
      world.truth,
    );
    expect(Object.fromEntries(statuses.map((s) => [s.reference, s.status]))).toEqual(truth);
    expect(Object.values(truth).sort()).toEqual([
      'duplicated',
      'missing',
      'paid',
      'paid',
      'paid',
      'paid',
      'paid',
      'returned',
    ]);
    // the live read model says the same
    const live = await fx.db.sql<{ reference: string; status: string }[]>`select reference, status from recon.payouts`;
    expect(Object.fromEntries(live.map((s) => [s.reference, s.status]))).toEqual(truth);
    // what paid each one: the bank's reference and the payee's account, as the bank wrote them
    for (const s of statuses.filter((x) => x.status === 'paid')) {
      const p = payouts.find((x) => x.reference === s.reference)!;
      expect([s.paidOut, s.paidTo, s.bankRef !== null, s.paidOn !== null]).toEqual([
        p.amount,
        p.payeeAccount,
        true,
        true,
      ]);
    }

    // the bank's charges: no payout discrepancy, booked as bank fees
    const found = await fx.db.sql<{ type: string }[]>`select type from recon.payout_discrepancies order by type`;
    expect(found.map((d) => d.type)).toEqual(['payout_duplicate', 'payout_missing', 'payout_returned']);
    expect(world.accountCharges.length).toBeGreaterThanOrEqual(6);
    const [fees] = await fx.db.sql<{ total: string; n: number }[]>`
      select coalesce(sum(amount), 0)::text as total, count(*)::int as n from recon.journal_lines
      where account = 'bank_fees' and component = 'bank_charge'`;
    // and the charge the bank folded into one payout's debit: a bank fee too, the payout paid in full (above)
    expect(world.foldedCharges).toHaveLength(1);
    const taken = [...world.accountCharges, ...world.foldedCharges];
    expect([BigInt(fees!.total), fees!.n]).toEqual([taken.reduce((s, c) => s + c.amount, 0n), taken.length]);
  });
});
