import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked, discrepancyStream } from '../events/audit-events';
import { dataOf, isEvent } from '../events/catalog';
import { SubMerchantRegistered, subMerchantStream } from '../events/ledger-events';
import { StatementIssued, statementStream } from '../events/statement-events';
import type { EventStore } from '../store/types';
import type { BankPaid, DecisionNow, Payee, PlanInput, StatementRun } from './plan';
import type { PayoutRun } from './runs';

/** What a run of a month is planned from, read from the event store (statements, directory, decisions). */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function statementRunsOf(store: EventStore, month: string): Promise<StatementRun[]> {
  const out: StatementRun[] = [];
  for (const e of await store.readStream(statementStream(month))) {
    if (!isEvent(StatementIssued, e)) continue;
    const d = dataOf(StatementIssued, e);
    out.push({ id: e.id, month: d.month, cut: d.position, payouts: d.payouts ?? [] });
  }
  return out;
}

export function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/** The directory entry as it stands now: the last registration of the sub-merchant. */
export async function payeeOf(store: EventStore, subMerchantId: string): Promise<Payee | null> {
  let payee: Payee | null = null;
  for (const e of await store.readStream(subMerchantStream(subMerchantId))) {
    if (!isEvent(SubMerchantRegistered, e)) continue;
    const d = dataOf(SubMerchantRegistered, e);
    payee = {
      name: d.name,
      legalName: d.legalName ?? null,
      payoutAccount: d.payoutAccount ?? null,
      payoutBic: d.payoutBic ?? null,
    };
  }
  return payee;
}

/**
 * The decision in force now on a discrepancy: its last acceptance unless revoked since (the reading of
 * src/export/payouts/holds.ts `decisionAt`, without a cut: a run is drafted from what is decided when drafted);
 * 'revoked' where the last decision was taken back, so money a statement released on it is not paid.
 */
export async function decisionNow(store: EventStore, id: string): Promise<DecisionNow> {
  if (!UUID.test(id)) return 'open';
  let decision: DecisionNow = 'open';
  for (const e of await store.readStream(discrepancyStream(id))) {
    if (isEvent(DiscrepancyAccepted, e)) decision = dataOf(DiscrepancyAccepted, e).decision ?? 'pay';
    else if (isEvent(DiscrepancyAcceptanceRevoked, e)) decision = 'revoked';
  }
  return decision;
}

export async function planInputOf(
  store: EventStore,
  month: string,
  payoutRuns: readonly PayoutRun[],
  paidByBank: BankPaid,
): Promise<PlanInput> {
  const runs = await statementRunsOf(store, month);
  const before = (await statementRunsOf(store, previousMonth(month))).at(-1) ?? null;
  const payees = new Map<string, Payee>();
  const decisions = new Map<string, DecisionNow>();
  for (const r of [...runs, ...(before ? [before] : [])])
    for (const p of r.payouts) {
      if (!payees.has(p.subMerchantId) && !p.subMerchantId.startsWith('receiver:')) {
        const payee = await payeeOf(store, p.subMerchantId);
        if (payee) payees.set(p.subMerchantId, payee);
      }
      for (const [id] of p.holds) if (!decisions.has(id)) decisions.set(id, await decisionNow(store, id));
    }
  return { runs, before, payoutRuns, payees, decisions, paidByBank };
}
