import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reconEnv } from '../../fixtures/psp-env';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { dataOf } from '../../src/events/catalog';
import { StatementIssued, statementStream } from '../../src/events/statement-events';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { approveRun, cancelRun, draftRun } from '../../src/payout-runs/actions';
import { resolvedNowOf } from '../../src/payout-runs/resolved';
import { revokeDecision } from '../../src/reconciliation/decisions';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { runProjections } from '../../src/projector/runner';
import { appendAll, at, periodRow, registerRows, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { BANK, ENV, NONE_PAID, person } from '../payout-runs/fixtures';
import { bank, payee, payouts } from '../payouts/support';
import { useTestStore } from '../support/db';

/**
 * Review 9: a decision to pay held money, revoked after a statement released the money, while the sources came
 * to agree meanwhile (the acceptance froze the discrepancy; taken back, the reconciliation finds it resolved at
 * once). The money is no longer in doubt: nothing holds it again, no statement asks for it again, and a resolved
 * discrepancy can no longer be accepted. The payout run read the last word on the discrepancy's own stream
 * alone ('revoked') and left the released money out as `hold_in_force` at every draft, and refused a run drafted
 * before (HOLD_IN_FORCE): the sub-merchant's money was never paid by any run.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-review9-'));
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
function sale(paymentId: string, amount: bigint, periodStatus: 'success' | 'failure') {
  return [
    registerRows({
      paymentId,
      dateTime,
      amount: amount + 1_00n,
      receivers: [{ name: 'Alpha Shop', amount, fee: 1_00n }],
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
    periodRow({
      paymentId,
      dateTime,
      amount: amount + 1_00n,
      status: periodStatus,
      reportId: 'rep-1',
      observedAt: at('2024-03-11T00:00:00Z'),
    }),
  ];
}
const day = { from: at('2024-03-10T00:00:00Z'), to: at('2024-03-11T00:00:00Z') };

const lastPayouts = async (month: string) => {
  const events = await fx.store.readStream(statementStream(month));
  return dataOf(StatementIssued, events.at(-1)!).payouts!;
};
const statusOf = async (id: string) =>
  (await fx.db.sql<{ status: string }[]>`select status from recon.discrepancies where id = ${id}::uuid`)[0]!.status;
const draft = (month: string) =>
  draftRun(fx.store, ana, {
    month,
    bank: BANK,
    env: ENV,
    paidByBank: NONE_PAID,
    resolvedNow: resolvedNowOf(fx.db.sql),
    now: NOW,
  });

describe('review9: a release whose decision was revoked once the sources agreed', () => {
  it('is paid by the next run, and a run drafted before the revocation is approved', async () => {
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
    expect((await lastPayouts('2024-03')).map((p) => [p.reference, p.payable, p.holds])).toEqual([
      ['RS-SM-A-2024-03-UAH', '10000', [[id, '5000']]],
    ]);

    // decided pay; then the PSP reports pay-s1 a success after all (the accepted discrepancy stays frozen)
    const accepted = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id, note: 'checked with the PSP', by: 'Olena', at: new Date('2024-04-02T09:00:00Z'), decision: 'pay' },
    );
    expect(accepted.ok).toBe(true);
    await appendAll(fx.store, [
      periodRow({
        paymentId: 'pay-s1',
        dateTime,
        amount: 51_00n,
        status: 'success',
        reportId: 'rep-2',
        observedAt: at('2024-04-01T00:00:00Z'),
      }),
      syncCompleted({ ...day, completedAt: at('2024-04-03T00:00:00Z'), reportId: 'rep-2', announced: 2 }),
    ]);
    await settle();
    expect(await statusOf(id)).toBe('accepted');
    // April's statement releases the 50.00 into its amount due
    await issueStatements(deps(), { month: '2024-04', outDir: out });
    expect((await lastPayouts('2024-04')).map((p) => [p.reference, p.payable, p.holds])).toEqual([
      ['RS-SM-A-2024-04-UAH', '5000', []],
    ]);
    const before = (await draft('2024-04')).run!;
    expect(before.lines.map((l) => [l.reference, l.amount, l.releasedHolds.map((h) => h.decision)])).toEqual([
      ['RS-SM-A-2024-04-UAH', '5000', ['pay']],
    ]);

    // the decision taken back (made on the wrong evidence): the sources agree, the discrepancy is resolved
    const revoked = await revokeDecision(fx.store, { id, reason: 'decided on the wrong report', by: 'Olena', at: NOW });
    expect(revoked.ok).toBe(true);
    await settle();
    expect(await statusOf(id)).toBe('resolved');
    // nothing holds the money again, and nothing can decide it any more
    await issueStatements(deps(), { month: '2024-04', outDir: out });
    expect((await lastPayouts('2024-04')).map((p) => [p.reference, p.payable, p.holds])).toEqual([
      ['RS-SM-A-2024-04-UAH', '5000', []],
    ]);
    const again = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id, note: 'pay it', by: 'Olena', at: NOW, decision: 'pay' },
    );
    expect(again).toMatchObject({ ok: false, code: 'ALREADY_RESOLVED' });

    // the run drafted before is approved: the money it releases is not in doubt
    const approved = await approveRun(fx.store, iryna, before.id, {
      timezone: TZ,
      now: NOW,
      resolvedNow: resolvedNowOf(fx.db.sql),
    });
    expect(approved.status).toBe('approved');
  });

  it('a draft made after the revocation pays it (the month drafted again once the first run is cancelled)', async () => {
    await cancelRun(fx.store, ana, 'PR-2024-04-1', 'drafted again', NOW);
    const d = await draft('2024-04');
    expect(d.plan.leftOut).toEqual([]);
    expect(d.run!.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-A-2024-04-UAH', '5000']]);
  });
});

/** The real binary, as finance types it (RECON_TOKEN names who acts). */
function recon(args: string[], token?: string) {
  const config = path.join(out, 'recon.json');
  writeFileSync(
    config,
    JSON.stringify({ bank: { accounts: [{ id: 'UA213223130000026007233566001', currency: 'UAH', role: 'payouts' }] } }),
  );
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [path.resolve('bin/recon.mjs'), ...args], {
      env: reconEnv({
        databaseUrl: fx.db.url,
        timezone: TZ,
        extra: {
          RECON_LOG_LEVEL: 'error',
          RECON_CONFIG: config,
          RECON_ISSUER_NAME: 'Marketplace LLC',
          ...(token ? { RECON_TOKEN: token } : {}),
        },
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('review9: the same through recon payout-runs', () => {
  it('draft pays the released money; approve approves it', async () => {
    await cancelRun(fx.store, ana, 'PR-2024-04-2', 'drafted again through the binary', NOW);
    const admin = (await recon(['users', 'add', 'olena', '--name', 'Olena', '--role', 'admin'])).stdout.trim();
    const token: Record<string, string> = {};
    for (const [id, role] of [
      ['ana', 'analyst'],
      ['iryna', 'approver'],
    ] as const) {
      const r = await recon(['users', 'add', id, '--name', id, '--role', role], admin);
      expect(r.code, r.stderr).toBe(0);
      token[id] = r.stdout.trim();
    }
    const drafted = await recon(['payout-runs', 'draft', '--month', '2024-04'], token.ana);
    expect(drafted.code, drafted.stderr).toBe(0);
    expect(drafted.stdout).toContain('drafted PR-2024-04-3');
    expect(drafted.stdout).not.toContain('left out');
    const shown = await recon(['payout-runs', 'show', 'PR-2024-04-3'], token.ana);
    expect(shown.stdout).toContain('RS-SM-A-2024-04-UAH  50.00 UAH');
    const approved = await recon(['payout-runs', 'approve', 'PR-2024-04-3'], token.iryna);
    expect(approved.code, approved.stderr).toBe(0);
  }, 240_000);
});
