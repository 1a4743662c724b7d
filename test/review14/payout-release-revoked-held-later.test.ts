import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { dataOf } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { approveRun, draftRun } from '../../src/payout-runs/actions';
import { planRun, type StatementRun } from '../../src/payout-runs/plan';
import { resolvedNowOf } from '../../src/payout-runs/resolved';
import { runProjections } from '../../src/projector/runner';
import { revokeDecision } from '../../src/reconciliation/decisions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { appendAll, at, periodRow, registerRows, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { BANK, ENV, NONE_PAID, person } from '../payout-runs/fixtures';
import { bank, payee, payouts } from '../payouts/support';
import { useTestStore } from '../support/db';

/**
 * April's statement releases 50.00 held since March (decided pay) and asks it with April's own 30.00. The
 * decision is revoked before April is paid: the run leaves April's reference out (hold_in_force). May's statement,
 * built on April's, holds the 50.00 again and so takes it off its own amount due (−50.00, carried as owed back).
 * The discrepancy then ends in withhold: April's reference stayed left out for ever, so the sub-merchant lost
 * the 50.00 twice (never paid by April's run, and owed back from May on) and April's undisputed 30.00 with it.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-review14-held-later-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const TZ = 'UTC';
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: TZ });
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const NOW = new Date('2024-06-04T09:00:00.000Z'); // a Tuesday

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections({
      ...deps(),
      graceHours: 48,
      bank,
      projections: [journal, reconciliation, payouts],
    });
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A sale on `day` to Alpha Shop, the period report stating `status`, and the day's sync completed. */
function sale(paymentId: string, amount: bigint, status: 'success' | 'failure', day: string, reportId: string) {
  const dateTime = at(`${day}T10:00:00Z`);
  const observedAt = at(`${day}T23:00:00Z`);
  const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();
  // completed three days on: past the grace the reconciliation waits before it reports a difference
  const completedAt = new Date(Date.parse(next) + 3 * 86_400_000).toISOString();
  return [
    registerRows({
      paymentId,
      dateTime,
      amount: amount + 1_00n,
      receivers: [{ name: 'Alpha Shop', amount, fee: 1_00n }],
      reportId,
      observedAt,
    }),
    periodRow({ paymentId, dateTime, amount: amount + 1_00n, status, reportId, observedAt }),
    syncCompleted({ from: at(`${day}T00:00:00Z`), to: next, completedAt, reportId, announced: 1 }),
  ];
}

const latest = async (month: string) => {
  const runs = (await fx.store.readStream(statementStream(month))).filter((e) => e.type === StatementIssued.type);
  return dataOf(StatementIssued, runs.at(-1)!).payouts!.find((p) => p.subMerchantId === 'SM-A')!;
};
const live = () => ({ paidByBank: NONE_PAID, resolvedNow: resolvedNowOf(fx.db.sql) });
const draft = (month: string) => draftRun(fx.store, ana, { month, bank: BANK, env: ENV, ...live(), now: NOW });
const issue = async (month: string) => {
  await settle();
  return issueStatements(deps(), { month, outDir: out });
};

