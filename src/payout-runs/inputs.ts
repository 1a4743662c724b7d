import { DiscrepancyAccepted, DiscrepancyAcceptanceRevoked, discrepancyStream } from '../events/audit-events';
import { dataOf, isEvent } from '../events/catalog';
import { PayeeAccountConfirmed, SubMerchantRegistered, subMerchantStream } from '../events/ledger-events';
import { StatementIssued, statementStream } from '../events/statement-events';
import { comparePositions, type EventStore, parsePosition, type RecordedEvent } from '../store/types';
import type { BankPaid, DecisionNow, Payee, PlanInput, StatementRun } from './plan';
import type { ResolvedNow } from './resolved';
import type { PayoutRun } from './runs';

/** What a run of a month is planned from, read from the event store (statements, directory, decisions). */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function statementRunsOf(store: EventStore, month: string): Promise<StatementRun[]> {
  return (await issuedRunsOf(store, month)).map(({ subMerchantId: _, ...run }) => run);
}

async function issuedRunsOf(store: EventStore, month: string) {
  const out: (StatementRun & { subMerchantId: string | null })[] = [];
  for (const e of await store.readStream(statementStream(month))) {
    if (!isEvent(StatementIssued, e)) continue;
    const d = dataOf(StatementIssued, e);
    out.push({ id: e.id, month: d.month, cut: d.position, subMerchantId: d.subMerchantId, payouts: d.payouts ?? [] });
  }
  return out;
}

/** As far back as the statements look for the one they build on (previous.ts, LOOKBACK_MONTHS). */
const LOOKBACK_MONTHS = 36;

/**
 * What the month's first statements were built on, per sub-merchant (previous.ts `previousRunOf`): the latest
 * earlier run that covered it, a run for all or one for it, in the latest month issued before (a month between
 * never issued is skipped), the latest cut first. Its holds are what the month's first statement released. Not
 * the previous month's last run alone: one for another sub-merchant, or a month never issued, hid them, and money
 * whose release was revoked since was paid.
 */
export async function builtOn(
  store: EventStore,
  month: string,
  runs: readonly StatementRun[],
): Promise<StatementRun | null> {
  const wanted = new Set(runs.flatMap((r) => r.payouts.map((p) => p.subMerchantId)));
  const found = new Set<string>();
  const payouts: StatementRun['payouts'][number][] = [];
  let m = month;
  let last: StatementRun | null = null;
  for (let i = 0; i < LOOKBACK_MONTHS && found.size < wanted.size; i++) {
    m = previousMonth(m);
    const issued = (await issuedRunsOf(store, m)).reverse();
    issued.sort((a, b) => (a.cut && b.cut ? comparePositions(parsePosition(b.cut), parsePosition(a.cut)) : 0));
    for (const r of issued)
      for (const sm of wanted) {
        if (found.has(sm) || (r.subMerchantId !== null && r.subMerchantId !== sm)) continue;
        found.add(sm);
        payouts.push(...r.payouts.filter((p) => p.subMerchantId === sm));
        last ??= r;
      }
  }
  return last === null ? null : { id: last.id, month: last.month, payouts };
}

/** As far ahead as a later month's statement is looked for (statements.ts laterMonthIssued looks a year). */
const LOOKAHEAD_MONTHS = 36;

/**
 * The statement runs of the months after `month`, in month order: a later month's statement holding again money
 * the month released took it off its own amount due (plan.ts `releasesInDoubt`).
 */
export async function laterRunsOf(store: EventStore, month: string): Promise<StatementRun[]> {
  const out: StatementRun[] = [];
  let m = month;
  for (let i = 0; i < LOOKAHEAD_MONTHS; i++) {
    m = nextMonth(m);
    out.push(...(await statementRunsOf(store, m)));
  }
  return out;
}

const nextMonth = (month: string): string => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
};

export function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

type Account = { readonly account: string; readonly bic: string | null };
const sameAccount = (a: Account | null, b: Account | null) =>
  a !== null && b !== null && a.account === b.account && a.bic === b.bic;

/**
 * The directory entry as it stands now: the last registration of the sub-merchant, and whether its payout
 * account is trusted. The account of a sub-merchant's first registration is (its onboarding); an account or BIC
 * that replaces it, or is first given in a later registration, is trusted once a named person confirms exactly it
 * (PayeeAccountConfirmed after the change): a directory file changed by whoever can edit it never redirects a
 * payout on its own.
 */
