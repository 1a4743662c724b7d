import type { Distortion, GroundTruthEntry, InjectionType, Operation, Order } from './model';
import { sum } from './receiver-parts';

/** The scenario's ground truth: each injected disagreement as recon should report it. */

export function buildGroundTruth(
  injected: Order[],
  countMismatchDays: readonly string[],
  posIds: readonly string[],
  zone: string,
): GroundTruthEntry[] {
  const out: GroundTruthEntry[] = [];
  for (const order of injected) {
    const op = order.operations.find(
      (o) =>
        o.distortion ||
        o.webhook === 'lost_for_good' ||
        o.webhook === 'lost_resendable' ||
        o.receivers.some((x) => x.name.startsWith('Unlisted Seller')),
    );
    if (!op || !order.injection) continue;
    const entry = injectedTruth(order, order.injection, op);
    if (entry) out.push(entry);
  }
  for (const day of countMismatchDays) {
    for (const posId of posIds) {
      out.push({
        type: 'report_count_mismatch',
        posId,
        orderId: null,
        paymentId: null,
        transactionId: null,
        method: null,
        detail: { source: 'register', day, timezone: zone, extraAnnounced: 1 },
      });
    }
  }
  return out;
}

type TruthBase = Pick<GroundTruthEntry, 'posId' | 'orderId' | 'paymentId' | 'transactionId' | 'method'>;

function injectedTruth(order: Order, injection: InjectionType, op: Operation): GroundTruthEntry | undefined {
  const base: TruthBase = {
    posId: order.posId,
    orderId: order.orderId,
    paymentId: op.paymentId,
    transactionId: op.transactionId,
    method: op.method,
  };
  const d = op.distortion;
  switch (injection) {
    case 'missing_in_report':
    case 'missing_in_period':
      return { ...base, type: injection, detail: { source: d?.kind === 'omit' ? d.source : null } };
    case 'missing_webhook':
    case 'webhook_lost_resendable':
      return { ...base, type: 'missing_webhook', detail: { lostForGood: injection === 'missing_webhook' } };
    case 'status_mismatch':
    case 'amount_mismatch':
    case 'currency_mismatch':
    case 'fee_mismatch':
      return valueTruth(base, injection, op, d);
    case 'split_mismatch':
    case 'duplicate':
    case 'unknown_sub_merchant':
      return receiverTruth(base, injection, op, d);
    case 'report_count_mismatch':
      return undefined;
  }
}

/** A source reporting another value of the operation than the truth. */
function valueTruth(
  base: TruthBase,
  injection: 'status_mismatch' | 'amount_mismatch' | 'currency_mismatch' | 'fee_mismatch',
  op: Operation,
  d: Distortion | null,
): GroundTruthEntry | undefined {
  if (injection === 'status_mismatch' && d?.kind === 'status')
    return { ...base, type: injection, detail: { source: d.source, expected: op.status, reported: d.value } };
  if (injection === 'amount_mismatch' && d?.kind === 'amount')
    return {
      ...base,
      type: injection,
      detail: { source: d.source, expected: op.originalAmount.toString(), reported: d.value.toString() },
    };
  if (injection === 'currency_mismatch' && d?.kind === 'currency')
    return { ...base, type: injection, detail: { source: d.source, expected: op.currency, reported: d.value } };
  if (injection === 'fee_mismatch' && d?.kind === 'fee')
    return {
      ...base,
      type: injection,
      detail: {
        source: d.source,
        field: d.source === 'webhook' ? 'fee.amount' : 'merchantFee',
        expected: op.merchantFee.toString(),
        reported: d.value.toString(),
      },
    };
  return undefined;
}

/** A register row of one receiver that disagrees: its amount, a second copy of it, or a receiver not listed. */
function receiverTruth(
  base: TruthBase,
  injection: 'split_mismatch' | 'duplicate' | 'unknown_sub_merchant',
  op: Operation,
  d: Distortion | null,
): GroundTruthEntry | undefined {
  if (injection === 'split_mismatch' && d?.kind === 'receiver_amount') {
    const x = op.receivers[d.receiverIndex]!;
    const shares = sum(op.receivers.map((p) => p.share)) + (d.value - x.amount);
    return {
      ...base,
      type: injection,
      receiverName: x.name,
      detail: { source: 'register', originalAmount: op.originalAmount.toString(), sharesSum: shares.toString() },
    };
  }
  if (injection === 'duplicate' && d?.kind === 'duplicate_row')
    return {
      ...base,
      type: injection,
      receiverName: op.receivers[d.receiverIndex]!.name,
      detail: { source: 'register', differingFields: 'cardMask,payway,rrnCode' },
    };
  if (injection === 'unknown_sub_merchant') {
    const x = op.receivers.find((p) => p.name.startsWith('Unlisted Seller'))!;
    return {
      ...base,
      type: injection,
      receiverName: x.name,
      detail: { source: 'register', subMerchantId: x.subMerchantId },
    };
  }
  return undefined;
}
