import { projection as journal } from '../../projections/journal';
import { projection as reconciliation } from '../../projections/reconciliation';
import type { HoldPolicy } from '../../src/config/hold-policy';
import type { Decision } from '../../src/events/audit-events';
import { heldAt } from '../../src/export/payouts/holds';
import { ledgerPosition } from '../../src/export/statements/issue';
import { silentLogger } from '../../src/log';
import { runProjections } from '../../src/projector/runner';
import { acceptDiscrepancy } from '../../src/reconciliation/discrepancy-queries';
import { waitVisible } from '../ledger/visible';
import type { useTestStore } from '../support/db';

/** The journal and reconciliation projected, statements' holds read, decisions taken: the payhold tests' steps. */
export function payholdSteps(fx: ReturnType<typeof useTestStore>, policy: HoldPolicy) {
  const deps = () => ({
    sql: fx.db.sql,
    store: fx.store,
    log: silentLogger,
    timezone: 'UTC',
    graceHours: 48,
    projections: [journal, reconciliation],
  });
  return {
    async settle() {
      await waitVisible(fx.db.sql, fx.store);
      for (let i = 0; i < 200; i++) {
        const r = await runProjections(deps());
        if (r.projections.every((p) => p.position === r.head)) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    /** [payment, amount, reason] of each item the statements hold for the period ending then */
    async held(periodEnd: Date) {
      const cut = (await ledgerPosition(fx.db.sql))!;
      return ((await heldAt(fx.db.sql, fx.store, cut, { periodEnd, policy })) ?? []).map(
        (h) => [h.paymentId, h.amount, h.reason] as const,
      );
    },
    async discrepancy(paymentId: string, type: string) {
      const rows = await fx.db.sql<{ id: string }[]>`
        select id::text from recon.discrepancies where payment_id = ${paymentId} and type = ${type}`;
      return rows[0]!.id;
    },
    async decide(id: string, decision: Decision, at: Date) {
      return acceptDiscrepancy(
        { sql: fx.db.sql, store: fx.store },
        { id, note: 'PSP confirmed', by: 'Olena K.', at, decision, holdPolicy: policy },
      );
    },
  };
}
