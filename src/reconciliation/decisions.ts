import {
  type Decision,
  DiscrepancyAccepted,
  DiscrepancyAcceptanceRevoked,
  discrepancyStream,
} from '../events/audit-events';
import { dataOf, type EventData, isEvent, newEvent } from '../events/catalog';
import { isStoreError } from '../store/errors';
import { writeOffAccountProblem } from '../config/write-off';
import { writeOffSideOf } from '../journal-rules';
import type { AppendRequest, EventStore, RecordedEvent } from '../store/types';
import { amountInDoubt, discrepancyAmount } from './discrepancies/amounts';
import type { DiscrepancyRecord } from './discrepancy-types';
import { moneyText } from './discrepancy-summary';
import { type HoldPolicy, holdingTypesOf, holdPolicyFromEnv, holdRuleOf, holdsMoneyUnder } from '../config/hold-policy';

/**
 * The decision in force on one discrepancy, read from its stream `discrepancy-<id>` (acceptances and their
 * revocations, in turn): the last acceptance, unless a revocation naming it came after. A revocation naming
 * another acceptance changes nothing, as in the lifecycle (discrepancies/lifecycle.ts `recordRevocation`).
 */
export interface InForce {
  readonly eventId: string;
  readonly decision: Decision;
  readonly data: EventData<typeof DiscrepancyAccepted>;
}

export function decisionInForce(stream: readonly RecordedEvent[]): InForce | null {
  let inForce: InForce | null = null;
  for (const e of stream) {
    if (isEvent(DiscrepancyAccepted, e)) {
      // a second acceptance while one is in force was never applied (the lifecycle keeps the first)
      if (inForce) continue;
      const data = dataOf(DiscrepancyAccepted, e);
      inForce = { eventId: e.id, decision: data.decision ?? 'pay', data };
    } else if (isEvent(DiscrepancyAcceptanceRevoked, e)) {
      if (inForce?.eventId === dataOf(DiscrepancyAcceptanceRevoked, e).acceptance) inForce = null;
    }
  }
  return inForce;
}

/** The revision to append the next decision at: the stream's last, or 'no_stream'. */
export const nextRevisionOf = (stream: readonly RecordedEvent[]): number | 'no_stream' =>
  stream.length ? stream[stream.length - 1]!.revision : 'no_stream';

/**
 * The id options of the next decision on a stream: the first keeps the id of its content alone (as acceptances
 * always had); a later one is told apart by the revision it follows, so the same words accepted again after a
 * revocation are a new event, not a repeat the store would take as already written.
 */
export const decisionIdOf = (stream: readonly RecordedEvent[], data: unknown): { idContent?: unknown } =>
  stream.length ? { idContent: { after: stream[stream.length - 1]!.revision, data } } : {};

type Refusal = {
  code: 'ALREADY_RESOLVED' | 'DECISION_REQUIRED' | 'DECISION_NOT_APPLICABLE';
  message: string;
};

/** The most a journal line holds (an int8 column), in minor units: a write-off is booked as one such line. */
const JOURNAL_LINE_MAX = 2n ** 63n - 1n;

function writeOffRefusal(d: DiscrepancyRecord): Refusal | null {
  const amount = amountInDoubt(d);
  if (amount === null)
    return {
      code: 'DECISION_NOT_APPLICABLE',
      message: `a ${d.type} puts no amount in doubt: there is nothing to write off`,
    };
  // a settlement day of many large sales can owe more (a numeric sum): refused here, not set aside by the journal
  if ((amount < 0n ? -amount : amount) > JOURNAL_LINE_MAX)
    return {
      code: 'DECISION_NOT_APPLICABLE',
      message: `a write-off of ${moneyText(amount, d.currency)} is more than one journal line holds (${JOURNAL_LINE_MAX} minor units): it cannot be booked; accept it without a decision (nothing is booked) and book the loss by hand`,
    };
  return null;
}