export async function payeeOf(store: EventStore, subMerchantId: string): Promise<Payee | null> {
  return payeeFrom(await store.readStream(subMerchantStream(subMerchantId)));
}

/** `payeeOf` from the sub-merchant's stream as read (a caller that also appends at its revision reads it once). */
export function payeeFrom(stream: readonly RecordedEvent[]): Payee | null {
  let payee: Payee | null = null;
  let current: Account | null = null;
  let trusted: Account | null = null;
  let registered = false;
  for (const e of stream) {
    if (isEvent(PayeeAccountConfirmed, e)) {
      const d = dataOf(PayeeAccountConfirmed, e);
      const confirmed = { account: d.payoutAccount, bic: d.payoutBic };
      if (sameAccount(confirmed, current)) trusted = confirmed;
      continue;
    }
    if (!isEvent(SubMerchantRegistered, e)) continue;
    const d = dataOf(SubMerchantRegistered, e);
    current = d.payoutAccount ? { account: d.payoutAccount, bic: d.payoutBic ?? null } : null;
    // onboarding is the first registration: an account first given later, once money may have built up with
    // nowhere to go, is a change like any other and waits for a named person
    if (!registered && current !== null) trusted = current;
    registered = true;
    payee = {
      name: d.name,
      legalName: d.legalName ?? null,
      payoutAccount: d.payoutAccount ?? null,
      payoutBic: d.payoutBic ?? null,
    };
  }
  if (payee === null || current === null || sameAccount(current, trusted)) return payee;
  return { ...payee, accountConfirmed: false };
}

/**
 * The decision in force now on a discrepancy: its last acceptance unless revoked since (the reading of
 * src/export/payouts/holds.ts `decisionsAt`, without a cut: a run is drafted from what is decided when drafted);
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

/**
 * The decision in force now on each discrepancy (`decisionNow`), each stream read once. A decision revoked on a
 * discrepancy the reconciliation finds resolved now is no decision and no doubt ('open'): the sources agree, so
 * the money a statement released on it is owed (resolved.ts). Without `resolvedNow` a revocation stays 'revoked'.
 */
export async function decisionsNow(
  store: EventStore,
  ids: Iterable<string>,
  resolvedNow?: ResolvedNow,
): Promise<Map<string, DecisionNow>> {
  const decisions = new Map<string, DecisionNow>();
  for (const id of ids) if (!decisions.has(id)) decisions.set(id, await decisionNow(store, id));
  const revoked = [...decisions].filter(([, d]) => d === 'revoked').map(([id]) => id);
  if (revoked.length > 0 && resolvedNow) for (const id of await resolvedNow(revoked)) decisions.set(id, 'open');
  return decisions;
}

export async function planInputOf(
  store: EventStore,
  month: string,
  payoutRuns: readonly PayoutRun[],
  paidByBank: BankPaid,
  resolvedNow?: ResolvedNow,
): Promise<PlanInput> {
  const runs = await statementRunsOf(store, month);
  const before = await builtOn(store, month, runs);
  const payees = new Map<string, Payee>();
  const held: string[] = [];
  for (const r of [...runs, ...(before ? [before] : [])])
    for (const p of r.payouts) {
      if (!payees.has(p.subMerchantId) && !p.subMerchantId.startsWith('receiver:')) {
        const payee = await payeeOf(store, p.subMerchantId);
        if (payee) payees.set(p.subMerchantId, payee);
      }
      for (const [id] of p.holds) held.push(id);
    }
  const decisions = await decisionsNow(store, held, resolvedNow);
  const openNow = await openNowOf(decisions, resolvedNow);
  const later = await laterRunsOf(store, month);
  return {
    runs,
    before,
    payoutRuns,
    payees,
    decisions,
    paidByBank,
    later,
    ...(openNow.size > 0 ? { openNow } : {}),
  };
}

/** Of the discrepancies with no decision in force, those the reconciliation finds open now (resolved.ts). */
export async function openNowOf(
  decisions: ReadonlyMap<string, DecisionNow>,
  resolvedNow?: ResolvedNow,
): Promise<ReadonlySet<string>> {
  const undecided = [...decisions].filter(([, d]) => d === 'open').map(([id]) => id);
  return undecided.length > 0 && resolvedNow?.openNow ? resolvedNow.openNow(undecided) : new Set();
}
