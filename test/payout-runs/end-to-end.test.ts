import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bankConfigFrom, bankConfigSchema } from '../../src/config/bank';
import { issueStatements } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { parseAmount } from '../../src/money';
import { approveRun, draftRun, paymentFile } from '../../src/payout-runs/actions';
import { runProjections } from '../../src/projector/runner';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { appendAll, at, periodRow, registerRows, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { booked, PAYOUTS_ACCOUNT, payee, payouts } from '../payouts/support';
import { useTestStore } from '../support/db';
import { person, NONE_PAID } from './fixtures';
import { texts, wasmErrors } from './validate';

/**
 * From real events to the bank and back (docs/exceptions.md, "Payout runs"): the statements hold money under a
 * status mismatch; the run pays what they ask; the bank books the file's transfers; the payouts leg finds every
 * one paid, exactly, with nothing to report. The hold, decided pay, is asked for by the next statement and paid
 * by that month's run — never twice.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-payout-runs-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const TZ = 'UTC';
const bank = bankConfigFrom(
  bankConfigSchema.parse({
    accounts: [{ id: PAYOUTS_ACCOUNT, currency: 'UAH', role: 'payouts' }],
    payouts: { dueDays: 5, matchWindowDays: 10 },
  }),
);
const ENV = { RECON_PAYOUTS_DEBTOR_NAME: 'Marketplace LLC' };
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: TZ });
const ana = person('ana', 'analyst');
const iryna = person('iryna', 'approver');
const CREDITOR = 'FR1420041010050500013M02606';

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

function sale(paymentId: string, amount: bigint, periodStatus: 'success' | 'failure') {
  const dateTime = at('2024-03-10T10:00:00Z');
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

/** Drafted by one, approved by another; the file's transfers, as the bank books them once it executes them. */
async function payMonth(month: string, bookingDate: string, bankRef: string) {
  const r = await draftRun(fx.store, ana, { month, bank, env: ENV, paidByBank: NONE_PAID });
  await approveRun(fx.store, iryna, r.run!.id, { timezone: TZ });
  const f = await paymentFile(fx.store, ana, r.run!.id, { timezone: TZ });
  expect(await wasmErrors(f.xml)).toEqual([]);
  const t = texts(f.xml);
  const pick = (p: string) => t.filter((x) => x.path.endsWith(p));
  const transfers = pick('CdtTrfTxInf/PmtId/EndToEndId').map((e, i) => {
    const amount = pick('CdtTrfTxInf/Amt/InstdAmt')[i]!;
    const parsed = parseAmount(amount.text);
    if (!parsed.ok) throw new Error(parsed.reason);
    return { endToEndId: e.text, amount: parsed.minor, currency: amount.attributes.Ccy! };
  });
  await appendAll(
    fx.store,
    transfers.map((x, i) =>
      booked({
        ...x,
        bookingDate,
        bankRef: `${bankRef}-${i}`,
        counterpartyAccount: CREDITOR,
        remittance: x.endToEndId,
      }),
    ),
  );
  return { run: r.run!, transfers };
}

describe('a payout run, end to end', () => {
  it('pays exactly what the statements ask; the bank’s debits are found paid, nothing to report', async () => {
    await appendAll(fx.store, [
      payee('SM-A', 'Alpha Shop', CREDITOR),
      ...sale('pay-ok', 100_00n, 'success'),
      ...sale('pay-s1', 50_00n, 'failure'),
      syncCompleted({
        from: at('2024-03-10T00:00:00Z'),
        to: at('2024-03-11T00:00:00Z'),
        completedAt: at('2024-03-14T00:00:00Z'),
        reportId: 'rep-1',
        announced: 2,
      }),
    ]);
    await settle();
    await issueStatements(deps(), { month: '2024-03', outDir: out });
    const march = await payMonth('2024-03', '2024-04-05', 'p1');
    // 150.00 earned, 50.00 held under the status mismatch: 100.00 asked and paid
    expect(march.run.lines.map((l) => [l.reference, l.amount])).toEqual([['RS-SM-A-2024-03-UAH', '10000']]);
    expect(march.run.heldInForce.map((h) => h.amount)).toEqual(['5000']);
    expect(march.transfers).toEqual([{ endToEndId: 'RS-SM-A-2024-03-UAH', amount: 100_00n, currency: 'UAH' }]);
    await settle();
    expect(await fx.db.sql`select reference, status, amount, paid_out from recon.payouts order by reference`).toEqual([
      { reference: 'RS-SM-A-2024-03-UAH', status: 'paid', amount: 100_00n, paid_out: 100_00n },
    ]);
    expect(await fx.db.sql`select type from recon.payout_discrepancies where status = 'open'`).toEqual([]);
  });

  it('a hold decided pay: listed, then asked for by the next statement and paid by its run, once', async () => {
    const [held] = await fx.db.sql<{ id: string }[]>`
      select id::text from recon.discrepancies where type = 'status_mismatch' and payment_id = 'pay-s1'`;
    const accepted = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      {
        id: held!.id,
        note: 'the PSP confirmed the sale',
        by: 'Olena',
        at: new Date('2024-04-02T09:00:00Z'),
        decision: 'pay',
      },
    );
    expect(accepted.ok).toBe(true);
    const listed = await draftRun(fx.store, ana, { month: '2024-03', bank, env: ENV, paidByBank: NONE_PAID });
    expect(listed.run).toBeNull();
    expect(listed.plan.releasedSinceStatement).toMatchObject([
      { discrepancyId: held!.id, amount: '5000', decision: 'pay' },
    ]);

    await settle();
    await issueStatements(deps(), { month: '2024-04', outDir: out });
    const april = await payMonth('2024-04', '2024-05-03', 'p2');
    expect(april.run.lines).toEqual([
      expect.objectContaining({
        reference: 'RS-SM-A-2024-04-UAH',
        amount: '5000',
        releasedHolds: [{ discrepancyId: held!.id, amount: '5000', decision: 'pay' }],
      }),
    ]);
    await settle();
    expect(await fx.db.sql`select reference, status, paid_out from recon.payouts order by reference`).toEqual([
      { reference: 'RS-SM-A-2024-03-UAH', status: 'paid', paid_out: 100_00n },
      { reference: 'RS-SM-A-2024-04-UAH', status: 'paid', paid_out: 50_00n },
    ]);
    expect(await fx.db.sql`select type from recon.payout_discrepancies where status = 'open'`).toEqual([]);
    // both months drafted again: nothing new
    for (const month of ['2024-03', '2024-04'])
      expect((await draftRun(fx.store, ana, { month, bank, env: ENV, paidByBank: NONE_PAID })).run).toBeNull();
  });
});