/**
 * Why a decision cannot be taken on a discrepancy, or null. A resolved one has nothing left to accept. One that
 * holds money on the statements (under the hold policy in force) needs a decision; pay and withhold apply to those only. A
 * write-off applies to any whose amount in doubt is known; the journal books it where that money sits
 * (journal-rules.ts `writeOffSideOf`), and nothing where nothing is lost (money late, still owed, never moved).
 */
export function decisionRefusal(
  d: DiscrepancyRecord,
  decision: Decision | undefined,
  holdPolicy: HoldPolicy = holdPolicyFromEnv(),
): Refusal | null {
  // a resolved discrepancy has no difference left to accept: an acceptance would freeze values that no longer hold
  if (d.status === 'resolved')
    return {
      code: 'ALREADY_RESOLVED',
      message: `discrepancy ${d.id} is resolved (at ${d.resolved_at}): the sources agree now, there is nothing to accept`,
    };
  // the policy in force (RECON_HOLD_POLICY), as the statements hold: not the default table
  const holds = holdsMoneyUnder(holdPolicy, d.type);
  if (decision === 'write_off') return writeOffRefusal(d);
  if (holds && !decision)
    return {
      code: 'DECISION_REQUIRED',
      message: `a ${d.type} holds money on the statements: say whether to pay it, keep withholding it or write it off (--decision pay|withhold|write_off)`,
    };
  if (!holds && decision)
    return {
      code: 'DECISION_NOT_APPLICABLE',
      message: `a ${d.type} holds no money on the statements: --decision pay|withhold applies to ${holdingTypesOf(holdPolicy).join(', ')}`,
    };
  return null;
}

/**
 * The money a decision `pay` releases on the statements (minor units), or null: what the hold policy in force
 * holds for the type. Under `payment` the statements hold the payment's whole net, so the release is weighed as
 * the whole payment (the largest amount a source states), not the amount in doubt alone: a fee difference
 * a policy holds as `payment` (RECON_HOLD_POLICY=fee_mismatch=payment) releases the payment, not the fee.
 */
export function releasedByPay(
  d: Pick<DiscrepancyRecord, 'type' | 'values' | 'currency'>,
  holdPolicy: HoldPolicy = holdPolicyFromEnv(),
): bigint | null {
  const inDoubt = amountInDoubt(d);
  if (holdRuleOf(holdPolicy, d.type) !== 'payment') return inDoubt;
  const whole = discrepancyAmount(d);
  const payment = whole === null ? null : whole < 0n ? -whole : whole;
  if (payment === null) return inDoubt;
  return inDoubt === null || payment > inDoubt ? payment : inDoubt;
}

/**
 * What a decision releases on the statements (minor units), or null: a `pay`'s release (releasedByPay); a
 * `write_off` under a `payment` rule releases the payment just the same (the difference written off, the payment
 * paid), so its growth since is held as a pay's is and an approval is bound to it; none otherwise.
 */
export function releasedBy(
  d: Pick<DiscrepancyRecord, 'type' | 'values' | 'currency'>,
  decision: Decision | null | undefined,
  holdPolicy: HoldPolicy = holdPolicyFromEnv(),
): bigint | null {
  if (decision === 'pay') return releasedByPay(d, holdPolicy);
  if (decision === 'write_off' && holdRuleOf(holdPolicy, d.type) === 'payment') return releasedByPay(d, holdPolicy);
  return null;
}

/**
 * The receivers' shares of the payment a decision saw, by receiver (its register row's receivers, receiverAmount +
 * receiverFee, in the discrepancy's currency; an order's PSP split), minor units: the journal's measure of the
 * payment, which the statements weigh its growth in, each receiver's on its own statement (src/export/payouts/
 * holds.ts `growthClaimsOf`). The sources' amount can differ from their sum (a split_mismatch: 5,001.00 of shares
 * of 5,000.00, or 4,000.00 with 1,000.00 assigned to no receiver). Null when its values state no shares.
 */
