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
import { approveRun, cancelRun, draftRun } from '../../src/payout-runs/actions';
import { resolvedNowOf } from '../../src/payout-runs/resolved';
import { runProjections } from '../../src/projector/runner';
import { appendAll, at, periodRow, registerRows, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { BANK, ENV, NONE_PAID, person } from '../payout-runs/fixtures';
import { bank, payee, payouts } from '../payouts/support';
import { useTestStore } from '../support/db';

/**
 * Money held for a discrepancy, released by the next statement because the sources came to agree (resolved, no
 * decision), then put in doubt again by a later report before the month is paid: the reconciliation re-opens the
 * same discrepancy. The payout run read only decisions (revoked, withhold) and paid the released money, in doubt
 * again and held by nothing: a run drafted then paid it, and one drafted before was approved.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-review14-reopened-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const TZ = 'UTC';
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: TZ });
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const NOW = new Date('2024-05-07T09:00:00.000Z'); // a Tuesday

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

const dateTime = at('2024-03-10T10:00:00Z');
const day = { from: at('2024-03-10T00:00:00Z'), to: at('2024-03-11T00:00:00Z') };
const observed = at('2024-03-11T00:00:00Z');
const sale = (paymentId: string, amount: bigint, status: 'success' | 'failure') => [
  registerRows({
    paymentId,
    dateTime,
    amount: amount + 1_00n,
    receivers: [{ name: 'Alpha Shop', amount, fee: 1_00n }],
    reportId: 'rep-1',
    observedAt: observed,
  }),
  periodRow({ paymentId, dateTime, amount: amount + 1_00n, status, reportId: 'rep-1', observedAt: observed }),
];
/** A later period report stating pay-s1 with `status`, and its window completed. */
const report = (reportId: string, status: 'success' | 'pending', on: string) => [
  periodRow({ paymentId: 'pay-s1', dateTime, amount: 51_00n, status, reportId, observedAt: at(`${on}T00:00:00Z`) }),
  syncCompleted({ ...day, completedAt: at(`${on}T01:00:00Z`), reportId, announced: 2 }),
];

const lastPayouts = async (month: string) =>
  dataOf(StatementIssued, (await fx.store.readStream(statementStream(month))).at(-1)!).payouts!;
const statusOf = async (id: string) =>
  (await fx.db.sql<{ status: string }[]>`select status from recon.discrepancies where id = ${id}::uuid`)[0]!.status;
const live = () => ({ paidByBank: NONE_PAID, resolvedNow: resolvedNowOf(fx.db.sql) });
const draft = (month: string) => draftRun(fx.store, ana, { month, bank: BANK, env: ENV, ...live(), now: NOW });

describe('a hold released as resolved, its discrepancy re-opened before the run', () => {
  it('is held by the run: left out when drafted after, refused at approval when drafted before', async () => {
    await appendAll(fx.store, [
      payee('SM-A', 'Alpha Shop', 'FR1420041010050500013M02606'),
      ...sale('pay-ok', 100_00n, 'success'),
      ...sale('pay-s1', 50_00n, 'failure'),
      syncCompleted({ ...day, completedAt: at('2024-03-14T00:00:00Z'), reportId: 'rep-1', announced: 2 }),
    ]);
    await settle();
    const [d] = await fx.db.sql<{ id: string }[]>`
      select id::text from recon.discrepancies where type = 'status_mismatch' and payment_id = 'pay-s1'`;
    const id = d!.id;
    await issueStatements(deps(), { month: '2024-03', outDir: out });
    expect((await lastPayouts('2024-03')).map((p) => [p.payable, p.holds])).toEqual([['10000', [[id, '5000']]]]);

    // the PSP reports pay-s1 a success: resolved, and April's statement releases the 50.00
    await appendAll(fx.store, report('rep-2', 'success', '2024-04-01'));
    await settle();
    expect(await statusOf(id)).toBe('resolved');
    await issueStatements(deps(), { month: '2024-04', outDir: out });
    expect((await lastPayouts('2024-04')).map((p) => [p.reference, p.payable, p.holds])).toEqual([
      ['RS-SM-A-2024-04-UAH', '5000', []],
    ]);
    const before = (await draft('2024-04')).run!;
    expect(before.lines.map((l) => [l.amount, l.releasedHolds.map((h) => h.decision)])).toEqual([
      ['5000', ['resolved']],
    ]);

    // a later report says pending: the same discrepancy is open again, the 50.00 in doubt, no statement holds it
    await appendAll(fx.store, report('rep-3', 'pending', '2024-04-20'));
    await settle();
    expect(await statusOf(id)).toBe('open');
    await expect(approveRun(fx.store, iryna, before.id, { timezone: TZ, now: NOW, ...live() })).rejects.toMatchObject({
      code: 'HOLD_IN_FORCE',
    });
  });

  it('a run drafted after the re-opening leaves the line out (hold_in_force)', async () => {
    await cancelRun(fx.store, ana, 'PR-2024-04-1', 'drafted again', NOW);
    const d = await draft('2024-04');
    expect(d.run).toBeNull();
    expect(d.plan.leftOut).toEqual([
      expect.objectContaining({ reference: 'RS-SM-A-2024-04-UAH', amount: '5000', reason: 'hold_in_force' }),
    ]);
  });
});
