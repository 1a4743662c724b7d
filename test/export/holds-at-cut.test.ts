import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { issueStatements, ledgerPosition } from '../../src/export/statements/issue';
import { heldAt } from '../../src/export/payouts/holds';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import { appendAll, at, periodRow, registerRows, subMerchant, syncCompleted } from '../discrepancies/fixtures';
import { waitVisible } from '../ledger/visible';
import { useTestStore } from '../support/db';
import { payouts } from '../payouts/support';

/**
 * A statement cut at a position never issued before holds what was in doubt at that position: a discrepancy
 * resolved after the cut still holds its money on the statement of the cut, and one detected after it holds
 * nothing; the same cut issued now and later gives the same held items.
 */

const fx = useTestStore();
const out = mkdtempSync(path.join(tmpdir(), 'recon-holds-cut-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const TZ = 'UTC';
const deps = () => ({ sql: fx.db.sql, store: fx.store, log: silentLogger, timezone: TZ });

async function settle() {
  await waitVisible(fx.db.sql, fx.store);
  for (let i = 0; i < 200; i++) {
    const r = await runProjections({ ...deps(), graceHours: 48, projections: [journal, reconciliation, payouts] });
    if (r.projections.every((p) => p.position === r.head)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const dateTime = at('2024-03-10T10:00:00Z');
const day = { from: at('2024-03-10T00:00:00Z'), to: at('2024-03-11T00:00:00Z') };
function sale(paymentId: string, amount: bigint, status: 'success' | 'failure', reportId: string, observedAt: string) {
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
  ];
}

const heldIds = async (cut: Parameters<typeof heldAt>[2]) =>
  ((await heldAt(fx.db.sql, fx.store, cut)) ?? []).map((h) => [h.discrepancyId, h.amount]);

describe('holds as they stood at the cut', () => {
  it('holds at a cut what was in doubt at it, whatever was resolved or found since', async () => {
    await appendAll(fx.store, [
      subMerchant('SM-A', 'Alpha Shop'),
      ...sale('pay-1', 50_00n, 'failure', 'rep-1', at('2024-03-11T00:00:00Z')),
      syncCompleted({ ...day, completedAt: at('2024-03-14T00:00:00Z'), reportId: 'rep-1', announced: 1 }),
    ]);
    await settle();
    const cut = (await ledgerPosition(fx.db.sql))!;
    const [first] = await fx.db.sql<{ id: string }[]>`select id::text from recon.discrepancies where status = 'open'`;
    expect(await heldIds(cut)).toEqual([[first!.id, 50_00n]]);

    // after the cut: pay-1 turns out a success (resolved), and a new mismatch is found on pay-2
    await appendAll(fx.store, [
      periodRow({
        paymentId: 'pay-1',
        dateTime,
        amount: 51_00n,
        status: 'success',
        reportId: 'rep-2',
        observedAt: at('2024-04-01T00:00:00Z'),
      }),
      ...sale('pay-2', 30_00n, 'failure', 'rep-2', at('2024-04-01T00:00:00Z')),
      syncCompleted({ ...day, completedAt: at('2024-04-01T00:00:00Z'), reportId: 'rep-2', announced: 2 }),
    ]);
    await settle();
    const rows = await fx.db.sql<{ payment_id: string; status: string }[]>`
      select payment_id, status from recon.discrepancies order by payment_id`;
    expect(rows.map((r) => `${r.payment_id}:${r.status}`)).toEqual(['pay-1:resolved', 'pay-2:open']);

    // at the old cut: pay-1 still held, pay-2 not yet; at the head: the other way round
    expect(await heldIds(cut)).toEqual([[first!.id, 50_00n]]);
    const head = (await ledgerPosition(fx.db.sql))!;
    expect((await heldIds(head)).map(([, amount]) => amount)).toEqual([30_00n]);

    // the March statement cut at the old position, never issued before, holds pay-1's money
    const r = await issueStatements(deps(), { month: '2024-03', outDir: out, atPosition: cut });
    const section = r.figures.find((f) => f.subMerchantId === 'SM-A');
    expect(section).toBeDefined();
    const held = await fx.store.readStream('statements-2024-03');
    const payoutsOf = (held.at(-1)!.data as { payouts: Array<{ subMerchantId: string; held: string }> }).payouts;
    expect(payoutsOf.find((p) => p.subMerchantId === 'SM-A')?.held).toBe('5000');
  });
});