export function splitSeen(d: Pick<DiscrepancyRecord, 'values' | 'currency'>): Map<string, bigint> | null {
  const v = d.values ?? {};
  const register = v.register as { currency?: unknown; receivers?: unknown } | null | undefined;
  const parts =
    register && Array.isArray(register.receivers)
      ? register.currency === d.currency
        ? (register.receivers as { receiver_name?: unknown; share?: unknown }[]).map((r) => [r.receiver_name, r.share])
        : null
      : Array.isArray(v.psp_split)
        ? (v.psp_split as { receiver_name?: unknown; amount?: unknown }[]).map((r) => [r.receiver_name, r.amount])
        : null;
  if (parts === null || parts.length === 0) return null;
  const out = new Map<string, bigint>();
  for (const [name, share] of parts) {
    if (typeof name !== 'string' || typeof share !== 'string' || !/^\d+$/.test(share)) return null;
    out.set(name, (out.get(name) ?? 0n) + BigInt(share));
  }
  return out;
}

const sideInput = (d: DiscrepancyRecord) => ({
  type: d.type,
  posId: d.pos_id,
  receiverName: d.receiver_name,
  values: d.values ?? {},
});

/**
 * What a write-off books, recorded on its acceptance (DiscrepancyAccepted.writeOff); undefined where nothing is
 * booked (no money lost where it sits, no currency, nothing in doubt): the decision then only closes it.
 */
export function writeOffOf(d: DiscrepancyRecord, account: string) {
  const problem = writeOffAccountProblem(account);
  if (problem) throw new RangeError(`write-off account: ${problem}`);
  const side = writeOffSideOf(sideInput(d));
  if (side === null || !d.currency || !amountInDoubt(d)) return undefined;
  return {
    type: d.type,
    account,
    against: side.against,
    receiverName: side.receiverName,
    gain: side.gain,
    posId: d.pos_id,
    paymentId: d.payment_id,
  };
}

export type RevokeResult =
  | { ok: true; eventId: string; acceptance: string; decision: Decision }
  | { ok: false; code: 'NOT_IN_FORCE' | 'CHANGED'; message: string };

/**
 * Takes back the decision in force on a discrepancy: a DiscrepancyAcceptanceRevoked naming it, appended on
 * stream discrepancy-<id> at the revision read (so it never crosses another decision). The projections open
 * the discrepancy again, hold its money again and reverse a write-off's entry when they apply it.
 */
export async function revokeDecision(
  store: EventStore,
  req: { id: string; reason: string; by: string; at: Date },
): Promise<RevokeResult> {
  const planned = await revocationOf(store, req);
  if (!planned.ok) return planned;
  const { request } = planned;
  try {
    await store.append(request.stream, request.events, { expectedRevision: request.expectedRevision! });
  } catch (e) {
    if (isStoreError(e, 'WRONG_EXPECTED_REVISION'))
      return { ok: false, code: 'CHANGED', message: `discrepancy ${req.id}: another decision was recorded meanwhile` };
    throw e;
  }
  return { ok: true, eventId: planned.eventId, acceptance: planned.acceptance, decision: planned.decision };
}

/**
 * A revocation checked and built, not yet written: the append (at the revision read) that records it, for a
 * caller that writes it together with events of its own in one appendMany (an exception reopened).
 */
export async function revocationOf(
  store: EventStore,
  req: { id: string; reason: string; by: string; at: Date },
): Promise<
  | { ok: true; request: AppendRequest; eventId: string; acceptance: string; decision: Decision }
  | { ok: false; code: 'NOT_IN_FORCE'; message: string }
> {
  const stream = await store.readStream(discrepancyStream(req.id));
  const inForce = decisionInForce(stream);
  if (!inForce) return { ok: false, code: 'NOT_IN_FORCE', message: `discrepancy ${req.id} has no decision in force` };
  const data = {
    discrepancyId: req.id,
    acceptance: inForce.eventId,
    reason: req.reason,
    revokedBy: req.by,
    revokedAt: req.at.toISOString(),
  };
  const event = newEvent(DiscrepancyAcceptanceRevoked, data, decisionIdOf(stream, data));
  return {
    ok: true,
    request: { stream: discrepancyStream(req.id), events: [event], expectedRevision: nextRevisionOf(stream) },
    eventId: event.id,
    acceptance: inForce.eventId,
    decision: inForce.decision,
  };
}
