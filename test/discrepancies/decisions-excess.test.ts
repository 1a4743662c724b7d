import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { StatementIssued } from '../../src/events/statement-events';
import { dataOf } from '../../src/events/catalog';
import { heldAt } from '../../src/export/payouts/holds';
import { holdReason } from '../../src/export/i18n/labels';
import { issueStatements, ledgerPosition } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { rebuildProjection, runProjections } from '../../src/projector/runner';
import { acceptDiscrepancy, discrepancyJson, getDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { getException } from '../../src/exceptions/queries';
import { decisionRows } from '../../src/export/nightly/decisions-sheet';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted, viewsDigest, webhook } from './fixtures';
import { inDoubtAsBigint } from '../support/in-doubt';

/**
 * A decision that releases held money (pay) releases the amount the person accepted, not what the sources put
 * in doubt later: the row stays accepted (values, evidence and amount_in_doubt as accepted, the person and the
 * note kept) and shows what is in doubt now (`amount_in_doubt_now`); the statements hold the excess again, with
 * a reason that says so; less in doubt later asks nothing more. A difference (fee_mismatch) and a whole payment
 * (amount_mismatch), and a replay in any batches giving the same rows.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-excess-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const deps = () => ({
  sql: fx.db.sql,
  store: fx.store,
  log: silentLogger,
  timezone: 'UTC',
  graceHours: 48,
  projections: [journal, reconciliation],
});

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections(deps());
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const dateTime = at('2024-03-10T10:00:00Z');
const day = { from: at('2024-03-10T00:00:00Z'), to: at('2024-03-11T00:00:00Z') };
const observedAt = at('2024-03-11T00:00:00Z');

interface Row {
  id: string;
  type: string;
  status: string;
  accepted_by: string | null;
  accepted_note: string | null;
  amount_in_doubt: bigint | null;
  amount_in_doubt_now: bigint | null;
  values: Record<string, unknown>;
}
const rowOf = async (paymentId: string, type: string) =>
  inDoubtAsBigint(
    (await fx.db.sql<Row[]>`select * from recon.discrepancies where payment_id = ${paymentId} and type = ${type}`)[0]!,
  );
const heldNow = async () => {
  const cut = (await ledgerPosition(fx.db.sql))!;
  return ((await heldAt(fx.db.sql, fx.store, cut)) ?? []).map((h) => [h.paymentId, h.amount, h.reason] as const);
};
const acceptPay = (id: string) =>
  acceptDiscrepancy(
    { sql: fx.db.sql, store: fx.store },
    { id, note: 'checked with the PSP', by: 'Olena K.', at: new Date('2024-03-20T09:00:00Z'), decision: 'pay' },
  );

describe('a release covers the amount accepted: more in doubt later is held again', () => {
  it('a fee difference accepted to pay, grown since: the growth is held, and nothing when it shrinks', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      // the register says the merchant fee is 3.00, the period report 5.00: 2.00 in doubt
      registerRows({
        paymentId: 'pay-f',
        dateTime,
        amount: 100_00n,
        receivers: [{ name: 'Alpha Shop', amount: 97_00n, fee: 3_00n }],
        reportId: 'rep-1',
        observedAt,
      }),
      periodRow({ paymentId: 'pay-f', dateTime, amount: 100_00n, merchantFee: 5_00n, reportId: 'rep-1', observedAt }),
      syncCompleted({ ...day, completedAt: at('2024-03-14T00:00:00Z'), reportId: 'rep-1', announced: 1 }),
    ]);
    await settle();
    const open = await rowOf('pay-f', 'fee_mismatch');
    expect(open).toMatchObject({ status: 'open', amount_in_doubt: 2_00n, amount_in_doubt_now: 2_00n });
    const reason = (await heldNow())[0]?.[2] ?? '';
    expect(await heldNow()).toEqual([['pay-f', 2_00n, reason]]);

    expect(await acceptPay(open.id)).toMatchObject({ ok: true });
    await settle();
    expect(await heldNow()).toEqual([]);

    // a later report gives the fee as 8.00: 5.00 in doubt, 3.00 more than the person accepted to pay
    await appendAll(fx.store, [
      periodRow({
        paymentId: 'pay-f',
        dateTime,
        amount: 100_00n,
        merchantFee: 8_00n,
        reportId: 'rep-2',
        observedAt: at('2024-03-25T00:00:00Z'),
      }),
    ]);
    await settle();
    const grown = await rowOf('pay-f', 'fee_mismatch');
    expect(grown).toMatchObject({
      status: 'accepted',
      accepted_by: 'Olena K.',
      accepted_note: 'checked with the PSP',
      amount_in_doubt: 2_00n,
      amount_in_doubt_now: 5_00n,
    });
    // the values stay as accepted
    expect((grown.values.period as { merchant_fee: string }).merchant_fee).toBe('500');
    // a person reading the discrepancy or its exception is told
    const record = await getDiscrepancy(fx.db.sql, open.id);
    const json = record.ok && record.value ? discrepancyJson(record.value) : {};
    expect(json).toMatchObject({
      status: 'accepted',
      accepted_by: 'Olena K.',
      since_accepted: { amount_in_doubt: '200', amount_in_doubt_now: '500' },
    });
    expect(json.what_differs).toMatch(/; accepted with 2\.00 UAH in doubt, 5\.00 UAH in doubt now$/);
    const exception = await getException(fx.db.sql, open.id);
    expect(exception).toMatchObject({ state: 'accepted' });
    expect(exception?.why).toBe(
      'more in doubt than when it was accepted (5.00 UAH now, 2.00 UAH then): the statements hold the 3.00 UAH above it; reopen it to decide again',
    );
    // and it is work again on the nightly Decisions sheet
    const sheet = async () => (await decisionRows(fx.db.sql, new Date('2024-03-31T00:00:00Z'))).map((r) => r.id);
    expect(await sheet()).toContain(open.id);
    const excess = await heldNow();
    expect(excess).toEqual([['pay-f', 3_00n, `${reason} (reviewed: released as accepted; more in doubt since)`]]);
    expect(holdReason(excess[0]![2], 'uk')).toContain('(розглянуто: виплачено прийняту суму; понад неї під сумнівом)');

    // the next statement holds the 3.00, on the discrepancy accepted
    const cut = (await ledgerPosition(fx.db.sql))!;
    await issueStatements(
      { sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: 'UTC' },
      { month: '2024-03', outDir: out, atPosition: cut },
    );
    const issued = await fx.store.readStream('statements-2024-03');
    const payouts = dataOf(StatementIssued, issued.at(-1)!).payouts!;
    expect(payouts.find((p) => p.subMerchantId === 'SM-A')).toMatchObject({ held: '300', holds: [[open.id, '300']] });

    // a report giving 4.00: 1.00 in doubt, less than accepted, asks nothing more
    await appendAll(fx.store, [
      periodRow({
        paymentId: 'pay-f',
        dateTime,
        amount: 100_00n,
        merchantFee: 4_00n,
        reportId: 'rep-3',
        observedAt: at('2024-03-26T00:00:00Z'),
      }),
    ]);
    await settle();
    expect(await rowOf('pay-f', 'fee_mismatch')).toMatchObject({
      status: 'accepted',
      amount_in_doubt: 2_00n,
      amount_in_doubt_now: 1_00n,
    });
    expect(await heldNow()).toEqual([]);
    const less = await getException(fx.db.sql, open.id);
    expect(less?.why).toBeNull();
    expect(await sheet()).not.toContain(open.id);
    expect(less?.whatDiffers).toMatch(/; accepted with 2\.00 UAH in doubt, 1\.00 UAH in doubt now$/);
  });

  it('a payment accepted to pay whose amount in doubt grows: the growth is held, at most what the payment adds', async () => {
    await appendAll(fx.store, [
      registerRows({
        paymentId: 'pay-m',
        dateTime,
        amount: 100_00n,
        receivers: [{ name: 'Alpha Shop', amount: 99_00n, fee: 1_00n }],
        reportId: 'rep-4',
        observedAt,
      }),
      periodRow({ paymentId: 'pay-m', dateTime, amount: 100_00n, merchantFee: 1_00n, reportId: 'rep-4', observedAt }),
      // the notification says 90.00: the amount is in doubt, 100.00 (the largest a source states)
      webhook({
        paymentId: 'pay-m',
        amount: 90_00n,
        fee: null,
        processedAt: dateTime,
        receivedAt: at('2024-03-10T10:00:01Z'),
      }),
      syncCompleted({ ...day, completedAt: at('2024-03-27T00:00:00Z'), reportId: 'rep-4', announced: 1 }),
    ]);
    await settle();
    const open = await rowOf('pay-m', 'amount_mismatch');
    expect(open).toMatchObject({ status: 'open', amount_in_doubt: 100_00n });
    expect(await acceptPay(open.id)).toMatchObject({ ok: true });
    await settle();
    expect((await heldNow()).filter(([p]) => p === 'pay-m')).toEqual([]);

    // a later notification of the same operation says 130.00: 30.00 more in doubt than was released
    await appendAll(fx.store, [
      webhook({
        paymentId: 'pay-m',
        amount: 130_00n,
        fee: null,
        processedAt: at('2024-03-10T10:05:00Z'),
        receivedAt: at('2024-03-28T00:00:00Z'),
      }),
    ]);
    await settle();
    expect(await rowOf('pay-m', 'amount_mismatch')).toMatchObject({
      status: 'accepted',
      amount_in_doubt: 100_00n,
      amount_in_doubt_now: 130_00n,
    });
    expect((await heldNow()).filter(([p]) => p === 'pay-m').map(([, amount]) => amount)).toEqual([30_00n]);

    // and back under what was accepted: nothing more
    await appendAll(fx.store, [
      webhook({
        paymentId: 'pay-m',
        amount: 95_00n,
        fee: null,
        processedAt: at('2024-03-10T10:10:00Z'),
        receivedAt: at('2024-03-29T00:00:00Z'),
      }),
    ]);
    await settle();
    expect(await rowOf('pay-m', 'amount_mismatch')).toMatchObject({ amount_in_doubt_now: 100_00n });
    expect((await heldNow()).filter(([p]) => p === 'pay-m')).toEqual([]);
  });

  it('a fee difference withheld, grown since: all of it is held, not only the difference accepted', async () => {
    await appendAll(fx.store, [
      registerRows({
        paymentId: 'pay-w',
        dateTime,
        amount: 100_00n,
        receivers: [{ name: 'Alpha Shop', amount: 97_00n, fee: 3_00n }],
        reportId: 'rep-5',
        observedAt,
      }),
      periodRow({ paymentId: 'pay-w', dateTime, amount: 100_00n, merchantFee: 5_00n, reportId: 'rep-5', observedAt }),
      syncCompleted({ ...day, completedAt: at('2024-03-29T00:00:00Z'), reportId: 'rep-5', announced: 1 }),
    ]);
    await settle();
    const open = await rowOf('pay-w', 'fee_mismatch');
    const withhold = await acceptDiscrepancy(
      { sql: fx.db.sql, store: fx.store },
      { id: open.id, note: 'ask the PSP', by: 'Olena K.', at: new Date('2024-03-29T09:00:00Z'), decision: 'withhold' },
    );
    expect(withhold).toMatchObject({ ok: true });
    await settle();
    const heldOfW = async () => (await heldNow()).filter(([p]) => p === 'pay-w').map(([, amount]) => amount);
    expect(await heldOfW()).toEqual([2_00n]);
    await appendAll(fx.store, [
      periodRow({
        paymentId: 'pay-w',
        dateTime,
        amount: 100_00n,
        merchantFee: 9_00n,
        reportId: 'rep-6',
        observedAt: at('2024-03-30T00:00:00Z'),
      }),
    ]);
    await settle();
    expect(await rowOf('pay-w', 'fee_mismatch')).toMatchObject({ amount_in_doubt: 2_00n, amount_in_doubt_now: 6_00n });
    expect(await heldOfW()).toEqual([6_00n]);
  });

  it('a replay from zero gives the same discrepancies, whatever the batches', async () => {
    const digest = () => viewsDigest(fx.db.sql, ['discrepancies', 'journal_entries', 'journal_lines']);
    const live = await digest();
    for (const batchSize of [1, 1000]) {
      for (const name of ['reconciliation', 'journal']) await rebuildProjection(deps(), name, { batchSize });
      await settle();
      expect(await digest(), `batches of ${batchSize}`).toEqual(live);
    }
  });
});