describe('a release revoked before its run, the money held again by the next month', () => {
  it('pays the earlier ask once a later statement took the money off, never withholding it twice', async () => {
    await appendAll(fx.store, [
      payee('SM-A', 'Alpha Shop', 'FR1420041010050500013M02606'),
      ...sale('pay-ok', 100_00n, 'success', '2024-03-10', 'rep-1'),
      ...sale('pay-s1', 50_00n, 'failure', '2024-03-11', 'rep-2'),
    ]);
    const march = await issue('2024-03');
    const [d] = await fx.db.sql<{ id: string }[]>`
      select id::text from recon.discrepancies where type = 'status_mismatch' and payment_id = 'pay-s1'`;
    const id = d!.id;
    expect((await latest('2024-03')).holds).toEqual([[id, '5000']]);
    const paidMarch = (await draft('2024-03')).run!;
    await approveRun(fx.store, iryna, paidMarch.id, { timezone: TZ, now: NOW });

    const decided = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id, note: 'the PSP confirmed it', by: 'olena', at: new Date('2024-04-02T09:00:00Z'), decision: 'pay' },
    );
    expect(decided.ok).toBe(true);
    await appendAll(fx.store, sale('pay-a2', 30_00n, 'success', '2024-04-10', 'rep-3'));
    const april = await issue('2024-04');
    expect(await latest('2024-04')).toMatchObject({ reference: 'RS-SM-A-2024-04-UAH', payable: '8000', holds: [] });

    // new evidence: the decision is taken back before April is paid; the run holds the 80.00 back
    const revoked = await revokeDecision(fx.store, { id, reason: 'new evidence', by: 'olena', at: NOW });
    expect(revoked.ok).toBe(true);
    expect((await draft('2024-04')).plan.leftOut.map((l) => [l.reference, l.amount, l.reason])).toEqual([
      ['RS-SM-A-2024-04-UAH', '8000', 'hold_in_force'],
    ]);

    // May holds the 50.00 again, built on April's release: taken off May, carried as owed back
    const may = await issue('2024-05');
    expect(await latest('2024-05')).toMatchObject({ holds: [[id, '5000']], amountDue: '-5000', owedBack: '5000' });

    // the discrepancy ends in withhold
    await settle();
    const withheld = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id, note: 'the sale failed', by: 'olena', at: NOW, decision: 'withhold' },
    );
    expect(withheld.ok).toBe(true);

    // what runs pay + what is held − what is owed back = what the sub-merchant earned, every month together
    const aprilRun = await draft('2024-04');
    const paid = [paidMarch, aprilRun.run]
      .flatMap((r) => r?.lines ?? [])
      .filter((l) => l.subMerchantId === 'SM-A')
      .reduce((s, l) => s + BigInt(l.amount), 0n);
    const earned = [march, april, may]
      .flatMap((r) => r.figures)
      .filter((f) => f.subMerchantId === 'SM-A')
      .reduce((s, f) => s + (f.adjustments ?? 0n) + (f.notStated ?? 0n) + f.netPayable, 0n);
    const m = await latest('2024-05');
    expect(paid + BigInt(m.held) - BigInt(m.owedBack ?? '0')).toBe(earned);
    expect(aprilRun.plan.leftOut).toEqual([]);
    expect(aprilRun.run!.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-A-2024-04-UAH', '8000']]);
    // and the run is approved: the money it carries is held by May's statement, not in doubt twice
    await approveRun(fx.store, iryna, aprilRun.run!.id, { timezone: TZ, now: NOW, ...live() });
  });
});

describe('the same month corrected, holding the released money again', () => {
  const D1 = '11111111-1111-4111-8111-111111111111';
  const row = (reference: string | null, payable: string, holds: [string, string][], stillAsked?: string) => ({
    subMerchantId: 'SM-A',
    currency: 'EUR',
    reference,
    payable,
    holds,
    ...(stillAsked ? { stillAsked } : {}),
  });
  const run = (id: string, month: string, cut: string, payouts: StatementRun['payouts']): StatementRun => ({
    id,
    month,
    cut,
    payouts,
  });
  // March held 50.00; April released it (decided pay) with 30.00 of its own; April corrected after the decision
  // was turned to withhold: held again, April's ask lowered to the 30.00 nobody disputes
  const march = run('aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', '2024-03', '1/1', [
    row('RS-SM-A-2024-03-EUR', '10000', [[D1, '5000']]),
  ]);
  const april = run('bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb', '2024-04', '2/2', [row('RS-SM-A-2024-04-EUR', '8000', [])]);
  const corrected = run('cccccccc-cccc-4ccc-8ccc-cccccccccccc', '2024-04', '3/3', [
    row(null, '0', [[D1, '5000']], '3000'),
  ]);

  it('pays the 30.00 the corrected month still asks', () => {
    const plan = planRun({
      runs: [april, corrected],
      before: march,
      payoutRuns: [],
      payees: new Map([['SM-A', { name: 'A', legalName: null, payoutAccount: 'FR1420041010050500013M02606' }]]),
      decisions: new Map([[D1, 'withhold']]),
      paidByBank: new Map(),
    });
    expect(plan.leftOut).toEqual([]);
    expect(plan.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-A-2024-04-EUR', '3000']]);
  });
});
